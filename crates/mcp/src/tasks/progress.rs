//! A task's progress notifications, on the progress token of the request
//! that started it (protocol 2025-11-25: the token "remains valid
//! throughout the task lifetime").
//!
//! A task may make several calls (a `run_command`, then a
//! `wait_for_command` after each answer to a prompt), each with its own
//! clock, so none of them reports: the task does, once a second, with one
//! total for its whole life (the longest the call may wait), values that
//! only increase and stay below that total while it runs, and the total
//! itself when it ends.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use tokio::time::Instant;

use crate::progress::Throttle;

/// How close to its total a running task's progress may come: the total
/// itself is sent only when the task ends.
const CEILING: f64 = 0.99;

/// Where a task's progress goes, and what went already.
pub(super) struct Progress {
    token: ProgressToken,
    peer: Peer<RoleServer>,
    /// Seconds.
    total: f64,
    throttle: Throttle,
}

impl Progress {
    /// The progress of a task started with `token` (none: no progress).
    pub(super) fn new(
        token: Option<ProgressToken>,
        peer: Peer<RoleServer>,
        total: Duration,
    ) -> Option<Progress> {
        Some(Progress {
            token: token?,
            peer,
            total: total.as_secs_f64(),
            throttle: Throttle::default(),
        })
    }

    /// The task has run for `elapsed`: says so, unless that adds nothing
    /// (the value would not increase).
    pub(super) async fn working(&mut self, elapsed: Duration, message: String) {
        let value = elapsed.as_secs_f64().min(self.total * CEILING);
        if self.throttle.admit(Instant::now(), value, self.total) {
            self.send(value, message).await;
        }
    }

    /// The task has ended: the total.
    pub(super) async fn done(mut self, message: String) {
        if self.throttle.admit(Instant::now(), self.total, self.total) {
            self.send(self.total, message).await;
        }
    }

    async fn send(&self, value: f64, message: String) {
        let param = ProgressNotificationParam::new(self.token.clone(), value)
            .with_total(self.total)
            .with_message(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "task progress notification not sent");
        }
    }
}
