//! Many keystroke operations in one go, written to tmux as pipelined chains.
//!
//! Operations run in the order given, across any panes. Up to 32 consecutive
//! operations form a *chain*, written to one control client in one write
//! (pane ids address panes in any session, and one client's commands run in
//! order): each tmux command gets its own reply, so every reply maps back to
//! its operation. An operation's cursor is taken in stream order when its
//! pane's output comes through that client; for a pane whose output comes
//! through another client (another session), it is the pane's journal end
//! just before the chain was written, which is still before the input.
//!
//! An operation that cannot be sent fails on its own: a chain ends before
//! it, and with `stop_on_error` nothing after it is sent. That is the case
//! when its target named no pane, its pane is gone by the time the batch
//! runs, a person holds the pane, or the pane is termpilot's own. A pane
//! that goes away after that check fails in tmux, which answers the
//! command with an error.
//!
//! With `stop_on_error`, a run is one tmux command line (`a ; b ; c`): tmux
//! itself skips everything after a failing command, so nothing after the
//! first failure reaches the panes, and later runs are not sent.
//!
//! `steps` runs pipelines that mix these keystrokes with jobs the caller
//! hands over: waits, captures, commands (`run_batch`).

use std::time::{Duration, Instant};

use termpilot_control::{Command, PaneId};
use tokio_util::sync::CancellationToken;

use crate::client::{Answer, ClientHandle, Group};
use crate::cursor::Cursor;
use crate::engine::{Engine, call, not_found_pane};
use crate::error::{Error, Result};
use crate::ops::{Input, input_commands, paste_commands};

mod steps;
pub use steps::{
    CursorRef, JobResult, JobRun, PlannedStep, StepDriver, StepJob, StepStatus, StepWork, WorkKind,
};

/// What one batch operation sends to its pane.
#[derive(Debug, Clone)]
pub enum Keystrokes {
    /// Literal text, key names, Enter (as `send_keys`).
    Type(Input),
    /// A paste through a tmux buffer (as `paste_text`).
    Paste {
        /// The text.
        text: String,
        /// Bracketed when the program asked for it.
        bracketed: bool,
        /// Press Enter after.
        enter: bool,
    },
}

/// One operation of a batch. Key names must already be validated.
#[derive(Debug, Clone)]
pub struct BatchOp {
    /// The pane, or why the operation's target names none (the operation
    /// then fails in its place, as if tmux had refused it).
    pub pane: Result<PaneId>,
    /// What to send.
    pub keys: Keystrokes,
}

/// How one operation went.
#[derive(Debug, Clone)]
pub enum OpStatus {
    /// Sent.
    Done {
        /// The pane's position before the input.
        cursor: Cursor,
    },
    /// tmux refused it (or the connection failed).
    Failed(Error),
    /// Not sent: an earlier operation failed (stop mode) or the batch was
    /// cancelled.
    Skipped,
}

/// The outcome of one operation.
#[derive(Debug, Clone)]
pub struct OpReport {
    /// What happened.
    pub status: OpStatus,
    /// Time from the start of the operation's run to its last reply.
    pub elapsed: Duration,
}

/// The most operations written in one chain. Between chains the batch
/// reports progress and notices cancellation; within one, tmux has the whole
/// chain at once.
const CHAIN_LIMIT: usize = 32;

/// An operation of the batch, by its place: what to send, or why it cannot
/// be sent.
struct Prepared {
    index: usize,
    send: Result<Sendable>,
}

/// An operation turned into tmux commands.
struct Sendable {
    pane: PaneId,
    commands: Vec<Command>,
    typed: Option<String>,
    /// The bytes the terminal gets, for the input gate.
    bytes: Vec<u8>,
}

impl Engine {
    /// Sends every operation in order (see the module docs). `progress` is
    /// called with the number of operations dealt with so far (sent, failed
    /// or refused) after each run; `cancel` stops the batch between runs.
    pub async fn send_batch(
        &self,
        ops: &[BatchOp],
        stop_on_error: bool,
        cancel: &CancellationToken,
        mut progress: impl FnMut(usize),
    ) -> Vec<OpReport> {
        let mut reports: Vec<OpReport> = ops
            .iter()
            .map(|_| OpReport {
                status: OpStatus::Skipped,
                elapsed: Duration::ZERO,
            })
            .collect();
        let mut prepared = self.prepare(ops);
        self.refuse_blocked(&mut prepared).await;
        self.refuse_ungated(&mut prepared);
        let mut rest = &prepared[..];
        while let Some(first) = rest.first() {
            if cancel.is_cancelled() {
                break;
            }
            let (taken, failed) = match &first.send {
                Err(error) => {
                    reports[first.index].status = OpStatus::Failed(error.clone());
                    (1, true)
                }
                Ok(op) => {
                    self.send_chain(op.pane, rest, stop_on_error, &mut reports)
                        .await
                }
            };
            rest = &rest[taken..];
            progress(ops.len() - rest.len());
            if failed && stop_on_error {
                break;
            }
        }
        reports
    }

    /// Sends the chain at the start of `ops` (up to [`CHAIN_LIMIT`]
    /// operations, ending before one that cannot be sent) on the client of
    /// its first pane. Returns how many operations it took and whether one
    /// failed.
    async fn send_chain(
        &self,
        first_pane: PaneId,
        ops: &[Prepared],
        stop_on_error: bool,
        reports: &mut [OpReport],
    ) -> (usize, bool) {
        let client = match self.client_for_pane(first_pane).await {
            Ok(client) => client,
            Err(error) => {
                reports[ops[0].index].status = OpStatus::Failed(error);
                return (1, true);
            }
        };
        // A client behind a flood answers only after it: the quiet client
        // carries no pane's output, so each operation's cursor is then its
        // pane's journal end from before it was sent (see `send_run`).
        let client = match client.is_behind() {
            true => self.quiet().await.unwrap_or(client),
            false => client,
        };
        let run: Vec<(usize, &Sendable)> = ops
            .iter()
            .take(CHAIN_LIMIT)
            .map_while(|op| op.send.as_ref().ok().map(|send| (op.index, send)))
            .collect();
        let failed = self.send_run(&client, &run, stop_on_error, reports).await;
        (run.len(), failed)
    }

    /// Turns each operation into its tmux commands, refusing those whose
    /// target named no pane and those typing into termpilot's own pane.
    fn prepare(&self, ops: &[BatchOp]) -> Vec<Prepared> {
        ops.iter()
            .enumerate()
            .map(|(index, op)| Prepared {
                index,
                send: self.sendable(op),
            })
            .collect()
    }

    fn sendable(&self, op: &BatchOp) -> Result<Sendable> {
        let pane = op.pane.clone()?;
        self.refuse_own_pane(pane, "type into")?;
        self.forget_ready(pane);
        let (commands, typed, bytes) = match &op.keys {
            Keystrokes::Type(input) => (
                input_commands(pane, input),
                input.text.clone(),
                crate::gate::input_bytes(input),
            ),
            Keystrokes::Paste {
                text,
                bracketed,
                enter,
            } => {
                let buffer = self.buffer_name();
                (
                    paste_commands(pane, &buffer, text, *bracketed, *enter)?,
                    Some(text.clone()),
                    crate::gate::paste_bytes(text, *enter),
                )
            }
        };
        Ok(Sendable {
            pane,
            commands,
            typed,
            bytes,
        })
    }

    /// Refuses the operations on panes the batch must not type into:
    /// missing, or held by a person.
    async fn refuse_blocked(&self, prepared: &mut [Prepared]) {
        let mut panes: Vec<PaneId> = prepared
            .iter()
            .filter_map(|op| op.send.as_ref().ok().map(|send| send.pane))
            .collect();
        panes.sort_unstable();
        panes.dedup();
        let blocked = self.blocked_panes(panes).await;
        for op in prepared {
            let pane = match &op.send {
                Ok(send) => send.pane,
                Err(_) => continue,
            };
            if let Some((_, error)) = blocked.iter().find(|(blocked, _)| *blocked == pane) {
                op.send = Err(error.clone());
            }
        }
    }

    /// Passes each operation's bytes through the input gate, in order:
    /// one the gate refuses fails in its place.
    fn refuse_ungated(&self, prepared: &mut [Prepared]) {
        for op in prepared {
            if let Ok(send) = &op.send
                && let Err(error) = self.gate_input(send.pane, &send.bytes)
            {
                op.send = Err(error);
            }
        }
    }

    /// Which of `panes` are missing or held by a person, and why.
    async fn blocked_panes(&self, panes: Vec<PaneId>) -> Vec<(PaneId, Error)> {
        let mut blocked = Vec::new();
        let mut present = Vec::with_capacity(panes.len());
        for pane in panes {
            // Also learns which client carries each pane's output.
            match self.client_for_pane(pane).await {
                Ok(_) => present.push(pane),
                Err(error) => blocked.push((pane, error)),
            }
        }
        match self.held_notes(&present).await {
            Ok(notes) => {
                blocked.extend(present.into_iter().zip(notes).filter_map(|(pane, note)| {
                    note.map(|note| (pane, Error::HeldByPerson { pane, note }))
                }))
            }
            Err(error) => blocked.extend(present.into_iter().map(|pane| (pane, error.clone()))),
        }
        blocked
    }

    /// Sends one run and fills in its reports; returns whether one failed.
    async fn send_run(
        &self,
        client: &ClientHandle,
        run: &[(usize, &Sendable)],
        stop_on_error: bool,
        reports: &mut [OpReport],
    ) -> bool {
        let started = Instant::now();
        let before: Vec<Option<u64>> = run
            .iter()
            .map(|(_, op)| (!self.carries(client, op.pane)).then(|| self.journal_end(op.pane)))
            .collect();
        let answers = if stop_on_error {
            self.send_as_line(client, run).await
        } else {
            self.send_as_lines(client, run).await
        };
        let answers = match answers {
            Ok(answers) => answers,
            Err(error) => {
                for (index, _) in run {
                    reports[*index].status = OpStatus::Failed(error.clone());
                }
                return true;
            }
        };
        let mut answers = answers.into_iter();
        let mut failed = false;
        for (&(index, op), before) in run.iter().zip(before) {
            let mine: Vec<Option<Result<Answer>>> =
                op.commands.iter().map(|_| answers.next()).collect();
            let report = &mut reports[index];
            report.status = op_status(op, &mine, |offset| self.cursor(op.pane, offset));
            if let (OpStatus::Done { cursor }, Some(before)) = (&mut report.status, before) {
                cursor.offset = before;
            }
            if let Some(Some(Ok(last))) = mine.iter().rev().find(|a| a.is_some()) {
                report.elapsed = last.received.saturating_duration_since(started);
            }
            if let OpStatus::Done { cursor } = report.status {
                if let Some(text) = &op.typed {
                    self.shared.panes.record_typed(op.pane, cursor.offset, text);
                }
            } else {
                failed = true;
            }
        }
        failed
    }

    /// Whether `client` carries the pane's output (so its replies can take
    /// the pane's cursor in stream order).
    fn carries(&self, client: &ClientHandle, pane: PaneId) -> bool {
        self.shared.panes.owner(pane) == Some(client.id)
    }

    /// Stop mode: the whole run as one command line.
    async fn send_as_line(
        &self,
        client: &ClientHandle,
        run: &[(usize, &Sendable)],
    ) -> Result<Vec<Result<Answer>>> {
        let mut line = Vec::new();
        let mut parts = Vec::new();
        for (_, op) in run {
            let cursor_pane = self.carries(client, op.pane).then_some(op.pane);
            for (i, command) in op.commands.iter().enumerate() {
                let built = call(command.clone(), cursor_pane.filter(|_| i == 0))?;
                if !line.is_empty() {
                    line.extend_from_slice(b" ; ");
                }
                line.extend_from_slice(built.line.strip_suffix(b"\n").unwrap_or(&built.line));
                parts.push((built.command, built.cursor_pane));
            }
        }
        line.push(b'\n');
        let answers = client.call_group(Group { line, parts }).await?;
        Ok(answers.into_iter().map(Ok).collect())
    }

    /// Continue mode: one line per command, all in one write.
    async fn send_as_lines(
        &self,
        client: &ClientHandle,
        run: &[(usize, &Sendable)],
    ) -> Result<Vec<Result<Answer>>> {
        let mut calls = Vec::new();
        for (_, op) in run {
            let cursor_pane = self.carries(client, op.pane).then_some(op.pane);
            for (i, command) in op.commands.iter().enumerate() {
                calls.push(call(command.clone(), cursor_pane.filter(|_| i == 0))?);
            }
        }
        Ok(client.call_many(calls).await)
    }
}

/// How one operation went, from the answers to its commands (`None`: tmux
/// skipped the command after an earlier failure on its line); `cursor`
/// names a position in the operation's pane.
fn op_status(
    op: &Sendable,
    answers: &[Option<Result<Answer>>],
    cursor_at: impl Fn(u64) -> Cursor,
) -> OpStatus {
    let mut cursor = None;
    for answer in answers {
        match answer {
            None => {
                return if cursor.is_some() {
                    failed_midway(op)
                } else {
                    OpStatus::Skipped
                };
            }
            Some(Err(error)) => return OpStatus::Failed(error.clone()),
            Some(Ok(answer)) if !answer.reply.ok => {
                let error = crate::error::classify(answer.command, answer.reply.text());
                return OpStatus::Failed(not_found_pane(error, &op.pane.to_string()));
            }
            Some(Ok(answer)) => cursor = cursor.or(answer.cursor),
        }
    }
    OpStatus::Done {
        cursor: cursor_at(cursor.unwrap_or_default()),
    }
}

fn failed_midway(op: &Sendable) -> OpStatus {
    OpStatus::Failed(Error::InvalidArgument(format!(
        "operation on {} was cut short: tmux skipped its remaining commands",
        op.pane
    )))
}
