//! Runs a command in a pseudo-terminal behind the user's terminal, with key bindings.
//!
//! When a program runs interactively with the user's terminal in raw mode, every key goes
//! to the program: the host cannot see Ctrl+C, so it cannot cancel, detach or take
//! control. A [`Session`] sits in between. It spawns the command in a PTY of the user's
//! size, puts the user's terminal in raw mode (restored on every way out: normal exit,
//! error, panic, SIGTERM, SIGHUP), passes the user's input through a
//! [`KeySequenceMatcher`](termpilot_keys::KeySequenceMatcher) that turns bound key
//! sequences into [`Action`]s, mirrors the child's output to the terminal and appends it
//! to a [`Journal`](termpilot_journal::Journal), and returns how the child ended.
//!
//! ```no_run
//! use std::process::Command;
//! use termpilot_keys::parse_sequence;
//! use termpilot_pty::{Action, Session};
//!
//! let mut vim = Command::new("vim");
//! vim.arg("notes.txt");
//! let report = Session::builder(vim)
//!     .bind(parse_sequence("C-]")?, Action::Terminate)
//!     .bind(parse_sequence("F12")?, Action::Callback(Box::new(|| eprintln!("F12!"))))
//!     .run()?;
//! std::process::exit(report.outcome.exit_code().into());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Bindings can also be written the way `termpilot run --bind` takes them:
//!
//! ```
//! use termpilot_pty::{Action, parse_binding};
//!
//! let (keys, action) = parse_binding("C-x C-c=event:quit")?;
//! assert_eq!(keys.len(), 2);
//! assert!(matches!(action, Action::Event(name) if name == "quit"));
//! assert!(parse_binding("C-c=explode").is_err());
//! # Ok::<(), termpilot_pty::Error>(())
//! ```
//!
//! # Tour
//!
//! - [`session`]: [`SessionBuilder`] collects the command and bindings, [`Session`] owns a
//!   running child and its PTY; `run` drives it to the end and returns a [`Report`].
//! - `pump`: the single-threaded `poll(2)` loop that moves bytes between the user's
//!   terminal and the PTY, with `dispatch` carrying out actions in input order.
//! - `child`: spawning in a PTY and signalling the child's process groups.
//! - [`terminal`]: the user's side ([`Terminal`]) and `raw_mode`, the guard and panic
//!   hook that put it back.
//! - `signals`: SIGWINCH, SIGCHLD and the shutdown signals turned into poll wake-ups.
//! - [`action`]: what a binding does and the `SEQ=ACTION` syntax; `events`: the JSON
//!   lines that `event:` bindings write.
#![deny(missing_docs)]

pub mod action;
mod child;
mod dispatch;
mod error;
mod events;
mod pump;
mod raw_mode;
pub mod session;
mod signals;
pub mod terminal;

pub use action::{Action, parse_binding};
pub use error::Error;
pub use session::{Outcome, Report, Session, SessionBuilder};
pub use terminal::Terminal;
