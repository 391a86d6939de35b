//! The tools, one module per family. Each tool is declared once, with its
//! name, description, argument and result types and handler together (see
//! [`crate::catalog::Tool`]).

pub(crate) mod batch;
pub(crate) mod capture;
pub(crate) mod commands;
pub(crate) mod input;
pub(crate) mod secrets;
pub(crate) mod sessions;
pub(crate) mod waits;

use termpilot_tmux::PaneId;

use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;

/// Resolves a pane target as the engine does, within the operator's scope.
pub(crate) async fn pane(server: &TermpilotServer, target: &str) -> ToolResult<PaneId> {
    let scope = &server.oversight.scope;
    Ok(scope.resolve_pane(&server.engine, target).await?)
}

/// Parses a cursor and checks it belongs to `pane` on the current server.
pub(crate) fn cursor_offset(server: &TermpilotServer, pane: PaneId, text: &str) -> ToolResult<u64> {
    let cursor: termpilot_journal::Cursor = text
        .parse()
        .map_err(|e| ToolError::refused(format!("cursor: {e}")))?;
    if cursor.pane != pane.0 {
        return Err(ToolError::refused(format!(
            "cursor {text} belongs to pane %{}, not {pane}; use a cursor returned for {pane}",
            cursor.pane
        )));
    }
    if cursor.epoch != server.engine.epoch() {
        return Err(ToolError::refused(format!(
            "cursor {text} is from an earlier tmux server (it restarted since); \
             take a new cursor with capture_pane"
        )));
    }
    Ok(cursor.offset)
}
