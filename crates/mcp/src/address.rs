//! Where a call points: the one place where targets (`pane`, `window`,
//! `session`) and cursors are read from a call's arguments, and cursors
//! written into its results.
//!
//! The engine takes session and window targets as the caller wrote them and
//! parses them at its own boundary, so that its messages quote them as
//! written; reading them here first refuses a malformed one before anything
//! runs, and gives the scope what it needs to know (the session a target
//! names).

use std::str::FromStr;

use termpilot_control::{PaneTarget, SessionTarget, TargetError, WindowSlot, WindowTarget};
use termpilot_tmux::{Cursor, CursorRef, Engine, Error, PaneId};

use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;

/// A target argument: the text the caller wrote, and what it names.
#[derive(Debug, Clone)]
pub(crate) struct Target<'a, T> {
    /// The target as written: what the engine takes.
    pub(crate) text: &'a str,
    /// What it names.
    pub(crate) parsed: T,
}

/// Reads a target argument; a malformed one is refused as the engine
/// refuses it.
fn target<T: FromStr<Err = TargetError>>(text: &str) -> Result<Target<'_, T>, Error> {
    let parsed = text
        .parse()
        .map_err(|e: TargetError| Error::InvalidArgument(e.to_string()))?;
    Ok(Target { text, parsed })
}

/// A `pane` argument: a pane id (`%3`) or `session:window.pane`.
pub(crate) fn pane_target(text: &str) -> Result<Target<'_, PaneTarget>, Error> {
    target(text)
}

/// A `window` argument: a window id (`@2`) or `session:window`.
pub(crate) fn window_target(text: &str) -> Result<Target<'_, WindowTarget>, Error> {
    target(text)
}

/// A `session` argument: a session id (`$1`) or an exact name.
pub(crate) fn session_target(text: &str) -> Result<Target<'_, SessionTarget>, Error> {
    target(text)
}

/// Where a new window goes: a session, optionally with an index (`work:5`).
pub(crate) fn window_slot(text: &str) -> Result<Target<'_, WindowSlot>, Error> {
    target(text)
}

/// The pane a `pane` argument names, whatever the operator's scope (for
/// what the scope itself checks, and what the person is shown).
pub(crate) async fn any_pane(engine: &Engine, text: &str) -> Result<PaneId, Error> {
    engine.resolve_pane_target(&pane_target(text)?.parsed).await
}

/// The pane a `pane` argument names, within the operator's scope (a pane
/// outside it gets the error of a pane that does not exist).
pub(crate) async fn pane(server: &TermpilotServer, text: &str) -> Result<PaneId, Error> {
    let scope = &server.oversight.scope;
    scope
        .resolve_pane(&server.engine, &pane_target(text)?)
        .await
}

/// The cursor a `cursor` or `since` argument names.
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
            "steps[{index}]: {text:?} is not a reference; use \"$prev\" or \"$N\""
        ))
    })?;
    Ok(CursorRef::Step(step))
}

/// A cursor as results show it.
pub(crate) fn cursor_text(cursor: Cursor) -> String {
    cursor.to_string()
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
        assert_eq!(cursor_text(given), "c1.3.4.50");
        let bad = cursor_ref("$next", 2).unwrap_err().to_string();
        assert_eq!(
            bad,
            "steps[2]: \"$next\" is not a reference; use \"$prev\" or \"$N\""
        );
        let garbled = cursor("c9.1").unwrap_err().to_string();
        assert!(garbled.starts_with("cursor: "), "{garbled}");
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
