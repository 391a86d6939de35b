//! Shell integration of termpilot's `run_command`, with no I/O: what is typed
//! into a pane's shell, how the command's output and exit code are found in
//! the pane's output, and how the terminal's echo of typed text is told apart
//! from what programs print.
//!
//! The engine (`termpilot-tmux`) types, reads and waits; everything it
//! decides about shells from bytes and text lives here, tested on recorded
//! transcripts of bash, zsh, fish and sh (`tests/fixtures`).
//!
//! ```
//! use termpilot_journal::{Journal, Limits};
//! use termpilot_shell::{Shell, Tracker, hide_wrappers, wrapper};
//!
//! let nonce = "tp00c0ffee";
//! let typed = wrapper(Shell::Posix, "echo hi", nonce);
//! let mut journal = Journal::new(Limits::default());
//! let mut tracker = Tracker::new(nonce, journal.end(), 1 << 20);
//!
//! // What the shell prints: the echo of the wrapper, the start marker, the
//! // command's output, the end marker with the exit code, a prompt.
//! let echo = format!("$ {}\r\n", typed.replace('\n', "\r\n> "));
//! journal.append(echo.as_bytes());
//! journal.append(b"\x1b]7770;tp00c0ffee;start\x07hi\r\n\x1b]7770;tp00c0ffee;0\x07$ ");
//! tracker.advance(&journal);
//!
//! let end = tracker.last_end().expect("the end marker");
//! assert_eq!(end.code, 0);
//! assert_eq!(tracker.output(&journal, end.at).text(), "hi");
//! // A screen shows the echo as the command line alone.
//! let screen = termpilot_journal::clean_text(echo.as_bytes());
//! assert_eq!(hide_wrappers(&screen), "$ echo hi\n");
//! ```
//!
//! # Tour
//!
//! - `wrapper`: [`Shell`], the [`wrapper`] typed around a command line in each
//!   shell, and the [`new_nonce`] that makes its markers unforgeable in advance.
//! - `marker`: the markers' bytes ([`MARKER_PREFIX`]) and finding them in raw
//!   output, also when one arrives in pieces.
//! - `tracker`: [`Tracker`] follows one command through its pane's journal as
//!   output streams in: start, end markers, and the head of an output larger
//!   than the journal; [`Output::text`] is what `run_command` reports.
//! - `screen`: [`split_screens`] leaves a full-screen program's drawing
//!   out of an output; [`addresses_cursor`] tells a drawn screen from lines;
//!   [`screen_rows`] and [`changed_rows`] show a screen and its changes.
//! - `hide`: [`hide_wrappers`] turns the echo of a wrapper on a screen or in
//!   cleaned journal text back into the command line.
//! - [`echo`]: the rules that keep the echo of typed text from satisfying a
//!   wait.
//! - `verdict`: decisions of the engine's command follower from what a
//!   pane shows: whether an end marker counts yet ([`MarkerDoubt`]), why a
//!   shell did not run a line ([`not_run_verdict`], [`NotRun`]), which
//!   program a command line runs ([`program_of`]), the prompt a waiting
//!   shell shows ([`shown_prompt`]).
//! - `echo_scan`: [`EchoScan`] applies them while a wait scans a pane's
//!   journal, step by step as output arrives ([`Scanned`]).
#![deny(missing_docs)]

pub mod echo;
mod echo_scan;
mod hide;
mod marker;
mod screen;
mod tracker;
mod verdict;
mod wrapper;

pub use echo_scan::{EchoScan, Scanned};
pub use hide::{hide_wrappers, shows_wrapper};
pub use marker::MARKER_PREFIX;
pub use screen::{Screens, addresses_cursor, changed_rows, drawn_span, screen_rows, split_screens};
pub use tracker::{EndMarker, HEAD_MAX, Output, Shown, Tracker, lost_line};
pub use verdict::{MarkerDoubt, NotRun, not_run_verdict, program_of, shown_prompt};
pub use wrapper::{Shell, blames_wrapper, new_nonce, wrapper};
