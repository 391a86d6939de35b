//! Session and window names that tmux stores exactly as given, and the format
//! escaping that gets them (and directories) past tmux's format expansion.
//!
//! # What tmux 3.3a does to a name (checked against a real server)
//!
//! - `new-session -s`, `new-window -n` and every `-c` directory are format
//!   expanded: `#(cmd)` runs a shell command, `#h` becomes the host name,
//!   `#{...}` any variable. [`escape_format`] doubles every `#`, which tmux
//!   expands back to one `#` and nothing else.
//! - A session name then goes through `session_check_name`: `:` and `.` become
//!   `_`, and `vis(3)` adds a backslash before `\` and sometimes before `$`, and
//!   writes control characters as escapes. [`Name`] refuses those characters
//!   instead of letting tmux create a session under another name.
//! - Targets are not format expanded, but they have syntax of their own
//!   (`session:window.pane`, ids, relative tokens): [`Name`] also refuses what
//!   would make a name unreadable in a target (see [`crate::target`]).

use std::fmt;

/// What a name belongs to, for messages and the rules that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A session name.
    Session,
    /// A window name.
    Window,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameKind::Session => "session",
            NameKind::Window => "window",
        })
    }
}

/// A name that is not accepted, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{kind} name '{name}' is refused: {reason}; names may hold letters, digits, spaces and \
     punctuation except : . $ \\ (and no control characters), and may not start with one of \
     - + = ~ ! ^ {{ @ %"
)]
pub struct NameError {
    /// Session or window.
    pub kind: NameKind,
    /// The name as given.
    pub name: String,
    /// Why it is refused.
    pub reason: String,
}

/// A session or window name that tmux stores unchanged and that a target can
/// name exactly.
///
/// ```
/// use termpilot_control::name::Name;
///
/// let name = Name::session("build #2").unwrap();
/// assert_eq!(name.as_str(), "build #2");
/// assert_eq!(name.to_format(), "build ##2");
/// assert!(Name::session("a:b").unwrap_err().to_string().contains("'_'"));
/// assert!(Name::window("3").is_err(), "digits alone read as a window index");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Name(String);

impl Name {
    /// A session name, if tmux would store it unchanged.
    pub fn session(text: &str) -> Result<Name, NameError> {
        Name::new(NameKind::Session, text)
    }

    /// A window name, if tmux would store it unchanged and a target can tell
    /// it from a window index.
    pub fn window(text: &str) -> Result<Name, NameError> {
        Name::new(NameKind::Window, text)
    }

    /// A name of the given kind.
    pub fn new(kind: NameKind, text: &str) -> Result<Name, NameError> {
        match refusal(kind, text) {
            None => Ok(Name(text.to_owned())),
            Some(reason) => Err(NameError {
                kind,
                name: text.to_owned(),
                reason,
            }),
        }
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name as a tmux format that expands to exactly the name.
    pub fn to_format(&self) -> String {
        escape_format(&self.0)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why `text` is not a good name of `kind`, if it is not.
fn refusal(kind: NameKind, text: &str) -> Option<String> {
    let Some(first) = text.chars().next() else {
        return Some("it is empty".to_owned());
    };
    if text.contains('\0') {
        return Some("it contains a NUL character, which tmux cannot receive".to_owned());
    }
    if let Some(control) = text.chars().find(|c| c.is_control()) {
        return Some(format!(
            "it contains the control character U+{:04X}, which tmux would store as an escape",
            u32::from(control)
        ));
    }
    if let Some(meaning) = special_start(first) {
        return Some(format!(
            "it starts with '{first}', which in a target means {meaning}"
        ));
    }
    if let Some(bad) = text.chars().find(|c| matches!(c, ':' | '.')) {
        return Some(format!(
            "it contains '{bad}', which tmux changes to '_' in session names and which \
             separates the parts of a target"
        ));
    }
    if let Some(bad) = text.chars().find(|c| matches!(c, '$' | '\\')) {
        return Some(format!(
            "it contains '{bad}', before which tmux adds a backslash in session names"
        ));
    }
    if kind == NameKind::Window && reads_as_index(text) {
        return Some(
            "a number (even after spaces) would read as a window index in a target".to_owned(),
        );
    }
    None
}

/// Whether tmux reads `text` as a window index: it tries `strtonum` before
/// names (even for an `=` name), which takes leading spaces and a `+`.
fn reads_as_index(text: &str) -> bool {
    let number = text.trim_start_matches(' ');
    let digits = number.strip_prefix('+').unwrap_or(number);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

/// What a target part starting with `first` means to tmux, if anything.
pub(crate) fn special_start(first: char) -> Option<&'static str> {
    Some(match first {
        '-' | '+' => "an offset from the current window or pane (or, first, a flag)",
        '=' => "tmux's exact-match prefix",
        '~' => "the marked pane",
        '!' => "the previously used window or pane",
        '^' => "the first window",
        '{' => "a special token such as {next} or {last}",
        '@' => "a window id",
        '%' => "a pane id",
        '$' => "a session id (or the last window)",
        _ => return None,
    })
}

/// Escapes `text` for a tmux format: every `#` doubled, so tmux's expansion
/// gives back exactly `text` and runs nothing.
///
/// ```
/// use termpilot_control::name::{escape_format, format_literal};
///
/// assert_eq!(escape_format("#(touch x) #h"), "##(touch x) ##h");
/// assert_eq!(format_literal(&escape_format("a#{b}#")).as_deref(), Some("a#{b}#"));
/// ```
pub fn escape_format(text: &str) -> String {
    text.replace('#', "##")
}

/// What tmux 3.3a's `format_expand` makes of `format` when the format asks
/// for no expansion: `##` is one `#`, other text is itself. `None` when
/// `format` has a `#` followed by anything else (`#(`, `#{`, `#h`, a lone
/// trailing `#`), which tmux would treat as a format or an alias.
///
/// This is a model of tmux's expander for checking [`escape_format`], and is
/// stricter than tmux (which leaves some `#` sequences alone).
pub fn format_literal(format: &str) -> Option<String> {
    let mut literal = String::with_capacity(format.len());
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c == '#' && chars.next()? != '#' {
            return None;
        }
        literal.push(c);
    }
    Some(literal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_names_are_kept_as_given() {
        for text in [
            "work",
            "0",
            "build #2",
            "#h",
            "#(touch x)",
            "a b",
            "日本",
            "web-old",
            "a_b",
            "x=y",
            "a~",
            "a{b}",
            "a*?[",
        ] {
            assert_eq!(Name::session(text).unwrap().as_str(), text);
        }
        assert_eq!(Name::window("editor").unwrap().as_str(), "editor");
        assert_eq!(Name::window("v2").unwrap().as_str(), "v2");
    }

    #[test]
    fn names_tmux_would_change_are_refused_saying_why() {
        for (text, says) in [
            ("a:b", "':'"),
            ("a.b", "'.'"),
            ("a$b", "'$'"),
            ("a\\b", "'\\'"),
            ("a\tb", "U+0009"),
            ("a\0b", "NUL"),
            ("a\u{85}b", "U+0085"),
            ("", "empty"),
        ] {
            let err = Name::session(text).unwrap_err();
            assert!(err.to_string().contains(says), "{text:?}: {err}");
            assert!(err.to_string().contains("session name"), "{err}");
        }
    }

    #[test]
    fn names_that_read_as_target_syntax_are_refused() {
        for text in ["-t", "+1", "=x", "~", "!", "^", "{next}", "@1", "%1", "-"] {
            let err = Name::session(text).unwrap_err();
            assert!(err.to_string().contains("starts with"), "{text:?}: {err}");
        }
        for text in ["12", " 5", "  +5"] {
            let err = Name::window(text).unwrap_err();
            assert!(err.to_string().contains("window index"), "{text:?}: {err}");
        }
        assert!(Name::window("5 ").is_ok() && Name::window(" 5a").is_ok());
        assert!(
            Name::session("12").is_ok(),
            "tmux's own session names are digits"
        );
    }

    #[test]
    fn escaping_doubles_every_hash_and_nothing_else() {
        assert_eq!(escape_format("plain"), "plain");
        assert_eq!(escape_format("##"), "####");
        assert_eq!(escape_format("#{pane_id}"), "##{pane_id}");
        assert_eq!(Name::window("w#h").unwrap().to_format(), "w##h");
    }

    #[test]
    fn the_format_model_refuses_what_tmux_would_expand() {
        for format in ["#h", "#(x)", "#{x}", "x#", "#,"] {
            assert_eq!(format_literal(format), None, "{format}");
        }
        assert_eq!(format_literal("a##b").as_deref(), Some("a#b"));
        assert_eq!(format_literal("").as_deref(), Some(""));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn escaped_text_expands_to_itself(text in "[#a-z{}()#]{0,24}|\\PC{0,24}") {
            prop_assert_eq!(format_literal(&escape_format(&text)), Some(text));
        }

        #[test]
        fn accepted_names_hold_nothing_tmux_changes(text in "\\PC{0,16}|[-+=~!^{@%$:.\\\\#a]{1,4}") {
            if let Ok(name) = Name::session(&text) {
                prop_assert!(!name.as_str().contains([':', '.', '$', '\\']));
                prop_assert!(!name.as_str().chars().any(char::is_control));
                prop_assert_eq!(format_literal(&name.to_format()), Some(text));
            }
        }
    }
}
