//! `send_keys_batch`: many keystroke operations in one call, and what the
//! batch tools share (`run_batch` is in `run_batch`).

use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use termpilot_tmux::{BatchOp, Error, Keystrokes, OpStatus, PaneId};
use tokio::sync::watch;

use super::input::{SendKeys, SendKeysParams, checked_input};
use crate::address::{self, Host};
use crate::approval::Piece;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

type Result<T> = ToolResult<T>;

/// What a batch does when an operation fails.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Stop at the first failure: nothing after it is sent (default).
    #[default]
    Stop,
    /// Run every operation; each reports for itself.
    Continue,
}

/// Most bytes of text in one batch, all operations together.
pub const MAX_BATCH_TEXT: usize = 1_048_576;

/// `send_keys_batch`.
pub(crate) struct SendKeysBatch;

/// Arguments of `send_keys_batch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysBatchParams {
    /// send_keys arguments, in order; all text at most 1 MiB.
    #[schemars(length(min = 1, max = 100))]
    pub operations: Vec<SendKeysParams>,
    /// Default stop.
    #[serde(default)]
    pub on_error: OnError,
}

/// One operation's outcome in `send_keys_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OpEntry {
    /// The operation's index in the batch, from 0.
    pub index: usize,
    /// The pane id it went to (the target as given, if that named no pane).
    pub pane: String,
    /// Whether it was sent.
    pub ok: bool,
    /// Why it failed, or why it was not sent.
    pub error: Option<String>,
    /// Seconds from the start of its chain to its last reply.
    pub elapsed_s: f64,
    /// Cursor from just before its input (null if not sent).
    pub cursor: Option<String>,
}

/// Result of `send_keys_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BatchEntry {
    /// One entry per operation, in order.
    pub results: Vec<OpEntry>,
    /// Operations sent.
    pub succeeded: usize,
    /// Operations that failed.
    pub failed: usize,
    /// Operations not sent (after a failure in stop mode, or after cancellation).
    pub skipped: usize,
    /// Index of the operation the batch stopped at, if it stopped early.
    pub stopped_at: Option<usize>,
    /// Seconds the whole batch took.
    pub elapsed_s: f64,
}

impl Tool for SendKeysBatch {
    const NAME: &'static str = "send_keys_batch";
    const TITLE: &'static str = "Type into panes, many at once";
    const DESCRIPTION: &'static str = "Run up to 100 send_keys operations (any panes, in order) \
        as one pipelined tmux chain, faster than separate calls. Key names are checked before \
        anything is sent; a missing pane fails its own operation. on_error stop: nothing is \
        sent after a failure; continue: every operation runs and reports.";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Runs;
    type Params = SendKeysBatchParams;
    type Output = BatchEntry;

    async fn call(
        server: &TermpilotServer,
        params: SendKeysBatchParams,
        call: &CallContext,
    ) -> Outcome {
        send_keys_batch(server, params, call).await
    }

    fn typed(arguments: &Value) -> Vec<Piece> {
        items(arguments, "operations")
            .iter()
            .flat_map(SendKeys::typed)
            .collect()
    }
}

/// The members of the array `field` of `arguments`.
pub(crate) fn items<'a>(arguments: &'a Value, field: &str) -> &'a [Value] {
    arguments
        .get(field)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Resolves the pane target of a keystroke operation. A target that names no
/// pane fails that operation alone, when its turn comes (`Ok(Err(..))`);
/// any other error refuses the whole batch, naming the field.
pub(crate) async fn batch_pane(
    server: &TermpilotServer,
    batch: &OneHost,
    target: &str,
    field: &str,
) -> Result<termpilot_tmux::Result<PaneId>> {
    let (_, target) = address::split(server, target);
    match address::pane_on(server, &batch.engine, target).await {
        Ok(pane) => Ok(Ok(pane)),
        Err(error @ Error::NotFound { .. }) => Ok(Err(error)),
        Err(error) => Err(ToolError::refused(format!("{field}: {error}"))),
    }
}

/// The host every pane of a batch is on, and its engine: a batch goes out
/// through one host's connection.
pub(crate) struct OneHost {
    pub(crate) host: Host,
    pub(crate) engine: termpilot_tmux::Engine,
}

/// The one host of `targets` (local when there are none); a batch whose
/// panes are on several hosts is refused.
pub(crate) async fn one_host<'a>(
    server: &TermpilotServer,
    targets: impl Iterator<Item = &'a str>,
) -> Result<OneHost> {
    let mut host: Option<Host> = None;
    for target in targets {
        let (this, _) = address::locate(server, target).await?;
        match &host {
            None => host = Some(this),
            Some(first) if *first != this => {
                return Err(ToolError::refused(format!(
                    "a batch works on one host's panes, but this one names hosts {} and {}; \
                     send one batch per host",
                    first.name(),
                    this.name()
                )));
            }
            Some(_) => {}
        }
    }
    let host = host.unwrap_or_default();
    let engine = host.engine(server).await?;
    Ok(OneHost { host, engine })
}

/// How an operation's pane is reported: its id, or the target as the caller
/// wrote it when that named no pane.
fn pane_name(host: &Host, op: &BatchOp, target: &str) -> String {
    op.pane
        .as_ref()
        .map_or_else(|_| target.to_owned(), |pane| host.qualify(pane))
}

/// Where a batch stopped: nowhere if every operation was tried; else, with
/// `stop`, at its first failure (or, cancelled, at its first operation not
/// tried), and with `continue` at its first operation not tried.
pub(crate) fn stopped_at(ok: &[bool], tried: &[bool], on_error: OnError) -> Option<usize> {
    if tried.iter().all(|t| *t) {
        return None;
    }
    match on_error {
        OnError::Stop => ok.iter().position(|ok| !ok),
        OnError::Continue => tried.iter().position(|t| !t),
    }
}

pub(crate) fn check_text_total(total: usize) -> Result<()> {
    if total > MAX_BATCH_TEXT {
        return Err(ToolError::refused(format!(
            "the batch holds {total} bytes of text, more than the {MAX_BATCH_TEXT} allowed; split it"
        )));
    }
    Ok(())
}

async fn send_keys_batch(
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
    let batch = one_host(server, params.operations.iter().map(|op| op.pane.as_str())).await?;
    let mut ops = Vec::with_capacity(params.operations.len());
    for (index, op) in params.operations.iter().enumerate() {
        let input = checked_input(op, &format!("operations[{index}]."))?;
        let field = format!("operations[{index}].pane");
        let pane = batch_pane(server, &batch, &op.pane, &field).await?;
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
    let reports = run_ops(&batch, &ops, params.on_error, call, count).await?;
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
        .map(|(index, ((op, target), report))| op_entry(&batch.host, index, op, target, report))
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
    host: &Host,
    index: usize,
    op: &BatchOp,
    target: &str,
    report: termpilot_tmux::OpReport,
) -> OpEntry {
    let (error, cursor) = match (report.status, &op.pane) {
        (OpStatus::Done { cursor }, Ok(_)) => (None, Some(host.qualify(cursor))),
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
        pane: pane_name(host, op, target),
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
    batch: &OneHost,
    ops: &[BatchOp],
    on_error: OnError,
    call: &CallContext,
    count: Count,
) -> Result<Vec<termpilot_tmux::OpReport>> {
    let (done_tx, done_rx) = watch::channel(count.before);
    let cancel = call.cancellation();
    let work = batch
        .engine
        .send_batch(ops, on_error == OnError::Stop, &cancel, |done| {
            done_tx.send_replace(count.before + done);
        });
    let reports = call
        .run_counted(count.what, count.total, done_rx, work)
        .await;
    // Operations left unsent after a failure are dealt with too.
    if !call.is_cancelled() {
        let done = count.before + ops.len();
        call.count(count.what, done, count.total).await;
    }
    Ok(reports)
}
