//! The engine's table of pane journals.
//!
//! Every `%output` line a control client reads ends up here. A pane's output
//! can reach several control clients (a window linked into two tracked
//! sessions), so each pane has one owning client and output from any other
//! client is dropped: otherwise the journal would count it twice.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use termpilot_control::PaneId;

use crate::echo::Typed;

/// How many journals of panes that are gone are kept (newest first).
const DEAD_KEPT: usize = 16;

/// How many pieces of typed text a pane remembers for echo detection.
const TYPED_KEPT: usize = 16;
use termpilot_journal::{Journal, Limits};
use tokio::sync::watch;

/// Identifies one control client for the lifetime of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ClientId(pub(crate) u64);

/// One pane's output and who it comes from.
struct PaneEntry {
    journal: Journal,
    owner: Option<ClientId>,
    /// Carries the journal's end offset, so waiters wake on new output.
    end: watch::Sender<u64>,
    /// Recent text termpilot typed, for telling echo from output.
    typed: VecDeque<Typed>,
    /// When the engine first saw the pane gone.
    gone_since: Option<std::time::Instant>,
    /// The latest time (Unix nanoseconds) a person cancelled the agent's
    /// waits on the pane.
    cancels: watch::Sender<u64>,
}

/// All pane journals. A std `Mutex` guards the table: every critical section
/// is a hash lookup plus a memcpy, never an `.await`.
pub(crate) struct Panes {
    table: Mutex<HashMap<PaneId, PaneEntry>>,
    journal_bytes: usize,
    /// Bumped whenever a cancel receiver is handed out.
    watchers: watch::Sender<u64>,
}

impl Panes {
    pub(crate) fn new(journal_bytes: usize) -> Self {
        Panes {
            table: Mutex::new(HashMap::new()),
            journal_bytes,
            watchers: watch::Sender::new(0),
        }
    }

    fn with_entry<R>(&self, pane: PaneId, f: impl FnOnce(&mut PaneEntry) -> R) -> R {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let entry = table.entry(pane).or_insert_with(|| PaneEntry {
            journal: Journal::new(Limits {
                max_bytes: self.journal_bytes,
            }),
            owner: None,
            end: watch::Sender::new(0),
            typed: VecDeque::new(),
            gone_since: None,
            cancels: watch::Sender::new(0),
        });
        f(entry)
    }

    /// Appends output read by `client`, unless another client owns the pane.
    /// Returns whether it was appended. Waiters are woken by [`Panes::notify`]
    /// once per read, not once per `%output` line: a flooding pane sends
    /// thousands of lines a read.
    pub(crate) fn append(&self, client: ClientId, pane: PaneId, data: &[u8]) -> bool {
        self.with_entry(pane, |entry| {
            let owner = *entry.owner.get_or_insert(client);
            if owner == client {
                entry.journal.append(data);
            }
            owner == client
        })
    }

    /// Wakes the pane's waiters: its journal grew.
    pub(crate) fn notify(&self, pane: PaneId) {
        self.with_entry(pane, |entry| {
            entry.end.send_replace(entry.journal.end());
        });
    }

    /// How many journals are held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Makes `client` the pane's owner if it has none yet; returns the owner.
    pub(crate) fn claim(&self, pane: PaneId, client: ClientId) -> ClientId {
        self.with_entry(pane, |entry| *entry.owner.get_or_insert(client))
    }

    /// The owning client of a pane, if output or a claim has fixed one.
    pub(crate) fn owner(&self, pane: PaneId) -> Option<ClientId> {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table.get(&pane).and_then(|entry| entry.owner)
    }

    /// The journal offset after the last byte of output seen for `pane`.
    pub(crate) fn end(&self, pane: PaneId) -> u64 {
        self.with_entry(pane, |entry| entry.journal.end())
    }

    /// Runs `f` on the pane's journal.
    pub(crate) fn with_journal<R>(&self, pane: PaneId, f: impl FnOnce(&Journal) -> R) -> R {
        self.with_entry(pane, |entry| f(&entry.journal))
    }

    /// Remembers text typed into the pane at journal offset `offset`.
    pub(crate) fn record_typed(&self, pane: PaneId, offset: u64, text: &str) {
        self.with_entry(pane, |entry| {
            if entry.typed.len() == TYPED_KEPT {
                entry.typed.pop_front();
            }
            entry.typed.push_back(Typed {
                offset,
                text: text.to_owned(),
            });
        });
    }

    /// The text recently typed into the pane, oldest first.
    pub(crate) fn typed(&self, pane: PaneId) -> Vec<Typed> {
        self.with_entry(pane, |entry| entry.typed.iter().cloned().collect())
    }

    /// Records the cancel time read from the pane's option.
    pub(crate) fn record_cancel(&self, pane: PaneId, time: u64) {
        self.with_entry(pane, |entry| {
            entry.cancels.send_if_modified(|latest| {
                let newer = time > *latest;
                *latest = (*latest).max(time);
                newer
            });
        });
    }

    /// A receiver of the latest time a person cancelled the agent's waits.
    /// While it lives, the engine reads the pane's cancel option now and
    /// then (see `person::watch_cancels`).
    pub(crate) fn cancels(&self, pane: PaneId) -> watch::Receiver<u64> {
        let receiver = self.with_entry(pane, |entry| entry.cancels.subscribe());
        self.watchers.send_modify(|n| *n += 1);
        receiver
    }

    /// Panes someone waits on for a cancel.
    pub(crate) fn watched(&self) -> Vec<PaneId> {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table
            .iter()
            .filter(|(_, entry)| entry.cancels.receiver_count() > 0)
            .map(|(pane, _)| *pane)
            .collect()
    }

    /// A receiver that changes whenever a wait starts watching for cancels.
    pub(crate) fn watchers(&self) -> watch::Receiver<u64> {
        self.watchers.subscribe()
    }

    /// Records that tmux dropped some of the pane's output.
    pub(crate) fn record_gap(&self, pane: PaneId, reason: termpilot_journal::GapReason) {
        self.with_entry(pane, |entry| {
            entry.journal.record_gap(reason);
            entry.end.send_replace(entry.journal.end());
        });
    }

    /// A receiver that changes whenever the pane's journal grows.
    pub(crate) fn subscribe(&self, pane: PaneId) -> watch::Receiver<u64> {
        self.with_entry(pane, |entry| entry.end.subscribe())
    }

    /// Forgets which panes `client` owned, so another client can take over.
    pub(crate) fn release(&self, client: ClientId) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        for entry in table.values_mut() {
            if entry.owner == Some(client) {
                entry.owner = None;
            }
        }
    }

    /// Drops every journal: pane ids are reused by a new tmux server.
    pub(crate) fn clear(&self) {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Marks panes not in `live` as gone and drops the journals of all but
    /// the [`DEAD_KEPT`] most recently gone.
    pub(crate) fn prune(&self, live: &[PaneId]) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        let mut gone: Vec<(std::time::Instant, PaneId)> = Vec::new();
        for (pane, entry) in table.iter_mut() {
            if live.contains(pane) {
                entry.gone_since = None;
            } else {
                gone.push((*entry.gone_since.get_or_insert(now), *pane));
            }
        }
        gone.sort_unstable_by_key(|&(since, _)| std::cmp::Reverse(since));
        for (_, pane) in gone.into_iter().skip(DEAD_KEPT) {
            table.remove(&pane);
        }
    }

    /// Drops one pane's journal once the pane is gone.
    pub(crate) fn remove(&self, pane: PaneId) {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pane);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_keeps_live_panes_and_the_newest_gone_ones() {
        let panes = Panes::new(1024);
        let client = ClientId(1);
        for id in 0..30 {
            panes.append(client, PaneId(id), b"output");
        }
        panes.prune(&[PaneId(0), PaneId(1)]);
        assert_eq!(panes.len(), 2 + DEAD_KEPT);
        assert_eq!(panes.end(PaneId(0)), 6, "live journals are untouched");
        panes.prune(&[PaneId(0)]);
        assert_eq!(
            panes.len(),
            1 + DEAD_KEPT,
            "pane 1 gone now, an older gone one dropped"
        );
        assert!(
            panes.with_journal(PaneId(1), |j| j.end()) == 6,
            "the newest gone pane is kept"
        );
    }
}
