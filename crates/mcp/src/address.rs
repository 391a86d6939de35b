//! Where a call points: the one place where pane targets and cursors are
//! read from a call's arguments, and cursors written into its results.

use termpilot_tmux::{Cursor, PaneId};

use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;

/// The pane a `pane` argument names, within the operator's scope (a pane
/// outside it gets the error of a pane that does not exist).
pub(crate) async fn pane(server: &TermpilotServer, target: &str) -> ToolResult<PaneId> {
    let scope = &server.oversight.scope;
    Ok(scope.resolve_pane(&server.engine, target).await?)
}

/// The cursor a `cursor` or `since` argument names.
pub(crate) fn cursor(text: &str) -> ToolResult<Cursor> {
    text.parse()
        .map_err(|e| ToolError::refused(format!("cursor: {e}")))
}

/// A cursor as results show it.
pub(crate) fn cursor_text(cursor: Cursor) -> String {
    cursor.to_string()
}
