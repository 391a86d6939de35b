//! Cursors: opaque, versioned names for a position in one pane's journal.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// The version tag every cursor string starts with. A future format gets a new tag, so
/// an old cursor is rejected with a clear message instead of being misread.
const VERSION_TAG: &str = "c1";

/// A position in one pane's output journal, as handed to callers.
///
/// Its string form is `c1.<epoch>.<pane>.<offset>` (decimal numbers), for example
/// `c1.3.12.40960`. Callers should treat it as opaque; the engine checks `epoch` and
/// `pane` so that a cursor from another pane or an earlier journal is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cursor {
    /// Which incarnation of the journal the offset belongs to (the engine bumps it when a
    /// journal is recreated, so stale offsets are recognisable).
    pub epoch: u32,
    /// The tmux pane number (`%12` is 12).
    pub pane: u32,
    /// Absolute journal offset.
    pub offset: u64,
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{VERSION_TAG}.{}.{}.{}",
            self.epoch, self.pane, self.offset
        )
    }
}

impl FromStr for Cursor {
    type Err = Error;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let invalid = |reason| Error::InvalidCursor {
            input: shortened(input),
            reason,
        };
        let mut parts = input.split('.');
        if parts.next() != Some(VERSION_TAG) {
            return Err(invalid("it does not start with \"c1.\""));
        }
        let mut field = || parts.next().ok_or_else(|| invalid("it has too few fields"));
        let epoch = field()?
            .parse()
            .map_err(|_| invalid("the epoch is not a number"))?;
        let pane = field()?
            .parse()
            .map_err(|_| invalid("the pane is not a number"))?;
        let offset = field()?
            .parse()
            .map_err(|_| invalid("the offset is not a number"))?;
        if parts.next().is_some() {
            return Err(invalid("it has too many fields"));
        }
        Ok(Cursor {
            epoch,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn display_has_documented_form() {
        let cursor = Cursor {
            epoch: 3,
            pane: 12,
            offset: 40960,
        };
        assert_eq!(cursor.to_string(), "c1.3.12.40960");
    }

    #[test]
    fn rejects_malformed_strings_with_a_reason() {
        for (input, reason) in [
            ("", "it does not start with \"c1.\""),
            ("c2.1.2.3", "it does not start with \"c1.\""),
            ("c1.1.2", "it has too few fields"),
            ("c1.1.2.3.4", "it has too many fields"),
            ("c1.x.2.3", "the epoch is not a number"),
            ("c1.1.-2.3", "the pane is not a number"),
            ("c1.1.2.", "the offset is not a number"),
        ] {
            match input.parse::<Cursor>() {
                Err(Error::InvalidCursor { reason: got, .. }) => assert_eq!(got, reason, "{input}"),
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
        fn string_form_round_trips(epoch: u32, pane: u32, offset: u64) {
            let cursor = Cursor { epoch, pane, offset };
            prop_assert_eq!(cursor.to_string().parse::<Cursor>().unwrap(), cursor);
        }
    }
}
