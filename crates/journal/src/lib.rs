//! A per-pane, append-only journal of terminal output.
//!
//! tmux streams each pane's output (`%output`) to termpilot; the engine appends the
//! decoded bytes to that pane's [`Journal`]. Every byte gets an absolute offset, so an
//! offset taken before some keys were sent still names the exact place where their
//! output begins, and a wait can scan every byte after it: nothing that scrolled by is
//! missed. Memory is bounded ([`Limits`]); reading from a position that was evicted, or
//! across a [`Gap`] where tmux dropped output, reports how much is missing.
//!
//! ```
//! use termpilot_journal::{Journal, Limits, Pattern, Scanner};
//!
//! let mut journal = Journal::new(Limits::default());
//! let before = journal.end(); // what send_keys hands out as a cursor
//! journal.append(b"$ make\r\n\x1b[1;31merror\x1b[0m: no rule\r\n");
//!
//! let read = journal.read_from(before);
//! assert_eq!((read.lost, read.bytes.len() as u64), (0, journal.end() - before));
//!
//! // A wait keeps a scanner and calls it again whenever output arrives.
//! let pattern = Pattern::literals(["error:", "Password: "], true)?;
//! let mut scanner = Scanner::new(pattern, before);
//! let found = scanner.scan(&journal).found.expect("a match");
//! assert_eq!((found.pattern, found.line.as_str()), (0, "error: no rule"));
//! assert_eq!(found.line_end, journal.end());
//! # Ok::<(), termpilot_journal::Error>(())
//! ```
//!
//! # Tour
//!
//! - `journal`: [`Journal`] holds raw bytes and gaps with absolute offsets, evicts whole
//!   chunks oldest first, and keeps a snapshot of the cleaner's state at each chunk so
//!   that reading can start anywhere.
//! - [`clean`]: the streaming [`Cleaner`](clean::Cleaner) that strips control sequences
//!   and reports text, line ends and carriage returns; [`clean_text`] for a person's view.
//! - `row`: one line collapsed as a terminal shows it (carriage returns overwrite).
//! - `replay`: cleaner plus collapser driven over a journal from any offset.
//! - `scan` and `pattern`: [`Scanner`] / [`Journal::find`] and what they look for.
//! - `lines`: [`Journal::lines`], the cleaned line view.
//! - [`redact`]: the one [`Redactor`] every text leaving the engine passes, and that
//!   waits match over (a [`Scanner`] given a [`Redaction`] never sees a secret).
//! - `size`: [`Journal::resize`] and [`Journal::sizes`], the pane's size along its output.
//! - `gap`: dropped output.
#![deny(missing_docs)]

pub mod clean;
mod error;
mod gap;
mod journal;
mod lines;
mod pattern;
pub mod redact;
mod replay;
mod row;
mod scan;
mod size;

pub use clean::clean_text;
pub use error::Error;
pub use gap::{Gap, GapReason};
pub use journal::{Arrival, Journal, Limits, Read};
pub use lines::{Line, LineView};
pub use pattern::{Needle, Pattern};
pub use redact::{Redaction, Redactor};
pub use scan::{Match, Scan, Scanner};
pub use size::{Resize, SizesBetween};
