//! What a wait reports when it ends: its outcome, the span it covered and
//! the pane's last lines (its screen's, for a program that draws), secrets
//! hidden.

use termpilot_control::PaneId;
use termpilot_journal::{Journal, Redaction};
use tokio::time::Instant;

use super::{Found, Outcome, PaneFacts, WaitReport};
use crate::engine::Engine;
use crate::error::Result;
use crate::ops::without_wrappers;

/// Lines of output kept in a wait's `tail`.
const TAIL_LINES: usize = 5;

/// How far back from the end a wait's tail (and echo bookkeeping) reads:
/// enough for a few lines, without re-reading megabytes of a flood.
pub(super) const TAIL_WINDOW: u64 = 64 * 1024;

impl Engine {
    /// The pane (or the server) went away: report what its journal holds.
    pub(super) async fn ended(
        &self,
        pane: PaneId,
        outcome: Outcome,
        baseline: u64,
        lost: u64,
        started: Instant,
    ) -> Result<WaitReport> {
        let end = self.journal_end(pane);
        self.report(pane, outcome, None, baseline, end, lost, started)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn report(
        &self,
        pane: PaneId,
        outcome: Outcome,
        found: Option<Found>,
        baseline: u64,
        cursor: u64,
        lost_bytes: u64,
        started: Instant,
    ) -> Result<WaitReport> {
        let span = (baseline, cursor);
        self.report_with(pane, outcome, found, span, lost_bytes, started, None)
            .await
    }

    /// [`Engine::report`] for a `(baseline, cursor)` span, asking tmux for
    /// the pane's facts unless they are `known`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn report_with(
        &self,
        pane: PaneId,
        outcome: Outcome,
        found: Option<Found>,
        (baseline, cursor): (u64, u64),
        lost_bytes: u64,
        started: Instant,
        known: Option<PaneFacts>,
    ) -> Result<WaitReport> {
        let facts = match (outcome, known) {
            (Outcome::PaneExited | Outcome::ServerExited | Outcome::HostLost, _) => {
                PaneFacts::default()
            }
            (_, Some(known)) => known,
            (_, None) => self.pane_facts(pane).await.unwrap_or_default(),
        };
        // A full-screen program draws with cursor movement, which a line
        // view of its output turns into a jumble: show its screen instead.
        // So does one that draws on the normal screen (`less -X`, git's pager).
        let drawn = !facts.alternate_screen
            && self.read_journal(pane, |journal| {
                let from = baseline.max(journal.end().saturating_sub(TAIL_WINDOW));
                termpilot_shell::addresses_cursor(&journal.read_from(from).bytes)
            });
        let screen = match facts.alternate_screen || drawn {
            true => self.capture_raw(pane, crate::Scrollback::None).await.ok(),
            false => None,
        };
        let (tail, unfinished) = match screen {
            Some(screen) => (screen_tail(&screen.lines), false),
            None => self.read_journal(pane, |journal| tail_lines(journal, baseline)),
        };
        let tail = redacted_tail(&self.redaction(), without_wrappers(tail), unfinished);
        Ok(WaitReport {
            outcome,
            found,
            baseline: self.cursor(pane, baseline),
            cursor: self.cursor(pane, cursor),
            lost_bytes,
            elapsed: started.elapsed(),
            tail,
            alternate_screen: facts.alternate_screen,
            in_mode: facts.in_mode,
            input: None,
        })
    }
}

/// The last lines after `baseline`, and whether the last of them is the
/// unfinished line the pane is printing.
fn tail_lines(journal: &Journal, baseline: u64) -> (Vec<String>, bool) {
    let from = baseline.max(journal.end().saturating_sub(TAIL_WINDOW));
    let view = journal.lines(from);
    let mut lines: Vec<String> = view.lines.into_iter().map(|line| line.text).collect();
    if from > baseline && !lines.is_empty() {
        // Reading started mid-line: the first line is only a fragment.
        lines.remove(0);
    }
    let partial = view.partial.filter(|p| !p.is_empty());
    let unfinished = partial.is_some();
    lines.extend(partial);
    let skip = lines.len().saturating_sub(TAIL_LINES);
    (lines.split_off(skip), unfinished)
}

/// A tail with its secrets hidden, as a wait matches: the end of an
/// `unfinished` last line that could begin a secret is left out, so output
/// cut inside a secret shows none of its first characters.
fn redacted_tail(redaction: &Redaction, tail: Vec<String>, unfinished: bool) -> Vec<String> {
    let mut tail = redaction.redact_lines(tail);
    if unfinished && let Some(last) = tail.last_mut() {
        let held = redaction.held_back(last);
        last.truncate(last.len() - held);
    }
    tail
}

/// The last lines of a screen with text, trailing spaces removed.
fn screen_tail(lines: &[String]) -> Vec<String> {
    let shown = lines
        .iter()
        .rposition(|line| !line.trim().is_empty())
        .map_or(0, |last| last + 1);
    let skip = shown.saturating_sub(TAIL_LINES);
    lines[skip..shown]
        .iter()
        .map(|line| line.trim_end().to_owned())
        .collect()
}
