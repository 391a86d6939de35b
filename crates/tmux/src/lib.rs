//! The async tmux engine of termpilot.
//!
//! It keeps one persistent control-mode connection (`tmux -C`) per tracked
//! session, because tmux sends a pane's output only to clients attached to
//! the pane's session. Commands are pipelined on those connections and their
//! replies matched first in, first out; `%output` is decoded into a journal
//! per pane, so a caller can ask for everything a pane printed after a
//! cursor.
//!
//! Layout:
//! - [`config`]: which server to talk to.
//! - [`transport`]: where a control client's bytes come from (a local
//!   `tmux`, ssh, an exec prefix, or in-memory pipes in tests).
//! - `client`: one control client over a pipe, and the task that owns it.
//! - `engine`: tracking sessions, routing commands, reconnecting.
//! - `panes`: the pane journals and which client owns each pane's output.
//! - `ops`: the typed operations the MCP tools call. Text they return is
//!   clean, with `run_command`'s wrappers shown as the command lines typed.
//! - `format`: `tmux_format!`, the one way a tmux query is written: a
//!   record's fields give both its `-F` format string and the parser of
//!   tmux's lines (one-field ones too: a session's id, a pane's id, the
//!   server's pid).
//! - `styled`: the screen with its colours and the cursor, for pictures.
//! - `batch`: many keystroke operations as pipelined chains, and pipelines
//!   of steps (keystrokes, waits, captures, commands) with typed outcomes.
//! - [`gate`]: the input gate every typed byte and new pane's command
//!   passes: the line each pane holds, judged before it is submitted.
//! - `wait`: waiting for text or quiet in a pane's journal.
//! - `cursor`: [`Cursor`]s, the positions in a pane's output handed out and
//!   taken back, checked against their pane and tmux server (by the
//!   server's pid, [`Engine::server_pid`]).
//! - [`hosts`]: the servers one termpilot drives, `local` and those given
//!   with `--host`, each an engine connected on first use.
//! - `secret_delivery`: typing a secret through `pipe-pane -I` from a
//!   private file, so that no command line, buffer or log holds it;
//!   [`child_env`]: the variables (`env:` secrets) no child inherits.
//! - `procfs`: a pane's processes and terminal mode, read where the pane
//!   runs (`/proc` here, or one dump taken on its host).
//! - `error`: the engine's one [`Error`] enum, its variants carrying typed
//!   context; a missing target's hint is chosen by its [`TargetKind`].
//! - `targets`: parsed targets to panes, windows and sessions (session
//!   names pinned to ids); name checks.
//! - `shell`: the `run_command` driver (typing, following, the foreground
//!   check); its sans-IO part (wrappers, markers, echo rules, wrapper hiding)
//!   is the `termpilot-shell` crate, whose `echo` and `Shell` are re-exported
//!   here. A command's [`CommandReport`] says how it ended in one
//!   [`CommandEnd`].
//! - `tests` (test builds): the core above against a fake tmux over in-memory
//!   pipes, playing recorded control-mode transcripts (`src/tests/fixtures`)
//!   or a model of a tmux server; no tmux needed.
//!
//! ```no_run
//! # async fn demo() -> Result<(), termpilot_tmux::Error> {
//! use termpilot_tmux::{Engine, EngineConfig, Input, NewSession};
//! let engine = Engine::connect(EngineConfig::default()).await?;
//! let created = engine.create_session(&NewSession::default()).await?;
//! let input = Input { text: Some("echo hello".into()), enter: true, ..Input::default() };
//! let cursor = engine.send_input(created.pane, &input).await?;
//! # let _ = cursor; Ok(()) }
//! ```
#![deny(missing_docs)]

mod batch;
mod channel;
pub mod child_env;
mod client;
pub mod config;
mod cursor;
mod engine;
mod error;
mod format;
pub mod gate;
pub mod hosts;
pub mod input_state;
mod ops;
mod panes;
pub mod person;
mod procfs;
mod secret_delivery;
mod shell;
mod styled;
mod targets;
#[cfg(test)]
mod tests;
pub mod transport;
mod wait;

pub use batch::{
    BatchOp, CursorRef, Keystrokes, OpReport, OpStatus, Step, StepDriver, StepOutcome, StepStatus,
    StepWork, WorkKind,
};
pub use channel::ChannelOutcome;
pub use client::Answer;
pub use config::{EngineConfig, HostPane, Socket};
pub use cursor::{Cursor, InvalidCursor, Since};
pub use engine::{Engine, STARTED_MARK};
pub use error::{Error, Result};
pub use hosts::{HostOptions, HostSpec, Hosts, LOCAL};
pub use input_state::AwaitingInput;
pub use ops::{
    Capture, Created, Input, Killed, NewSession, NewWindow, PaneInfo, PaneScope, Scrollback,
    SessionInfo, Split, SplitDirection,
};
pub use secret_delivery::Recipients;
pub use shell::{CommandEnd, CommandReport, DEFAULT_INPUT_SETTLE, NotRun, Shell};
pub use styled::StyledCapture;
pub use termpilot_control::{
    PaneId, PaneTarget, SessionId, SessionTarget, Target, TargetKind, WindowId, WindowSlot,
    WindowTarget,
};
pub use termpilot_journal::{Needle, Redaction, Redactor};
pub use termpilot_keys::Key;
pub use termpilot_shell::echo;
pub use transport::{Local, Pipe, Remote, SshOptions, Transport};
pub use wait::{Found, Outcome, TextWait, WaitReport};
