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

use crate::server::TermpilotServer;

pub(crate) fn engine_error(error: termpilot_tmux::Error) -> String {
    error.to_string()
}

/// Resolves a pane target as the engine does, within the operator's scope.
pub(crate) async fn pane(server: &TermpilotServer, target: &str) -> Result<PaneId, String> {
    let scope = &server.oversight.scope;
    scope
        .resolve_pane(&server.engine, target)
        .await
        .map_err(engine_error)
}

/// Parses a cursor and checks it belongs to `pane` on the current server.
pub(crate) fn cursor_offset(
    server: &TermpilotServer,
    pane: PaneId,
    text: &str,
) -> Result<u64, String> {
    let cursor: termpilot_journal::Cursor = text.parse().map_err(|e| format!("cursor: {e}"))?;
    if cursor.pane != pane.0 {
        return Err(format!(
            "cursor {text} belongs to pane %{}, not {pane}; use a cursor returned for {pane}",
            cursor.pane
        ));
    }
    if cursor.epoch != server.engine.epoch() {
        return Err(format!(
            "cursor {text} is from an earlier tmux server (it restarted since); \
             take a new cursor with capture_pane"
        ));
    }
    Ok(cursor.offset)
}
