//! Typed tmux formats: one declaration of a record's fields gives both the
//! `-F` format string termpilot sends and the parser of the lines tmux
//! prints for it. Fields are separated by the unit separator (0x1f), which
//! tmux never leaves raw in names it stores.
//!
//! ```ignore
//! tmux_format! {
//!     /// A pane's id and whether it is dead.
//!     struct Probe {
//!         id: Option<PaneId> = "pane_id",
//!         dead: bool = "pane_dead",
//!     }
//! }
//! // Probe::FORMAT is "#{pane_id}\x1f#{pane_dead}";
//! // Probe::parse("display-message", line) reads one line of it.
//! ```
//!
//! A field's type says how its text is read (see [`Field`]): `bool` is
//! tmux's `1`, `Option<T>` is `None` for an empty field, `String` is the text
//! as printed, and ids and numbers are parsed. A field missing from a line or
//! not of its type is an [`Error::Protocol`] naming the command and the
//! field's name.

use std::ffi::OsString;

use termpilot_control::{Command, PaneId, Reply, SessionId, WindowId};

use crate::error::{Error, Result};

/// The field separator used in every `-F` format termpilot sends.
pub(crate) const SEP: char = '\x1f';

/// A value read from one field of a tmux format line.
pub(crate) trait Field: Sized {
    /// The value of the field's text, or `None` when the text is not one.
    fn from_field(text: &str) -> Option<Self>;
}

impl Field for String {
    fn from_field(text: &str) -> Option<Self> {
        Some(text.to_owned())
    }
}

impl Field for bool {
    /// tmux prints flags as `1` and `0` (empty for an unset flag).
    fn from_field(text: &str) -> Option<Self> {
        match text.trim() {
            "1" => Some(true),
            "0" | "" => Some(false),
            _ => None,
        }
    }
}

impl<T: Field> Field for Option<T> {
    /// An empty field is `None`; any other is read as a `T`.
    fn from_field(text: &str) -> Option<Self> {
        if text.trim().is_empty() {
            Some(None)
        } else {
            T::from_field(text).map(Some)
        }
    }
}

macro_rules! parsed_fields {
    ($($ty:ty),+ $(,)?) => {$(
        impl Field for $ty {
            fn from_field(text: &str) -> Option<Self> {
                text.trim().parse().ok()
            }
        }
    )+};
}

parsed_fields!(u16, u32, u64, usize, i64, PaneId, SessionId, WindowId);

/// Reads the field `name` of a line of `command`'s output: `text` is its
/// text, `None` when the line ended before it.
pub(crate) fn field<T: Field>(command: &'static str, name: &str, text: Option<&str>) -> Result<T> {
    let Some(text) = text else {
        return Err(Error::Protocol {
            command: command.to_owned(),
            detail: format!("field {name} is missing"),
        });
    };
    T::from_field(text).ok_or_else(|| Error::Protocol {
        command: command.to_owned(),
        detail: format!("field {name} is '{text}'"),
    })
}

/// The lines of a reply, as text.
pub(crate) fn lines(reply: &Reply) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
    reply.lines.iter().map(|line| String::from_utf8_lossy(line))
}

/// The `-F` format string of the field names: `#{a}\x1f#{b}...`.
macro_rules! format_string {
    ($first:literal $(, $rest:literal)*) => {
        concat!("#{", $first, "}" $(, "\x1f#{", $rest, "}")*)
    };
}

/// Declares a record of a tmux format: a struct with one field per tmux
/// format variable, its `FORMAT` string and its parser (see the module
/// documentation). Its fields are as visible as the struct.
macro_rules! tmux_format {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident : $ty:ty = $variable:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        $vis struct $name {
            $($(#[$field_meta])* $vis $field: $ty,)+
        }

        #[allow(dead_code)]
        impl $name {
            /// The tmux variables read, in order.
            pub(crate) const FIELDS: &'static [&'static str] = &[$($variable),+];

            /// The `-F` format string: each variable, separated by 0x1f.
            pub(crate) const FORMAT: &'static str = $crate::format::format_string!($($variable),+);

            /// Reads one line of output printed for [`Self::FORMAT`] by
            /// `command` (named in errors).
            pub(crate) fn parse(command: &'static str, line: &str) -> $crate::error::Result<Self> {
                let mut texts = line.split($crate::format::SEP);
                Ok($name {
                    $($field: $crate::format::field(command, $variable, texts.next())?,)+
                })
            }

            /// Reads every line of a reply.
            pub(crate) fn parse_all(
                command: &'static str,
                reply: &termpilot_control::Reply,
            ) -> $crate::error::Result<Vec<Self>> {
                $crate::format::lines(reply)
                    .map(|line| Self::parse(command, &line))
                    .collect()
            }

            /// Reads the first line of a reply (a `display-message -p`),
            /// an empty line when there is none.
            pub(crate) fn parse_first(
                command: &'static str,
                reply: &termpilot_control::Reply,
            ) -> $crate::error::Result<Self> {
                let line = $crate::format::lines(reply).next().unwrap_or_default();
                Self::parse(command, &line)
            }
        }
    };
}

pub(crate) use {format_string, tmux_format};

tmux_format! {
    /// A session's id: a line of `list-sessions`, or what `new-session -P`
    /// and `display-message` print for a session.
    pub(crate) struct SessionIdRow {
        id: SessionId = "session_id",
    }
}

tmux_format! {
    /// A pane's id: a line of `list-panes`, or `display-message` for a pane.
    pub(crate) struct PaneIdRow {
        id: PaneId = "pane_id",
    }
}

tmux_format! {
    /// The tmux server's pid: what tells one server from the next on the
    /// same socket (the epoch of cursors).
    pub(crate) struct ServerPidRow {
        pid: u32 = "pid",
    }
}

tmux_format! {
    /// Who holds a pane, as `termpilot attach` noted it in the pane's
    /// option `crate::person::HELD_OPTION`: `None` when nobody does.
    pub(crate) struct HeldRow {
        note: Option<String> = "@termpilot_held",
    }
}

impl SessionIdRow {
    /// `list-sessions` printing one session id a line, as tmux's words.
    const LISTING: [&'static str; 3] = ["list-sessions", "-F", Self::FORMAT];

    /// The listing of every session's id, for a control client.
    pub(crate) fn listing() -> Command {
        let [name, flag, format] = Self::LISTING;
        Command::new(name).opt(flag, format)
    }

    /// The listing of every session's id, as the arguments of a `tmux`
    /// process (when no control client can ask).
    pub(crate) fn listing_args() -> Vec<OsString> {
        Self::LISTING.map(OsString::from).to_vec()
    }

    /// The session ids in the listing's output; a line that is not one is
    /// skipped.
    pub(crate) fn ids_in(output: &str) -> Vec<SessionId> {
        (output.lines())
            .filter_map(|line| Self::parse("list-sessions", line).ok())
            .map(|row| row.id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    tmux_format! {
        /// A record for the tests.
        struct Row {
            id: PaneId = "pane_id",
            dead: bool = "pane_dead",
            pid: Option<u32> = "pane_pid",
            title: String = "pane_title",
            held: Option<String> = "@termpilot_held",
        }
    }

    fn reply(lines: &[&str]) -> Reply {
        Reply {
            time: 0,
            number: 0,
            flags: 1,
            ok: true,
            lines: lines.iter().map(|l| l.as_bytes().to_vec()).collect(),
        }
    }

    #[test]
    fn the_session_listing_is_its_rows_format() {
        assert_eq!(
            SessionIdRow::listing_args(),
            ["list-sessions", "-F", "#{session_id}"].map(OsString::from)
        );
        assert_eq!(
            SessionIdRow::listing().build(),
            Command::new("list-sessions")
                .opt("-F", "#{session_id}")
                .build()
        );
        assert_eq!(
            SessionIdRow::ids_in("$1\n$12\n\nno server\n"),
            [SessionId(1), SessionId(12)]
        );
        assert_eq!(HeldRow::FIELDS, [crate::person::HELD_OPTION]);
    }

    #[test]
    fn the_format_string_names_each_field_once_in_order() {
        assert_eq!(
            Row::FORMAT,
            "#{pane_id}\x1f#{pane_dead}\x1f#{pane_pid}\x1f#{pane_title}\x1f#{@termpilot_held}"
        );
        assert_eq!(
            Row::FIELDS,
            [
                "pane_id",
                "pane_dead",
                "pane_pid",
                "pane_title",
                "@termpilot_held"
            ]
        );
    }

    #[test]
    fn a_record_is_read_by_field_type() {
        let row = Row::parse("list-panes", "%3\x1f1\x1f42\x1f a title \x1fa person").unwrap();
        assert_eq!(
            row,
            Row {
                id: "%3".parse().unwrap(),
                dead: true,
                pid: Some(42),
                title: " a title ".into(),
                held: Some("a person".into()),
            }
        );
        let empty = Row::parse("list-panes", "%4\x1f0\x1f\x1f\x1f").unwrap();
        assert!(!empty.dead);
        assert_eq!(empty.pid, None);
        assert_eq!(empty.title, "");
        assert_eq!(empty.held, None);
    }

    #[test]
    fn every_line_of_a_reply_is_a_record() {
        let rows = Row::parse_all(
            "list-panes",
            &reply(&["%1\x1f0\x1f7\x1fa\x1f", "%2\x1f1\x1f8\x1fb\x1f"]),
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].pid, Some(8));
        assert!(
            Row::parse_all("list-panes", &reply(&[]))
                .unwrap()
                .is_empty()
        );
        let first = Row::parse_first("display-message", &reply(&["%5\x1f0\x1f\x1ft\x1f"]));
        assert_eq!(first.unwrap().title, "t");
    }

    #[test]
    fn a_garbled_field_is_named_with_its_command() {
        let error = Row::parse("list-panes", "%3\x1f1\x1fnot-a-pid\x1ft\x1f").unwrap_err();
        assert!(
            matches!(&error, Error::Protocol { command, detail }
                if command == "list-panes" && detail.contains("pane_pid")),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "unexpected reply from tmux to `list-panes`: field pane_pid is 'not-a-pid'"
        );
        let flag = Row::parse("list-panes", "%3\x1fyes\x1f1\x1ft\x1f").unwrap_err();
        assert!(
            flag.to_string().contains("field pane_dead is 'yes'"),
            "{flag}"
        );
        let id = Row::parse("display-message", "3\x1f1\x1f1\x1ft\x1f").unwrap_err();
        assert!(
            id.to_string().contains("`display-message`: field pane_id"),
            "{id}"
        );
    }

    #[test]
    fn a_missing_field_is_named_with_its_command() {
        let error = Row::parse("display-message", "%3\x1f1").unwrap_err();
        assert!(
            matches!(&error, Error::Protocol { command, detail }
                if command == "display-message" && detail == "field pane_pid is missing"),
            "{error:?}"
        );
        let empty = Row::parse_first("display-message", &reply(&[])).unwrap_err();
        assert!(empty.to_string().contains("field pane_id is ''"), "{empty}");
    }
}
