//! Waiting for a pane: for text to appear, or for the pane to go quiet.
//!
//! A wait scans the pane's journal from its baseline, so output that scrolled
//! past between two screen reads cannot be missed, and it sleeps until the
//! journal grows (no polling). Dropping the future cancels the wait and
//! leaves nothing running.
//!
//! - this file: text and idle waits, and the scan of a pane's journal
//!   (`termpilot_shell::EchoScan` skips the echo of typed input).
//! - `facts`: the probe at a wait's start and the pane's facts at its end;
//!   whether the pane, its server or its host is gone.
//! - `report`: what a wait reports, with the pane's last lines.
//! - `screen`: whether output switches screens.

use std::time::Duration;

use termpilot_control::PaneId;
use termpilot_journal::{Journal, Needle, Pattern, Redaction};
use termpilot_shell::{EchoScan, Scanned};
use tokio::time::Instant;

use crate::cursor::Cursor;
use crate::echo::{self, Typed};
use crate::engine::Engine;
use crate::error::{Error, Result};

mod facts;
mod report;
mod screen;

pub(crate) use facts::PaneFacts;
use report::TAIL_WINDOW;

/// What a text wait looks for.
#[derive(Debug, Clone)]
pub struct TextWait {
    /// Text (or regexes) that end the wait successfully.
    pub patterns: Vec<Needle>,
    /// Text (or regexes) that end the wait as a failure.
    pub stop: Vec<Needle>,
    /// Case-sensitive matching.
    pub match_case: bool,
    /// Where to scan from; `None` is the moment the wait starts.
    pub since: Option<Cursor>,
    /// Also match what the screen shows when the wait starts.
    pub include_screen: bool,
    /// How long to wait.
    pub timeout: Duration,
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A pattern matched.
    Matched,
    /// A stop pattern matched first.
    Stopped,
    /// Nothing matched in time.
    Timeout,
    /// The pane closed (or its program exited) before a match.
    PaneExited,
    /// The tmux server went away (it was killed or crashed) during the wait.
    ServerExited,
    /// The connection to the pane's host dropped during the wait (ssh or
    /// the exec command ended without tmux saying it exits); the next call
    /// on that host connects again.
    HostLost,
    /// Output the wait needed was evicted or dropped before it was scanned.
    Lost,
    /// The pane printed nothing for the quiet period (idle waits).
    Idle,
    /// A person at the pane (`termpilot attach`) cancelled the wait.
    CancelledByUser,
    /// The pane's program waits for input (see `input_state`).
    AwaitingInput,
}

/// The text a wait matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Index of the pattern (or stop pattern) that matched, in its own list.
    pub index: usize,
    /// The matched text.
    pub text: String,
    /// The whole line it is on, as a person would read it.
    pub line: String,
    /// Found on the screen at the start rather than in new output.
    pub on_screen: bool,
}

/// The result of a wait.
#[derive(Debug, Clone)]
pub struct WaitReport {
    /// How the wait ended.
    pub outcome: Outcome,
    /// What matched, for `Matched` and `Stopped`.
    pub found: Option<Found>,
    /// Where the wait started in the pane's output.
    pub baseline: Cursor,
    /// Where a following wait should start: just after the matched line, or
    /// the end of what was scanned.
    pub cursor: Cursor,
    /// Bytes of output between the baseline and the cursor that were lost.
    pub lost_bytes: u64,
    /// How long the wait took.
    pub elapsed: Duration,
    /// The last lines of output after the baseline; for a full-screen
    /// program (alternate screen), the last lines of its screen.
    /// `run_command`'s wrappers are shown as the command lines typed.
    pub tail: Vec<String>,
    /// The pane shows a full-screen program's alternate screen.
    pub alternate_screen: bool,
    /// The pane is in copy mode (or another mode).
    pub in_mode: bool,
    /// What the program waiting for input looks like, for `AwaitingInput`.
    pub input: Option<crate::input_state::AwaitingInput>,
}

/// Above this many bytes to read, a scan step runs on tokio's blocking
/// pool: scanning 8 MiB takes about 100 ms, which would keep a runtime
/// thread from the control clients' readers (two threads in all, as
/// `termpilot serve` runs).
const INLINE_SCAN: u64 = 256 * 1024;

/// Runs one step of `scan` on `journal`, off the runtime's threads when the
/// step has much to read.
async fn scan_step(
    mut scan: EchoScan,
    journal: Journal,
    typed: Vec<Typed>,
) -> Result<(EchoScan, Scanned)> {
    if journal.end().saturating_sub(scan.position()) <= INLINE_SCAN {
        let step = scan.step(&journal, &typed);
        return Ok((scan, step));
    }
    let scanned = tokio::task::spawn_blocking(move || {
        let step = scan.step(&journal, &typed);
        (scan, step)
    });
    match scanned.await {
        Ok(done) => Ok(done),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(Error::Disconnected {
            command: "wait_for_text".into(),
            reason: "the engine is shutting down".into(),
        }),
    }
}

impl Engine {
    /// Waits until one of `spec.patterns` appears in the pane's output after
    /// the baseline (or a stop pattern does, or time runs out, or the pane
    /// goes away). See the `echo` module for why the echo of typed input
    /// never matches ([`EchoScan`] applies it). Patterns match over the
    /// output with its secrets hidden (see [`termpilot_journal::Scanner`]):
    /// they never observe a secret's characters.
    pub async fn wait_for_text(&self, pane: PaneId, spec: &TextWait) -> Result<WaitReport> {
        let since = self.since_offset(pane, spec.since)?;
        let started = Instant::now();
        let needles = spec.patterns.iter().chain(&spec.stop).cloned();
        let pattern = Pattern::new(needles, spec.match_case)
            .map_err(|e| Error::InvalidArgument(e.to_string()))?;
        let mut journal_rx = self.subscribe(pane);
        let mut panes_rx = self.panes_changed();
        let mut cancels = self.shared.panes.cancels(pane);
        let started_at = crate::person::unix_nanos();
        let server_pid = self.server_pid();
        // Taken before the probe: any change after it voids the probe's facts.
        let changes = self.panes_changed();
        let probe = self.probe_pane(pane).await?;
        let (now, dead) = (probe.cursor, probe.dead);
        // A secret being printed when the wait starts is scanned whole.
        let baseline = self.outside_secrets(pane, since.unwrap_or(now).min(now));
        let typed = self.shared.panes.typed(pane);
        let redaction = self.redaction();
        if spec.include_screen
            && let Some(found) = self
                .match_screen(pane, &pattern, &typed, &redaction)
                .await?
        {
            let outcome = kind(found.index, spec.patterns.len());
            let found = Found {
                index: local_index(found.index, spec.patterns.len()),
                ..found
            };
            return self
                .report(pane, outcome, Some(found), baseline, now, 0, started)
                .await;
        }
        let earlier = self.lines_before(pane, &typed, baseline);
        let mut scan = EchoScan::new(pattern, baseline, earlier, redaction);
        let deadline = started + spec.timeout;
        loop {
            let typed_now = self.shared.panes.typed(pane);
            // The scan runs on a snapshot, with no lock held: the pane's
            // reader goes on appending meanwhile.
            let journal = self.shared.panes.snapshot_from(pane, scan.position());
            let step;
            (scan, step) = scan_step(scan, journal, typed_now).await?;
            match step {
                Scanned::Found(m) => {
                    let n = spec.patterns.len();
                    let found = Found {
                        index: local_index(m.pattern, n),
                        text: m.text,
                        line: m.line,
                        on_screen: false,
                    };
                    let lost = scan.lost();
                    let known = self.facts_since(pane, &probe, &changes);
                    let outcome = kind(m.pattern, n);
                    let found = Some(found);
                    return self
                        .report_with(
                            pane,
                            outcome,
                            found,
                            (baseline, m.line_end),
                            lost,
                            started,
                            known,
                        )
                        .await;
                }
                Scanned::Lost(lost) => {
                    let end = self.journal_end(pane);
                    return self
                        .report(pane, Outcome::Lost, None, baseline, end, lost, started)
                        .await;
                }
                // A pane already dead prints nothing more: what it printed is
                // scanned, and nothing matched.
                Scanned::Pending if dead => {
                    let exited = Outcome::PaneExited;
                    return self
                        .ended(pane, exited, baseline, scan.lost(), started)
                        .await;
                }
                Scanned::Pending => {}
            }
            tokio::select! {
                changed = journal_rx.changed() => {
                    if changed.is_err() {
                        // The journal was dropped: the pane was killed, or
                        // the server replaced.
                        let gone = self.gone_outcome(pane, server_pid).await;
                        return self.ended(pane, gone, baseline, scan.lost(), started).await;
                    }
                }
                _ = panes_rx.changed() => {
                    if let Some(gone) = self.pane_gone(pane, server_pid).await? {
                        return self.ended(pane, gone, baseline, scan.lost(), started).await;
                    }
                }
                changed = cancels.changed() => {
                    if changed.is_ok() && *cancels.borrow_and_update() >= started_at {
                        let end = self.journal_end(pane);
                        return self.report(pane, Outcome::CancelledByUser, None, baseline, end, scan.lost(), started).await;
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    let end = self.journal_end(pane);
                    return self.report(pane, Outcome::Timeout, None, baseline, end, scan.lost(), started).await;
                }
            }
        }
    }

    /// The secrets hidden now, from every text a wait shows and matches.
    pub fn redaction(&self) -> Redaction {
        self.config().redactor.now()
    }

    /// `offset`, or the start of a secret it falls inside of (see
    /// [`Journal::outside_secrets`]).
    pub(crate) fn outside_secrets(&self, pane: PaneId, offset: u64) -> u64 {
        let redaction = self.redaction();
        if redaction.is_empty() {
            return offset;
        }
        let from = offset.saturating_sub(redaction.longest() as u64);
        (self.shared.panes).with_journal_from(pane, from, |journal| {
            journal.outside_secrets(offset, &redaction)
        })
    }

    /// Waits until the pane has printed nothing for `quiet`.
    pub async fn wait_for_idle(
        &self,
        pane: PaneId,
        quiet: Duration,
        timeout: Duration,
    ) -> Result<WaitReport> {
        let started = Instant::now();
        let mut journal_rx = self.subscribe(pane);
        let mut panes_rx = self.panes_changed();
        let mut cancels = self.shared.panes.cancels(pane);
        let started_at = crate::person::unix_nanos();
        let server_pid = self.server_pid();
        let (baseline, dead) = self.sync_pane_state(pane).await?;
        if dead {
            return self
                .ended(pane, Outcome::PaneExited, baseline, 0, started)
                .await;
        }
        let deadline = started + timeout;
        let mut last_output = Instant::now();
        loop {
            let quiet_until = last_output + quiet;
            tokio::select! {
                changed = journal_rx.changed() => {
                    if changed.is_err() {
                        let gone = self.gone_outcome(pane, server_pid).await;
                        return self.ended(pane, gone, baseline, 0, started).await;
                    }
                    last_output = Instant::now();
                }
                _ = panes_rx.changed() => {
                    if let Some(gone) = self.pane_gone(pane, server_pid).await? {
                        return self.ended(pane, gone, baseline, 0, started).await;
                    }
                }
                changed = cancels.changed() => {
                    if changed.is_ok() && *cancels.borrow_and_update() >= started_at {
                        let end = self.journal_end(pane);
                        return self.report(pane, Outcome::CancelledByUser, None, baseline, end, 0, started).await;
                    }
                }
                () = tokio::time::sleep_until(quiet_until), if quiet_until <= deadline => {
                    let end = self.journal_end(pane);
                    return self.report(pane, Outcome::Idle, None, baseline, end, 0, started).await;
                }
                () = tokio::time::sleep_until(deadline) => {
                    let end = self.journal_end(pane);
                    return self.report(pane, Outcome::Timeout, None, baseline, end, 0, started).await;
                }
            }
        }
    }

    /// Checks the visible screen for the pattern, ignoring lines that echo
    /// typed input.
    async fn match_screen(
        &self,
        pane: PaneId,
        pattern: &Pattern,
        typed: &[Typed],
        redaction: &Redaction,
    ) -> Result<Option<Found>> {
        let capture = self.capture_raw(pane, crate::Scrollback::None).await?;
        let mut screen = Journal::new(termpilot_journal::Limits::default());
        for line in &capture.lines {
            screen.append(line.as_bytes());
            screen.append(b"\n");
        }
        let candidates = typed.iter().flat_map(Typed::lines).map(str::to_owned);
        let mut scan = EchoScan::new(pattern.clone(), 0, candidates.collect(), redaction.clone());
        Ok(match scan.step(&screen, &[]) {
            Scanned::Found(m) => Some(Found {
                index: m.pattern,
                text: m.text,
                line: m.line,
                on_screen: true,
            }),
            _ => None,
        })
    }

    /// The lines typed before the baseline whose echo has not shown yet.
    fn lines_before(&self, pane: PaneId, typed: &[Typed], baseline: u64) -> Vec<String> {
        // Echo shows up right after the input: text typed more than a window
        // before the baseline was echoed long ago.
        let window_start = baseline.saturating_sub(TAIL_WINDOW);
        let recent: Vec<Typed> = typed
            .iter()
            .filter(|t| (window_start..baseline).contains(&t.offset))
            .cloned()
            .collect();
        let Some(from) = recent.iter().map(|t| t.offset).min() else {
            return Vec::new();
        };
        let mut lines =
            (self.shared.panes).with_journal_from(pane, from, |journal| journal.lines(from).lines);
        lines.retain(|line| line.end <= baseline);
        echo::unechoed(&recent, &lines)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

fn kind(index: usize, patterns: usize) -> Outcome {
    if index < patterns {
        Outcome::Matched
    } else {
        Outcome::Stopped
    }
}

fn local_index(index: usize, patterns: usize) -> usize {
    if index < patterns {
        index
    } else {
        index - patterns
    }
}
