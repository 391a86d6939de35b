//! From a caller's target string to the pane, window or session it names,
//! and the checks on names and directories before they reach tmux.
//!
//! Target strings are parsed at the engine's boundary into the typed targets
//! of [`termpilot_control::target`], which refuse everything relative or
//! special. Session names are then matched here, against the session list,
//! never by tmux: for a name that no session has, tmux falls back to the
//! session of a client whose terminal has that name (`pts/3` finds the
//! session a person is attached to), even with its exact-match `=` prefix.

use termpilot_control::{
    Command, Name, NameKind, PaneId, PaneTarget, SessionId, SessionTarget, WindowSlot, WindowTarget,
};

use crate::engine::{Engine, call, not_found_pane, ok_reply};
use crate::error::{Error, Result};
use crate::format::{PaneIdRow, tmux_format};

impl Engine {
    /// Resolves a pane target (`%3`, or `work:1.0` spelled out; relative
    /// and special ones are refused where it is parsed) to a pane id. A pane
    /// id is returned as it is: the command that uses it says if the pane is
    /// gone.
    pub async fn resolve_pane(&self, target: &PaneTarget) -> Result<PaneId> {
        let (session, window, pane) = match target {
            PaneTarget::Id(pane) => return Ok(*pane),
            PaneTarget::In {
                session,
                window,
                pane,
            } => (session, window, pane),
        };
        let pinned = PaneTarget::In {
            session: self.pin_session(session).await?,
            window: window.clone(),
            pane: *pane,
        };
        // display-message falls back to the session's current pane when the
        // window or pane part of a target names nothing; capture-pane refuses
        // such a target, so its answer decides. One line of the screen is the
        // cheapest capture. Both go in one write.
        let tmux = pinned.tmux();
        let check = Command::new("capture-pane")
            .flag("-p")
            .opt("-t", &tmux)
            .opt("-S", "0")
            .opt("-E", "0");
        let id = Command::new("display-message")
            .flag("-p")
            .opt("-t", &tmux)
            .arg(PaneIdRow::FORMAT);
        let client = self.primary().await?;
        let mut answers = client
            .call_many(vec![call(check, None)?, call(id, None)?])
            .await
            .into_iter();
        let shown = target.to_string();
        let mut next = || {
            let answer = answers.next().expect("one answer per call")?;
            ok_reply(answer).map_err(|e| not_found_pane(e, &shown))
        };
        next()?;
        PaneIdRow::parse_first("display-message", &next()?)
            .map(|row| row.id)
            .map_err(|_| Error::pane_not_found(shown.clone()))
    }

    /// `session` by id: a name is looked up in the session list, exactly.
    pub(crate) async fn pin_session(&self, session: &SessionTarget) -> Result<SessionTarget> {
        let SessionTarget::Name(name) = session else {
            return Ok(session.clone());
        };
        let listing = Command::new("list-sessions").opt("-F", SessionName::FORMAT);
        let reply = self.command(listing).await?;
        for session in SessionName::parse_all("list-sessions", &reply)? {
            if session.name == name.as_str() {
                return Ok(SessionTarget::Id(session.id));
            }
        }
        Err(Error::session_not_found(name.to_string()))
    }

    /// A window target with its session, if named, pinned to its id.
    pub(crate) async fn pin_window(&self, target: WindowTarget) -> Result<WindowTarget> {
        match target {
            WindowTarget::In { session, window } => Ok(WindowTarget::In {
                session: self.pin_session(&session).await?,
                window,
            }),
            id => Ok(id),
        }
    }

    /// A new window's place with its session pinned to its id.
    pub(crate) async fn pin_slot(&self, slot: WindowSlot) -> Result<WindowSlot> {
        Ok(WindowSlot {
            session: self.pin_session(&slot.session).await?,
            index: slot.index,
        })
    }
}

tmux_format! {
    /// A session's id and name.
    struct SessionName {
        id: SessionId = "session_id",
        name: String = "session_name",
    }
}

/// A parse error as the engine reports it: something the caller must fix.
pub(crate) fn invalid(error: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(error.to_string())
}

/// A session or window name, checked; `None` stays `None`.
pub(crate) fn checked_name(kind: NameKind, name: Option<&str>) -> Result<Option<Name>> {
    name.map(|text| Name::new(kind, text).map_err(invalid))
        .transpose()
}

/// Refuses a NUL in the arguments of a new pane: tmux cannot receive one,
/// and a NUL in a program's arguments stops it from being started at all.
pub(crate) fn refuse_nul_in_spawn(
    cwd: Option<&str>,
    env: &[(String, String)],
    command: Option<&str>,
) -> Result<()> {
    let fields = cwd
        .map(|cwd| ("cwd".to_owned(), cwd))
        .into_iter()
        .chain(env.iter().flat_map(|(key, value)| {
            [
                ("env variable name".to_owned(), key.as_str()),
                (format!("env value of {key}"), value.as_str()),
            ]
        }))
        .chain(command.map(|command| ("command".to_owned(), command)));
    for (field, value) in fields {
        if value.contains('\0') {
            return Err(Error::InvalidArgument(format!(
                "{field} contains a NUL character, which tmux cannot receive; remove it"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_refused_naming_the_field() {
        let env = vec![("A".to_owned(), "x\0".to_owned())];
        let err = refuse_nul_in_spawn(None, &env, None).unwrap_err();
        assert!(
            err.to_string().starts_with("env value of A contains a NUL"),
            "{err}"
        );
        let err = refuse_nul_in_spawn(Some("/\0"), &[], None).unwrap_err();
        assert!(err.to_string().starts_with("cwd contains a NUL"), "{err}");
        let err = refuse_nul_in_spawn(None, &[], Some("a\0")).unwrap_err();
        assert!(
            err.to_string().starts_with("command contains a NUL"),
            "{err}"
        );
        refuse_nul_in_spawn(Some("/tmp"), &[("A".into(), "b".into())], Some("ls")).unwrap();
    }

    #[test]
    fn names_are_checked_by_kind() {
        assert!(checked_name(NameKind::Window, Some("7")).is_err());
        assert!(checked_name(NameKind::Session, Some("7")).is_ok());
        assert_eq!(checked_name(NameKind::Session, None).unwrap(), None);
        let err = checked_name(NameKind::Session, Some("a:b")).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    }
}
