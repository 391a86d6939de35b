//! What a key binding does, and the `SEQ=ACTION` form bindings are written in.

use std::fmt;
use std::str::FromStr;

use termpilot_keys::{Key, parse_sequence};

use crate::Error;

/// What happens when a bound key sequence is typed. The sequence itself never reaches
/// the child.
pub enum Action {
    /// SIGINT to the foreground process group of the child's terminal, as Ctrl+C would
    /// send in a cooked terminal (but also when the child put its terminal in raw mode).
    Interrupt,
    /// SIGTERM to the child's process groups, then SIGKILL if the child is still running
    /// after the grace period ([`SessionBuilder::terminate_grace`](crate::SessionBuilder::terminate_grace)).
    Terminate,
    /// Writes `{"event":NAME,"time":SECONDS}` as one line to the session's events writer.
    Event(String),
    /// Runs the detach hook and ends the session without killing the child; the session
    /// reports [`Outcome::Detached`](crate::Outcome::Detached).
    Detach,
    /// Calls the closure on the session's thread; keep it short, input waits meanwhile.
    Callback(Box<dyn FnMut() + Send>),
}

impl Action {
    /// The action as `termpilot run --bind` writes it (`callback` for closures).
    pub fn name(&self) -> String {
        match self {
            Action::Interrupt => "interrupt".into(),
            Action::Terminate => "terminate".into(),
            Action::Event(name) => format!("event:{name}"),
            Action::Detach => "detach".into(),
            Action::Callback(_) => "callback".into(),
        }
    }
}

impl fmt::Debug for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Action {
    type Err = Error;

    /// Parses `interrupt`, `terminate`, `detach` or `event:NAME` (NAME not empty).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "interrupt" => Ok(Action::Interrupt),
            "terminate" => Ok(Action::Terminate),
            "detach" => Ok(Action::Detach),
            _ => match text.strip_prefix("event:") {
                Some(name) if !name.is_empty() => Ok(Action::Event(name.to_owned())),
                _ => Err(Error::UnknownAction {
                    action: text.to_owned(),
                }),
            },
        }
    }
}

/// Parses a binding written as `SEQ=ACTION`, e.g. `C-c=interrupt` or
/// `C-x C-c=event:quit`.
///
/// SEQ is a space-separated list of tmux key names (the keys crate's syntax). The split
/// is at the last `=`, so the `=` key itself can be bound (`M-==detach`); event names
/// therefore cannot contain `=`.
pub fn parse_binding(spec: &str) -> Result<(Vec<Key>, Action), Error> {
    let syntax = || Error::BindingSyntax {
        spec: spec.to_owned(),
    };
    let (sequence, action) = spec.rsplit_once('=').ok_or_else(syntax)?;
    if sequence.trim().is_empty() {
        return Err(syntax());
    }
    let keys = parse_sequence(sequence).map_err(|source| Error::Key {
        spec: spec.to_owned(),
        source,
    })?;
    Ok((keys, action.parse()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of(keys: &[Key]) -> Vec<u8> {
        keys.iter().flat_map(Key::bytes).collect()
    }

    #[test]
    fn parses_each_action() {
        for name in ["interrupt", "terminate", "detach", "event:saved"] {
            assert_eq!(name.parse::<Action>().unwrap().name(), name);
        }
    }

    #[test]
    fn rejects_unknown_and_empty_event_actions() {
        for bad in ["", "event:", "kill", "Interrupt"] {
            let error = bad.parse::<Action>().unwrap_err();
            assert!(
                matches!(error, Error::UnknownAction { .. }),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn parses_multi_key_sequences() {
        let (keys, action) = parse_binding("C-x C-c=terminate").unwrap();
        assert_eq!(bytes_of(&keys), b"\x18\x03");
        assert_eq!(action.name(), "terminate");
    }

    #[test]
    fn splits_at_the_last_equals_sign() {
        let (keys, action) = parse_binding("M-==event:x").unwrap();
        assert_eq!(bytes_of(&keys), b"\x1b=");
        assert_eq!(action.name(), "event:x");
    }

    #[test]
    fn reports_what_is_wrong() {
        assert!(matches!(
            parse_binding("interrupt"),
            Err(Error::BindingSyntax { .. })
        ));
        assert!(matches!(
            parse_binding(" =interrupt"),
            Err(Error::BindingSyntax { .. })
        ));
        let error = parse_binding("C-q Entr=detach").unwrap_err();
        assert!(
            error.to_string().contains("did you mean 'Enter'"),
            "{error}"
        );
    }
}
