//! Listing sessions and panes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_tmux::{PaneInfo, PaneScope, SessionInfo};

use crate::address;
use crate::catalog::{Effect, Outcome, Tool};
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

/// No arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `list_sessions`.
pub(crate) struct ListSessions;

/// Result of `list_sessions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionList {
    /// The sessions of the tmux server.
    pub sessions: Vec<SessionEntry>,
}

/// One session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionEntry {
    /// Session id, e.g. "$0".
    pub id: String,
    /// Session name.
    pub name: String,
    /// Number of windows.
    pub windows: u32,
    /// Terminals attached by people (termpilot's own connections not counted).
    pub attached: u32,
    /// Creation time, seconds since the Unix epoch.
    pub created: u64,
}

impl From<SessionInfo> for SessionEntry {
    fn from(info: SessionInfo) -> Self {
        SessionEntry {
            id: info.id.to_string(),
            name: info.name,
            windows: info.windows,
            attached: info.attached,
            created: info.created,
        }
    }
}

impl Tool for ListSessions {
    const NAME: &'static str = "list_sessions";
    const TITLE: &'static str = "List tmux sessions";
    const DESCRIPTION: &'static str =
        "List tmux sessions with their window count and attached clients.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = NoParams;
    type Output = SessionList;

    async fn call(server: &TermpilotServer, _: NoParams, _: &CallContext) -> Outcome {
        let mut sessions = server.engine.list_sessions().await?;
        sessions.retain(|s| server.oversight.scope.allows(&s.name));
        let text = sessions
            .iter()
            .map(|s| {
                format!(
                    "{} {} ({} windows, {} attached)",
                    s.id, s.name, s.windows, s.attached
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let list = SessionList {
            sessions: sessions.into_iter().map(Into::into).collect(),
        };
        Done::new(&list, text)
    }
}

/// `list_panes`.
pub(crate) struct ListPanes;

/// Arguments of `list_panes`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPanesParams {
    /// Only this session's panes (exact name or id).
    #[schemars(length(min = 1, max = 256))]
    pub session: Option<String>,
    /// Only this window's panes ("work:1" or id "@3").
    #[schemars(length(min = 1, max = 256))]
    pub window: Option<String>,
}

/// Result of `list_panes`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaneList {
    /// The panes, in session, window and pane order.
    pub panes: Vec<PaneEntry>,
}

/// One pane.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaneEntry {
    /// Pane id, e.g. "%3": the stable way to address the pane.
    pub id: String,
    /// Session id.
    pub session: String,
    /// Session name.
    pub session_name: String,
    /// Window id, e.g. "@1".
    pub window: String,
    /// Window index in the session.
    pub window_index: u32,
    /// Window name.
    pub window_name: String,
    /// Pane index in the window.
    pub index: u32,
    /// Pane title.
    pub title: String,
    /// Program in the foreground of the pane, e.g. "bash" or "vim".
    pub current_command: String,
    /// Current working directory.
    pub cwd: String,
    /// Pid of the pane's first process.
    pub pid: Option<u32>,
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// Active pane of the active window.
    pub active: bool,
    /// The pane's program exited.
    pub dead: bool,
    /// In copy mode or another tmux mode.
    pub in_mode: bool,
    /// A full-screen program (vim, less, htop) is on the alternate screen.
    pub alternate_screen: bool,
    /// Set while a person holds the pane (termpilot attach): who and since when. Input
    /// to the pane is refused until they hand it back.
    pub held_by: Option<String>,
}

impl From<PaneInfo> for PaneEntry {
    fn from(info: PaneInfo) -> Self {
        PaneEntry {
            id: info.id.to_string(),
            session: info.session.to_string(),
            session_name: info.session_name,
            window: info.window.to_string(),
            window_index: info.window_index,
            window_name: info.window_name,
            index: info.index,
            title: info.title,
            current_command: info.current_command,
            cwd: info.cwd,
            pid: info.pid,
            width: info.width,
            height: info.height,
            active: info.active,
            dead: info.dead,
            in_mode: info.in_mode,
            alternate_screen: info.alternate_screen,
            held_by: info.held_by,
        }
    }
}

impl Tool for ListPanes {
    const NAME: &'static str = "list_panes";
    const TITLE: &'static str = "List panes";
    const DESCRIPTION: &'static str = "List panes (all, or one session's or window's) with id, \
        size, cwd, foreground program, and whether a full-screen program or copy mode is active.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = ListPanesParams;
    type Output = PaneList;

    async fn call(server: &TermpilotServer, params: ListPanesParams, _: &CallContext) -> Outcome {
        let scope = match (params.window.as_deref(), params.session.as_deref()) {
            (Some(window), _) => PaneScope::Window(address::window_target(window)?.text.into()),
            (None, Some(session)) => {
                PaneScope::Session(address::session_target(session)?.text.into())
            }
            (None, None) => PaneScope::All,
        };
        let mut panes = server.engine.list_panes(&scope).await?;
        panes.retain(|p| server.oversight.scope.allows(&p.session_name));
        let text = panes
            .iter()
            .map(|p| {
                format!(
                    "{} {}:{}.{} {}x{} {} {}{}{}",
                    p.id,
                    p.session_name,
                    p.window_index,
                    p.index,
                    p.width,
                    p.height,
                    p.current_command,
                    p.cwd,
                    if p.active { " (active)" } else { "" },
                    if p.dead { " (dead)" } else { "" },
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        let list = PaneList {
            panes: panes.into_iter().map(Into::into).collect(),
        };
        Done::new(&list, text)
    }
}
