//! The engine's control clients: one attached to every tracked session
//! (tmux sends a pane's output only to clients attached to its session),
//! and the quiet one (`no-output`) commands take when those fall behind.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use termpilot_control::SessionId;

use crate::client::ClientHandle;
use crate::panes::ClientId;

/// The table of control clients. Its std `Mutex`es are held only to look
/// up or swap handles, never across an `.await`.
pub(crate) struct Clients {
    /// Tracked sessions and their clients.
    by_session: Mutex<BTreeMap<SessionId, ClientHandle>>,
    /// Serialises attaching clients, so two paths never attach two clients
    /// to the same session.
    pub(crate) tracking: tokio::sync::Mutex<()>,
    /// The quiet client, once started.
    quiet: Mutex<Option<ClientHandle>>,
    /// Serialises starting the quiet client.
    pub(crate) quiet_starting: tokio::sync::Mutex<()>,
    /// When starting the quiet client last failed: the next try waits.
    pub(crate) quiet_failed: Mutex<Option<tokio::time::Instant>>,
    /// Set when a session client fell behind and there is no quiet client
    /// yet, so the supervisor starts one.
    quiet_wanted: AtomicBool,
    next_id: AtomicU64,
}

impl Clients {
    pub(crate) fn new() -> Clients {
        Clients {
            by_session: Mutex::new(BTreeMap::new()),
            tracking: tokio::sync::Mutex::new(()),
            quiet: Mutex::new(None),
            quiet_starting: tokio::sync::Mutex::new(()),
            quiet_failed: Mutex::new(None),
            quiet_wanted: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<SessionId, ClientHandle>> {
        self.by_session.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn quiet_slot(&self) -> std::sync::MutexGuard<'_, Option<ClientHandle>> {
        self.quiet.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An id for a new client.
    pub(crate) fn next_id(&self) -> ClientId {
        ClientId(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Removes a session client from the table (it exited or is leaving).
    pub(crate) fn remove(&self, id: ClientId) {
        self.table().retain(|_, handle| handle.id != id);
    }

    pub(crate) fn for_session(&self, session: SessionId) -> Option<ClientHandle> {
        self.table().get(&session).cloned()
    }

    pub(crate) fn by_id(&self, id: ClientId) -> Option<ClientHandle> {
        self.table()
            .values()
            .find(|handle| handle.id == id)
            .cloned()
    }

    pub(crate) fn any(&self) -> Option<ClientHandle> {
        self.table().values().next().cloned()
    }

    /// A client whose replies come soon: a session client that is not
    /// behind, else the quiet client, else any client.
    pub(crate) fn prompt(&self) -> Option<ClientHandle> {
        let table = self.table();
        if let Some(client) = table.values().find(|client| !client.is_behind()) {
            return Some(client.clone());
        }
        let any = table.values().next().cloned();
        drop(table);
        self.quiet().or(any)
    }

    /// The quiet client, if it runs. One that ended before it was stored
    /// (its session ended while it connected) is dropped here.
    pub(crate) fn quiet(&self) -> Option<ClientHandle> {
        let mut quiet = self.quiet_slot();
        if quiet.as_ref().is_some_and(ClientHandle::is_closed) {
            *quiet = None;
        }
        quiet.clone()
    }

    pub(crate) fn set_quiet(&self, handle: ClientHandle) {
        *self.quiet_slot() = Some(handle);
    }

    /// Records that a quiet client is wanted; whether that is news (there
    /// is none, and none was wanted yet).
    pub(crate) fn want_quiet(&self) -> bool {
        self.quiet().is_none() && !self.quiet_wanted.swap(true, Ordering::AcqRel)
    }

    /// Whether a quiet client was wanted since the last call.
    pub(crate) fn take_quiet_wanted(&self) -> bool {
        self.quiet_wanted.swap(false, Ordering::AcqRel)
    }

    /// Forgets the quiet client `id` (it ended).
    pub(crate) fn forget_quiet(&self, id: ClientId) {
        let mut quiet = self.quiet_slot();
        if quiet.as_ref().is_some_and(|handle| handle.id == id) {
            *quiet = None;
        }
    }

    pub(crate) fn sessions(&self) -> Vec<SessionId> {
        self.table().keys().copied().collect()
    }

    /// Detaches and forgets every session client.
    pub(crate) fn detach_all(&self) {
        for (_, client) in std::mem::take(&mut *self.table()) {
            client.detach();
        }
    }

    /// Tracks `handle` as its session's client, detaching any before it.
    pub(crate) fn insert(&self, handle: ClientHandle) {
        if let Some(old) = self.table().insert(handle.session, handle) {
            old.detach();
        }
    }
}
