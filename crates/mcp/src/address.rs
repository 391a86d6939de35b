//! Where a call points: the one place where pane targets and cursors are
//! read from a call's arguments, and cursors written into its results.

use termpilot_tmux::{Cursor, CursorRef, Error, PaneId};

use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;

/// The pane a `pane` argument names, within the operator's scope (a pane
/// outside it gets the error of a pane that does not exist).
pub(crate) async fn pane(server: &TermpilotServer, target: &str) -> Result<PaneId, Error> {
    let scope = &server.oversight.scope;
    scope.resolve_pane(&server.engine, target).await
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
