//! Cursors: the positions in a pane's output the engine hands out (after
//! input, with captures and waits) and takes back (where a wait or a read
//! starts). A [`Cursor`] names its pane and the tmux server it belongs to
//! (that server's pid), so one from another pane or from a server that has
//! since restarted is refused instead of misread: tmux numbers panes anew
//! in every server, so `%3` of the next server is another pane.
//!
//! Its string form is `c1.<server pid>.<pane>.<offset>`, for example
//! `c1.4242.12.40960` (`%12`, byte 40960 of its journal). Callers treat it
//! as opaque; the version tag lets a future form refuse an old cursor with a
//! clear message instead of misreading it.

use std::fmt;
use std::str::FromStr;

use termpilot_control::PaneId;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::shell::hide_wrappers;

/// The version tag every cursor string starts with.
const VERSION_TAG: &str = "c1";

/// A position in one pane's output journal, as handed to callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cursor {
    /// The pid of the tmux server the pane belongs to, read when the engine
    /// connects ([`Engine::server_pid`]): a server started anew on the same
    /// socket has another pid, and its pane ids name other panes.
    pub server_pid: u32,
    /// The pane.
    pub pane: PaneId,
    /// The offset in the pane's journal, counted in bytes from the pane's
    /// first output.
    pub offset: u64,
}

/// A string that is not a cursor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid cursor '{input}': {reason}; use a cursor returned by an earlier call")]
pub struct InvalidCursor {
    /// The string, shortened to at most 64 characters.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Cursor {
            server_pid,
            pane,
            offset,
        } = self;
        write!(f, "{VERSION_TAG}.{server_pid}.{}.{offset}", pane.0)
    }
}

impl FromStr for Cursor {
    type Err = InvalidCursor;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let invalid = |reason| InvalidCursor {
            input: shortened(input),
            reason,
        };
        let mut parts = input.split('.');
        if parts.next() != Some(VERSION_TAG) {
            return Err(invalid("it does not start with \"c1.\""));
        }
        let mut field = || parts.next().ok_or_else(|| invalid("it has too few fields"));
        let server_pid =
            (field()?.parse()).map_err(|_| invalid("the server's pid is not a number"))?;
        let pane = (field()?.parse())
            .map_err(|_| invalid("the pane is not a number"))
            .map(PaneId)?;
        let offset = (field()?.parse()).map_err(|_| invalid("the offset is not a number"))?;
        if parts.next().is_some() {
            return Err(invalid("it has too many fields"));
        }
        Ok(Cursor {
            server_pid,
            pane,
            offset,
        })
    }
}

/// Keeps error messages short even when a caller passes a huge string.
fn shortened(input: &str) -> String {
    const MAX_CHARS: usize = 64;
    match input.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}...", &input[..cut]),
        None => input.to_owned(),
    }
}

/// What a pane printed after a cursor.
#[derive(Debug, Clone)]
pub struct Since {
    /// The output, control sequences removed and `run_command`'s wrappers
    /// shown as the command lines typed.
    pub text: String,
    /// Bytes of output after the cursor that the journal no longer holds.
    pub lost_bytes: u64,
    /// Where the output read ends: the cursor to read from next time.
    pub cursor: Cursor,
}

impl Engine {
    /// The cursor naming `offset` in `pane`'s journal on the current server.
    pub(crate) fn cursor(&self, pane: PaneId, offset: u64) -> Cursor {
        Cursor {
            server_pid: self.server_pid(),
            pane,
            offset,
        }
    }

    /// The journal offset `cursor` names in `pane`: refused when it belongs
    /// to another pane or to an earlier tmux server. A cursor inside a
    /// secret (any offset can be forged) names the secret's start instead.
    pub fn offset_in(&self, pane: PaneId, cursor: Cursor) -> Result<u64> {
        if cursor.pane != pane {
            return Err(Error::ForeignCursor { cursor, pane });
        }
        if cursor.server_pid != self.server_pid() {
            return Err(Error::StaleCursor { cursor });
        }
        Ok(self.outside_secrets(pane, cursor.offset))
    }

    /// [`Engine::offset_in`] for an optional cursor.
    pub(crate) fn since_offset(&self, pane: PaneId, since: Option<Cursor>) -> Result<Option<u64>> {
        since.map(|cursor| self.offset_in(pane, cursor)).transpose()
    }

    /// Everything `pane` printed after `since`, up to now (a round trip
    /// through its client makes sure every byte printed before the call is
    /// in).
    pub async fn read_since(&self, pane: PaneId, since: Cursor) -> Result<Since> {
        let from = self.offset_in(pane, since)?;
        let end = self.sync_pane(pane).await?;
        let (bytes, lost_bytes) = self.read_journal(pane, |journal| {
            let read = journal.read_from(from);
            (read.bytes.into_owned(), read.lost)
        });
        let text = termpilot_journal::clean_text(&bytes);
        Ok(Since {
            // A secret still arriving shows none of its first characters;
            // a read from the cursor returned gets it whole (`offset_in`).
            text: self.redaction().redact_unfinished(&hide_wrappers(&text)),
            lost_bytes,
            cursor: self.cursor(pane, end.offset.max(from)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn display_has_documented_form() {
        let cursor = Cursor {
            server_pid: 4242,
            pane: PaneId(12),
            offset: 40960,
        };
        assert_eq!(cursor.to_string(), "c1.4242.12.40960");
    }

    #[test]
    fn rejects_malformed_strings_with_a_reason() {
        for (input, reason) in [
            ("", "it does not start with \"c1.\""),
            ("c2.1.2.3", "it does not start with \"c1.\""),
            ("c1.1.2", "it has too few fields"),
            ("c1.1.2.3.4", "it has too many fields"),
            ("c1.x.2.3", "the server's pid is not a number"),
            ("c1.1.-2.3", "the pane is not a number"),
            ("c1.1.2.", "the offset is not a number"),
        ] {
            match input.parse::<Cursor>() {
                Err(InvalidCursor { reason: got, .. }) => assert_eq!(got, reason, "{input}"),
                other => panic!("{input:?} parsed as {other:?}"),
            }
        }
    }

    #[test]
    fn error_message_shortens_huge_input() {
        let huge = "y".repeat(10_000);
        let message = huge.parse::<Cursor>().unwrap_err().to_string();
        assert!(message.len() < 200, "{message}");
    }

    proptest! {
        #[test]
        fn string_form_round_trips(server_pid: u32, pane: u32, offset: u64) {
            let cursor = Cursor { server_pid, pane: PaneId(pane), offset };
            prop_assert_eq!(cursor.to_string().parse::<Cursor>().unwrap(), cursor);
        }
    }
}
