//! Typed operations on tmux: what the MCP tools call, one file per job.
//!
//! - `listing`: sessions and panes (`list_sessions`, `list_panes`).
//! - `lifecycle`: creating and killing sessions, windows and panes.
//! - `typing`: keystrokes and pastes into a pane.
//! - `capture`: a pane's text, and its journal.
//!
//! Each `tmux_format!` row sits beside the query that reads it.

mod capture;
mod lifecycle;
mod listing;
mod typing;

pub(crate) use capture::without_wrappers;
pub use capture::{Capture, Scrollback};
pub use lifecycle::{Created, Killed, NewSession, NewWindow, Split, SplitDirection};
pub use listing::{PaneInfo, PaneScope, SessionInfo};
pub use typing::Input;
pub(crate) use typing::{input_commands, paste_commands};
