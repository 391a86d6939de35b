//! A pipeline of steps (what `run_batch` runs): keystrokes, waits, captures
//! and commands, in order, each with a typed outcome.
//!
//! Consecutive keystroke steps go out as one batch of chains (see the
//! parent module). A wait or a read may start at the cursor of an earlier
//! step ([`CursorRef`]). The caller drives what the engine cannot know
//! ([`StepDriver`]): how a step's pane target resolves (the operator's
//! scope), and how progress is reported and cancellation noticed while a
//! step runs.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use termpilot_control::PaneId;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{BatchOp, OpStatus};
use crate::cursor::{Cursor, Since};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::{Capture, Scrollback};
use crate::shell::CommandReport;
use crate::wait::{TextWait, WaitReport};

/// Where a step's cursor comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorRef {
    /// This cursor.
    Given(Cursor),
    /// The cursor of the latest earlier step that returned one (`$prev`).
    Latest,
    /// The cursor step N (from 0) returned (`$N`).
    Step(usize),
}

impl fmt::Display for CursorRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CursorRef::Given(cursor) => write!(f, "{cursor}"),
            CursorRef::Latest => f.write_str("$prev"),
            CursorRef::Step(step) => write!(f, "${step}"),
        }
    }
}

/// One step. Pane targets are resolved by the [`StepDriver`] when the
/// step's turn comes.
#[derive(Debug, Clone)]
pub enum Step {
    /// Keystrokes (typed text and keys, or a paste); consecutive ones go out
    /// together.
    Keys(BatchOp),
    /// [`Engine::wait_for_text_or_input`], from `since` (the `since` of
    /// `wait` is set from it).
    WaitForText {
        /// The pane target.
        pane: String,
        /// What to wait for.
        wait: TextWait,
        /// Where to scan from; `None`: from now.
        since: Option<CursorRef>,
        /// How long the pane stays quiet before its program counts as
        /// waiting for input.
        settle: Duration,
    },
    /// [`Engine::wait_for_idle_or_input`].
    WaitForIdle {
        /// The pane target.
        pane: String,
        /// How long the pane must print nothing.
        quiet: Duration,
        /// How long to wait.
        timeout: Duration,
        /// As for `WaitForText`.
        settle: Duration,
    },
    /// [`Engine::capture`].
    Capture {
        /// The pane target.
        pane: String,
        /// How much history.
        scrollback: Scrollback,
    },
    /// [`Engine::read_since`].
    CaptureSince {
        /// The pane target.
        pane: String,
        /// Where to read from.
        since: CursorRef,
    },
    /// [`Engine::run_command_or_input`].
    RunCommand {
        /// The pane target.
        pane: String,
        /// The command line.
        command: String,
        /// How long to wait for it.
        timeout: Duration,
        /// As for `WaitForText`.
        settle: Duration,
    },
    /// A step the caller refused before the batch ran: it fails with this
    /// error when its turn comes.
    Refused(Error),
}

/// What a step that ran produced.
#[derive(Debug, Clone)]
pub enum StepOutcome {
    /// Keystrokes went out; the cursor is from before them.
    Sent(Cursor),
    /// A wait ended (any outcome, a timeout included).
    Waited(WaitReport),
    /// The pane's text.
    Captured(Capture),
    /// What the pane printed after a cursor.
    Read(Since),
    /// A command finished, or is still running.
    Ran(CommandReport),
}

impl StepOutcome {
    /// The cursor the step returned: where a later step may start.
    pub fn cursor(&self) -> Cursor {
        match self {
            StepOutcome::Sent(cursor) => *cursor,
            StepOutcome::Waited(report) => report.cursor,
            StepOutcome::Captured(capture) => capture.cursor,
            StepOutcome::Read(read) => read.cursor,
            StepOutcome::Ran(report) => report.cursor,
        }
    }
}

/// How one step went.
#[derive(Debug, Clone)]
pub enum StepStatus {
    /// It ran, in `pane`.
    Done {
        /// The pane it ran in.
        pane: PaneId,
        /// What it produced.
        outcome: StepOutcome,
    },
    /// It failed.
    Failed(Error),
    /// It did not run: an earlier step failed (when stopping on errors) or
    /// the batch was cancelled.
    Skipped,
}

/// What a step that waits, captures or runs a command is doing, for the
/// caller's progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepWork {
    /// Which kind of work.
    pub kind: WorkKind,
    /// In which pane.
    pub pane: PaneId,
    /// The longest it may take; `None` for work that takes no time to
    /// speak of (a capture).
    pub limit: Option<Duration>,
}

/// The kinds of [`StepWork`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkKind {
    /// Waiting for text.
    WaitForText,
    /// Waiting for the pane to go quiet.
    WaitForIdle,
    /// Capturing the screen.
    Capture,
    /// Reading output after a cursor.
    CaptureSince,
    /// Running a command.
    RunCommand,
}

impl fmt::Display for StepWork {
    /// What the work does, as progress messages say it: "waiting for text in %3".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(&self.pane.to_string()))
    }
}

impl StepWork {
    /// What the work does, its pane written as `pane` (`build/%3` for a
    /// pane on another host).
    pub fn describe(&self, pane: &str) -> String {
        match self.kind {
            WorkKind::WaitForText => format!("waiting for text in {pane}"),
            WorkKind::WaitForIdle => format!("waiting for {pane} to go quiet"),
            WorkKind::Capture => format!("capturing {pane}"),
            WorkKind::CaptureSince => format!("reading the output of {pane}"),
            WorkKind::RunCommand => format!("running a command in {pane}"),
        }
    }
}

/// What the caller of [`Engine::run_steps`] provides.
pub trait StepDriver: Sync {
    /// Resolves a step's pane target when its turn comes.
    fn resolve(&self, target: &str) -> impl Future<Output = Result<PaneId>> + Send;

    /// Runs the engine work of step `index` of `total`: the driver may
    /// report progress on it, and end it early (with [`Error::Cancelled`])
    /// when the batch is cancelled.
    fn step<T: Send>(
        &self,
        index: usize,
        total: usize,
        work: StepWork,
        run: impl Future<Output = Result<T>> + Send,
    ) -> impl Future<Output = Result<T>> + Send;

    /// Sends a run of keystroke steps: `sending` resolves once they are
    /// sent, and `done` counts the batch's steps dealt with meanwhile (of
    /// `total`).
    fn keys<T: Send>(
        &self,
        total: usize,
        done: watch::Receiver<usize>,
        sending: impl Future<Output = T> + Send,
    ) -> impl Future<Output = T> + Send;

    /// Reports that `done` of the batch's `total` steps are dealt with.
    fn count(&self, done: usize, total: usize) -> impl Future<Output = ()> + Send;
}

impl Engine {
    /// Runs `steps` in order and reports how each went, in order. A failed
    /// step stops the batch when `stop_on_error` (the rest are skipped);
    /// `cancel` skips every step not started yet.
    pub async fn run_steps(
        &self,
        steps: Vec<Step>,
        stop_on_error: bool,
        cancel: &CancellationToken,
        driver: &impl StepDriver,
    ) -> Vec<StepStatus> {
        let total = steps.len();
        let mut statuses: Vec<StepStatus> = Vec::with_capacity(total);
        let mut steps = steps.into_iter().enumerate().peekable();
        let mut halted = false;
        while let Some((index, step)) = steps.next() {
            if halted || cancel.is_cancelled() {
                statuses.push(StepStatus::Skipped);
                continue;
            }
            let failed = match step {
                Step::Keys(op) => {
                    let mut ops = vec![op];
                    while let Some((_, Step::Keys(_))) = steps.peek() {
                        if let Some((_, Step::Keys(op))) = steps.next() {
                            ops.push(op);
                        }
                    }
                    let run = KeyRun {
                        stop_on_error,
                        cancel,
                        total,
                    };
                    self.run_keys(ops, run, driver, &mut statuses).await
                }
                step => {
                    let status = self.run_step(index, total, step, &statuses, driver).await;
                    let failed = matches!(status, StepStatus::Failed(_));
                    statuses.push(status);
                    failed
                }
            };
            halted = failed && stop_on_error;
            driver.count(statuses.len(), total).await;
        }
        if !cancel.is_cancelled() {
            // Steps left unrun after a failure are dealt with too.
            driver.count(total, total).await;
        }
        statuses
    }

    /// Sends consecutive keystroke steps; returns whether one failed.
    async fn run_keys(
        &self,
        ops: Vec<BatchOp>,
        run: KeyRun<'_>,
        driver: &impl StepDriver,
        statuses: &mut Vec<StepStatus>,
    ) -> bool {
        let before = statuses.len();
        let (done_tx, done_rx) = watch::channel(before);
        let sending = self.send_batch(&ops, run.stop_on_error, run.cancel, |done| {
            done_tx.send_replace(before + done);
        });
        let reports = driver.keys(run.total, done_rx, sending).await;
        if !run.cancel.is_cancelled() {
            // Operations left unsent after a failure are dealt with too.
            driver.count(before + ops.len(), run.total).await;
        }
        let mut failed = false;
        for (op, report) in ops.into_iter().zip(reports) {
            let status = match (report.status, op.pane) {
                (OpStatus::Done { cursor }, Ok(pane)) => StepStatus::Done {
                    pane,
                    outcome: StepOutcome::Sent(cursor),
                },
                // The engine sends nothing to a target that named no pane.
                (OpStatus::Done { .. }, Err(error)) | (OpStatus::Failed(error), _) => {
                    StepStatus::Failed(error)
                }
                (OpStatus::Skipped, _) => StepStatus::Skipped,
            };
            failed |= matches!(status, StepStatus::Failed(_));
            statuses.push(status);
        }
        failed
    }

    async fn run_step(
        &self,
        index: usize,
        total: usize,
        step: Step,
        earlier: &[StepStatus],
        driver: &impl StepDriver,
    ) -> StepStatus {
        match self.try_step(index, total, step, earlier, driver).await {
            Ok((pane, outcome)) => StepStatus::Done { pane, outcome },
            Err(error) => StepStatus::Failed(error),
        }
    }

    async fn try_step(
        &self,
        index: usize,
        total: usize,
        step: Step,
        earlier: &[StepStatus],
        driver: &impl StepDriver,
    ) -> Result<(PaneId, StepOutcome)> {
        let work = |kind, pane, limit| StepWork { kind, pane, limit };
        match step {
            Step::Refused(error) => Err(error),
            Step::Keys(_) => unreachable!("keystrokes run together"),
            Step::WaitForText {
                pane,
                mut wait,
                since,
                settle,
            } => {
                wait.since = since.map(|r| cursor_of(r, index, earlier)).transpose()?;
                let pane = driver.resolve(&pane).await?;
                let work = work(WorkKind::WaitForText, pane, Some(wait.timeout));
                let run = self.wait_for_text_or_input(pane, &wait, settle);
                let report = driver.step(index, total, work, run).await?;
                Ok((pane, StepOutcome::Waited(report)))
            }
            Step::WaitForIdle {
                pane,
                quiet,
                timeout,
                settle,
            } => {
                let pane = driver.resolve(&pane).await?;
                let work = work(WorkKind::WaitForIdle, pane, Some(timeout));
                let run = self.wait_for_idle_or_input(pane, quiet, timeout, settle);
                let report = driver.step(index, total, work, run).await?;
                Ok((pane, StepOutcome::Waited(report)))
            }
            Step::Capture { pane, scrollback } => {
                let pane = driver.resolve(&pane).await?;
                let work = work(WorkKind::Capture, pane, None);
                let run = self.capture(pane, scrollback);
                let capture = driver.step(index, total, work, run).await?;
                Ok((pane, StepOutcome::Captured(capture)))
            }
            Step::CaptureSince { pane, since } => {
                let since = cursor_of(since, index, earlier)?;
                let pane = driver.resolve(&pane).await?;
                let work = work(WorkKind::CaptureSince, pane, None);
                let run = self.read_since(pane, since);
                let read = driver.step(index, total, work, run).await?;
                Ok((pane, StepOutcome::Read(read)))
            }
            Step::RunCommand {
                pane,
                command,
                timeout,
                settle,
            } => {
                let pane = driver.resolve(&pane).await?;
                let work = work(WorkKind::RunCommand, pane, Some(timeout));
                let run = self.run_command_or_input(pane, &command, timeout, settle);
                let report = driver.step(index, total, work, run).await?;
                Ok((pane, StepOutcome::Ran(report)))
            }
        }
    }
}

/// How a run of keystroke steps goes out.
struct KeyRun<'a> {
    stop_on_error: bool,
    cancel: &'a CancellationToken,
    total: usize,
}

/// The cursor `reference` names for step `index`, given how the earlier
/// steps went.
fn cursor_of(reference: CursorRef, index: usize, earlier: &[StepStatus]) -> Result<Cursor> {
    let returned = |status: &StepStatus| match status {
        StepStatus::Done { outcome, .. } => Some(outcome.cursor()),
        _ => None,
    };
    let found = match reference {
        CursorRef::Given(cursor) => return Ok(cursor),
        CursorRef::Latest => earlier.iter().rev().find_map(returned),
        CursorRef::Step(step) if step >= index => {
            return Err(Error::CursorReference {
                step: index,
                reference,
                problem: "refers to a step that has not run before it",
            });
        }
        CursorRef::Step(step) => earlier.get(step).and_then(returned),
    };
    found.ok_or(Error::CursorReference {
        step: index,
        reference,
        problem: "names no step that returned a cursor",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(offset: u64) -> StepStatus {
        StepStatus::Done {
            pane: PaneId(1),
            outcome: StepOutcome::Sent(Cursor {
                server_pid: 0,
                pane: PaneId(1),
                offset,
            }),
        }
    }

    #[test]
    fn references_name_earlier_cursors() {
        let earlier = [
            sent(5),
            StepStatus::Failed(Error::InvalidArgument("x".into())),
            sent(9),
            StepStatus::Skipped,
        ];
        let offset = |reference| cursor_of(reference, 4, &earlier).map(|c| c.offset);
        assert_eq!(offset(CursorRef::Latest).unwrap(), 9);
        assert_eq!(offset(CursorRef::Step(0)).unwrap(), 5);
        let missing = offset(CursorRef::Step(1)).unwrap_err().to_string();
        assert_eq!(missing, "steps[4]: $1 names no step that returned a cursor");
        let ahead = offset(CursorRef::Step(4)).unwrap_err().to_string();
        assert_eq!(
            ahead,
            "steps[4]: $4 refers to a step that has not run before it"
        );
        let none = cursor_of(CursorRef::Latest, 0, &[])
            .unwrap_err()
            .to_string();
        assert_eq!(none, "steps[0]: $prev names no step that returned a cursor");
    }

    #[test]
    fn work_says_what_it_does() {
        let work = StepWork {
            kind: WorkKind::WaitForText,
            pane: PaneId(3),
            limit: None,
        };
        assert_eq!(work.to_string(), "waiting for text in %3");
        let idle = StepWork {
            kind: WorkKind::WaitForIdle,
            ..work
        };
        assert_eq!(idle.to_string(), "waiting for %3 to go quiet");
    }
}
