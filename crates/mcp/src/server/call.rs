//! What a call carries from its request: the client, its cancellation,
//! the person's approval and the answers to earlier questions.

use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::model::{ClientCapabilities, ProgressToken};
use rmcp::service::Peer;
use tokio_util::sync::CancellationToken;

use crate::progress::{Step, Throttle};
use crate::questions::Continuation;

/// What a long call needs from its request: progress reporting and
/// cancellation.
pub(crate) struct CallContext {
    pub(super) token: Option<ProgressToken>,
    pub(super) peer: Peer<RoleServer>,
    pub(super) cancelled: CancellationToken,
    /// Which progress notifications go out (one increasing value). A std
    /// `Mutex`: held for a read and a write, never across an `.await`.
    pub(super) throttle: Mutex<Throttle>,
    /// The batch step running now, if any: its own progress is reported
    /// inside it, on the batch's count. A std `Mutex`, as `throttle`.
    pub(super) step: Mutex<Option<Step>>,
    /// Whether the person was asked about this call, and their answer.
    pub(super) approval: Mutex<crate::audit::Approval>,
    /// The request is of protocol 2026-07-28 or later, which has no
    /// requests from server to client: the person is asked through
    /// input-required results instead of `elicitation/create`.
    pub(super) stateless: bool,
    /// What the client can do, as this request (2026-07-28) or its session
    /// declared it.
    pub(super) capabilities: Option<ClientCapabilities>,
    /// The answers this call brings to an earlier input-required result.
    pub(super) continuation: Continuation,
}

impl CallContext {
    /// The context of a call that runs as a task, after its request was
    /// answered: no progress token (the request is over), protocol
    /// 2026-07-28 (questions go out as the task's input requests), and a
    /// cancellation of its own, which `tasks/cancel` triggers.
    pub(crate) fn detached(
        peer: Peer<RoleServer>,
        capabilities: Option<ClientCapabilities>,
        cancelled: CancellationToken,
    ) -> CallContext {
        CallContext {
            token: None,
            peer,
            cancelled,
            throttle: Mutex::default(),
            step: Mutex::default(),
            approval: Mutex::default(),
            stateless: true,
            capabilities,
            continuation: Continuation::default(),
        }
    }

    /// Gives the call the answers to its last question (or none).
    pub(crate) fn answer_with(&mut self, continuation: Continuation) {
        self.continuation = continuation;
    }

    /// The client this call came from.
    pub(crate) fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// Notes the person's answer about this call, for the audit log.
    pub(crate) fn record_approval(&self, approval: crate::audit::Approval) {
        *lock(&self.approval) = approval;
    }

    /// Whether the person must be asked through input-required results
    /// (protocol 2026-07-28) rather than `elicitation/create`.
    pub(crate) fn stateless(&self) -> bool {
        self.stateless
    }

    /// The answers this call brings to an earlier input-required result.
    pub(crate) fn continuation(&self) -> &Continuation {
        &self.continuation
    }

    /// Whether the client declared elicitation in URL mode (`url`) or in
    /// form mode (a bare `elicitation` capability means form mode).
    pub(crate) fn elicits(&self, url: bool) -> bool {
        let capability = self
            .capabilities
            .as_ref()
            .and_then(|c| c.elicitation.as_ref());
        match capability {
            Some(capability) if url => capability.url.is_some(),
            Some(capability) => capability.form.is_some() || capability.url.is_none(),
            None => false,
        }
    }

    /// The request's cancellation token.
    pub(crate) fn cancellation(&self) -> CancellationToken {
        self.cancelled.clone()
    }

    /// Whether the client cancelled the request.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }
}

/// Locks a std `Mutex` of a call, whose holders never panic midway.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
