//! Panes as MCP resources: `termpilot://pane/{id}/screen` (the screen as
//! `capture_pane` shows it), `.../screen.png` (its picture) and
//! `.../recording.cast` (its asciicast recording).
//!
//! A read is a `capture_pane` call (the recording: an `export_recording`
//! one, without the file) by another name: the same code, the same scope (a
//! pane outside it is not found), the same redaction, and a line in the
//! audit log under the tool's name. Reading needs no toolset beyond
//! read-only.
//!
//! Subscriptions, which tell a client when a pane printed, are in
//! `subscriptions`.

mod subscriptions;

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;
use termpilot_tmux::PaneScope;

pub(crate) use subscriptions::{Subscriptions, accepted_filter, listen, subscribe, unsubscribe};

use crate::address::pane;
use crate::caller::Caller;
use crate::error::{ToolError, ToolResult};
use crate::server::{Done, TermpilotServer};
use crate::tools::capture::{CapturePaneParams, capture_pane};
use crate::tools::picture::CaptureFormat;

/// The URIs' scheme and prefix.
const PREFIX: &str = "termpilot://pane/";

/// What of a pane a resource shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    /// The screen as text.
    Screen,
    /// The screen as a PNG picture.
    Png,
    /// The recording, asciicast v3.
    Cast,
}

impl View {
    const ALL: [View; 3] = [View::Screen, View::Png, View::Cast];

    fn suffix(self) -> &'static str {
        match self {
            View::Screen => "screen",
            View::Png => "screen.png",
            View::Cast => "recording.cast",
        }
    }

    fn mime_type(self) -> &'static str {
        match self {
            View::Screen => "text/plain",
            View::Png => "image/png",
            View::Cast => "application/x-asciicast",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            View::Screen => {
                "A pane's screen as capture_pane shows it (run_command's wrapper hidden, secrets \
                 redacted). Subscribe to hear when the pane prints."
            }
            View::Png => "A picture of a pane's screen: cells, colours and cursor.",
            View::Cast => {
                "A pane's recording (asciicast v3, what `asciinema play` replays) of the output \
                 its journal holds, with a marker per tool call."
            }
        }
    }
}

/// A resource URI read: the pane (as tools name it) and the view.
#[derive(Debug, PartialEq, Eq)]
struct Address {
    pane: String,
    view: View,
}

/// The URI of `view` of `pane` (its id as tools write it, such as `%3`).
fn uri(pane: &str, view: View) -> String {
    format!("{PREFIX}{pane}/{}", view.suffix())
}

/// Reads a resource URI; the pane may be written `%3` (as listed) or `3`.
fn parse(uri: &str) -> Result<Address, McpError> {
    let unknown = || {
        McpError::resource_not_found(
            format!(
                "unknown resource {uri}: the resources are termpilot://pane/{{id}}/screen, \
                 .../screen.png and .../recording.cast (resources/list shows the panes)"
            ),
            None,
        )
    };
    let rest = uri.strip_prefix(PREFIX).ok_or_else(unknown)?;
    let (pane, suffix) = rest.rsplit_once('/').ok_or_else(unknown)?;
    let view = View::ALL
        .into_iter()
        .find(|v| v.suffix() == suffix)
        .ok_or_else(unknown)?;
    let pane = match !pane.is_empty() && pane.bytes().all(|b| b.is_ascii_digit()) {
        true => format!("%{pane}"),
        false => pane.to_owned(),
    };
    // A pane of another host is `NAME/%3`.
    if pane.is_empty() || pane.len() > 256 {
        return Err(unknown());
    }
    Ok(Address { pane, view })
}

/// The resource templates.
pub(crate) fn templates() -> ListResourceTemplatesResult {
    let templates = View::ALL
        .into_iter()
        .map(|view| {
            ResourceTemplate::new(uri("{id}", view), format!("pane {}", view.suffix()))
                .with_description(view.describe())
                .with_mime_type(view.mime_type())
        })
        .collect();
    ListResourceTemplatesResult::with_all_items(templates)
}

/// The screen of every live pane of the local host within scope.
pub(crate) async fn list(server: &TermpilotServer) -> Result<ListResourcesResult, McpError> {
    let panes = server
        .local_engine()
        .list_panes(&PaneScope::All)
        .await
        .map_err(|e| McpError::internal_error(format!("cannot list the panes: {e}"), None))?;
    let scope = &server.oversight.scope;
    let resources = panes
        .iter()
        .filter(|p| !p.dead && scope.allows(&p.session_name))
        .map(|p| {
            let id = p.id.to_string();
            Resource::new(uri(&id, View::Screen), format!("pane {id} screen"))
                .with_title(format!(
                    "{}:{}.{} ({})",
                    p.session_name, p.window_index, p.index, p.current_command
                ))
                .with_description(View::Screen.describe())
                .with_mime_type(View::Screen.mime_type())
        })
        .collect();
    Ok(ListResourcesResult::with_all_items(resources))
}

/// Reads a resource, as `capture_pane` (or `export_recording`) would:
/// scope, redaction, audit.
pub(crate) async fn read(
    server: &TermpilotServer,
    uri: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Vec<ResourceContents>, McpError> {
    let address = parse(uri)?;
    let mut arguments = json!({"pane": address.pane});
    let tool = match address.view {
        View::Screen => "capture_pane",
        View::Png => {
            arguments["format"] = json!("png");
            "capture_pane"
        }
        View::Cast => "export_recording",
    };
    let audit = server
        .oversight
        .begin_admitted(tool, &arguments, context)
        .map_err(|problem| {
            McpError::invalid_request(
                format!("refused: {problem}, and this server runs with --audit-required"),
                None,
            )
        })?;
    let outcome = Caller::of(context)
        .scope(shown(server, &address, uri))
        .await;
    let (outcome, contents) = match outcome {
        Ok((done, contents)) => (Ok(done), contents),
        Err(e) => (Err(e), None),
    };
    let outcome = server.redact_outcome(outcome);
    if let Some(audit) = audit {
        audit.finish(
            outcome.as_ref().map(|d| &d.structured).map_err(|_| ()),
            Default::default(),
        );
    }
    let done = outcome.map_err(|message| McpError::resource_not_found(message, None))?;
    // The screen is the result's text, as capture_pane shows it (redacted above).
    let contents = contents.unwrap_or_else(|| ResourceContents::text(done.text, uri));
    Ok(vec![contents])
}

/// The `capture_pane` result for the address, and the resource's contents
/// when they are not the result's text (the picture, the recording: both
/// made of redacted text).
async fn shown(
    server: &TermpilotServer,
    address: &Address,
    uri: &str,
) -> ToolResult<(Done, Option<ResourceContents>)> {
    let params = |format| CapturePaneParams {
        pane: address.pane.clone(),
        scrollback: None,
        max_tokens: None,
        format,
    };
    match address.view {
        View::Screen => Ok((capture_pane(server, params(None)).await?, None)),
        View::Png => {
            let mut done = capture_pane(server, params(Some(CaptureFormat::Png))).await?;
            let image = done
                .content
                .drain(..)
                .find_map(|block| block.as_image().map(|i| i.data.clone()))
                .ok_or_else(|| ToolError::Failed("the picture was not drawn".to_owned()))?;
            let contents = ResourceContents::blob(image, uri).with_mime_type(View::Png.mime_type());
            Ok((done, Some(contents)))
        }
        View::Cast => {
            let pane = pane(server, &address.pane).await?;
            let span = crate::tools::recording::Span::default();
            let recorded = crate::tools::recording::recording(server, &pane, span).await?;
            let entry = json!({
                "pane": pane.to_string(),
                "output_events": recorded.outputs,
                "tool_calls": recorded.markers,
                "bytes": recorded.text.len(),
            });
            let contents =
                ResourceContents::text(recorded.text, uri).with_mime_type(View::Cast.mime_type());
            Ok((Done::new(&entry, String::new())?, Some(contents)))
        }
    }
}

/// The pane of an address, for tests.
#[cfg(test)]
fn address(uri: &str) -> Option<(String, View)> {
    parse(uri).ok().map(|a| (a.pane, a.view))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_a_pane_and_a_view() {
        assert_eq!(
            address("termpilot://pane/%3/screen"),
            Some(("%3".to_owned(), View::Screen))
        );
        assert_eq!(
            address("termpilot://pane/%25/screen.png"),
            Some(("%25".to_owned(), View::Png))
        );
        assert_eq!(
            address("termpilot://pane/12/recording.cast"),
            Some(("%12".to_owned(), View::Cast))
        );
        assert_eq!(
            address("termpilot://pane/box/%3/screen"),
            Some(("box/%3".to_owned(), View::Screen))
        );
        assert_eq!(address("termpilot://pane/%3/keys"), None);
        assert_eq!(address("termpilot://pane//screen"), None);
        assert_eq!(address("file:///etc/passwd"), None);
    }

    #[test]
    fn every_template_reads_back() {
        for view in View::ALL {
            assert_eq!(address(&uri("%7", view)), Some(("%7".to_owned(), view)));
        }
    }
}
