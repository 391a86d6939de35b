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
//! Subscriptions tell a client when a pane printed, so that it reads the
//! screen again: `resources/subscribe` (protocol 2025-11-25 and before) or
//! `subscriptions/listen` (2026-07-28). Each subscription is a task that
//! waits on the pane's journal and sends `notifications/resources/updated`
//! at most once per [`DEBOUNCE`]; it ends on unsubscribe, when its client
//! goes away (a failed send, or a closed transport noticed within
//! [`CLOSED_CHECK`]), or when the pane's journal is gone. A client holds at
//! most [`MAX_SUBSCRIPTIONS`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, Resource, ResourceContents, ResourceTemplate,
    SubscriptionFilter,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;
use termpilot_tmux::PaneScope;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::address::pane;
use crate::caller::Caller;
use crate::error::{ToolError, ToolResult};
use crate::server::{Done, TermpilotServer};
use crate::tools::capture::{CapturePaneParams, capture_pane};
use crate::tools::picture::CaptureFormat;

/// The least time between two notifications about one resource.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// The most subscriptions one client may hold.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 64;

/// How often a quiet subscription checks that its client is still there.
const CLOSED_CHECK: Duration = Duration::from_secs(2);

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

/// The subscriptions of every client (`resources/subscribe`), by client and
/// URI. A std `Mutex`: each use is a lookup or an insert, never an `.await`.
#[derive(Default)]
pub(crate) struct Subscriptions {
    clients: Mutex<HashMap<String, HashMap<String, Watch>>>,
}

/// The serial number of the next subscription.
static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// One subscription's task.
struct Watch {
    /// Tells a subscription that ended on its own from a later one of the
    /// same URI.
    serial: u64,
    task: JoinHandle<()>,
}

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashMap<String, Watch>>> {
        self.clients.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `resources/subscribe`: notifies the client when the pane prints.
pub(crate) async fn subscribe(
    server: &TermpilotServer,
    uri: &str,
    context: &RequestContext<RoleServer>,
) -> Result<(), McpError> {
    let address = parse(uri)?;
    let pane = pane(server, &address.pane)
        .await
        .map_err(|e| McpError::resource_not_found(server.redact_text(&e.to_string()), None))?;
    let client = Caller::of(context).as_str().to_owned();
    let subscriptions = server.subscriptions.clone();
    let mut clients = subscriptions.lock();
    let held = clients.entry(client.clone()).or_default();
    if held.contains_key(uri) {
        return Ok(());
    }
    if held.len() >= MAX_SUBSCRIPTIONS {
        return Err(McpError::invalid_request(
            format!(
                "too many subscriptions: a client may hold {MAX_SUBSCRIPTIONS}; \
                 resources/unsubscribe some first"
            ),
            None,
        ));
    }
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let changes = pane.engine.subscribe(pane.id);
    let peer = context.peer.clone();
    let owned_uri = uri.to_owned();
    let ended = subscriptions.clone();
    let task = tokio::spawn(async move {
        let send = |uri: String| {
            let peer = peer.clone();
            async move {
                let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                peer.notify_resource_updated(param).await.is_ok()
            }
        };
        watch_pane(changes, &owned_uri, || peer.is_transport_closed(), send).await;
        // Gone without unsubscribe: forget it, unless a later one took its place.
        let mut clients = ended.lock();
        if let Some(held) = clients.get_mut(&client)
            && held.get(&owned_uri).is_some_and(|w| w.serial == serial)
        {
            held.remove(&owned_uri);
            if held.is_empty() {
                clients.remove(&client);
            }
        }
    });
    held.insert(uri.to_owned(), Watch { serial, task });
    Ok(())
}

/// `resources/unsubscribe`: stops the notifications (a URI not subscribed
/// to is no error).
pub(crate) fn unsubscribe(
    server: &TermpilotServer,
    uri: &str,
    context: &RequestContext<RoleServer>,
) {
    let client = Caller::of(context);
    let mut clients = server.subscriptions.lock();
    if let Some(held) = clients.get_mut(client.as_str()) {
        if let Some(watch) = held.remove(uri) {
            watch.task.abort();
        }
        if held.is_empty() {
            clients.remove(client.as_str());
        }
    }
}

/// Sends `send(uri)` each time the pane prints, at most once per
/// [`DEBOUNCE`], until a send fails, `closed()` says the client's transport
/// is closed, or the pane's journal is gone.
async fn watch_pane<F, S>(
    mut changes: watch::Receiver<u64>,
    uri: &str,
    closed: impl Fn() -> bool,
    send: S,
) where
    S: Fn(String) -> F,
    F: Future<Output = bool>,
{
    changes.mark_unchanged();
    loop {
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() || !send(uri.to_owned()).await {
                    return;
                }
                tokio::time::sleep(DEBOUNCE).await;
            }
            () = tokio::time::sleep(CLOSED_CHECK) => {}
        }
        if closed() {
            return;
        }
    }
}

/// The part of a `subscriptions/listen` filter this server serves: every
/// category it does not offer dropped, and the pane resources it names, at
/// most [`MAX_SUBSCRIPTIONS`].
pub(crate) fn accepted_filter(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| parse(uri).is_ok())
            .take(MAX_SUBSCRIPTIONS)
            .cloned()
            .collect()
    });
    accepted
}

/// `subscriptions/listen` (protocol 2026-07-28): notifies of the accepted
/// resources (those of panes within scope) until the client cancels.
pub(crate) async fn listen(server: &TermpilotServer, subscription: SubscriptionContext) {
    let uris = subscription
        .accepted()
        .resource_subscriptions
        .clone()
        .unwrap_or_default();
    let peer = subscription.request_context().peer.clone();
    let mut watches = tokio::task::JoinSet::new();
    for uri in uris {
        let Ok(address) = parse(&uri) else { continue };
        let Ok(pane) = pane(server, &address.pane).await else {
            continue;
        };
        let changes = pane.engine.subscribe(pane.id);
        let sink = subscription.sink().clone();
        let peer = peer.clone();
        watches.spawn(async move {
            let send = |uri: String| {
                let sink = sink.clone();
                async move { sink.notify_resource_updated(uri).await.is_ok() }
            };
            watch_pane(changes, &uri, || peer.is_transport_closed(), send).await;
        });
    }
    subscription.cancelled().await;
    watches.abort_all();
}

/// The pane of an address, for tests.
#[cfg(test)]
fn address(uri: &str) -> Option<(String, View)> {
    parse(uri).ok().map(|a| (a.pane, a.view))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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

    /// A pane's journal end, and a watch on it whose sends are counted.
    fn watched(
        closed: Arc<AtomicBool>,
        fails: bool,
    ) -> (
        watch::Sender<u64>,
        Arc<AtomicUsize>,
        tokio::task::JoinHandle<()>,
    ) {
        let (end, changes) = watch::channel(0);
        let sent = Arc::new(AtomicUsize::new(0));
        let counted = sent.clone();
        let task = tokio::spawn(async move {
            let send = |_: String| {
                counted.fetch_add(1, Ordering::SeqCst);
                std::future::ready(!fails)
            };
            watch_pane(
                changes,
                "termpilot://pane/%1/screen",
                || closed.load(Ordering::SeqCst),
                send,
            )
            .await;
        });
        (end, sent, task)
    }

    #[tokio::test(start_paused = true)]
    async fn output_is_told_at_most_once_per_debounce() {
        let (end, sent, task) = watched(Arc::default(), false);
        tokio::task::yield_now().await;
        // Quiet: nothing sent.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(sent.load(Ordering::SeqCst), 0);
        // A flood over one second: the first at once, then one per 200 ms.
        for i in 1..=100 {
            end.send_replace(i);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let told = sent.load(Ordering::SeqCst);
        assert!(
            (5..=6).contains(&told),
            "{told} notifications for 1 s of output"
        );
        // The pane's journal gone: the watch ends.
        drop(end);
        tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_ends_when_its_client_goes_away() {
        // A failed send ends it.
        let (end, sent, task) = watched(Arc::default(), true);
        tokio::task::yield_now().await;
        end.send_replace(1);
        tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(sent.load(Ordering::SeqCst), 1);
        // A closed transport ends a quiet one within CLOSED_CHECK.
        let closed = Arc::new(AtomicBool::new(false));
        let (_end, sent, task) = watched(closed.clone(), false);
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(!task.is_finished());
        closed.store(true, Ordering::SeqCst);
        tokio::time::timeout(CLOSED_CHECK * 2, task)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(sent.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn listen_keeps_only_pane_resources_and_at_most_the_cap() {
        let mut requested = SubscriptionFilter::new();
        requested.tools_list_changed = Some(true);
        let mut uris: Vec<String> = (0..100)
            .map(|i| uri(&format!("%{i}"), View::Screen))
            .collect();
        uris.push("file:///etc/passwd".to_owned());
        requested.resource_subscriptions = Some(uris);
        let accepted = accepted_filter(&requested);
        assert_eq!(accepted.tools_list_changed, None);
        let kept = accepted.resource_subscriptions.unwrap();
        assert_eq!(kept.len(), MAX_SUBSCRIPTIONS);
        assert!(kept.iter().all(|u| u.starts_with(PREFIX)));
    }
}
