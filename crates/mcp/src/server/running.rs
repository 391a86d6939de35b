//! Running a call's work under its context: progress notifications every
//! second or every counted item, values that only increase, a batch step's
//! own progress kept inside its step, and stopping when the client cancels.

use std::future::Future;
use std::time::Duration;

use rmcp::model::ProgressNotificationParam;
use termpilot_tmux::{Error, StepWork};

use super::CallContext;
use super::call::lock;
use crate::progress::Step;

impl CallContext {
    /// Runs `work`, sending a progress notification every second when the
    /// client asked for progress (and, if it sent any, one that reaches the
    /// total when the work is done), and stopping at once when the client
    /// cancels (dropping `work`, which leaves nothing running).
    pub(crate) async fn run<F: Future>(
        &self,
        what: &str,
        total: Duration,
        work: F,
    ) -> Result<F::Output, Error> {
        tokio::pin!(work);
        let started = tokio::time::Instant::now();
        let mut ticker =
            tokio::time::interval_at(started + Duration::from_secs(1), Duration::from_secs(1));
        let mut reported = false;
        loop {
            tokio::select! {
                output = &mut work => {
                    if reported {
                        self.finished(what, started, total).await;
                    }
                    return Ok(output);
                }
                () = self.cancelled.cancelled() => return Err(Error::Cancelled { what: what.to_owned() }),
                _ = ticker.tick(), if self.token.is_some() => {
                    self.progress(what, started, total).await;
                    reported = true;
                }
            }
        }
    }

    /// Runs the engine's `work` as [`CallContext::run`] does, saying what it
    /// does as the engine describes it; work without a time limit (a
    /// capture) just runs.
    pub(crate) async fn run_work<T>(
        &self,
        host: &crate::address::Host,
        work: StepWork,
        run: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        match work.limit {
            Some(limit) => {
                let what = work.describe(&host.qualify(work.pane));
                self.run(&what, limit, run).await?
            }
            None => run.await,
        }
    }

    /// Waits, when a progress notification went out a moment ago, so that
    /// the response does not arrive in the same read as it (see
    /// [`crate::progress::SETTLE_BEFORE_RESPONSE`]).
    pub(super) async fn settle_before_response(&self) {
        let Some(sent) = lock(&self.throttle).last_sent() else {
            return;
        };
        let ready = sent + crate::progress::SETTLE_BEFORE_RESPONSE;
        if ready > tokio::time::Instant::now() {
            tokio::time::sleep_until(ready).await;
        }
    }
    /// Runs `work` as step `index` of a batch of `total` steps: progress it
    /// reports on its own stays between `index` and `index + 1` of `total`.
    pub(crate) async fn in_step<F: Future>(
        &self,
        index: usize,
        total: usize,
        work: F,
    ) -> F::Output {
        *lock(&self.step) = Some(Step { index, total });
        let output = work.await;
        *lock(&self.step) = None;
        output
    }

    /// Reports `done` of `total` items, at most every 100 ms (and always the
    /// last one), when the client asked for progress.
    pub(crate) async fn count(&self, what: &str, done: usize, total: usize) {
        let message = format!("{what}: {done} of {total}");
        self.notify(done as f64, total as f64, message).await;
    }

    /// Runs `work` (which honours cancellation itself, between items) and
    /// reports the count it publishes on `done`.
    pub(crate) async fn run_counted<F: Future>(
        &self,
        what: &str,
        total: usize,
        mut done: tokio::sync::watch::Receiver<usize>,
        work: F,
    ) -> F::Output {
        tokio::pin!(work);
        loop {
            tokio::select! {
                output = &mut work => {
                    // The last count may have come with the result itself.
                    if done.has_changed().unwrap_or(false) {
                        let count = *done.borrow_and_update();
                        self.count(what, count, total).await;
                    }
                    return output;
                }
                changed = done.changed() => {
                    if changed.is_ok() {
                        let count = *done.borrow_and_update();
                        self.count(what, count, total).await;
                    } else {
                        return work.await;
                    }
                }
            }
        }
    }

    async fn progress(&self, what: &str, started: tokio::time::Instant, total: Duration) {
        let elapsed = started.elapsed();
        let message = format!(
            "{what}: {:.0} s of at most {:.0} s",
            elapsed.as_secs_f64(),
            total.as_secs_f64()
        );
        let step = *lock(&self.step);
        match step {
            None => {
                let value = elapsed.min(total).as_secs_f64();
                self.notify(value, total.as_secs_f64(), message).await
            }
            Some(step) => {
                let message = format!("step {} of {}: {message}", step.index + 1, step.total);
                let value = step.value(elapsed, total);
                self.notify(value, step.total as f64, message).await
            }
        }
    }

    /// The last notification of work that reported its progress: the total.
    /// A batch step leaves that to the batch, which then counts the step.
    async fn finished(&self, what: &str, started: tokio::time::Instant, total: Duration) {
        if lock(&self.step).is_some() {
            return;
        }
        let message = format!(
            "{what}: done after {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let total = total.as_secs_f64();
        self.notify(total, total, message).await;
    }

    /// Sends a progress notification when the client asked for progress and
    /// the throttle lets the value through.
    async fn notify(&self, value: f64, total: f64, message: String) {
        let Some(token) = self.token.clone() else {
            return;
        };
        if !lock(&self.throttle).admit(tokio::time::Instant::now(), value, total) {
            return;
        }
        let param = ProgressNotificationParam::new(token, value)
            .with_total(total)
            .with_message(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "progress notification not sent");
        }
    }
}
