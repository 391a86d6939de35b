//! The batch tools: many operations in one call.

use std::time::Instant;

use serde_json::Value;
use termpilot_tmux::{BatchOp, Error, Keystrokes, OpStatus, PaneId};
use tokio::sync::watch;

use crate::handlers::{self, checked_input, refuse_nul, sent};
use crate::params::*;
use crate::results::*;
use crate::server::{CallContext, Done, TermpilotServer};
use crate::waits;

type Result<T> = std::result::Result<T, String>;

/// Token budget of a whole run_batch unless the caller gives one.
const RUN_BATCH_TOKENS: u32 = 4_000;

/// Resolves the pane target of a keystroke operation. A target that names no
/// pane fails that operation alone, when its turn comes (`Ok(Err(..))`);
/// any other error refuses the whole batch, naming the field.
async fn batch_pane(
    server: &TermpilotServer,
    target: &str,
    field: &str,
) -> Result<termpilot_tmux::Result<PaneId>> {
    let scope = &server.oversight.scope;
    match scope.resolve_pane(&server.engine, target).await {
        Ok(pane) => Ok(Ok(pane)),
        Err(error @ Error::NotFound { .. }) => Ok(Err(error)),
        Err(error) => Err(format!("{field}: {error}")),
    }
}

/// How an operation's pane is reported: its id, or the target as the caller
/// wrote it when that named no pane.
fn pane_name(op: &BatchOp, target: &str) -> String {
    op.pane
        .as_ref()
        .map_or_else(|_| target.to_owned(), PaneId::to_string)
}

/// Where a batch stopped: nowhere if every operation was tried; else, with
/// `stop`, at its first failure (or, cancelled, at its first operation not
/// tried), and with `continue` at its first operation not tried.
fn stopped_at(ok: &[bool], tried: &[bool], on_error: OnError) -> Option<usize> {
    if tried.iter().all(|t| *t) {
        return None;
    }
    match on_error {
        OnError::Stop => ok.iter().position(|ok| !ok),
        OnError::Continue => tried.iter().position(|t| !t),
    }
}

fn check_text_total(total: usize) -> Result<()> {
    if total > MAX_BATCH_TEXT {
        return Err(format!(
            "the batch holds {total} bytes of text, more than the {MAX_BATCH_TEXT} allowed; split it"
        ));
    }
    Ok(())
}

pub(crate) async fn send_keys_batch(
    server: &TermpilotServer,
    params: SendKeysBatchParams,
    call: &CallContext,
) -> Result<Done> {
    let started = Instant::now();
    let total = params
        .operations
        .iter()
        .map(|op| op.text.as_ref().map_or(0, String::len))
        .sum();
    check_text_total(total)?;
    let mut ops = Vec::with_capacity(params.operations.len());
    for (index, op) in params.operations.iter().enumerate() {
        let input = checked_input(op, &format!("operations[{index}]."))?;
        let pane = batch_pane(server, &op.pane, &format!("operations[{index}].pane")).await?;
        ops.push(BatchOp {
            pane,
            keys: Keystrokes::Type(input),
        });
    }
    let count = Count {
        what: "sending keys",
        before: 0,
        total: ops.len(),
    };
    let reports = run_ops(server, &ops, params.on_error, call, count).await?;
    let tried: Vec<bool> = reports
        .iter()
        .map(|r| !matches!(r.status, OpStatus::Skipped))
        .collect();
    let targets = params.operations.iter().map(|op| op.pane.as_str());
    let results: Vec<OpEntry> = ops
        .iter()
        .zip(targets)
        .zip(reports)
        .enumerate()
        .map(|(index, ((op, target), report))| op_entry(server, index, op, target, report))
        .collect();
    let ok: Vec<bool> = results.iter().map(|r| r.ok).collect();
    let succeeded = ok.iter().filter(|ok| **ok).count();
    let skipped = tried.iter().filter(|tried| !**tried).count();
    let entry = BatchEntry {
        failed: results.len() - succeeded - skipped,
        results,
        succeeded,
        skipped,
        stopped_at: stopped_at(&ok, &tried, params.on_error),
        elapsed_s: started.elapsed().as_secs_f64(),
    };
    let mut text = format!(
        "{} sent, {} failed, {} not sent in {:.3} s",
        entry.succeeded, entry.failed, entry.skipped, entry.elapsed_s
    );
    for result in entry.results.iter().filter(|r| !r.ok).take(5) {
        text.push_str(&format!(
            "\noperations[{}] ({}): {}",
            result.index,
            result.pane,
            result.error.as_deref().unwrap_or("")
        ));
    }
    Done::new(&entry, text)
}

fn op_entry(
    server: &TermpilotServer,
    index: usize,
    op: &BatchOp,
    target: &str,
    report: termpilot_tmux::OpReport,
) -> OpEntry {
    let (error, cursor) = match (report.status, &op.pane) {
        (OpStatus::Done { cursor }, Ok(pane)) => (None, Some(server.cursor(*pane, cursor))),
        // The engine sends nothing to a target that named no pane.
        (OpStatus::Done { .. }, Err(error)) => (Some(error.to_string()), None),
        (OpStatus::Failed(error), _) => (Some(error.to_string()), None),
        (OpStatus::Skipped, _) => (
            Some("not sent: the batch stopped before this operation".to_owned()),
            None,
        ),
    };
    OpEntry {
        index,
        pane: pane_name(op, target),
        ok: error.is_none(),
        error,
        elapsed_s: report.elapsed.as_secs_f64(),
        cursor,
    }
}

/// How a batch counts its progress: the count before these operations, and
/// the batch's total.
#[derive(Clone, Copy)]
struct Count {
    what: &'static str,
    before: usize,
    total: usize,
}

/// Sends `ops` through the engine, reporting progress (as `count` says) and
/// honouring cancellation between chains.
async fn run_ops(
    server: &TermpilotServer,
    ops: &[BatchOp],
    on_error: OnError,
    call: &CallContext,
    count: Count,
) -> Result<Vec<termpilot_tmux::OpReport>> {
    let (done_tx, done_rx) = watch::channel(count.before);
    let cancel = call.cancellation();
    let work = server
        .engine
        .send_batch(ops, on_error == OnError::Stop, &cancel, |done| {
            done_tx.send_replace(count.before + done);
        });
    let reports = call
        .run_counted(count.what, count.total, done_rx, work)
        .await?;
    // Operations left unsent after a failure are dealt with too.
    if !call.is_cancelled() {
        let done = count.before + ops.len();
        call.count(count.what, done, count.total).await;
    }
    Ok(reports)
}

/// A cursor named by a step: "$prev" or "$N", or a cursor string as is.
fn resolve_reference(text: &str, cursors: &[Option<String>], index: usize) -> Result<String> {
    let Some(reference) = text.strip_prefix('$') else {
        return Ok(text.to_owned());
    };
    let found = if reference == "prev" {
        cursors.iter().rev().flatten().next().cloned()
    } else {
        let step: usize = reference.parse().map_err(|_| {
            format!("steps[{index}]: {text:?} is not a reference; use \"$prev\" or \"$N\"")
        })?;
        if step >= index {
            return Err(format!(
                "steps[{index}]: {text} refers to a step that has not run before it"
            ));
        }
        cursors.get(step).cloned().flatten()
    };
    found.ok_or_else(|| format!("steps[{index}]: {text} names no step that returned a cursor"))
}

fn op_name(step: &BatchStep) -> &'static str {
    match step {
        BatchStep::SendKeys(_) => "send_keys",
        BatchStep::PasteText(_) => "paste_text",
        BatchStep::WaitForText(_) => "wait_for_text",
        BatchStep::WaitForIdle(_) => "wait_for_idle",
        BatchStep::CapturePane(_) => "capture_pane",
        BatchStep::CaptureSince(_) => "capture_since",
        BatchStep::RunCommand(_) => "run_command",
    }
}

fn is_keystrokes(step: &BatchStep) -> bool {
    matches!(step, BatchStep::SendKeys(_) | BatchStep::PasteText(_))
}

fn returns_text(step: &BatchStep) -> bool {
    !is_keystrokes(step)
}

/// Checks everything that can be checked before any step runs.
async fn validate_steps(
    server: &TermpilotServer,
    steps: &[BatchStep],
) -> Result<Vec<Option<BatchOp>>> {
    let mut total = 0;
    let mut ops = Vec::with_capacity(steps.len());
    for (index, step) in steps.iter().enumerate() {
        let prefix = format!("steps[{index}].");
        let op = match step {
            BatchStep::SendKeys(p) => {
                total += p.text.as_ref().map_or(0, String::len);
                let input = checked_input(p, &prefix)?;
                let pane = batch_pane(server, &p.pane, &format!("{prefix}pane")).await?;
                Some(BatchOp {
                    pane,
                    keys: Keystrokes::Type(input),
                })
            }
            BatchStep::PasteText(p) => {
                total += p.text.len();
                refuse_nul(&format!("{prefix}text"), &p.text)?;
                let pane = batch_pane(server, &p.pane, &format!("{prefix}pane")).await?;
                let keys = Keystrokes::Paste {
                    text: p.text.clone(),
                    bracketed: p.bracketed,
                    enter: p.enter,
                };
                Some(BatchOp { pane, keys })
            }
            _ => None,
        };
        ops.push(op);
    }
    check_text_total(total)?;
    Ok(ops)
}

pub(crate) async fn run_batch(
    server: &TermpilotServer,
    params: RunBatchParams,
    call: &CallContext,
) -> Result<Done> {
    let started = Instant::now();
    let ops = validate_steps(server, &params.steps).await?;
    let texts = params
        .steps
        .iter()
        .filter(|s| returns_text(s))
        .count()
        .max(1) as u32;
    let share = (params.max_tokens.unwrap_or(RUN_BATCH_TOKENS) / texts).max(100);
    let stop = params.on_error == OnError::Stop;
    let n = params.steps.len();
    let mut entries: Vec<StepEntry> = Vec::with_capacity(n);
    let mut cursors: Vec<Option<String>> = Vec::with_capacity(n);
    let mut steps = params.steps.into_iter().zip(ops).enumerate().peekable();
    let mut halted = false;
    while let Some((index, (step, op))) = steps.next() {
        if halted || call.is_cancelled() {
            entries.push(skipped(index, op_name(&step)));
            cursors.push(None);
            continue;
        }
        if let Some(op) = op {
            // A chain of consecutive keystroke steps goes out in one write.
            let mut chain = vec![(index, op)];
            while let Some((_, (_, Some(_)))) = steps.peek() {
                let (i, (_, next)) = steps.next().expect("peeked");
                chain.push((i, next.expect("keystrokes")));
            }
            let failed =
                run_chain(server, chain, stop, call, &mut entries, &mut cursors, n).await?;
            halted = failed && stop;
        } else {
            let name = op_name(&step);
            let work = run_step(server, step, index, &cursors, share, call);
            let result = call.in_step(index, n, work).await;
            let failed = result.is_err();
            push_result(&mut entries, &mut cursors, index, name, result);
            halted = failed && stop;
        }
        call.count("running batch", entries.len(), n).await;
    }
    if !call.is_cancelled() {
        // Steps left unrun after a failure are dealt with too.
        call.count("running batch", n, n).await;
    }
    let entry = summary(entries, params.on_error, started);
    let text = batch_text(&entry);
    Done::new(&entry, text)
}

async fn run_chain(
    server: &TermpilotServer,
    chain: Vec<(usize, BatchOp)>,
    stop: bool,
    call: &CallContext,
    entries: &mut Vec<StepEntry>,
    cursors: &mut Vec<Option<String>>,
    total: usize,
) -> Result<bool> {
    let ops: Vec<BatchOp> = chain.iter().map(|(_, op)| op.clone()).collect();
    let on_error = if stop {
        OnError::Stop
    } else {
        OnError::Continue
    };
    let count = Count {
        what: "running batch",
        before: entries.len(),
        total,
    };
    let reports = run_ops(server, &ops, on_error, call, count).await?;
    let mut failed = false;
    for ((index, op), report) in chain.into_iter().zip(reports) {
        let name = match op.keys {
            Keystrokes::Type(_) => "send_keys",
            Keystrokes::Paste { .. } => "paste_text",
        };
        let result = match (report.status, op.pane) {
            (OpStatus::Done { cursor }, Ok(pane)) => {
                sent(server, pane, cursor).map(|done| (name, done))
            }
            // The engine sends nothing to a target that named no pane.
            (OpStatus::Done { .. }, Err(error)) | (OpStatus::Failed(error), _) => {
                Err(error.to_string())
            }
            (OpStatus::Skipped, _) => {
                entries.push(skipped(index, name));
                cursors.push(None);
                continue;
            }
        };
        failed |= result.is_err();
        push_result(entries, cursors, index, name, result);
    }
    Ok(failed)
}

async fn run_step(
    server: &TermpilotServer,
    step: BatchStep,
    index: usize,
    cursors: &[Option<String>],
    share: u32,
    call: &CallContext,
) -> Result<(&'static str, Done)> {
    let name = op_name(&step);
    let budget = |own: Option<u32>| Some(own.map_or(share, |own| own.min(share)));
    let done = match step {
        BatchStep::WaitForText(mut p) => {
            if let Some(since) = &p.since {
                p.since = Some(resolve_reference(since, cursors, index)?);
            }
            p.max_tokens = budget(p.max_tokens);
            waits::wait_for_text(server, p, call).await
        }
        BatchStep::WaitForIdle(p) => waits::wait_for_idle(server, p, call).await,
        BatchStep::CapturePane(mut p) => {
            p.max_tokens = budget(p.max_tokens).map(|t| t.max(100));
            handlers::capture_pane(server, p).await
        }
        BatchStep::CaptureSince(mut p) => {
            p.cursor = resolve_reference(&p.cursor, cursors, index)?;
            p.max_tokens = budget(p.max_tokens).map(|t| t.max(100));
            handlers::capture_since(server, p).await
        }
        BatchStep::RunCommand(mut p) => {
            p.max_tokens = budget(p.max_tokens).map(|t| t.max(100));
            waits::run_command(server, p, call).await
        }
        BatchStep::SendKeys(_) | BatchStep::PasteText(_) => {
            unreachable!("keystrokes run as chains")
        }
    };
    done.map(|done| (name, done))
}

/// The error of a step that did not run.
const NOT_RUN: &str = "not run: the batch stopped before this step";

fn skipped(index: usize, op: &str) -> StepEntry {
    StepEntry {
        index,
        op: op.to_owned(),
        ok: false,
        error: Some(NOT_RUN.into()),
        result: None,
    }
}

fn push_result(
    entries: &mut Vec<StepEntry>,
    cursors: &mut Vec<Option<String>>,
    index: usize,
    op: &str,
    result: Result<(&'static str, Done)>,
) {
    match result {
        Ok((name, done)) => {
            let cursor = done
                .structured
                .get("cursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            cursors.push(cursor);
            entries.push(StepEntry {
                index,
                op: name.to_owned(),
                ok: true,
                error: None,
                result: Some(done.structured),
            });
        }
        Err(error) => {
            cursors.push(None);
            entries.push(StepEntry {
                index,
                op: op.to_owned(),
                ok: false,
                error: Some(error),
                result: None,
            });
        }
    }
}

fn summary(steps: Vec<StepEntry>, on_error: OnError, started: Instant) -> RunBatchEntry {
    let ok: Vec<bool> = steps.iter().map(|s| s.ok).collect();
    let tried: Vec<bool> = steps
        .iter()
        .map(|s| s.error.as_deref() != Some(NOT_RUN))
        .collect();
    let succeeded = ok.iter().filter(|ok| **ok).count();
    let skipped = tried.iter().filter(|tried| !**tried).count();
    RunBatchEntry {
        failed: steps.len() - succeeded - skipped,
        stopped_at: stopped_at(&ok, &tried, on_error),
        steps,
        succeeded,
        skipped,
        elapsed_s: started.elapsed().as_secs_f64(),
    }
}

fn batch_text(entry: &RunBatchEntry) -> String {
    let mut text = format!(
        "{} steps ok, {} failed, {} not run in {:.3} s",
        entry.succeeded, entry.failed, entry.skipped, entry.elapsed_s
    );
    for step in &entry.steps {
        text.push_str(&format!("\n[{}] {}: ", step.index, step.op));
        match (&step.error, &step.result) {
            (Some(error), _) => text.push_str(error),
            (None, Some(result)) => text.push_str(&step_summary(result)),
            (None, None) => {}
        }
    }
    text
}

/// A short text form of a step's result: its outcome and its text, if any.
fn step_summary(result: &Value) -> String {
    let field = |name: &str| result.get(name).and_then(Value::as_str);
    let mut parts = Vec::new();
    if let Some(outcome) = field("outcome") {
        parts.push(outcome.to_owned());
    }
    if let Some(code) = result.get("exit_code").and_then(Value::as_i64) {
        parts.push(format!("exit code {code}"));
    }
    let body = field("text").or(field("output")).or(field("tail"));
    let mut out = parts.join(", ");
    if let Some(body) = body.filter(|b| !b.is_empty()) {
        out.push('\n');
        out.push_str(body);
    }
    if out.is_empty() {
        out = field("cursor").map_or_else(|| "ok".to_owned(), |c| format!("ok, cursor {c}"));
    }
    out
}
