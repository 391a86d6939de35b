//! A pipeline of steps (what `run_batch` runs): keystrokes and jobs (a
//! wait, a capture, a command: any work the caller hands over), in order.
//!
//! Consecutive keystroke steps go out as one batch of chains (see the
//! parent module). A job may start at the cursor of an earlier step
//! ([`CursorRef`]). The engine orders the steps, resolves each job's pane and
//! cursor when its turn comes, and stops or goes on after a failure; what a
//! job does is the caller's ([`StepJob`]), so a new kind of step needs no
//! change here. The caller also drives what the engine cannot know
//! ([`StepDriver`]): how a pane target resolves (the operator's scope), and
//! how progress is reported and cancellation noticed while a step runs.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use termpilot_control::PaneId;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{BatchOp, OpStatus};
use crate::cursor::Cursor;
use crate::engine::Engine;
use crate::error::{Error, Result};

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

/// One step of a pipeline, as its caller planned it; `R` is what a job
/// produces.
#[derive(Debug)]
pub enum PlannedStep<'a, R> {
    /// Keystrokes (typed text and keys, or a paste); consecutive ones go out
    /// together.
    Keys(BatchOp),
    /// Work on one pane, run when its turn comes.
    Job(StepJob<'a, R>),
    /// A step the caller refused before the batch ran: it fails with this
    /// error when its turn comes.
    Refused(Error),
}

/// A job's work, started with its resolved pane and cursor.
pub type JobRun<'a, R> = Box<
    dyn FnOnce(PaneId, Option<Cursor>) -> Pin<Box<dyn Future<Output = Result<R>> + Send + 'a>>
        + Send
        + 'a,
>;

/// A step's work on one pane: the engine resolves `pane` (through the
/// [`StepDriver`]) and `since` when the step's turn comes, then starts `run`
/// with them.
pub struct StepJob<'a, R> {
    /// The pane target.
    pub pane: String,
    /// Where the job reads or waits from, if it takes a cursor.
    pub since: Option<CursorRef>,
    /// What the work is, for progress reports.
    pub kind: WorkKind,
    /// The longest it may take; `None` for work that takes no time to speak
    /// of (a capture).
    pub limit: Option<Duration>,
    /// The work.
    pub run: JobRun<'a, R>,
}

impl<R> fmt::Debug for StepJob<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepJob")
            .field("pane", &self.pane)
            .field("since", &self.since)
            .field("kind", &self.kind)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// What a job produced, as far as the engine needs to know.
pub trait JobResult {
    /// The cursor it returned: where a later step may start.
    fn cursor(&self) -> Cursor;
}

/// How one step went.
#[derive(Debug, Clone)]
pub enum StepStatus<R> {
    /// Its keystrokes went out to `pane`; `cursor` is from before them.
    Sent {
        /// The pane they went to.
        pane: PaneId,
        /// The pane's position before the input.
        cursor: Cursor,
    },
    /// Its job ran in `pane`.
    Done {
        /// The pane it ran in.
        pane: PaneId,
        /// What it produced.
        result: R,
    },
    /// It failed.
    Failed(Error),
    /// It did not run: an earlier step failed (when stopping on errors) or
    /// the batch was cancelled.
    Skipped,
}

impl<R: JobResult> StepStatus<R> {
    /// The cursor the step returned, if it ran.
    fn cursor(&self) -> Option<Cursor> {
        match self {
            StepStatus::Sent { cursor, .. } => Some(*cursor),
            StepStatus::Done { result, .. } => Some(result.cursor()),
            StepStatus::Failed(_) | StepStatus::Skipped => None,
        }
    }
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

    /// Runs the job of step `index` of `total` (`run`, started with its
    /// pane and cursor): the driver may report progress on it, and end it
    /// early (with [`Error::Cancelled`]) when the batch is cancelled.
    fn job<T: Send>(
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
    pub async fn run_steps<R: JobResult + Send>(
        &self,
        steps: Vec<PlannedStep<'_, R>>,
        stop_on_error: bool,
        cancel: &CancellationToken,
        driver: &impl StepDriver,
    ) -> Vec<StepStatus<R>> {
        let total = steps.len();
        let mut statuses: Vec<StepStatus<R>> = Vec::with_capacity(total);
        let mut steps = steps.into_iter().enumerate().peekable();
        let mut halted = false;
        while let Some((index, step)) = steps.next() {
            if halted || cancel.is_cancelled() {
                statuses.push(StepStatus::Skipped);
                continue;
            }
            let failed = match step {
                PlannedStep::Keys(op) => {
                    let mut ops = vec![op];
                    while let Some((_, PlannedStep::Keys(_))) = steps.peek() {
                        if let Some((_, PlannedStep::Keys(op))) = steps.next() {
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
                PlannedStep::Refused(error) => {
                    statuses.push(StepStatus::Failed(error));
                    true
                }
                PlannedStep::Job(job) => {
                    let at = JobAt { index, total };
                    let status = match run_job(at, job, &statuses, driver).await {
                        Ok(status) => status,
                        Err(error) => StepStatus::Failed(error),
                    };
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
    async fn run_keys<R>(
        &self,
        ops: Vec<BatchOp>,
        run: KeyRun<'_>,
        driver: &impl StepDriver,
        statuses: &mut Vec<StepStatus<R>>,
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
                (OpStatus::Done { cursor }, Ok(pane)) => StepStatus::Sent { pane, cursor },
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
}

/// Where a job is in its pipeline: step `index` of `total`.
#[derive(Clone, Copy)]
struct JobAt {
    index: usize,
    total: usize,
}

/// Runs a job: its cursor and its pane resolved, then its work, driven by
/// `driver`.
async fn run_job<R: JobResult + Send>(
    at: JobAt,
    job: StepJob<'_, R>,
    earlier: &[StepStatus<R>],
    driver: &impl StepDriver,
) -> Result<StepStatus<R>> {
    let since = (job.since)
        .map(|reference| cursor_of(reference, at.index, earlier))
        .transpose()?;
    let pane = driver.resolve(&job.pane).await?;
    let work = StepWork {
        kind: job.kind,
        pane,
        limit: job.limit,
    };
    let result = driver
        .job(at.index, at.total, work, (job.run)(pane, since))
        .await?;
    Ok(StepStatus::Done { pane, result })
}

/// How a run of keystroke steps goes out.
struct KeyRun<'a> {
    stop_on_error: bool,
    cancel: &'a CancellationToken,
    total: usize,
}

/// The cursor `reference` names for step `index`, given how the earlier
/// steps went.
fn cursor_of<R: JobResult>(
    reference: CursorRef,
    index: usize,
    earlier: &[StepStatus<R>],
) -> Result<Cursor> {
    let found = match reference {
        CursorRef::Given(cursor) => return Ok(cursor),
        CursorRef::Latest => earlier.iter().rev().find_map(StepStatus::cursor),
        CursorRef::Step(step) if step >= index => {
            return Err(Error::CursorReference {
                step: index,
                reference,
                problem: "refers to a step that has not run before it",
            });
        }
        CursorRef::Step(step) => earlier.get(step).and_then(StepStatus::cursor),
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

    /// A job's result in these tests: its cursor.
    impl JobResult for Cursor {
        fn cursor(&self) -> Cursor {
            *self
        }
    }

    fn at(offset: u64) -> Cursor {
        Cursor {
            server_pid: 0,
            pane: PaneId(1),
            offset,
        }
    }

    fn sent(offset: u64) -> StepStatus<Cursor> {
        StepStatus::Sent {
            pane: PaneId(1),
            cursor: at(offset),
        }
    }

    #[test]
    fn references_name_earlier_cursors() {
        let earlier = [
            sent(5),
            StepStatus::Failed(Error::InvalidArgument("x".into())),
            StepStatus::Done {
                pane: PaneId(1),
                result: at(9),
            },
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
        let none = cursor_of::<Cursor>(CursorRef::Latest, 0, &[])
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
