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
//! With `stop_on_error`, a run is one tmux command line (`a ; b ; c`): tmux
//! itself skips everything after a failing command, so nothing after the
//! first failure reaches the panes, and later runs are not sent.

use std::time::{Duration, Instant};

use termpilot_control::{Command, PaneId};
use tokio_util::sync::CancellationToken;

use crate::client::{Answer, ClientHandle, Group};
use crate::engine::{Engine, call, not_found_pane};
use crate::error::{Error, Result};
use crate::ops::{Input, input_commands, paste_commands};

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
    /// The pane.
    pub pane: PaneId,
    /// What to send.
    pub keys: Keystrokes,
}

/// How one operation went.
#[derive(Debug, Clone)]
pub enum OpStatus {
    /// Sent; the cursor is the pane's journal position before the input.
    Done {
        /// Journal offset before the input.
        cursor: u64,
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

/// An operation turned into tmux commands, with its place in the batch.
struct Prepared {
    index: usize,
    pane: PaneId,
    commands: Vec<Command>,
    typed: Option<String>,
}

impl Engine {
    /// Checks that every pane exists, in one pipelined chain. Returns the
    /// index of the first operation whose pane is missing, with the error.
    pub async fn check_panes(&self, panes: &[PaneId]) -> std::result::Result<(), (usize, Error)> {
        let client = self.primary().await.map_err(|e| (0, e))?;
        let mut calls = Vec::with_capacity(panes.len());
        for pane in panes {
            let probe = Command::new("display-message")
                .flag("-p")
                .opt("-t", pane.to_string())
                .arg("#{pane_id}");
            calls.push(call(probe, None).map_err(|e| (0, e))?);
        }
        let answers = client.call_many(calls).await;
        for (index, (answer, pane)) in answers.into_iter().zip(panes).enumerate() {
            let answer = answer.map_err(|e| (index, e))?;
            if !answer.reply.ok || answer.reply.text().trim() != pane.to_string() {
                return Err((
                    index,
                    not_found_pane(
                        Error::Command {
                            command: String::new(),
                            message: "can't find pane".into(),
                        },
                        &pane.to_string(),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Sends every operation in order (see the module docs). `progress` is
    /// called with the number of operations finished after each run;
    /// `cancel` stops the batch between runs.
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
        let prepared = match self.prepare(ops) {
            Ok(prepared) => prepared,
            Err((index, error)) => {
                reports[index].status = OpStatus::Failed(error);
                return reports;
            }
        };
        let blocked = self.blocked_panes(ops).await;
        let mut done = 0;
        let mut rest = &prepared[..];
        while let Some(first) = rest.first() {
            if cancel.is_cancelled() {
                break;
            }
            if let Some((_, error)) = blocked.iter().find(|(pane, _)| *pane == first.pane) {
                reports[first.index].status = OpStatus::Failed(error.clone());
                if stop_on_error {
                    break;
                }
                rest = &rest[1..];
                continue;
            }
            let client = match self.client_for_pane(first.pane).await {
                Ok(client) => client,
                Err(error) => {
                    reports[first.index].status = OpStatus::Failed(error);
                    if stop_on_error {
                        break;
                    }
                    rest = &rest[1..];
                    continue;
                }
            };
            let len = chain_length(rest, &blocked);
            let (run, after) = rest.split_at(len);
            let failed = self
                .send_run(&client, run, stop_on_error, &mut reports)
                .await;
            done += len;
            progress(done);
            if failed && stop_on_error {
                break;
            }
            rest = after;
        }
        reports
    }

    /// Panes the batch must not type into: missing, or held by a person.
    async fn blocked_panes(&self, ops: &[BatchOp]) -> Vec<(PaneId, Error)> {
        let mut panes: Vec<PaneId> = ops.iter().map(|op| op.pane).collect();
        panes.sort_unstable();
        panes.dedup();
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

    fn prepare(&self, ops: &[BatchOp]) -> std::result::Result<Vec<Prepared>, (usize, Error)> {
        ops.iter()
            .enumerate()
            .map(|(index, op)| {
                self.refuse_own_pane(op.pane, "type into")
                    .map_err(|e| (index, e))?;
                let (commands, typed) = match &op.keys {
                    Keystrokes::Type(input) => (input_commands(op.pane, input), input.text.clone()),
                    Keystrokes::Paste {
                        text,
                        bracketed,
                        enter,
                    } => {
                        let buffer = self.buffer_name();
                        let commands = paste_commands(op.pane, &buffer, text, *bracketed, *enter)
                            .map_err(|e| (index, e))?;
                        (commands, Some(text.clone()))
                    }
                };
                Ok(Prepared {
                    index,
                    pane: op.pane,
                    commands,
                    typed,
                })
            })
            .collect()
    }

    /// Sends one run and fills in its reports; returns whether one failed.
    async fn send_run(
        &self,
        client: &ClientHandle,
        run: &[Prepared],
        stop_on_error: bool,
        reports: &mut [OpReport],
    ) -> bool {
        let started = Instant::now();
        let before: Vec<Option<u64>> = run
            .iter()
            .map(|op| (!self.carries(client, op.pane)).then(|| self.journal_end(op.pane)))
            .collect();
        let answers = if stop_on_error {
            self.send_as_line(client, run).await
        } else {
            self.send_as_lines(client, run).await
        };
        let answers = match answers {
            Ok(answers) => answers,
            Err(error) => {
                for op in run {
                    reports[op.index].status = OpStatus::Failed(error.clone());
                }
                return true;
            }
        };
        let mut answers = answers.into_iter();
        let mut failed = false;
        for (op, before) in run.iter().zip(before) {
            let mine: Vec<Option<Result<Answer>>> =
                op.commands.iter().map(|_| answers.next()).collect();
            let report = &mut reports[op.index];
            report.status = self.op_status(op, &mine);
            if let (OpStatus::Done { cursor }, Some(before)) = (&mut report.status, before) {
                *cursor = before;
            }
            if let Some(Some(Ok(last))) = mine.iter().rev().find(|a| a.is_some()) {
                report.elapsed = last.received.saturating_duration_since(started);
            }
            if let OpStatus::Done { cursor } = report.status {
                if let Some(text) = &op.typed {
                    self.shared.panes.record_typed(op.pane, cursor, text);
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

    fn op_status(&self, op: &Prepared, answers: &[Option<Result<Answer>>]) -> OpStatus {
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
                    let error = Error::Command {
                        command: String::new(),
                        message: answer.reply.text(),
                    };
                    return OpStatus::Failed(not_found_pane(error, &op.pane.to_string()));
                }
                Some(Ok(answer)) => cursor = cursor.or(answer.cursor),
            }
        }
        OpStatus::Done {
            cursor: cursor.unwrap_or_default(),
        }
    }

    /// Stop mode: the whole run as one command line.
    async fn send_as_line(
        &self,
        client: &ClientHandle,
        run: &[Prepared],
    ) -> Result<Vec<Result<Answer>>> {
        let mut line = Vec::new();
        let mut parts = Vec::new();
        for op in run {
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
        run: &[Prepared],
    ) -> Result<Vec<Result<Answer>>> {
        let mut calls = Vec::new();
        for op in run {
            let cursor_pane = self.carries(client, op.pane).then_some(op.pane);
            for (i, command) in op.commands.iter().enumerate() {
                calls.push(call(command.clone(), cursor_pane.filter(|_| i == 0))?);
            }
        }
        Ok(client.call_many(calls).await)
    }
}

/// How many operations from the start of `ops` form one chain: up to
/// [`CHAIN_LIMIT`], ending before an operation on a blocked pane.
fn chain_length(ops: &[Prepared], blocked: &[(PaneId, Error)]) -> usize {
    let sendable = |op: &&Prepared| !blocked.iter().any(|(pane, _)| *pane == op.pane);
    1 + ops[1..]
        .iter()
        .take(CHAIN_LIMIT - 1)
        .take_while(sendable)
        .count()
}

fn failed_midway(op: &Prepared) -> OpStatus {
    OpStatus::Failed(Error::InvalidArgument(format!(
        "operation on {} was cut short: tmux skipped its remaining commands",
        op.pane
    )))
}
