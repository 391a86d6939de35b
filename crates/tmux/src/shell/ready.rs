//! A remote pane whose shell was found ready for input after a command:
//! the next `run_command` there types at once.
//!
//! Before typing, `run_command` checks that the shell is at its prompt and
//! not in a `read`: on another host that is a round trip (the pane's facts
//! and a dump of its processes). Right after a command ended, though, the
//! shell was seen ready for input under its prompt, and as long as the pane
//! prints nothing, nothing is typed into it and no pane changes (a mode, a
//! layout, a connection lost), it is still there: a shell at its prompt
//! changes only on input, which it echoes. So that sighting stands in for
//! the check. Panes on this machine are checked every time: there the
//! check costs next to nothing.

use std::sync::Arc;
use std::time::Duration;

use termpilot_control::PaneId;
use tokio::time::Instant;

use super::{PaneProcs, Running, Shell};
use crate::engine::Engine;
use crate::error::Result;
use crate::procfs::Procfs;
use crate::wait::PaneFacts;

/// How long a sighting stands in for the check at most.
const SIGHTING_KEPT: Duration = Duration::from_secs(120);

/// How long, on another host, more output is awaited after a command
/// line's echo before its shell is looked at: the start marker a shell
/// prints a moment after the echo can come a read later, and the look
/// (a round trip) would find the shell done with the command and still
/// not know it started.
const ECHO_GRACE: Duration = Duration::from_millis(20);

/// A shell seen ready for input, and what the pane looked like then.
#[derive(Debug, Clone)]
pub(crate) struct Sighting {
    shell: Shell,
    pid: u32,
    procs: PaneProcs,
    /// The pane's journal end, the engine's count of pane changes and of
    /// outages when it was seen.
    end: u64,
    changes: u64,
    outages: u64,
    at: Instant,
}

impl Engine {
    /// Remembers that the command's shell is ready for input now, on a pane
    /// of another host.
    pub(super) fn saw_ready(&self, running: &Running) {
        let (Some(pid), Some(procs)) = (running.shell_pid, running.procs.clone()) else {
            return;
        };
        if self.panes_are_local() {
            return;
        }
        let sighting = Sighting {
            shell: running.shell,
            pid,
            procs,
            end: self.journal_end(running.pane),
            changes: *self.panes_changed().borrow(),
            outages: self.shared.outages(),
            at: Instant::now(),
        };
        self.commands(|commands| commands.ready.insert(running.pane, sighting));
    }

    /// Forgets what was seen of the pane's shell (a sighting, a dump of its
    /// processes): something is being typed into it.
    pub(crate) fn forget_ready(&self, pane: PaneId) {
        self.commands(|commands| commands.ready.remove(&pane));
        self.shared.dumps.typed_into(pane);
    }

    /// The shell of the pane's last sighting, taken, if it still stands:
    /// nothing printed, typed or changed since.
    pub(super) fn ready_sighting(&self, pane: PaneId) -> Option<(Shell, Option<(u32, PaneProcs)>)> {
        let sighting = self.commands(|commands| commands.ready.remove(&pane))?;
        let stands = sighting.end == self.journal_end(pane)
            && sighting.changes == *self.panes_changed().borrow()
            && sighting.outages == self.shared.outages()
            && sighting.at.elapsed() < SIGHTING_KEPT;
        stands.then_some((sighting.shell, Some((sighting.pid, sighting.procs))))
    }

    /// The pane's facts and, on another host, a dump of its processes
    /// asked for at the same moment (one round trip, not two), when the
    /// last dump named the pane's first process and terminal as the facts
    /// do: a pane keeps both for its life.
    pub(super) async fn facts_and_procs(
        &self,
        pane: PaneId,
    ) -> (Result<PaneFacts>, Option<Arc<dyn Procfs>>) {
        let guess = match self.panes_are_local() {
            true => None,
            false => self.shared.dumps.last_procs(pane),
        };
        let Some((pid, tty)) = guess else {
            return (self.pane_facts(pane).await, None);
        };
        let (facts, fs) = tokio::join!(self.pane_facts(pane), self.procfs(pane, pid, &tty));
        let named = (facts.as_ref()).is_ok_and(|facts| facts.pid == Some(pid) && facts.tty == tty);
        (facts, named.then_some(fs))
    }

    /// Whether, on another host, the pane prints more after its journal
    /// ended at `end` within [`ECHO_GRACE`] (the caller reads it first).
    pub(super) async fn more_output_follows(&self, pane: PaneId, end: u64) -> bool {
        if self.panes_are_local() {
            return false;
        }
        let mut changes = self.subscribe(pane);
        let more = async {
            while self.journal_end(pane) == end {
                if changes.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(ECHO_GRACE, more).await.is_ok()
    }
}
