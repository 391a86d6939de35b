//! A person at the keyboard: the state `termpilot attach` shares through
//! tmux pane options, so `attach` and `serve` need no channel of their own.
//!
//! - `@termpilot_held` is set (to a note saying who and since when) while a
//!   person holds the pane: the engine then refuses agent input to it.
//! - `@termpilot_cancel` is set to the time (Unix nanoseconds) each time the
//!   person cancels the agent's pending wait on the pane: waits that started
//!   before that time end with `Outcome::CancelledByUser`. Comparing times,
//!   not watching for a change, means a cancel is neither lost when tmux
//!   reports it in its very first report, nor replayed on a later wait.
//!
//! The engine checks `@termpilot_held` with a round trip before every input
//! (so a takeover counts at once) and reads `@termpilot_cancel` of the panes
//! that waits are watching every [`CANCEL_POLL`] (see [`watch_panes`]).
//!
//! It does not ask tmux to report changes of these options with a format
//! subscription (`refresh-client -B`): tmux 3.3a crashes (`segfault at f0`)
//! when a session ends while a control client holds such a subscription, and
//! the crash takes every session with it.

use std::sync::Weak;
use std::time::Duration;

use termpilot_control::{Command, PaneId};
use tokio::sync::watch;

use crate::engine::{Engine, Shared};
use crate::error::{Error, Result};

/// The pane option set while a person holds the pane.
pub const HELD_OPTION: &str = "@termpilot_held";
/// The pane option a person changes to cancel the agent's wait.
pub const CANCEL_OPTION: &str = "@termpilot_cancel";

/// How often the cancel option (and dead flag) of a watched pane is read.
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(250);

/// The cancel time (Unix nanoseconds) in the option's value, if any.
fn cancel_time(value: &str) -> Option<u64> {
    value.trim().parse().ok()
}

/// The current time in Unix nanoseconds, as cancel times are written.
pub fn unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Engine {
    /// Refuses input to a pane a person holds.
    pub(crate) async fn refuse_held(&self, panes: &[PaneId]) -> Result<()> {
        for (pane, note) in panes.iter().zip(self.held_notes(panes).await?) {
            if let Some(note) = note {
                return Err(Error::HeldByPerson { pane: *pane, note });
            }
        }
        Ok(())
    }

    /// For each pane, who holds it (if a person does), in one round trip.
    pub(crate) async fn held_notes(&self, panes: &[PaneId]) -> Result<Vec<Option<String>>> {
        let client = self.primary().await?;
        let mut calls = Vec::with_capacity(panes.len());
        for pane in panes {
            let query = Command::new("display-message")
                .flag("-p")
                .opt("-t", pane.to_string())
                .arg(format!("#{{{HELD_OPTION}}}"));
            calls.push(crate::engine::call(query, None)?);
        }
        client
            .call_many(calls)
            .await
            .into_iter()
            .map(|answer| {
                let note = answer?.reply.text().trim().to_owned();
                Ok((!note.is_empty()).then_some(note))
            })
            .collect()
    }

    /// Marks the pane held by a person (what `termpilot attach` does).
    pub async fn hold(&self, pane: PaneId, note: &str) -> Result<()> {
        self.set_pane_option(pane, HELD_OPTION, Some(note)).await
    }

    /// Hands the pane back to the agent.
    pub async fn release(&self, pane: PaneId) -> Result<()> {
        self.set_pane_option(pane, HELD_OPTION, None).await
    }

    /// Cancels the agent's waits on the pane that started before now.
    pub async fn cancel_waits(&self, pane: PaneId) -> Result<()> {
        let now = unix_nanos().to_string();
        self.set_pane_option(pane, CANCEL_OPTION, Some(&now)).await
    }

    /// Reads the cancel option and the dead flag of each pane, in one
    /// round trip: records cancels, and returns the panes that are dead
    /// (their program exited, the pane kept by `remain-on-exit`).
    async fn read_watched(&self, panes: &[PaneId]) -> Vec<PaneId> {
        let Some(client) = self.shared.any_client() else {
            return Vec::new();
        };
        let mut calls = Vec::with_capacity(panes.len());
        for pane in panes {
            let query = Command::new("display-message")
                .flag("-p")
                .opt("-t", pane.to_string())
                .arg(format!("#{{pane_dead}}\x1f#{{{CANCEL_OPTION}}}"));
            match crate::engine::call(query, None) {
                Ok(call) => calls.push(call),
                Err(_) => return Vec::new(),
            }
        }
        let mut dead = Vec::new();
        for (pane, answer) in panes.iter().zip(client.call_many(calls).await) {
            // A pane that is gone fails the query: its waits learn that
            // from tmux's notifications.
            let Ok(answer) = answer else { continue };
            let text = answer.reply.text();
            let (flag, cancel) = text.split_once('\x1f').unwrap_or((&text, ""));
            if flag.trim() == "1" {
                dead.push(*pane);
            }
            if let Some(time) = cancel_time(cancel) {
                self.shared.panes.record_cancel(*pane, time);
            }
        }
        dead
    }

    async fn set_pane_option(&self, pane: PaneId, option: &str, value: Option<&str>) -> Result<()> {
        let command = Command::new("set-option")
            .flag("-p")
            .opt("-t", pane.to_string());
        let command = match value {
            Some(value) => command.arg(option).arg(value),
            None => command.flag("-u").arg(option),
        };
        self.command(command).await.map(|_| ())
    }
}

/// Background task: while any wait watches a pane, reads the watched
/// panes' cancel options and dead flags every [`CANCEL_POLL`]. Ends when the
/// engine is dropped.
///
/// The dead flag is read here because tmux says nothing to control clients
/// when a pane's program exits and `remain-on-exit` keeps the pane: a pane
/// found dead counts as a change of the panes, which makes waits check
/// their pane (once per death: a pane is reported again only after it was
/// seen alive, as after `respawn-pane`).
pub(crate) async fn watch_panes(shared: Weak<Shared>, mut wanted: watch::Receiver<u64>) {
    let mut reported: Vec<PaneId> = Vec::new();
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let panes = strong.panes.watched();
        if panes.is_empty() {
            drop(strong);
            if wanted.changed().await.is_err() {
                return;
            }
            continue;
        }
        let engine = Engine { shared: strong };
        let dead = engine.read_watched(&panes).await;
        reported.retain(|pane| dead.contains(pane));
        if dead.iter().any(|pane| !reported.contains(pane)) {
            reported = dead;
            engine.shared.mark_panes_changed();
        }
        drop(engine);
        tokio::time::sleep(CANCEL_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cancel_times() {
        assert_eq!(cancel_time(""), None);
        assert_eq!(
            cancel_time("1795307802000000000\n"),
            Some(1_795_307_802_000_000_000)
        );
    }
}
