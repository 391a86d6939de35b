//! Waiting for a pane: for text to appear, or for the pane to go quiet.
//!
//! A wait scans the pane's journal from its baseline, so output that scrolled
//! past between two screen reads cannot be missed, and it sleeps until the
//! journal grows (no polling). Dropping the future cancels the wait and
//! leaves nothing running.

use std::time::Duration;

use termpilot_control::{Command, PaneId};
use termpilot_journal::{Journal, Match, Needle, Pattern, Redaction, Scanner};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::cursor::Cursor;
use crate::echo::{self, Echo, Typed};
use crate::engine::{Engine, call, not_found_pane, ok_reply};
use crate::error::{Error, Result};
use crate::format::tmux_format;
use crate::ops::without_wrappers;
use screen::{SWITCH_MAX, switches_screen};

mod screen;

/// Lines of output kept in a wait's `tail`.
const TAIL_LINES: usize = 5;

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
) -> Result<(EchoScan, Step)> {
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

/// What the probe at the start of a wait saw.
struct Probe {
    /// The journal end when the probe's reply arrived.
    cursor: u64,
    dead: bool,
    alternate_screen: bool,
    in_mode: bool,
}

/// How much output after the probe [`Engine::facts_since`] looks through
/// for screen switches; after more, the report asks tmux.
const FACTS_WINDOW: u64 = 64 * 1024;

/// Where a scan left off.
enum Step {
    Found(Match),
    Lost(u64),
    Pending,
}

impl Engine {
    /// Waits until one of `spec.patterns` appears in the pane's output after
    /// the baseline (or a stop pattern does, or time runs out, or the pane
    /// goes away). See the `echo` module for why the echo of typed input
    /// never matches. Patterns match over the output with its secrets
    /// hidden (see [`Scanner`]): they never observe a secret's characters.
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
        let epoch = self.server_pid();
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
                Step::Found(m) => {
                    let n = spec.patterns.len();
                    let found = Found {
                        index: local_index(m.pattern, n),
                        text: m.text,
                        line: m.line,
                        on_screen: false,
                    };
                    let lost = scan.lost;
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
                Step::Lost(lost) => {
                    let end = self.journal_end(pane);
                    return self
                        .report(pane, Outcome::Lost, None, baseline, end, lost, started)
                        .await;
                }
                // A pane already dead prints nothing more: what it printed is
                // scanned, and nothing matched.
                Step::Pending if dead => {
                    let exited = Outcome::PaneExited;
                    return self.ended(pane, exited, baseline, scan.lost, started).await;
                }
                Step::Pending => {}
            }
            tokio::select! {
                changed = journal_rx.changed() => {
                    if changed.is_err() {
                        // The journal was dropped: the pane was killed, or
                        // the server replaced.
                        let gone = self.gone_outcome(epoch);
                        return self.ended(pane, gone, baseline, scan.lost, started).await;
                    }
                }
                _ = panes_rx.changed() => {
                    if let Some(gone) = self.pane_gone(pane, epoch).await? {
                        return self.ended(pane, gone, baseline, scan.lost, started).await;
                    }
                }
                changed = cancels.changed() => {
                    if changed.is_ok() && *cancels.borrow_and_update() >= started_at {
                        let end = self.journal_end(pane);
                        return self.report(pane, Outcome::CancelledByUser, None, baseline, end, scan.lost, started).await;
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    let end = self.journal_end(pane);
                    return self.report(pane, Outcome::Timeout, None, baseline, end, scan.lost, started).await;
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
        let epoch = self.server_pid();
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
                        let gone = self.gone_outcome(epoch);
                        return self.ended(pane, gone, baseline, 0, started).await;
                    }
                    last_output = Instant::now();
                }
                _ = panes_rx.changed() => {
                    if let Some(gone) = self.pane_gone(pane, epoch).await? {
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

    /// A round trip through the client carrying the pane's output: every
    /// byte the pane printed before now is in the journal when it returns.
    /// Returns the cursor at the end of the output at that moment.
    pub async fn sync_pane(&self, pane: PaneId) -> Result<Cursor> {
        let (offset, _) = self.sync_pane_state(pane).await?;
        Ok(self.cursor(pane, offset))
    }

    /// [`Engine::sync_pane`], also saying whether the pane is dead (its
    /// program exited and `remain-on-exit` keeps it).
    async fn sync_pane_state(&self, pane: PaneId) -> Result<(u64, bool)> {
        let probe = self.probe_pane(pane).await?;
        Ok((probe.cursor, probe.dead))
    }

    /// [`Engine::sync_pane`], with the pane's state at that moment.
    async fn probe_pane(&self, pane: PaneId) -> Result<Probe> {
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
    fn facts_since(
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
    /// server `epoch`) is gone: `None` while the pane lives.
    async fn pane_gone(&self, pane: PaneId, epoch: u32) -> Result<Option<Outcome>> {
        if self.shared.any_client().is_none() {
            // Every control client ended: the server or the connection to
            // its host went away. Asking about the pane now would start a
            // new one.
            return Ok(Some(self.gone_outcome(epoch)));
        }
        match self.pane_facts(pane).await {
            Ok(facts) if facts.exists && !facts.dead => Ok(None),
            Ok(_) => Ok(Some(self.gone_outcome(epoch))),
            // The query's client closed under it: so did the server (or
            // the connection to its host).
            Err(Error::Disconnected { .. }) => Ok(Some(self.gone_outcome(epoch))),
            Err(e) => Err(e),
        }
    }

    /// How a wait started in server `epoch` ends when its pane is gone.
    fn gone_outcome(&self, epoch: u32) -> Outcome {
        if self.connection_lost() {
            Outcome::HostLost
        } else if self.shared.any_client().is_none() || self.server_pid() != epoch {
            Outcome::ServerExited
        } else {
            Outcome::PaneExited
        }
    }

    /// The pane (or the server) went away: report what its journal holds.
    async fn ended(
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
        let candidates: Vec<&str> = typed.iter().flat_map(Typed::lines).collect();
        let mut scan = EchoScan::new(pattern.clone(), 0, Vec::new(), redaction.clone());
        scan.fixed = candidates.iter().map(|s| s.to_string()).collect();
        Ok(match scan.step(&screen, &[]) {
            Step::Found(m) => Some(Found {
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

/// How far back from the end a wait's tail (and echo bookkeeping) reads:
/// enough for a few lines, without re-reading megabytes of a flood.
const TAIL_WINDOW: u64 = 64 * 1024;

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

/// The journal offset just after the first copy of `typed` in the raw
/// output from `from`, when the journal holds it without a gap: where the
/// terminal's echo of a typed line ends and the program's output after it
/// begins. `None` when the echo is not there as one piece (a line editor
/// that colours it).
fn echo_end_offset(journal: &Journal, from: u64, typed: &str) -> Option<u64> {
    if from < journal.start() {
        return None;
    }
    let read = journal.read_from(from);
    if !read.gaps.is_empty() || read.lost > 0 {
        return None;
    }
    let at = memchr::memmem::find(&read.bytes, typed.as_bytes())?;
    Some(from + (at + typed.len()) as u64)
}

/// An incremental scan that skips matches inside the echo of typed input.
struct EchoScan {
    pattern: Pattern,
    scanner: Scanner,
    /// Scanning restarts here after an echo line: the end of the last
    /// complete line skipped as echo (or the baseline).
    resume: u64,
    baseline: u64,
    /// Echo candidates from before the baseline whose echo was not seen yet.
    fixed: Vec<String>,
    /// Candidate lines used by a skipped echo line, and how it echoed: a
    /// bare echo may still be followed by one prompted echo.
    consumed: Vec<(String, Echo)>,
    /// Bytes lost between the baseline and the scan position.
    lost: u64,
    /// Where the scanner goes on: a snapshot of the journal from here on is
    /// all the next step reads.
    position: u64,
    /// The secrets hidden from the pattern (and so from the echo candidates
    /// compared with what it matched).
    redaction: Redaction,
}

impl EchoScan {
    fn new(pattern: Pattern, baseline: u64, fixed: Vec<String>, redaction: Redaction) -> Self {
        EchoScan {
            scanner: Scanner::new(pattern.clone(), baseline).redacting(redaction.clone()),
            pattern,
            resume: baseline,
            baseline,
            fixed,
            consumed: Vec::new(),
            lost: 0,
            position: baseline,
            redaction,
        }
    }

    /// The offset the next step starts reading at.
    fn position(&self) -> u64 {
        self.position
    }

    /// Scans what arrived; returns a real match, a loss, or `Pending`.
    fn step(&mut self, journal: &Journal, typed: &[Typed]) -> Step {
        loop {
            let scan = self.scanner.scan(journal);
            self.position = scan.scanned_to;
            self.lost = self.lost.max(scan.lost);
            let Some(found) = scan.found else {
                return if scan.lost > 0 {
                    Step::Lost(scan.lost)
                } else {
                    Step::Pending
                };
            };
            let Some((candidate, span)) = self.echo_candidate(&found, typed) else {
                return Step::Found(found);
            };
            // A program may draw on the echo's line after it (an editor
            // redraws the text the typed command changed): that is output.
            if let Some(after) = self.match_after_echo(&found, span.end, typed) {
                return Step::Found(after);
            }
            // Restart after (or, for an unfinished line, at) the echo line;
            // after the whole echo on an unfinished line, what follows on it
            // is output (vim's redraw after a command on its last line).
            let echoed = match span.whole && !found.line_complete {
                true => echo_end_offset(journal, self.resume, &candidate),
                false => None,
            };
            if let Some(after) = echoed {
                self.consume(candidate, span.kind);
                self.resume = after;
                self.restart();
            } else if found.line_complete {
                self.consume(candidate, span.kind);
                self.resume = found.line_end;
                self.restart();
            } else {
                // `resume` may be before the snapshot's start: the next step
                // takes a snapshot from there.
                self.restart();
                return Step::Pending;
            }
        }
    }

    fn restart(&mut self) {
        self.scanner =
            Scanner::new(self.pattern.clone(), self.resume).redacting(self.redaction.clone());
        self.position = self.resume;
    }

    /// The first match on `found`'s line after the echo that ends at
    /// `echo_end`, unless it is an echo too.
    fn match_after_echo(&self, found: &Match, echo_end: usize, typed: &[Typed]) -> Option<Match> {
        let mut from = echo_end;
        loop {
            let rest = found.line.get(from..).filter(|rest| !rest.is_empty())?;
            let mut line = Journal::new(termpilot_journal::Limits::default());
            line.append(rest.as_bytes());
            let next = Scanner::new(self.pattern.clone(), 0).scan(&line).found?;
            let next = Match {
                line: found.line.clone(),
                start: from + next.start,
                end: from + next.end,
                line_end: found.line_end,
                line_complete: found.line_complete,
                redrawn: found.redrawn,
                ..next
            };
            match self.echo_candidate(&next, typed) {
                Some((_, span)) if span.end > from => from = span.end,
                Some(_) => return None,
                None => return Some(next),
            }
        }
    }

    fn echo_candidate(&self, found: &Match, typed: &[Typed]) -> Option<(String, echo::EchoSpan)> {
        let after_baseline = typed
            .iter()
            .filter(|t| t.offset >= self.baseline && t.offset <= found.line_end)
            .flat_map(Typed::lines)
            .map(str::to_owned);
        let mut available: Vec<String> = (self.fixed.iter().cloned().chain(after_baseline))
            .map(|line| self.redaction.redact(&line).into_owned())
            .collect();
        available.dedup();
        available.into_iter().find_map(|candidate| {
            let seen = echo::Seen {
                line: &found.line,
                start: found.start,
                end: found.end,
                redrawn: found.redrawn,
            };
            let span = echo::echo_span(seen, &candidate)?;
            let used = self
                .consumed
                .iter()
                .find(|(c, _)| *c == candidate)
                .map(|(_, k)| *k);
            match (used, span.kind) {
                (None, _) | (Some(Echo::Bare), Echo::Prompted) => Some((candidate, span)),
                _ => None,
            }
        })
    }

    fn consume(&mut self, candidate: String, kind: Echo) {
        match self.consumed.iter_mut().find(|(c, _)| *c == candidate) {
            Some(entry) => entry.1 = kind,
            None => self.consumed.push((candidate, kind)),
        }
    }
}
