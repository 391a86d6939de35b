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
//! (so a takeover counts at once) and learns of cancels through a tmux
//! subscription (tmux checks those about once a second).

use termpilot_control::{Command, PaneId};

use crate::engine::Engine;
use crate::error::{Error, Result};

/// The pane option set while a person holds the pane.
pub const HELD_OPTION: &str = "@termpilot_held";
/// The pane option a person changes to cancel the agent's wait.
pub const CANCEL_OPTION: &str = "@termpilot_cancel";

/// Name of the engine's tmux subscription.
pub(crate) const SUBSCRIPTION: &str = "termpilot-person";
/// What the subscription reports for every pane.
pub(crate) const FORMAT: &str = "#{@termpilot_held}\x1f#{@termpilot_cancel}";

/// Reads `%subscription-changed termpilot-person $S @W IDX %P ... : VALUE`.
pub(crate) fn parse_subscription(line: &[u8]) -> Option<(PaneId, String)> {
    let line = String::from_utf8_lossy(line);
    let (head, value) = line.split_once(" : ")?;
    let mut fields = head.split(' ');
    if fields.next()? != "%subscription-changed" || fields.next()? != SUBSCRIPTION {
        return None;
    }
    let pane = fields.find_map(|f| f.parse::<PaneId>().ok())?;
    Some((pane, value.to_owned()))
}

/// The cancel time (Unix nanoseconds) in a subscription report, if any.
pub(crate) fn cancel_time(value: &str) -> Option<u64> {
    value.split('\x1f').nth(1)?.trim().parse().ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_subscription_lines() {
        let line = b"%subscription-changed termpilot-person $0 @1 0 %4 : person\x1f7";
        assert_eq!(
            parse_subscription(line),
            Some((PaneId(4), "person\x1f7".to_owned()))
        );
        assert_eq!(
            parse_subscription(b"%subscription-changed other $0 @1 0 %4 : x"),
            None
        );
    }

    #[test]
    fn reads_cancel_times() {
        assert_eq!(cancel_time("\x1f"), None);
        assert_eq!(
            cancel_time("held\x1f1795307802000000000"),
            Some(1_795_307_802_000_000_000)
        );
    }
}
