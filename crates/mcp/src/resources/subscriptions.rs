//! Subscriptions to pane resources: they tell a client when a pane
//! printed, so that it reads the screen again: `resources/subscribe`
//! (protocol 2025-11-25 and before) or `subscriptions/listen` (2026-07-28).
//! Each subscription is a task that waits on the pane's journal and sends
//! `notifications/resources/updated` at most once per [`DEBOUNCE`]; it ends
//! on unsubscribe, when its client goes away (a failed send, or a closed
//! transport noticed within [`CLOSED_CHECK`]), or when the pane's journal is
//! gone. A client holds at most [`MAX_SUBSCRIPTIONS`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::parse;
use crate::address::pane;
use crate::caller::Caller;
use crate::server::TermpilotServer;

/// The least time between two notifications about one resource.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// The most subscriptions one client may hold.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 64;

/// How often a quiet subscription checks that its client is still there.
const CLOSED_CHECK: Duration = Duration::from_secs(2);

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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::super::{PREFIX, View, uri};
    use super::*;

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
