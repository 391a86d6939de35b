//! What a wait knows of its pane: the probe at its start (a round trip
//! through the client carrying the pane's output), the facts read when it
//! ends, and whether the pane, its server or the connection to its host is
//! gone.

use termpilot_control::{Command, PaneId};
use tokio::sync::watch;

use super::Outcome;
use super::screen::{SWITCH_MAX, switches_screen};
use crate::channel::Since;
use crate::cursor::Cursor;
use crate::engine::{Engine, call, not_found_pane, ok_reply};
use crate::error::{Error, Result};
use crate::format::tmux_format;

/// A pane's state, in one query: read when a wait ends, when waits check
/// that their pane lives, and by `run_command` before it types.
#[derive(Debug, Clone, Default)]
pub(crate) struct PaneFacts {
    pub(crate) exists: bool,
    pub(crate) dead: bool,
    pub(crate) alternate_screen: bool,
    pub(crate) in_mode: bool,
    /// tmux's name for the foreground program.
    pub(crate) current_command: String,
    /// The pid of the pane's first process, on the pane's host.
    pub(crate) pid: Option<u32>,
    /// The pane's terminal (`/dev/pts/3`), on the pane's host.
    pub(crate) tty: String,
}

/// What the probe at the start of a wait saw.
pub(super) struct Probe {
    /// The journal end when the probe's reply arrived.
    pub(super) cursor: u64,
    pub(super) dead: bool,
    pub(super) alternate_screen: bool,
    pub(super) in_mode: bool,
}

/// How much output after the probe [`Engine::facts_since`] looks through
/// for screen switches; after more, the report asks tmux.
const FACTS_WINDOW: u64 = 64 * 1024;

/// How long [`Engine::server_runs`] waits for the server's answer.
const SERVER_CHECK: std::time::Duration = std::time::Duration::from_secs(3);

impl Engine {
    /// A round trip through the client carrying the pane's output: every
    /// byte the pane printed before now is in the journal when it returns.
    /// Returns the cursor at the end of the output at that moment.
    pub async fn sync_pane(&self, pane: PaneId) -> Result<Cursor> {
        let (offset, _) = self.sync_pane_state(pane).await?;
        Ok(self.cursor(pane, offset))
    }

    /// [`Engine::sync_pane`], also saying whether the pane is dead (its
    /// program exited and `remain-on-exit` keeps it).
    pub(super) async fn sync_pane_state(&self, pane: PaneId) -> Result<(u64, bool)> {
        let probe = self.probe_pane(pane).await?;
        Ok((probe.cursor, probe.dead))
    }

    /// [`Engine::sync_pane`], with the pane's state at that moment.
    pub(super) async fn probe_pane(&self, pane: PaneId) -> Result<Probe> {
        let client = self.client_for_pane(pane).await?;
        let probe = Command::new("display-message")
            .flag("-p")
            .opt("-t", pane.to_string())
            .arg(PaneProbe::FORMAT);
        let answer = client.call(call(probe, Some(pane))?).await?;
        let cursor = answer.cursor.unwrap_or_default();
        let reply = ok_reply(answer).map_err(|e| not_found_pane(e, &pane.to_string()))?;
        let state = PaneProbe::parse_first("display-message", &reply)?;
        if state.id != Some(pane) {
            return Err(not_found(pane));
        }
        Ok(Probe {
            cursor,
            dead: state.dead,
            alternate_screen: state.alternate_screen,
            in_mode: state.in_mode,
        })
    }

    /// The screen facts of `probe`, if nothing since can have changed them:
    /// tmux reported no pane, window or mode change (`changes`, subscribed
    /// before the probe), and the pane's output after the probe neither
    /// switches screens nor was lost. Spares a wait's report the round trip
    /// that asks tmux again, which under load costs as much as the wake-up.
    pub(super) fn facts_since(
        &self,
        pane: PaneId,
        probe: &Probe,
        changes: &watch::Receiver<u64>,
    ) -> Option<PaneFacts> {
        if changes.has_changed().unwrap_or(true) {
            return None;
        }
        // A switch whose sequence began before the probe took effect after it.
        let from = probe.cursor.saturating_sub(SWITCH_MAX as u64);
        let unchanged = (self.shared.panes).with_journal_from(pane, from, |journal| {
            let read = journal.read_from(from);
            let short = journal.end() - from <= FACTS_WINDOW;
            short && read.lost == 0 && !switches_screen(&read.bytes)
        });
        unchanged.then(|| PaneFacts {
            exists: true,
            alternate_screen: probe.alternate_screen,
            in_mode: probe.in_mode,
            ..PaneFacts::default()
        })
    }

    pub(crate) async fn pane_facts(&self, pane: PaneId) -> Result<PaneFacts> {
        let query = Command::new("display-message")
            .flag("-p")
            .opt("-t", pane.to_string())
            .arg(PaneFactsRow::FORMAT);
        let reply = self.command(query).await?;
        let row = PaneFactsRow::parse_first("display-message", &reply)?;
        Ok(PaneFacts {
            exists: row.id == Some(pane),
            dead: row.dead,
            alternate_screen: row.alternate_screen,
            in_mode: row.in_mode,
            current_command: row.current_command,
            pid: row.pid,
            tty: row.tty,
        })
    }

    /// Whether the pane (or the whole server, since the wait started in
    /// the server of pid `server_pid`) is gone: `None` while the pane lives.
    pub(super) async fn pane_gone(&self, pane: PaneId, server_pid: u32) -> Result<Option<Outcome>> {
        if self.shared.any_client().is_none() {
            // Every control client ended: the server or the connection to
            // its host went away. Asking about the pane now would start a
            // new one.
            return Ok(Some(self.gone_outcome(pane, server_pid).await));
        }
        match self.pane_facts(pane).await {
            Ok(facts) if facts.exists && !facts.dead => Ok(None),
            // tmux answered, so its server runs: the pane is gone (or a
            // new server answered).
            Ok(_) if self.server_pid() == server_pid => Ok(Some(Outcome::PaneExited)),
            Ok(_) => Ok(Some(Outcome::ServerExited)),
            // The query's client closed under it: so did the server (or
            // the connection to its host).
            Err(Error::Disconnected { .. }) => Ok(Some(self.gone_outcome(pane, server_pid).await)),
            // The session of the client that carried the query ended, and
            // the server runs on. That ending changed the panes, so the
            // wait asks again at once, on another client.
            Err(Error::SessionEnded { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// How a wait on `pane` started in the server of pid `server_pid` ends when its pane
    /// is gone. A pane termpilot killed exited, even when the server has
    /// gone since: killing its last pane ends it.
    pub(super) async fn gone_outcome(&self, pane: PaneId, server_pid: u32) -> Outcome {
        if self.connection_lost() {
            Outcome::HostLost
        } else if self.server_pid() != server_pid {
            Outcome::ServerExited
        } else if self.shared.panes.killed(pane) || self.server_runs(server_pid).await {
            Outcome::PaneExited
        } else if self.connection_lost() {
            // The last clients of a dropped connection ended meanwhile.
            Outcome::HostLost
        } else {
            Outcome::ServerExited
        }
    }

    /// Whether the server with pid `server_pid` still answers, asked outside
    /// the control clients: tmux ends those one by one, so while a killed
    /// server goes, some are still there.
    async fn server_runs(&self, server_pid: u32) -> bool {
        let asked = self.server_since(server_pid);
        matches!(
            tokio::time::timeout(SERVER_CHECK, asked).await,
            Ok(Since::Same)
        )
    }
}

fn not_found(pane: PaneId) -> Error {
    Error::pane_not_found(pane.to_string())
}

tmux_format! {
    /// Whether a pane is there (display-message falls back to another pane
    /// for some targets), dead, and what its screen shows.
    struct PaneProbe {
        id: Option<PaneId> = "pane_id",
        dead: bool = "pane_dead",
        alternate_screen: bool = "alternate_on",
        in_mode: bool = "pane_in_mode",
    }
}

tmux_format! {
    /// What the engine reads of a pane before typing into it.
    struct PaneFactsRow {
        id: Option<PaneId> = "pane_id",
        dead: bool = "pane_dead",
        alternate_screen: bool = "alternate_on",
        in_mode: bool = "pane_in_mode",
        current_command: String = "pane_current_command",
        pid: Option<u32> = "pane_pid",
        tty: String = "pane_tty",
    }
}
