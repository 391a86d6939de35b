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
//! - `error`: [`Error`], everything that can go wrong between a caller and
//!   tmux, each message saying what to do next.
//! - [`transport`]: where a control client's bytes come from (a local
//!   `tmux`, ssh, an exec prefix, or in-memory pipes in tests), how a
//!   one-shot tmux command ended ([`OneShot`]), and when a new client may
//!   identify itself ([`Departures`], [`ConnectTurn`]).
//! - `connection`: one control-mode connection: the parser, the two pipe
//!   halves and the replies owed, matched first in, first out; no engine
//!   state, tested on a bare `tokio::io::duplex`.
//! - `identify`: when a new control client may identify itself (tmux
//!   3.3a's crash on a client still identifying): departures and the start
//!   lock.
//! - `client`: the task that owns a connection and applies what it reads
//!   to the engine through a narrow `Listener`, and the handles commands
//!   are sent with.
//! - `clients`: the engine's table of control clients (one per tracked
//!   session, and the quiet one).
//! - `engine`: tracking sessions, routing commands, reconnecting; the
//!   server's state (its pid, what changed, whether the host was lost).
//! - `format`: typed tmux formats (`tmux_format!`): one declaration gives
//!   the `-F` string and the parser of its lines.
//! - `panes`: the pane journals and which client owns each pane's output.
//! - `ops`: the typed operations the MCP tools call, one file per job:
//!   `listing` (sessions, panes), `lifecycle` (create, split, kill),
//!   `typing` (keys, pastes), `capture` (a pane's text, its journal). Text
//!   they return is clean, with `run_command`'s wrappers shown as typed.
//! - `format`: `tmux_format!`, the one way a tmux query is written: a
//!   record's fields give both its `-F` format string and the parser of
//!   tmux's lines (one-field ones too: a session's id, a pane's id, the
//!   server's pid).
//! - `styled`: the screen with its colours and the cursor, for pictures.
//! - `batch`: many keystroke operations as pipelined chains, and pipelines
//!   of steps: keystrokes and jobs (waits, captures, commands) the caller
//!   plans, run in order with cursors handed from step to step.
//! - [`gate`]: the input gate every typed byte and new pane's command
//!   passes: the line each pane holds, judged before it is submitted.
//! - `wait`: waiting for text or quiet in a pane's journal (the scan that
//!   skips the echo of typed input is `termpilot_shell::EchoScan`);
//!   `channel`: `wait-for` channels, each wait on a tmux process of its own.
//! - [`input_state`]: whether a pane's program waits for input, decided
//!   from kernel facts with no I/O ([`AwaitingInput`]).
//! - `cursor`: [`Cursor`]s, the positions in a pane's output handed out and
//!   taken back, checked against their pane and tmux server (by the
//!   server's pid, [`Engine::server_pid`]).
//! - [`hosts`]: the servers one termpilot drives, `local` (the engine
//!   already connected) and those given with `--host`, each an engine
//!   connected on first use.
//! - [`person`]: a person at the keyboard (`termpilot attach`): an engine
//!   on a server someone else started (`Engine::connect_existing`), holding
//!   a pane and cancelling its waits through the pane options it shares
//!   with `serve`.
//! - [`server_admin`]: a server as `termpilot status`, `stop` and `run
//!   --detachable` see it ([`ServerAdmin`]): typed one-shot queries and
//!   commands through the transport (a survey of its sessions and people,
//!   ending it, creating a detached session), never a control client, so
//!   asking changes no `list-clients` and ending kills no client of ours;
//!   no server running is a value, not an error.
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
//!   check); its sans-IO part (wrappers, markers, echo rules and echo
//!   scanning, wrapper hiding, the follower's verdicts) is the
//!   `termpilot-shell` crate, whose `echo`, `Shell` and `NotRun` are
//!   re-exported here. A command's [`CommandReport`] says how it ended in
//!   one [`CommandEnd`].
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
mod clients;
pub mod config;
mod connection;
mod cursor;
mod engine;
mod error;
mod format;
pub mod gate;
pub mod hosts;
mod identify;
pub mod input_state;
mod ops;
mod panes;
pub mod person;
mod procfs;
mod secret_delivery;
pub mod server_admin;
mod shell;
mod styled;
mod targets;
#[cfg(test)]
mod tests;
pub mod transport;
mod wait;

pub use batch::{
    BatchOp, CursorRef, JobResult, JobRun, Keystrokes, OpReport, OpStatus, PlannedStep, StepDriver,
    StepJob, StepStatus, StepWork, WorkKind,
};
pub use channel::ChannelOutcome;
pub use config::{EngineConfig, HostPane, Socket};
pub use connection::Answer;
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
pub use server_admin::{
    DetachedPane, DetachedSession, ServerAdmin, ServerSurvey, SessionSummary, StopCheck, Stopped,
};
pub use shell::{CommandEnd, CommandReport, DEFAULT_INPUT_SETTLE, NotRun, Shell};
pub use styled::StyledCapture;
pub use termpilot_control::{
    PaneId, PaneTarget, SessionId, SessionTarget, Target, TargetKind, WindowId, WindowSlot,
    WindowTarget,
};
pub use termpilot_journal::{Needle, Redaction, Redactor};
pub use termpilot_keys::Key;
pub use termpilot_shell::echo;
pub use transport::{
    ConnectTurn, Departures, Local, OneShot, Pipe, PipeProcess, Remote, ScriptEnd, SshOptions,
    Transport,
};
pub use wait::{Found, Outcome, TextWait, WaitReport};
