//! Capturing a pane's text, and reading what its journal holds.

use std::borrow::Cow;

use termpilot_control::{Command, PaneId, Reply};

use crate::client;
use crate::cursor::Cursor;
use crate::engine::{Engine, call, not_found_pane, ok_reply};
use crate::error::Result;
use crate::format::tmux_format;
use crate::shell::hide_wrappers;

/// How much history a capture includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scrollback {
    /// The visible screen only.
    None,
    /// This many lines above the screen, plus the screen.
    Lines(u32),
    /// All history, plus the screen.
    All,
}

/// The text of a pane.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The pane.
    pub pane: PaneId,
    /// Lines, wrapped lines joined, trailing spaces and trailing blank lines
    /// removed, `run_command`'s wrappers shown as the command lines typed.
    pub lines: Vec<String>,
    /// The pane's output position when the capture was taken.
    pub cursor: Cursor,
    /// Whether a full-screen program is on the alternate screen.
    pub alternate_screen: bool,
    /// Whether the pane is in copy mode or another mode.
    pub in_mode: bool,
    /// Lines of history the pane holds above the screen.
    pub history_size: u64,
    /// The most lines of history tmux keeps for the pane.
    pub history_limit: u64,
}

impl Capture {
    /// Whether tmux's history is full, so that lines above what it holds
    /// are gone from the pane (the journal may still have them). tmux drops
    /// the oldest tenth of the history when it reaches its limit, so a full
    /// history holds between nine tenths of the limit and the limit.
    pub fn history_full(&self) -> bool {
        self.history_limit > 0 && self.history_size * 10 >= self.history_limit * 9
    }
}

tmux_format! {
    /// The screen facts reported with a capture.
    struct CaptureFacts {
        alternate_screen: bool = "alternate_on",
        in_mode: bool = "pane_in_mode",
        history_size: Option<u64> = "history_size",
        history_limit: Option<u64> = "history_limit",
    }
}

impl Engine {
    /// Captures a pane's text, with the cursor at the moment of the capture
    /// (output after it is not in the capture). When the pane's client is
    /// behind (tmux holds output for it that it has not read yet), the
    /// capture runs on the quiet client and the cursor is the end of the
    /// output read before it: output printed after the capture still never
    /// comes before the cursor, but output just before it may follow it.
    pub async fn capture(&self, pane: PaneId, scrollback: Scrollback) -> Result<Capture> {
        let mut capture = self.capture_raw(pane, scrollback).await?;
        capture.lines = without_wrappers(capture.lines);
        Ok(capture)
    }

    /// [`Engine::capture`] with the screen as tmux shows it, wrappers and all.
    pub(crate) async fn capture_raw(
        &self,
        pane: PaneId,
        scrollback: Scrollback,
    ) -> Result<Capture> {
        let target = pane.to_string();
        let mut capture = Command::new("capture-pane")
            .flag("-p")
            .flag("-J")
            .opt("-t", &target);
        capture = match scrollback {
            Scrollback::None => capture,
            Scrollback::Lines(n) => capture.opt("-S", format!("-{n}")),
            Scrollback::All => capture.opt("-S", "-"),
        };
        let facts = Command::new("display-message")
            .flag("-p")
            .opt("-t", &target)
            .arg(CaptureFacts::FORMAT);
        let (body, facts, cursor) = self.capture_with_facts(pane, capture, facts).await?;
        let facts = CaptureFacts::parse_first("display-message", &facts)?;
        let mut lines: Vec<String> = body
            .lines
            .iter()
            .map(|line| String::from_utf8_lossy(line).trim_end().to_owned())
            .collect();
        while lines.last().is_some_and(|line| line.is_empty()) {
            lines.pop();
        }
        Ok(Capture {
            pane,
            lines,
            cursor: self.cursor(pane, cursor),
            alternate_screen: facts.alternate_screen,
            in_mode: facts.in_mode,
            history_size: facts.history_size.unwrap_or_default(),
            history_limit: facts.history_limit.unwrap_or_default(),
        })
    }

    /// Runs a `capture-pane` of `pane` and a `display-message` of its facts
    /// in one write, so that the two agree: on the pane's own client, or on
    /// the quiet client when that one is behind (its reply would wait behind
    /// output queued in tmux). Returns the capture's reply, the facts' reply
    /// and the journal offset the capture follows.
    pub(crate) async fn capture_with_facts(
        &self,
        pane: PaneId,
        capture: Command,
        facts: Command,
    ) -> Result<(Reply, Reply, u64)> {
        let client = self.client_for_pane(pane).await?;
        // Everything read so far was printed before the capture.
        let before = self.journal_end(pane);
        let target = pane.to_string();
        let mut answers = None;
        if !client.is_behind() {
            let calls = vec![
                call(capture.clone(), Some(pane))?,
                call(facts.clone(), None)?,
            ];
            let replies = client.send_many(calls).await.answers();
            // Too late: the reply waits behind output queued in tmux.
            answers = tokio::time::timeout(client::BEHIND, replies).await.ok();
        }
        let answers = match answers {
            Some(answers) => answers,
            None => {
                let quiet = self.quiet().await.unwrap_or(client);
                let calls = vec![call(capture, None)?, call(facts, None)?];
                quiet.call_many(calls).await
            }
        };
        let mut answers = answers.into_iter();
        let captured = answers.next().expect("two answers")?;
        let cursor = captured.cursor.unwrap_or(before);
        let body = ok_reply(captured).map_err(|e| not_found_pane(e, &target))?;
        let facts = ok_reply(answers.next().expect("two answers")?)?;
        Ok((body, facts, cursor))
    }

    /// The journal offset after the last output seen for `pane`.
    pub fn journal_end(&self, pane: PaneId) -> u64 {
        self.shared.panes.end(pane)
    }

    /// Reads a pane's journal: output from `from` on, and bytes lost before it.
    pub fn read_journal<R>(
        &self,
        pane: PaneId,
        f: impl FnOnce(&termpilot_journal::Journal) -> R,
    ) -> R {
        self.shared.panes.with_journal(pane, f)
    }

    /// A receiver that changes whenever `pane` prints.
    pub fn subscribe(&self, pane: PaneId) -> tokio::sync::watch::Receiver<u64> {
        self.shared.panes.subscribe(pane)
    }
}

/// Lines of a pane's text with `run_command`'s wrappers shown as the
/// command lines typed (a wrapper spans several lines).
pub(crate) fn without_wrappers(lines: Vec<String>) -> Vec<String> {
    let text = lines.join("\n");
    match hide_wrappers(&text) {
        Cow::Borrowed(_) => lines,
        Cow::Owned(shown) if shown.is_empty() => Vec::new(),
        Cow::Owned(shown) => shown.split('\n').map(str::to_owned).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Shell, wrapper};

    fn lines(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_owned).collect()
    }

    #[test]
    fn a_wrapper_on_several_lines_is_shown_as_its_command() {
        let typed = wrapper(Shell::Bash, "make test", "tp0123456789abcdef");
        let screen = format!("$ {}\nok\n$", typed.replace('\n', "\n> "));
        assert_eq!(without_wrappers(lines(&screen)), ["$ make test", "ok", "$"]);
        let plain = lines("$ ls\na.txt\n\n$");
        assert_eq!(without_wrappers(plain.clone()), plain);
        assert!(without_wrappers(Vec::new()).is_empty());
    }
}
