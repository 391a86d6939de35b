//! Listing sessions and panes, and the formats their lines are read with.

use termpilot_control::{
    Command, PaneId, SessionId, SessionTarget, Target, TargetKind, WindowId, WindowTarget,
};

use crate::engine::{Engine, call, ok_reply};
use crate::error::Result;
use crate::format::tmux_format;

/// A tmux session. MCP's session rows hold it as it serialises, after
/// their host and the id written with it, so its docs are their schema's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct SessionInfo {
    /// Session id (`$0`).
    #[serde(skip)]
    pub id: SessionId,
    /// Session name.
    pub name: String,
    /// Number of windows.
    pub windows: u32,
    /// Terminals attached by people (termpilot's own connections not counted).
    pub attached: u32,
    /// Creation time, seconds since the Unix epoch.
    pub created: u64,
}

tmux_format! {
    /// A tmux pane, as seen in one session (a window linked into several
    /// sessions lists its panes once per session): a line of `list-panes`.
    /// MCP's pane rows hold it as it serialises, after their host, the ids
    /// written with it and whether it is active, so its docs are their
    /// schema's (and its order theirs).
    #[derive(serde::Serialize, schemars::JsonSchema)]
    pub struct PaneInfo {
        /// Pane id (`%3`).
        #[serde(skip)]
        id: PaneId = "pane_id",
        /// Session id.
        #[serde(skip)]
        session: SessionId = "session_id",
        /// Session name.
        session_name: String = "session_name",
        /// Window id.
        #[serde(skip)]
        window: WindowId = "window_id",
        /// Window index in the session.
        window_index: u32 = "window_index",
        /// Window name.
        window_name: String = "window_name",
        /// Pane index in the window.
        index: u32 = "pane_index",
        /// Pane title.
        title: String = "pane_title",
        /// Program in the foreground of the pane, e.g. "bash" or "vim".
        current_command: String = "pane_current_command",
        /// Current working directory.
        cwd: String = "pane_current_path",
        /// Pid of the pane's first process.
        pid: Option<u32> = "pane_pid",
        /// Width in cells.
        width: u16 = "pane_width",
        /// Height in cells.
        height: u16 = "pane_height",
        /// Whether this is the active pane of its window.
        #[serde(skip)]
        pane_active: bool = "pane_active",
        /// Whether its window is the active window of the session.
        #[serde(skip)]
        window_active: bool = "window_active",
        /// The pane's program exited.
        dead: bool = "pane_dead",
        /// In copy mode or another tmux mode.
        in_mode: bool = "pane_in_mode",
        /// A full-screen program (vim, less, htop) is on the alternate screen.
        alternate_screen: bool = "alternate_on",
        /// Set while a person holds the pane (termpilot attach): who and since when. Input
        /// to the pane is refused until they hand it back.
        held_by: Option<String> = "@termpilot_held",
    }
}

impl PaneInfo {
    /// Whether this is the active pane of the active window.
    pub fn active(&self) -> bool {
        self.pane_active && self.window_active
    }
}

/// Which panes to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneScope {
    /// Every pane of every session.
    All,
    /// The panes of one session: its id (`$1`) or exact name.
    Session(Target<SessionTarget>),
    /// The panes of one window: its id (`@2`) or `session:window`.
    Window(Target<WindowTarget>),
}

tmux_format! {
    /// A line of `list-sessions`.
    struct SessionRow {
        id: SessionId = "session_id",
        name: String = "session_name",
        windows: u32 = "session_windows",
        attached: u32 = "session_attached",
        created: u64 = "session_created",
    }
}

tmux_format! {
    /// A line of `list-clients`: the client's session and whether it is a
    /// control client.
    struct ClientRow {
        session: Option<SessionId> = "session_id",
        control: bool = "client_control_mode",
    }
}

impl Engine {
    /// Lists sessions.
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>> {
        let client = self.primary().await?;
        let calls = vec![
            call(
                Command::new("list-sessions").opt("-F", SessionRow::FORMAT),
                None,
            )?,
            call(
                Command::new("list-clients").opt("-F", ClientRow::FORMAT),
                None,
            )?,
        ];
        let mut answers = client.call_many(calls).await.into_iter();
        let sessions = ok_reply(answers.next().expect("two answers")?)?;
        let clients = ok_reply(answers.next().expect("two answers")?)?;
        let mut control = std::collections::HashMap::<SessionId, u32>::new();
        for client in ClientRow::parse_all("list-clients", &clients)? {
            if let (true, Some(session)) = (client.control, client.session) {
                *control.entry(session).or_default() += 1;
            }
        }
        let mut out = Vec::new();
        for row in SessionRow::parse_all("list-sessions", &sessions)? {
            let controls = control.get(&row.id).copied().unwrap_or(0);
            out.push(SessionInfo {
                id: row.id,
                name: row.name,
                windows: row.windows,
                attached: row.attached.saturating_sub(controls),
                created: row.created,
            });
        }
        Ok(out)
    }

    /// Lists panes.
    pub async fn list_panes(&self, scope: &PaneScope) -> Result<Vec<PaneInfo>> {
        let command = Command::new("list-panes").opt("-F", PaneInfo::FORMAT);
        let command = match scope {
            PaneScope::All => command.flag("-a"),
            PaneScope::Session(target) => {
                let session = self.pin_session(&target.parsed).await?;
                command.flag("-s").opt("-t", session.tmux())
            }
            PaneScope::Window(target) => {
                let window = self.pin_window(target.parsed.clone()).await?;
                command.opt("-t", window.tmux())
            }
        };
        let reply = self.command(command).await.map_err(|e| match scope {
            PaneScope::All => e,
            PaneScope::Session(t) => e.not_found_as(TargetKind::Session, &t.text),
            PaneScope::Window(t) => e.not_found_as(TargetKind::Window, &t.text),
        })?;
        let rows = PaneInfo::parse_all("list-panes", &reply)?;
        for row in &rows {
            self.shared.panes.learn_size(row.id, row.width, row.height);
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pane_line_reads_the_held_option_by_name() {
        assert_eq!(PaneInfo::FIELDS.last(), Some(&crate::person::HELD_OPTION));
        let fields = [
            "%3", "$1", "main", "@2", "0", "w", "1", "t", "bash", "/tmp", "", "80", "24", "1", "1",
            "0", "0", "0", "",
        ];
        assert_eq!(fields.len(), PaneInfo::FIELDS.len());
        let info = PaneInfo::parse("list-panes", &fields.join("\x1f")).unwrap();
        assert_eq!(
            (info.id.to_string(), info.width, info.height),
            ("%3".into(), 80, 24)
        );
        assert!(info.active() && !info.dead);
        assert_eq!((info.pid, info.held_by), (None, None));
        assert_eq!(info.cwd, "/tmp");
        let garbled = PaneInfo::parse("list-panes", &fields.join("\x1f").replace("80", "wide"));
        assert_eq!(
            garbled.unwrap_err().to_string(),
            "unexpected reply from tmux to `list-panes`: field pane_width is 'wide'"
        );
    }
}
