//! Targets as termpilot accepts them: an id, or `session:window.pane` spelled out.
//!
//! tmux reads a target relative to "the current" client, session, window and
//! pane whenever a part is missing or special: `.` and `:` are the current
//! pane, `-t` an offset, `{next}` the next window, `main:^` the first window,
//! and a name is matched as a prefix or a pattern. For a server without a
//! person at the keyboard "the current" is whatever tmux picks, so termpilot
//! accepts only targets that name one thing outright, parses them here, and
//! builds the string tmux sees from the parsed value (with `=` so that names
//! match exactly):
//!
//! | target | accepted |
//! |---|---|
//! | pane | `%3`, or `SESSION:WINDOW.PANE` such as `work:1.0` |
//! | window | `@2`, or `SESSION:WINDOW` such as `work:1` |
//! | session | `$1`, or an exact name such as `work` |
//!
//! `SESSION` is an exact name or an id (`$1`), `WINDOW` an index, an id (`@2`)
//! or an exact name, `PANE` an index. Everything else is refused with a
//! [`TargetError`] saying why and what is accepted.
//!
//! ```
//! use termpilot_control::target::{PaneTarget, SessionTarget};
//!
//! let pane: PaneTarget = "work:editor.1".parse().unwrap();
//! assert_eq!(pane.tmux(), "=work:=editor.1");
//! assert_eq!(pane.to_string(), "work:editor.1");
//! assert!("main:^".parse::<PaneTarget>().is_err());
//! assert_eq!("web".parse::<SessionTarget>().unwrap().tmux(), "=web:");
//! ```

use std::fmt;
use std::str::FromStr;

use crate::ids::{PaneId, SessionId, WindowId};
use crate::name::{Name, special_start};

/// The largest window or pane index tmux accepts (`INT_MAX`).
const MAX_INDEX: u32 = i32::MAX as u32;

/// What a target was meant to name, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A pane.
    Pane,
    /// A window.
    Window,
    /// A session.
    Session,
    /// A session, with the index a new window should take.
    NewWindow,
}

impl TargetKind {
    /// What the target names, as a word for messages: "pane", "window" or
    /// "session" (a new window's target names a session).
    pub fn noun(self) -> &'static str {
        match self {
            TargetKind::Pane => "pane",
            TargetKind::Window => "window",
            TargetKind::Session | TargetKind::NewWindow => "session",
        }
    }

    fn accepted(self) -> &'static str {
        match self {
            TargetKind::Pane => {
                "name a pane by its id, such as \"%3\" (see list_panes), or as \
                 session:window.pane, such as \"work:1.0\" (the session by exact name or id such \
                 as $1, the window by index, id such as @2 or exact name, the pane by index)"
            }
            TargetKind::Window => {
                "name a window by its id, such as \"@2\" (see list_panes), or as session:window, \
                 such as \"work:1\" (the session by exact name or id such as $1, the window by \
                 index, id or exact name)"
            }
            TargetKind::Session => {
                "name a session by its exact name, such as \"work\", or its id, such as \"$1\" \
                 (see list_sessions)"
            }
            TargetKind::NewWindow => {
                "name a session by its exact name, such as \"work\", or its id, such as \"$1\" \
                 (see list_sessions), optionally with the new window's index, such as \"work:5\""
            }
        }
    }
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// A target that is not accepted, with the reason and the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} target '{target}' is refused: {reason}; {}", kind.noun(), kind.accepted())]
pub struct TargetError {
    /// What the target was meant to name.
    pub kind: TargetKind,
    /// The target as given.
    pub target: String,
    /// Why it is refused.
    pub reason: String,
}

/// A target as the caller wrote it, with what it names: parsed once, where
/// it enters termpilot (an MCP argument), and handed to the engine as it is.
/// The engine acts on `parsed` and names `text` in its messages (a target
/// that names nothing is reported as the caller wrote it).
///
/// ```
/// use termpilot_control::target::{SessionTarget, Target};
///
/// let session: Target<SessionTarget> = "work".parse().unwrap();
/// assert_eq!((session.text.as_str(), session.parsed.tmux()), ("work", "=work:".into()));
/// assert!("work:^".parse::<Target<SessionTarget>>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target<T> {
    /// The target as written.
    pub text: String,
    /// What it names.
    pub parsed: T,
}

impl<T: FromStr<Err = TargetError>> FromStr for Target<T> {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Target {
            text: text.to_owned(),
            parsed: text.parse()?,
        })
    }
}

impl<T: fmt::Display> From<T> for Target<T> {
    /// A target termpilot names itself (such as a window it just made): its
    /// text is how it displays.
    fn from(parsed: T) -> Self {
        Target {
            text: parsed.to_string(),
            parsed,
        }
    }
}

impl<T> fmt::Display for Target<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A session: by id or by exact name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SessionTarget {
    /// A session id (`$1`).
    Id(SessionId),
    /// An exact session name.
    Name(Name),
}

/// A window within a session: by id, index or exact name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WindowRef {
    /// A window id (`@2`); it must be in the session.
    Id(WindowId),
    /// A window index in the session.
    Index(u32),
    /// An exact window name.
    Name(Name),
}

/// A window: by id, or as `session:window`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WindowTarget {
    /// A window id (`@2`).
    Id(WindowId),
    /// A window of a session.
    In {
        /// The session.
        session: SessionTarget,
        /// The window in it.
        window: WindowRef,
    },
}

/// A pane: by id, or as `session:window.pane`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PaneTarget {
    /// A pane id (`%3`).
    Id(PaneId),
    /// A pane of a window of a session.
    In {
        /// The session.
        session: SessionTarget,
        /// The window in it.
        window: WindowRef,
        /// The pane's index in the window.
        pane: u32,
    },
}

/// Where a new window goes: a session, and optionally the window's index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WindowSlot {
    /// The session.
    pub session: SessionTarget,
    /// The index the new window takes; the next free one when absent.
    pub index: Option<u32>,
}

impl SessionTarget {
    /// The target as tmux should read it: `$1:` or `=NAME:` (the colon makes
    /// tmux read it as a session whatever the command expects).
    pub fn tmux(&self) -> String {
        format!("{}:", self.part())
    }

    /// The session's name, when the target names it.
    pub fn name(&self) -> Option<&Name> {
        match self {
            SessionTarget::Name(name) => Some(name),
            SessionTarget::Id(_) => None,
        }
    }

    fn part(&self) -> String {
        match self {
            SessionTarget::Id(id) => id.to_string(),
            SessionTarget::Name(name) => format!("={name}"),
        }
    }
}

impl WindowRef {
    fn part(&self) -> String {
        match self {
            WindowRef::Id(id) => id.to_string(),
            WindowRef::Index(index) => index.to_string(),
            WindowRef::Name(name) => format!("={name}"),
        }
    }
}

impl WindowTarget {
    /// The target as tmux should read it.
    pub fn tmux(&self) -> String {
        match self {
            WindowTarget::Id(id) => id.to_string(),
            WindowTarget::In { session, window } => format!("{}:{}", session.part(), window.part()),
        }
    }

    /// The session, when the target names one.
    pub fn session(&self) -> Option<&SessionTarget> {
        match self {
            WindowTarget::Id(_) => None,
            WindowTarget::In { session, .. } => Some(session),
        }
    }
}

impl PaneTarget {
    /// The target as tmux should read it.
    pub fn tmux(&self) -> String {
        match self {
            PaneTarget::Id(id) => id.to_string(),
            PaneTarget::In {
                session,
                window,
                pane,
            } => format!("{}:{}.{pane}", session.part(), window.part()),
        }
    }

    /// The session, when the target names one.
    pub fn session(&self) -> Option<&SessionTarget> {
        match self {
            PaneTarget::Id(_) => None,
            PaneTarget::In { session, .. } => Some(session),
        }
    }
}

impl WindowSlot {
    /// The target as tmux's `new-window -t` should read it.
    pub fn tmux(&self) -> String {
        match self.index {
            None => self.session.tmux(),
            Some(index) => format!("{}:{index}", self.session.part()),
        }
    }
}

impl fmt::Display for SessionTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionTarget::Id(id) => id.fmt(f),
            SessionTarget::Name(name) => name.fmt(f),
        }
    }
}

impl fmt::Display for WindowRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowRef::Id(id) => id.fmt(f),
            WindowRef::Index(index) => index.fmt(f),
            WindowRef::Name(name) => name.fmt(f),
        }
    }
}

impl fmt::Display for WindowTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowTarget::Id(id) => id.fmt(f),
            WindowTarget::In { session, window } => write!(f, "{session}:{window}"),
        }
    }
}

impl fmt::Display for PaneTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaneTarget::Id(id) => id.fmt(f),
            PaneTarget::In {
                session,
                window,
                pane,
            } => write!(f, "{session}:{window}.{pane}"),
        }
    }
}

impl fmt::Display for WindowSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            None => self.session.fmt(f),
            Some(index) => write!(f, "{}:{index}", self.session),
        }
    }
}

impl FromStr for PaneTarget {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_pane(text).map_err(|reason| refused(TargetKind::Pane, text, reason))
    }
}

impl FromStr for WindowTarget {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_window(text).map_err(|reason| refused(TargetKind::Window, text, reason))
    }
}

impl FromStr for SessionTarget {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_session(text).map_err(|reason| refused(TargetKind::Session, text, reason))
    }
}

impl FromStr for WindowSlot {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_slot(text).map_err(|reason| refused(TargetKind::NewWindow, text, reason))
    }
}

fn refused(kind: TargetKind, target: &str, reason: String) -> TargetError {
    TargetError {
        kind,
        target: target.to_owned(),
        reason,
    }
}

fn parse_pane(text: &str) -> Result<PaneTarget, String> {
    if text.starts_with('%') {
        return id(text, "pane", PaneId::parse_bytes).map(PaneTarget::Id);
    }
    let (session, rest) = split_session(text, TargetKind::Pane)?;
    let (window, pane) = match rest.split_once('.') {
        Some((window, pane)) => (window, Some(pane)),
        None => (rest, None),
    };
    let session = session_part(session)?;
    let window = window_part(window)?;
    let Some(pane) = pane else {
        return Err(format!(
            "it names a window but no pane (tmux would take the window's active pane); add the \
             pane's index, as in \"{text}.0\""
        ));
    };
    Ok(PaneTarget::In {
        session,
        window,
        pane: pane_part(pane)?,
    })
}

fn parse_window(text: &str) -> Result<WindowTarget, String> {
    if text.starts_with('@') {
        return id(text, "window", WindowId::parse_bytes).map(WindowTarget::Id);
    }
    let (session, window) = split_session(text, TargetKind::Window)?;
    if window.contains('.') {
        return Err("it names a pane (the part after '.'), not a window".to_owned());
    }
    Ok(WindowTarget::In {
        session: session_part(session)?,
        window: window_part(window)?,
    })
}

fn parse_session(text: &str) -> Result<SessionTarget, String> {
    if text.contains(':') {
        return Err("a session target is the session's name or id alone, without ':'".to_owned());
    }
    match text.chars().next() {
        Some('%') => Err("it is a pane id, not a session".to_owned()),
        Some('@') => Err("it is a window id, not a session".to_owned()),
        Some('$') => id(text, "session", SessionId::parse_bytes).map(SessionTarget::Id),
        _ => Name::session(text)
            .map(SessionTarget::Name)
            .map_err(|e| e.reason),
    }
}

fn parse_slot(text: &str) -> Result<WindowSlot, String> {
    let Some((session, index)) = text.split_once(':') else {
        return Ok(WindowSlot {
            session: parse_session(text)?,
            index: None,
        });
    };
    let session = session_part(session)?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{index}' after ':' is not a window index (the index for the new window, in digits)"
        ));
    }
    Ok(WindowSlot {
        session,
        index: Some(index_value(index)?),
    })
}

/// Splits `session:rest` at the first colon, as tmux does; explains a target
/// without one.
fn split_session(text: &str, kind: TargetKind) -> Result<(&str, &str), String> {
    if let Some(parts) = text.split_once(':') {
        return Ok(parts);
    }
    let Some(first) = text.chars().next() else {
        return Err("it is empty (tmux would take the current one)".to_owned());
    };
    if let Some(meaning) = special_start(first) {
        return Err(format!(
            "it starts with '{first}', which in a target means {meaning}"
        ));
    }
    if text.contains('.') {
        return Err(
            "it has no session part (tmux would look it up in the current session)".to_owned(),
        );
    }
    let example = match kind {
        TargetKind::Pane => format!("\"{text}:0.0\""),
        _ => format!("\"{text}:0\""),
    };
    Err(format!(
        "it has no ':' (tmux would look it up in the current session, or take it for a \
         session); for the first {} of session '{text}' write {example}",
        kind.noun()
    ))
}

fn session_part(text: &str) -> Result<SessionTarget, String> {
    if text.is_empty() {
        return Err("its session part is empty (tmux would take the current session)".to_owned());
    }
    if text.starts_with('$') {
        return id(text, "session", SessionId::parse_bytes).map(SessionTarget::Id);
    }
    Name::session(text)
        .map(SessionTarget::Name)
        .map_err(|e| format!("session '{text}': {}", e.reason))
}

fn window_part(text: &str) -> Result<WindowRef, String> {
    if text.is_empty() {
        return Err("its window part is empty (tmux would take the current window)".to_owned());
    }
    if text.starts_with('@') {
        return id(text, "window", WindowId::parse_bytes).map(WindowRef::Id);
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return index_value(text).map(WindowRef::Index);
    }
    Name::window(text)
        .map(WindowRef::Name)
        .map_err(|e| format!("window '{text}': {}", e.reason))
}

fn pane_part(text: &str) -> Result<u32, String> {
    if text.is_empty() {
        return Err("its pane part is empty (tmux would take the active pane)".to_owned());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return index_value(text);
    }
    match text.chars().next().and_then(special_start) {
        Some(meaning) => Err(format!("pane '{text}': in a target it means {meaning}")),
        None => Err(format!(
            "pane '{text}' is not a pane index (tmux would look it up as a position such as \
             \"top\")"
        )),
    }
}

fn index_value(digits: &str) -> Result<u32, String> {
    digits
        .parse::<u32>()
        .ok()
        .filter(|&index| index <= MAX_INDEX)
        .ok_or_else(|| format!("index {digits} is larger than tmux allows ({MAX_INDEX})"))
}

fn id<T>(text: &str, kind: &str, parse: fn(&[u8]) -> Option<T>) -> Result<T, String> {
    parse(text.as_bytes()).ok_or_else(|| {
        format!("'{text}' is not a {kind} id (its sigil followed by digits, as list_panes shows)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn name(text: &str) -> Name {
        Name::session(text).unwrap()
    }

    #[test]
    fn ids_and_spelled_out_targets_parse() {
        assert_eq!("%3".parse(), Ok(PaneTarget::Id(PaneId(3))));
        assert_eq!(
            "work:1.0".parse(),
            Ok(PaneTarget::In {
                session: SessionTarget::Name(name("work")),
                window: WindowRef::Index(1),
                pane: 0,
            })
        );
        assert_eq!(
            "$1:@2.3".parse(),
            Ok(PaneTarget::In {
                session: SessionTarget::Id(SessionId(1)),
                window: WindowRef::Id(WindowId(2)),
                pane: 3,
            })
        );
        assert_eq!("@2".parse(), Ok(WindowTarget::Id(WindowId(2))));
        assert_eq!(
            "0:editor".parse(),
            Ok(WindowTarget::In {
                session: SessionTarget::Name(name("0")),
                window: WindowRef::Name(Name::window("editor").unwrap()),
            })
        );
        assert_eq!("$0".parse(), Ok(SessionTarget::Id(SessionId(0))));
        assert_eq!("web".parse(), Ok(SessionTarget::Name(name("web"))));
    }

    #[test]
    fn tmux_forms_match_names_exactly() {
        let pane: PaneTarget = "work:editor.1".parse().unwrap();
        assert_eq!(pane.tmux(), "=work:=editor.1");
        let pane: PaneTarget = "$1:2.0".parse().unwrap();
        assert_eq!(pane.tmux(), "$1:2.0");
        let window: WindowTarget = "#h:@4".parse().unwrap();
        assert_eq!(window.tmux(), "=#h:@4");
        let session: SessionTarget = "$7".parse().unwrap();
        assert_eq!(session.tmux(), "$7:");
        let slot: WindowSlot = "work:5".parse().unwrap();
        assert_eq!(slot.tmux(), "=work:5");
        let slot: WindowSlot = "work".parse().unwrap();
        assert_eq!(slot.tmux(), "=work:");
    }

    #[test]
    fn relative_and_special_targets_are_refused() {
        for text in [
            "",
            ".",
            ":",
            "-t",
            "-a",
            "+",
            "-",
            "{next}",
            "main:^",
            "main:$",
            "main:!",
            "main:+1",
            "main:-",
            "main:{next}",
            "main:0.+",
            "main:0.-1",
            "main:0.!",
            "main:0.{right-of}",
            "main:0.top",
            "main:",
            "main:0.",
            ":0.0",
            "main.0",
            "0.1",
            "=main:0.0",
            "main:=0.0",
            "=",
            "~",
            "{mouse}",
            "{marked}",
            "!",
            "main",
            "main:0",
            "%",
            "%x",
            "%-1",
            "@2.0",
            "$1",
            "main:0.0.0",
            "main:0:1.0",
            "a b:0.0x",
            "main:@x.0",
            "$x:0.0",
            "-t:0.0",
        ] {
            let err = text.parse::<PaneTarget>().unwrap_err();
            let message = err.to_string();
            assert!(message.contains("\"%3\""), "{text:?}: {message}");
            assert!(message.contains("work:1.0"), "{text:?}: {message}");
        }
        for text in [
            "", ".", ":", "-t", "+", "{next}", "main:^", "main:", "main", "%3", "main:0.0",
            "=main:0",
        ] {
            assert!(text.parse::<WindowTarget>().is_err(), "{text:?}");
        }
        for text in [
            "", ".", ":", "-t", "-a", "+", "-", "{next}", "=main", "~", "main:", "%3", "@2", "$x",
            "main:0", "a.b",
        ] {
            let err = text.parse::<SessionTarget>().unwrap_err();
            assert!(err.to_string().contains("list_sessions"), "{text:?}: {err}");
        }
        for text in ["main:", "main:x", "main:-1", ":3", "-t"] {
            assert!(text.parse::<WindowSlot>().is_err(), "{text:?}");
        }
    }

    #[test]
    fn messages_say_what_is_wrong() {
        let reason = |text: &str| text.parse::<PaneTarget>().unwrap_err().reason;
        assert!(
            reason("main:^").contains("the first window"),
            "{}",
            reason("main:^")
        );
        assert!(reason("-t").contains("flag"), "{}", reason("-t"));
        assert!(
            reason(":").contains("session part is empty"),
            "{}",
            reason(":")
        );
        assert!(
            reason("main:9").contains("\"main:9.0\""),
            "{}",
            reason("main:9")
        );
        assert!(reason("{next}").contains("{next}"), "{}", reason("{next}"));
        assert!(
            reason("main:$.0").contains("last window"),
            "{}",
            reason("main:$.0")
        );
        let err = "-t".parse::<SessionTarget>().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("session target '-t' is refused: it starts with '-'"),
            "{err}"
        );
        assert!(
            reason("main:a.b.0").contains("not a pane index"),
            "{}",
            reason("main:a.b.0")
        );
        let err = "main:0.+".parse::<PaneTarget>().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("pane target 'main:0.+' is refused: pane '+'"),
            "{err}"
        );
    }

    #[test]
    fn indexes_beyond_tmux_are_refused() {
        assert!("main:2147483647.0".parse::<PaneTarget>().is_ok());
        assert!("main:2147483648.0".parse::<PaneTarget>().is_err());
        assert!("main:0.99999999999".parse::<PaneTarget>().is_err());
    }

    /// Session or window names, including characters near the rules' edges.
    fn some_name() -> impl Strategy<Value = String> {
        "[a-z0-9#_ {}=~!^@%+-]{1,8}|\\PC{1,6}"
    }

    fn some_session() -> impl Strategy<Value = SessionTarget> {
        prop_oneof![
            any::<u32>().prop_map(|n| SessionTarget::Id(SessionId(n))),
            some_name().prop_filter_map("a session name", |t| Name::session(&t)
                .ok()
                .map(SessionTarget::Name)),
        ]
    }

    fn some_window() -> impl Strategy<Value = WindowRef> {
        prop_oneof![
            any::<u32>().prop_map(|n| WindowRef::Id(WindowId(n))),
            (0..=MAX_INDEX).prop_map(WindowRef::Index),
            some_name().prop_filter_map("a window name", |t| Name::window(&t)
                .ok()
                .map(WindowRef::Name)),
        ]
    }

    fn some_pane() -> impl Strategy<Value = PaneTarget> {
        prop_oneof![
            any::<u32>().prop_map(|n| PaneTarget::Id(PaneId(n))),
            (some_session(), some_window(), 0..=MAX_INDEX).prop_map(|(session, window, pane)| {
                PaneTarget::In {
                    session,
                    window,
                    pane,
                }
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn pane_targets_round_trip(target in some_pane()) {
            prop_assert_eq!(target.to_string().parse::<PaneTarget>(), Ok(target));
        }

        #[test]
        fn window_targets_round_trip(session in some_session(), window in some_window()) {
            let target = WindowTarget::In { session, window };
            prop_assert_eq!(target.to_string().parse::<WindowTarget>(), Ok(target));
        }

        #[test]
        fn session_targets_round_trip(target in some_session()) {
            prop_assert_eq!(target.to_string().parse::<SessionTarget>(), Ok(target));
        }

        #[test]
        fn tmux_forms_are_never_relative(text in "[a-z0-9:.%@$=+{}^!~ -]{0,12}") {
            if let Ok(target) = text.parse::<PaneTarget>() {
                let tmux = target.tmux();
                prop_assert!(tmux.starts_with(['%', '$', '=']), "{}", tmux);
                prop_assert_eq!(tmux.matches(':').count(), usize::from(!tmux.starts_with('%')));
            }
        }
    }
}
