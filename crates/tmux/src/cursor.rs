//! Cursors: the positions in a pane's output the engine hands out (after
//! input, with captures and waits) and takes back (where a wait or a read
//! starts). A [`Cursor`] names its pane and the tmux server it belongs to
//! (the engine's epoch), so one from another pane or from a server that has
//! since restarted is refused instead of misread.

use termpilot_control::PaneId;
pub use termpilot_journal::Cursor;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::shell::hide_wrappers;

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
            epoch: self.epoch(),
            pane: pane.0,
            offset,
        }
    }

    /// The journal offset `cursor` names in `pane`: refused when it belongs
    /// to another pane or to an earlier tmux server. A cursor inside a
    /// secret (any offset can be forged) names the secret's start instead.
    pub fn offset_in(&self, pane: PaneId, cursor: Cursor) -> Result<u64> {
        if cursor.pane != pane.0 {
            return Err(Error::ForeignCursor { cursor, pane });
        }
        if cursor.epoch != self.epoch() {
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
