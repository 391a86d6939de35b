//! `export_recording`: a pane's recording (see `recording`), or the part
//! between two cursors, written to the output directory as
//! `<session>-<pane>.cast` and linked from the result as the pane's
//! `recording.cast` resource.

use rmcp::model::{ContentBlock, Resource};
use schemars::JsonSchema;
use serde::Serialize;
use termpilot_tmux::PaneScope;

use super::params::pane_params;
use crate::address::{Pane, pane};
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::recorder::file_name;
use crate::server::{CallContext, Reply, TermpilotServer};
use crate::tools::recording::{Span, recording};
use crate::toolset::Toolset;

/// `export_recording`.
pub(crate) struct ExportRecording;

pane_params! {
    /// Arguments of `export_recording`.
    pub struct ExportRecordingParams {
        /// Start cursor (default: the oldest held).
        #[schemars(length(min = 1, max = 64))]
        pub since: Option<String>,
        /// End cursor.
        #[schemars(length(min = 1, max = 64))]
        pub until: Option<String>,
    }
}

/// Result of `export_recording`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RecordingEntry {
    /// The pane id.
    pub pane: String,
    /// The file written.
    pub path: String,
}

impl Tool for ExportRecording {
    const NAME: &'static str = "export_recording";
    const TITLE: &'static str = "Record a pane";
    const DESCRIPTION: &'static str = "Save a pane's output (as far as its journal holds), with \
        a marker per tool call, as an asciicast v3 file for a person to replay.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = ExportRecordingParams;
    type Output = RecordingEntry;

    async fn call(
        server: &TermpilotServer,
        params: ExportRecordingParams,
        _: &CallContext,
    ) -> Outcome {
        let pane = pane(server, &params.pane).await?;
        let offset = |cursor: &Option<String>| -> ToolResult<Option<u64>> {
            let Some(text) = cursor else { return Ok(None) };
            let cursor = pane.cursor(server, text)?;
            Ok(Some(pane.engine.offset_in(pane.id, cursor)?))
        };
        let span = Span {
            from: offset(&params.since)?,
            to: offset(&params.until)?,
        };
        export(server, &pane, span).await
    }
}

/// Writes the recording of `span` of `pane` and returns its path, a
/// sentence on what it holds, and a link to the pane's recording resource.
async fn export(server: &TermpilotServer, pane: &Pane, span: Span) -> Outcome {
    let recorded = recording(server, pane, span).await?;
    let dir = {
        // A std Mutex, held for this one read.
        let store = server.store.lock().unwrap_or_else(|e| e.into_inner());
        store.dir().to_path_buf()
    };
    let path = dir.join(file_name(&session_of(pane).await?, pane.id.0));
    std::fs::write(&path, &recorded.text).map_err(|e| {
        ToolError::Failed(format!(
            "cannot write the recording {}: {e}",
            path.display()
        ))
    })?;
    let id = pane.host.qualify(pane.id);
    let text = format!(
        "Recording of {id} ({} output events, {} tool calls, over {:.1} s, {} bytes) \
         written to {}; `asciinema play` or `termpilot replay` shows it.",
        recorded.outputs,
        recorded.markers,
        recorded.length.as_secs_f64(),
        recorded.text.len(),
        path.display()
    );
    let entry = RecordingEntry {
        pane: id.clone(),
        path: path.display().to_string(),
    };
    let mut done = Reply { entry, text }.done()?;
    let link = Resource::new(
        format!("termpilot://pane/{id}/recording.cast"),
        "recording.cast",
    )
    .with_mime_type("application/x-asciicast");
    done.content.push(ContentBlock::resource_link(link));
    Ok(done)
}

/// The name of the session `pane` is in.
async fn session_of(pane: &Pane) -> ToolResult<String> {
    let panes = pane.engine.list_panes(&PaneScope::All).await?;
    panes
        .into_iter()
        .find(|p| p.id == pane.id)
        .map(|p| p.session_name)
        .ok_or_else(|| ToolError::Failed(format!("pane {} is gone", pane.id)))
}
