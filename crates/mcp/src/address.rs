//! Where a call points: the one place where targets (`pane`, `window`,
//! `session`), hosts, cursors and command ids are read from a call's
//! arguments, and ids and cursors written into its results.
//!
//! The machine termpilot runs on is host `local`, and its ids are written
//! as tmux writes them (`%3`, `work:1.0`). Anything on another host carries
//! its name in front: `build/%3`, `build/work:1.0`, `build/c1.…`. A prefix
//! counts as a host only when it names a configured one (or `local`), so a
//! local session may still be called `pts/3`.
//!
//! The engine takes session and window targets as the caller wrote them and
//! parses them at its own boundary, so that its messages quote them as
//! written; reading them here first refuses a malformed one before anything
//! runs, and gives the scope what it needs to know (the session a target
//! names).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use termpilot_control::{
    PaneTarget, SessionId, SessionTarget, Target, TargetError, WindowId, WindowSlot, WindowTarget,
};
use termpilot_tmux::{Cursor, CursorRef, Engine, Error, Hosts, PaneId};

use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;

/// Reads a target argument; a malformed one is refused as the engine
/// refuses it.
fn target<T: FromStr<Err = TargetError>>(text: &str) -> Result<Target<T>, Error> {
    (text.parse()).map_err(|e: TargetError| Error::InvalidArgument(e.to_string()))
}

/// A `pane` argument: a pane id (`%3`) or `session:window.pane`.
pub(crate) fn pane_target(text: &str) -> Result<Target<PaneTarget>, Error> {
    target(text)
}

/// A `window` argument: a window id (`@2`) or `session:window`.
pub(crate) fn window_target(text: &str) -> Result<Target<WindowTarget>, Error> {
    target(text)
}

/// A `session` argument: a session id (`$1`) or an exact name.
pub(crate) fn session_target(text: &str) -> Result<Target<SessionTarget>, Error> {
    target(text)
}

/// Where a new window goes: a session, optionally with an index (`work:5`).
pub(crate) fn window_slot(text: &str) -> Result<Target<WindowSlot>, Error> {
    target(text)
}

/// The pane a `pane` argument names, whatever the operator's scope (for
/// what the scope itself checks, and what the person is shown).
pub(crate) async fn any_pane(engine: &Engine, text: &str) -> Result<PaneId, Error> {
    engine.resolve_pane(&pane_target(text)?.parsed).await
}

/// A host as calls name it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Host(Option<Arc<str>>);

impl Host {
    /// The machine termpilot runs on.
    pub(crate) fn local() -> Host {
        Host(None)
    }

    /// The host configured as `name` (`local` is the local host).
    pub(crate) fn named(name: &str) -> Host {
        if name == termpilot_tmux::LOCAL {
            Host(None)
        } else {
            Host(Some(name.into()))
        }
    }

    /// Its name, `local` for the local host.
    pub(crate) fn name(&self) -> &str {
        self.0.as_deref().unwrap_or(termpilot_tmux::LOCAL)
    }

    /// `id` as results write it: with the host in front, unless local.
    pub(crate) fn qualify(&self, id: impl fmt::Display) -> String {
        match &self.0 {
            None => id.to_string(),
            Some(name) => format!("{name}/{id}"),
        }
    }

    /// The host's engine, connecting to it on first use.
    pub(crate) async fn engine(&self, server: &TermpilotServer) -> Result<Engine, Error> {
        server.hosts.engine(self.name()).await
    }
}

/// Splits the host off a target, cursor or command id: `build/%3` is `%3`
/// on host `build` when `build` is configured; anything else is local.
pub(crate) fn split<'a>(server: &TermpilotServer, text: &'a str) -> (Host, &'a str) {
    if let Some((name, rest)) = text.split_once('/')
        && (name == termpilot_tmux::LOCAL || server.hosts.contains(name))
    {
        return (Host::named(name), rest);
    }
    (Host::local(), text)
}

/// Splits the host off a session, window or pane target as [`split`]
/// does, refusing one whose prefix reads as a mistyped host: `typo/%3` or
/// `typo/work:1.0` with no host `typo` configured. Such a target names
/// something local only when the local server has a session of that name
/// (`typo/work`, a name tmux allows), within the scope: then it is local,
/// as always.
pub(crate) async fn locate<'a>(
    server: &TermpilotServer,
    text: &'a str,
) -> Result<(Host, &'a str), Error> {
    let (host, rest) = split(server, text);
    let Some((name, session)) = unknown_host(&server.hosts, text) else {
        return Ok((host, rest));
    };
    let scope = &server.oversight.scope;
    let sessions = (server.local_engine().list_sessions().await).unwrap_or_default();
    if sessions
        .iter()
        .any(|s| s.name == session && scope.allows(&s.name))
    {
        return Ok((host, rest));
    }
    Err(Error::InvalidArgument(format!(
        "'{text}' names host '{name}', but no host is called that; the hosts are {}",
        server.hosts.names().join(", ")
    )))
}

/// When `text` is `NAME/TARGET` with `NAME` written as a host name but not
/// configured, and `TARGET` an id (`%3`, `@2`, `$1`) or a
/// `session:window[.pane]` target: `NAME`, and the session a local reading
/// of `text` would name.
fn unknown_host<'a>(hosts: &Hosts, text: &'a str) -> Option<(&'a str, &'a str)> {
    let (name, rest) = text.split_once('/')?;
    if name == termpilot_tmux::LOCAL
        || hosts.contains(name)
        || !termpilot_tmux::hosts::is_host_name(name)
    {
        return None;
    }
    let is_id = rest.parse::<PaneId>().is_ok()
        || rest.parse::<WindowId>().is_ok()
        || rest.parse::<SessionId>().is_ok();
    if is_id {
        return Some((name, text));
    }
    let (session, _) = rest.split_once(':')?;
    let session = &text[..name.len() + 1 + session.len()];
    Some((name, session))
}

/// A `host` argument: the host it names, which must be configured.
pub(crate) fn host_argument(server: &TermpilotServer, name: Option<&str>) -> ToolResult<Host> {
    match name {
        None => Ok(Host::local()),
        Some(name) if name == termpilot_tmux::LOCAL || server.hosts.contains(name) => {
            Ok(Host::named(name))
        }
        Some(name) => Err(ToolError::refused(format!(
            "host: no host is called '{name}'; the hosts are {}",
            server.hosts.names().join(", ")
        ))),
    }
}

/// A target on a host: the host, its engine and the target as that host's
/// tmux reads it.
pub(crate) struct Located<'a> {
    pub(crate) host: Host,
    pub(crate) engine: Engine,
    pub(crate) target: &'a str,
}

/// The host and engine a session, window or pane target names (connecting
/// to the host on first use), and the target without the host.
pub(crate) async fn located<'a>(
    server: &TermpilotServer,
    text: &'a str,
) -> Result<Located<'a>, Error> {
    let (host, target) = locate(server, text).await?;
    let engine = host.engine(server).await?;
    Ok(Located {
        host,
        engine,
        target,
    })
}

/// A pane on a host, with that host's engine.
#[derive(Clone)]
pub(crate) struct Pane {
    pub(crate) host: Host,
    pub(crate) engine: Engine,
    pub(crate) id: PaneId,
}

impl fmt::Display for Pane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.host.qualify(self.id))
    }
}

impl Pane {
    /// A cursor of this pane's host as results write it.
    pub(crate) fn cursor_text(&self, cursor: Cursor) -> String {
        self.host.qualify(cursor)
    }

    /// The cursor a `cursor` or `since` argument names, which must be of
    /// this pane's host.
    pub(crate) fn cursor(&self, server: &TermpilotServer, text: &str) -> ToolResult<Cursor> {
        let (host, rest) = split(server, text);
        if host != self.host {
            return Err(ToolError::refused(format!(
                "cursor {text} is of host {}, not of {self}'s host {}; use a cursor returned \
                 for {self}",
                host.name(),
                self.host.name()
            )));
        }
        cursor(rest)
    }
}

/// The pane a `pane` argument names, on its host, within the operator's
/// scope (a pane outside it gets the error of a pane that does not exist).
pub(crate) async fn pane(server: &TermpilotServer, text: &str) -> Result<Pane, Error> {
    let Located {
        host,
        engine,
        target,
    } = located(server, text).await?;
    let id = pane_on(server, &engine, target).await?;
    Ok(Pane { host, engine, id })
}

/// The pane a `pane` argument without its host names on `engine`, within
/// the operator's scope.
pub(crate) async fn pane_on(
    server: &TermpilotServer,
    engine: &Engine,
    text: &str,
) -> Result<PaneId, Error> {
    let scope = &server.oversight.scope;
    scope.resolve_pane(engine, &pane_target(text)?).await
}

/// A command id of a host's engine, as results write it.
pub(crate) fn command_id(host: &Host, id: &str) -> String {
    host.qualify(id)
}

/// The cursor a batch step's `since` or `cursor` names, as [`cursor_ref`]
/// does, where a literal cursor must be of the batch's host.
pub(crate) fn step_cursor(
    server: &TermpilotServer,
    host: &Host,
    text: &str,
    index: usize,
) -> ToolResult<CursorRef> {
    let (named, rest) = split(server, text);
    if text.starts_with('$') {
        return cursor_ref(text, index);
    }
    if named != *host {
        return Err(ToolError::refused(format!(
            "steps[{index}]: cursor {text} is of host {}, but the batch's panes are on host {}",
            named.name(),
            host.name()
        )));
    }
    cursor_ref(rest, index)
}

/// The cursor a `cursor` or `since` argument names (without its host).
pub(crate) fn cursor(text: &str) -> ToolResult<Cursor> {
    text.parse()
        .map_err(|e| ToolError::refused(format!("cursor: {e}")))
}

/// The cursor a batch step's `since` or `cursor` names: `$prev` (the
/// latest earlier step's), `$N` (step N's) or a cursor. `index` is the
/// step's own, for the error.
pub(crate) fn cursor_ref(text: &str, index: usize) -> ToolResult<CursorRef> {
    let Some(reference) = text.strip_prefix('$') else {
        return cursor(text).map(CursorRef::Given);
    };
    if reference == "prev" {
        return Ok(CursorRef::Latest);
    }
    let step = reference.parse().map_err(|_| {
        ToolError::refused(format!(
            "steps[{index}]: '{text}' is not a reference; use \"$prev\" or \"$N\""
        ))
    })?;
    Ok(CursorRef::Step(step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_references_and_cursors() {
        assert_eq!(cursor_ref("$prev", 2).unwrap(), CursorRef::Latest);
        assert_eq!(cursor_ref("$1", 2).unwrap(), CursorRef::Step(1));
        let given = cursor_ref("c1.3.4.50", 2).unwrap();
        let CursorRef::Given(given) = given else {
            panic!("{given:?}");
        };
        assert_eq!(given.to_string(), "c1.3.4.50");
        let bad = cursor_ref("$next", 2).unwrap_err().to_string();
        assert_eq!(
            bad,
            "steps[2]: '$next' is not a reference; use \"$prev\" or \"$N\""
        );
        let garbled = cursor("c9.1").unwrap_err().to_string();
        assert!(garbled.starts_with("cursor: "), "{garbled}");
    }

    #[test]
    fn a_prefix_that_is_no_host_is_suspect_only_before_an_id_or_a_full_target() {
        let specs = ["build=ssh:build-1".parse().unwrap()];
        let config = termpilot_tmux::EngineConfig::default();
        let options = termpilot_tmux::HostOptions::default();
        let hosts = Hosts::new(config, &specs, &options).unwrap();
        let suspect = |text| unknown_host(&hosts, text);
        assert_eq!(suspect("typo/%3"), Some(("typo", "typo/%3")));
        assert_eq!(suspect("typo/@2"), Some(("typo", "typo/@2")));
        assert_eq!(suspect("typo/$1"), Some(("typo", "typo/$1")));
        // The session a local reading names, which a local server may have.
        assert_eq!(suspect("typo/work:1.0"), Some(("typo", "typo/work")));
        assert_eq!(suspect("typo/work:1"), Some(("typo", "typo/work")));
        // Configured hosts, local, plain names and what no host is written as.
        for fine in [
            "build/%3",
            "local/%3",
            "pts/3",
            "typo/work",
            "%3",
            "work:1.0",
            "my box/%3",
        ] {
            assert_eq!(suspect(fine), None, "{fine}");
        }
    }

    #[test]
    fn targets_keep_their_text_and_refuse_as_the_engine_does() {
        let pane = pane_target("work:1.0").unwrap();
        assert_eq!(pane.text, "work:1.0");
        assert!(matches!(pane.parsed, PaneTarget::In { pane: 0, .. }));
        let error = window_target("work:{next}").unwrap_err();
        let expected = "work:{next}"
            .parse::<WindowTarget>()
            .unwrap_err()
            .to_string();
        assert!(
            matches!(&error, Error::InvalidArgument(message) if *message == expected),
            "{error}"
        );
        assert!(session_target("$1").is_ok());
        assert_eq!(window_slot("work:5").unwrap().parsed.index, Some(5));
    }
}
