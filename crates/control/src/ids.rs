//! Typed tmux object ids: `%12` for panes, `@3` for windows, `$0` for sessions.
//!
//! tmux gives every pane, window and session a server-wide number that never changes
//! while the object lives, and writes it with a one-character sigil. Parsing ids at
//! the protocol boundary keeps strings such as `"%3"` out of the rest of termpilot.

use std::fmt;
use std::str::FromStr;

/// An id string that is not of the expected kind, such as `@3` where a pane id was due.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {kind} id such as {example}, got '{got}'")]
pub struct ParseIdError {
    /// What was expected, with its article: `"a pane"`, `"a window"` or `"a session"`.
    kind: &'static str,
    /// A valid example of the expected kind, for the message.
    example: &'static str,
    /// The text that failed to parse.
    got: String,
}

/// Parses `sigil` followed by one or more ASCII digits into a `u32`.
///
/// Signs, spaces and empty numbers are rejected: tmux never writes them, and
/// `u32::from_str` alone would accept a leading `+`.
pub(crate) fn parse_sigil_number(text: &[u8], sigil: u8) -> Option<u32> {
    let digits = text.strip_prefix(&[sigil])?;
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Defines one id newtype with its sigil, `Display`, `FromStr` and byte parsing.
macro_rules! define_id {
    ($(#[$doc:meta])* $name:ident, $sigil:literal, $kind:literal, $example:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            /// The character tmux writes before the number.
            pub const SIGIL: char = $sigil as char;

            /// Parses the id from raw protocol bytes; `None` unless the bytes are exactly
            /// the sigil followed by decimal digits that fit in a `u32`.
            pub fn parse_bytes(text: &[u8]) -> Option<Self> {
                parse_sigil_number(text, $sigil).map(Self)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", Self::SIGIL, self.0)
            }
        }

        impl FromStr for $name {
            type Err = ParseIdError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Self::parse_bytes(text.as_bytes()).ok_or_else(|| ParseIdError {
                    kind: $kind,
                    example: $example,
                    got: text.to_owned(),
                })
            }
        }
    };
}

define_id!(
    /// A pane id, written `%N` by tmux. Pane ids address a pane across sessions.
    PaneId,
    b'%',
    "a pane",
    "%3"
);
define_id!(
    /// A window id, written `@N` by tmux.
    WindowId,
    b'@',
    "a window",
    "@3"
);
define_id!(
    /// A session id, written `$N` by tmux.
    SessionId,
    b'$',
    "a session",
    "$3"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_display_with_their_sigil() {
        assert_eq!(PaneId(12).to_string(), "%12");
        assert_eq!(WindowId(3).to_string(), "@3");
        assert_eq!(SessionId(0).to_string(), "$0");
    }

    #[test]
    fn ids_parse_from_their_display_form() {
        assert_eq!("%12".parse::<PaneId>(), Ok(PaneId(12)));
        assert_eq!("@3".parse::<WindowId>(), Ok(WindowId(3)));
        assert_eq!("$0".parse::<SessionId>(), Ok(SessionId(0)));
        assert_eq!("%4294967295".parse::<PaneId>(), Ok(PaneId(u32::MAX)));
    }

    #[test]
    fn malformed_ids_are_rejected() {
        for bad in [
            "",
            "%",
            "12",
            "@3",
            "%+1",
            "%-1",
            "% 1",
            "%1 ",
            "%4294967296",
            "%1a",
        ] {
            assert!(
                bad.parse::<PaneId>().is_err(),
                "{bad:?} parsed as a pane id"
            );
        }
        assert!("%3".parse::<WindowId>().is_err());
        assert!("%3".parse::<SessionId>().is_err());
    }

    #[test]
    fn parse_error_message_says_what_was_expected() {
        let err = "x".parse::<PaneId>().unwrap_err();
        assert_eq!(err.to_string(), "expected a pane id such as %3, got 'x'");
        let err = "%1".parse::<SessionId>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected a session id such as $3, got '%1'"
        );
    }

    #[test]
    fn ids_order_by_number() {
        assert!(PaneId(2) < PaneId(10));
    }
}
