//! Creating and killing sessions, windows and panes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_tmux::{Created, Killed, NewSession, NewWindow, Split, SplitDirection};

use super::input::refuse_nul;
use super::params::{pane_params, tool_params};
use crate::address::{self, Host};
use crate::approval::Piece;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::scope::Scope;
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

/// Most environment variables given to a new session, window or pane.
pub const MAX_ENV: usize = 64;

/// Result of `create_session`, `create_window` and `split_pane`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CreatedEntry {
    /// Session id.
    pub session: String,
    /// Session name.
    pub session_name: String,
    /// Window id.
    pub window: String,
    /// Window index.
    pub window_index: u32,
    /// The new pane's id: pass it as `pane` to the other tools.
    pub pane: String,
}

impl CreatedEntry {
    fn new(host: &Host, created: Created) -> Self {
        CreatedEntry {
            session: host.qualify(created.session),
            session_name: created.session_name,
            window: host.qualify(created.window),
            window_index: created.window_index,
            pane: host.qualify(created.pane),
        }
    }
}

/// The result of a create tool on `host`.
fn created(host: &Host, result: termpilot_tmux::Result<Created>) -> Outcome {
    let entry = CreatedEntry::new(host, result?);
    let text = format!(
        "created pane {} in window {} ({}:{}) of session {} ({})",
        entry.pane,
        entry.window,
        entry.session_name,
        entry.window_index,
        entry.session,
        entry.session_name
    );
    Done::new(&entry, text)
}

/// The `env` argument of a create tool, checked.
fn env_pairs(env: Option<BTreeMap<String, String>>) -> ToolResult<Vec<(String, String)>> {
    let env = env.unwrap_or_default();
    if env.len() > MAX_ENV {
        return Err(ToolError::refused(format!(
            "env: at most {MAX_ENV} variables, got {}",
            env.len()
        )));
    }
    for (key, value) in &env {
        let valid = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ToolError::refused(format!(
                "env: '{key}' is not a valid variable name (letters, digits and _, not starting with a digit)"
            )));
        }
        refuse_nul("env value", value)?;
    }
    Ok(env.into_iter().collect())
}

/// `create_session`.
pub(crate) struct CreateSession;

tool_params! {
    /// Arguments of `create_session`.
    #[derive(Default)]
    pub struct CreateSessionParams {
        ..host,
        /// Unique name, kept exactly (default: tmux picks one). Refused: : . $ \ and control
        /// characters, and a first character among - + = ~ ! ^ { @ %.
        #[schemars(length(min = 1, max = 128))]
        pub name: Option<String>,
        ..program,
        /// Columns (default 160).
        #[schemars(range(min = 10, max = 1000))]
        pub width: Option<u16>,
        /// Rows (default 48).
        #[schemars(range(min = 5, max = 500))]
        pub height: Option<u16>,
    }
}

impl Tool for CreateSession {
    const NAME: &'static str = "create_session";
    const TITLE: &'static str = "Create a session";
    const DESCRIPTION: &'static str = "Create a detached tmux session running a shell or \
        `command` (it can do anything a shell can); return its first pane's id. To add a terminal beside \
        others, use create_window or split_pane.";
    const TOOLSET: Toolset = Toolset::Lifecycle;
    const EFFECT: Effect = Effect::Runs;
    type Params = CreateSessionParams;
    type Output = CreatedEntry;

    async fn call(
        server: &TermpilotServer,
        params: CreateSessionParams,
        _: &CallContext,
    ) -> Outcome {
        let host = address::host_argument(server, params.host.as_deref())?;
        if let Some(name) = &params.name
            && let (named, _) = address::split(server, name)
            && named != Host::local()
        {
            return Err(ToolError::refused(format!(
                "name: '{name}' would read as a target on host {}; pick a name without \
                 \"{}/\" in front",
                named.name(),
                named.name()
            )));
        }
        let options = NewSession {
            name: params.name,
            command: params.command,
            cwd: params.cwd,
            env: env_pairs(params.env)?,
            width: params.width,
            height: params.height,
        };
        let engine = host.engine(server).await?;
        created(&host, engine.create_session(&options).await)
    }

    fn admit(scope: &Scope, arguments: &serde_json::Value) -> ToolResult<()> {
        let name = arguments.get("name").and_then(serde_json::Value::as_str);
        scope.check_new_session(name)
    }

    fn typed(arguments: &serde_json::Value) -> Vec<Piece> {
        let Ok(params) = CreateSessionParams::deserialize(arguments) else {
            return Vec::new();
        };
        let place = params.host.as_deref().unwrap_or_default();
        Piece::spawn(
            place,
            params.command.as_deref(),
            params.env.iter().flatten(),
        )
    }
}

/// `create_window`.
pub(crate) struct CreateWindow;

tool_params! {
    /// Arguments of `create_window`.
    #[derive(Default)]
    pub struct CreateWindowParams {
        /// Session name or id; "work:5" picks window index 5.
        #[schemars(length(min = 1, max = 256))]
        pub session: String,
        /// Window name, kept exactly; refused as for session names, or if a number (an index).
        #[schemars(length(min = 1, max = 128))]
        pub name: Option<String>,
        ..program,
    }
}

impl Tool for CreateWindow {
    const NAME: &'static str = "create_window";
    const TITLE: &'static str = "Create a window";
    const DESCRIPTION: &'static str = "Add a window (a separate full-size terminal) to a \
        session without switching to it, running a shell or `command` (run as given); return \
        its pane id.";
    const TOOLSET: Toolset = Toolset::Lifecycle;
    const EFFECT: Effect = Effect::Runs;
    type Params = CreateWindowParams;
    type Output = CreatedEntry;

    async fn call(
        server: &TermpilotServer,
        params: CreateWindowParams,
        _: &CallContext,
    ) -> Outcome {
        let env = env_pairs(params.env)?;
        let located = address::located(server, &params.session).await?;
        let slot = address::window_slot(located.target)?;
        let options = NewWindow {
            name: params.name,
            command: params.command,
            cwd: params.cwd,
            env,
        };
        created(
            &located.host,
            located.engine.create_window(&slot, &options).await,
        )
    }

    fn typed(arguments: &serde_json::Value) -> Vec<Piece> {
        let Ok(params) = CreateWindowParams::deserialize(arguments) else {
            return Vec::new();
        };
        let env = params.env.iter().flatten();
        Piece::spawn(&params.session, params.command.as_deref(), env)
    }
}

/// `split_pane`.
pub(crate) struct SplitPane;

/// Where `split_pane` puts the new pane.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Right of the pane (side by side).
    #[default]
    Right,
    /// Left of the pane.
    Left,
    /// Below the pane (stacked).
    Below,
    /// Above the pane.
    Above,
}

pane_params! {
    /// Arguments of `split_pane`.
    #[derive(Default)]
    pub struct SplitPaneParams {
        /// Default right.
        #[serde(default)]
        pub direction: Direction,
        /// Cells ("20") or percent ("30%"); default half.
        #[schemars(regex(pattern = r"^[0-9]{1,4}%?$"))]
        pub size: Option<String>,
        ..program,
    }
}

impl Tool for SplitPane {
    const NAME: &'static str = "split_pane";
    const TITLE: &'static str = "Split a pane";
    const DESCRIPTION: &'static str = "Split a pane (the old one shrinks: its program sees a \
        resize); `command` runs as given. Return the new pane's id.";
    const TOOLSET: Toolset = Toolset::Lifecycle;
    const EFFECT: Effect = Effect::Runs;
    type Params = SplitPaneParams;
    type Output = CreatedEntry;

    async fn call(server: &TermpilotServer, params: SplitPaneParams, _: &CallContext) -> Outcome {
        let env = env_pairs(params.env)?;
        let located = address::located(server, &params.pane).await?;
        let options = Split {
            target: address::pane_target(located.target)?,
            direction: match params.direction {
                Direction::Right => SplitDirection::Right,
                Direction::Left => SplitDirection::Left,
                Direction::Below => SplitDirection::Below,
                Direction::Above => SplitDirection::Above,
            },
            size: params.size,
            command: params.command,
            cwd: params.cwd,
            env,
        };
        created(&located.host, located.engine.split_pane(&options).await)
    }

    fn typed(arguments: &serde_json::Value) -> Vec<Piece> {
        let Ok(params) = SplitPaneParams::deserialize(arguments) else {
            return Vec::new();
        };
        let env = params.env.iter().flatten();
        Piece::spawn(&params.pane, params.command.as_deref(), env)
    }
}

/// Result of the kill tools.
#[derive(Debug, Serialize, JsonSchema)]
pub struct KilledEntry {
    /// Session the killed panes were in.
    pub session: String,
    /// Windows removed.
    pub windows: Vec<String>,
    /// Panes removed.
    pub panes: Vec<String>,
}

impl KilledEntry {
    fn new(host: &Host, killed: Killed) -> Self {
        KilledEntry {
            session: host.qualify(killed.session),
            windows: killed.windows.iter().map(|w| host.qualify(w)).collect(),
            panes: killed.panes.iter().map(|p| host.qualify(p)).collect(),
        }
    }
}

/// The result of a kill tool on `host`.
fn killed(host: &Host, result: termpilot_tmux::Result<Killed>) -> Outcome {
    let entry = KilledEntry::new(host, result?);
    let text = format!(
        "killed {} pane(s) [{}]{}",
        entry.panes.len(),
        entry.panes.join(", "),
        if entry.windows.is_empty() {
            String::new()
        } else {
            format!(" and window(s) [{}]", entry.windows.join(", "))
        }
    );
    Done::new(&entry, text)
}

/// `kill_session`.
pub(crate) struct KillSession;

/// Arguments of `kill_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillSessionParams {
    /// Session to kill: its exact name, such as "work", or its id, such as "$1".
    #[schemars(length(min = 1, max = 256))]
    pub session: String,
}

impl Tool for KillSession {
    const NAME: &'static str = "kill_session";
    const TITLE: &'static str = "Kill a session";
    const DESCRIPTION: &'static str = "Kill a session and every program in it. Irreversible. \
        Refused for the session termpilot itself runs in. To stop one program, send C-c with \
        send_keys instead.";
    const TOOLSET: Toolset = Toolset::Destructive;
    const EFFECT: Effect = Effect::Destroys;
    type Params = KillSessionParams;
    type Output = KilledEntry;

    async fn call(server: &TermpilotServer, params: KillSessionParams, _: &CallContext) -> Outcome {
        let located = address::located(server, &params.session).await?;
        let session = address::session_target(located.target)?;
        killed(&located.host, located.engine.kill_session(&session).await)
    }
}

/// `kill_window`.
pub(crate) struct KillWindow;

/// Arguments of `kill_window`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillWindowParams {
    /// Window to kill: session:window, such as "work:1", or its id, such as "@3".
    #[schemars(length(min = 1, max = 256))]
    pub window: String,
}

impl Tool for KillWindow {
    const NAME: &'static str = "kill_window";
    const TITLE: &'static str = "Kill a window";
    const DESCRIPTION: &'static str = "Kill a window and every program in its panes. \
        Irreversible. Refused for the window termpilot itself runs in.";
    const TOOLSET: Toolset = Toolset::Destructive;
    const EFFECT: Effect = Effect::Destroys;
    type Params = KillWindowParams;
    type Output = KilledEntry;

    async fn call(server: &TermpilotServer, params: KillWindowParams, _: &CallContext) -> Outcome {
        let located = address::located(server, &params.window).await?;
        let window = address::window_target(located.target)?;
        killed(&located.host, located.engine.kill_window(&window).await)
    }
}

/// `kill_pane`.
pub(crate) struct KillPane;

pane_params! {
    /// Arguments of `kill_pane`.
    pub struct KillPaneParams {
    }
}

impl Tool for KillPane {
    const NAME: &'static str = "kill_pane";
    const TITLE: &'static str = "Kill a pane";
    const DESCRIPTION: &'static str = "Kill one pane and the program in it (the window closes \
        with its last pane). Irreversible. Refused for the pane termpilot itself runs in.";
    const TOOLSET: Toolset = Toolset::Destructive;
    const EFFECT: Effect = Effect::Destroys;
    type Params = KillPaneParams;
    type Output = KilledEntry;

    async fn call(server: &TermpilotServer, params: KillPaneParams, _: &CallContext) -> Outcome {
        let located = address::located(server, &params.pane).await?;
        let pane = address::pane_target(located.target)?;
        killed(&located.host, located.engine.kill_pane(&pane).await)
    }
}
