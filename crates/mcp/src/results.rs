//! Tool results: the `structuredContent` of each tool, published as its
//! `outputSchema`.

use schemars::JsonSchema;
use serde::Serialize;
use termpilot_tmux::{Created, Killed, PaneInfo, SessionInfo};

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
        }
    }
}

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

impl From<Created> for CreatedEntry {
    fn from(created: Created) -> Self {
        CreatedEntry {
            session: created.session.to_string(),
            session_name: created.session_name,
            window: created.window.to_string(),
            window_index: created.window_index,
            pane: created.pane.to_string(),
        }
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

impl From<Killed> for KilledEntry {
    fn from(killed: Killed) -> Self {
        KilledEntry {
            session: killed.session.to_string(),
            windows: killed.windows.iter().map(ToString::to_string).collect(),
            panes: killed.panes.iter().map(ToString::to_string).collect(),
        }
    }
}

/// Result of `send_keys` and `paste_text`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SentEntry {
    /// The pane id the input went to.
    pub pane: String,
    /// Position in the pane's output from just before the input. Give it as
    /// `since` to a later wait or read so output the input caused is never missed.
    pub cursor: String,
}

/// Result of `capture_pane`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CaptureEntry {
    /// The pane id.
    pub pane: String,
    /// The pane's text: control sequences removed, wrapped lines joined, trailing blank
    /// lines dropped; the middle elided when over budget.
    pub text: String,
    /// Whether part of the text was left out.
    pub truncated: bool,
    /// Lines in the full capture.
    pub total_lines: usize,
    /// Lines left out of `text`.
    pub omitted_lines: usize,
    /// Bytes left out of `text`.
    pub omitted_bytes: usize,
    /// Id under which the full text is kept when it was cut, for `read_output`.
    pub output_id: Option<String>,
    /// Position in the pane's output at the moment of the capture.
    pub cursor: String,
    /// A full-screen program is on the alternate screen (the capture shows its screen).
    pub alternate_screen: bool,
    /// The pane is in copy mode or another tmux mode.
    pub in_mode: bool,
    /// Lines of history the pane holds above the screen.
    pub history_size: u64,
}
