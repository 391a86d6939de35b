//! Batches: `send_keys_batch` (many keystroke operations in one call) and
//! `run_batch` (a pipeline of steps, each one of the single tools).

use std::borrow::Cow;
use std::time::Instant;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use termpilot_tmux::{BatchOp, Error, Keystrokes, OpStatus, PaneId};
use tokio::sync::watch;

use super::capture::{self, CapturePane, CapturePaneParams, CaptureSince, CaptureSinceParams};
use super::commands::{self, RunCommand, RunCommandParams};
use super::input::{
    PasteText, PasteTextParams, SendKeys, SendKeysParams, checked_input, refuse_nul, sent,
};
use super::waits::{self, WaitForIdle, WaitForIdleParams, WaitForText, WaitForTextParams};
use crate::address::{self, Host};
use crate::approval::Piece;
use crate::catalog::{self, Effect, Nested, Outcome, Tool};
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
        as one pipelined tmux chain: far faster than separate calls when you know all the \
        input. Key names and sizes are checked before anything is sent; a missing pane fails \
        its own operation. on_error stop: nothing is sent after a failure; continue: every \
        operation runs and reports.";
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
fn items<'a>(arguments: &'a Value, field: &str) -> &'a [Value] {
    arguments
        .get(field)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `run_batch`.
pub(crate) struct RunBatch;

/// One step of `run_batch`: `op` names the tool, the other fields are that tool's
/// arguments. In `since` (wait_for_text) and `cursor` (capture_since), "$prev" means the
/// cursor of the latest earlier step that returned one, and "$N" the cursor of step N
/// (counted from 0).
///
/// Its published schema only names the tools (one `oneOf` variant per `op`): a step's
/// arguments are those of its tool, published once in that tool's schema and checked
/// against it at run time.
#[derive(Debug)]
pub enum BatchStep {
    /// Arguments of send_keys.
    SendKeys(SendKeysParams),
    /// Arguments of paste_text.
    PasteText(PasteTextParams),
    /// Arguments of wait_for_text.
    WaitForText(WaitForTextParams),
    /// Arguments of wait_for_idle.
    WaitForIdle(WaitForIdleParams),
    /// Arguments of capture_pane.
    CapturePane(CapturePaneParams),
    /// Arguments of capture_since.
    CaptureSince(CaptureSinceParams),
    /// Arguments of run_command.
    RunCommand(RunCommandParams),
}

impl BatchStep {
    /// The tools a step may call, as `op` names them.
    pub const OPS: [&'static str; 7] = [
        SendKeys::NAME,
        PasteText::NAME,
        WaitForText::NAME,
        WaitForIdle::NAME,
        CapturePane::NAME,
        CaptureSince::NAME,
        RunCommand::NAME,
    ];
}

impl<'de> Deserialize<'de> for BatchStep {
    /// `{"op": tool, ...that tool's arguments}`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let mut fields = serde_json::Map::<String, Value>::deserialize(deserializer)?;
        let op = match fields.remove("op") {
            Some(Value::String(op)) => op,
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "op: expected a tool name, got {other}"
                )));
            }
            None => return Err(D::Error::missing_field("op")),
        };
        let arguments = Value::Object(fields);
        let step = match op.as_str() {
            SendKeys::NAME => serde_json::from_value(arguments).map(BatchStep::SendKeys),
            PasteText::NAME => serde_json::from_value(arguments).map(BatchStep::PasteText),
            WaitForText::NAME => serde_json::from_value(arguments).map(BatchStep::WaitForText),
            WaitForIdle::NAME => serde_json::from_value(arguments).map(BatchStep::WaitForIdle),
            CapturePane::NAME => serde_json::from_value(arguments).map(BatchStep::CapturePane),
            CaptureSince::NAME => serde_json::from_value(arguments).map(BatchStep::CaptureSince),
            RunCommand::NAME => serde_json::from_value(arguments).map(BatchStep::RunCommand),
            other => return Err(D::Error::unknown_variant(other, &BatchStep::OPS)),
        };
        step.map_err(D::Error::custom)
    }
}

impl JsonSchema for BatchStep {
    fn schema_name() -> Cow<'static, str> {
        "BatchStep".into()
    }

    /// One variant per tool, tagged by `op` as serde reads it.
    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let variants: Vec<Schema> = BatchStep::OPS
            .iter()
            .map(|op| {
                json_schema!({
                    "type": "object",
                    "properties": {"op": {"type": "string", "const": op}},
                    "required": ["op"]
                })
            })
            .collect();
        json_schema!({ "oneOf": variants })
    }
}

/// Arguments of `run_batch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunBatchParams {
    /// Steps in order; all text at most 1 MiB.
    #[schemars(length(min = 1, max = 100))]
    pub steps: Vec<BatchStep>,
    /// Default stop.
    #[serde(default)]
    pub on_error: OnError,
    /// Budget shared by all returned text (default 4000).
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// One step's outcome in `run_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StepEntry {
    /// The step's index, from 0.
    pub index: usize,
    /// The step's tool.
    pub op: String,
    /// Whether it succeeded (a wait that timed out still succeeded: see its outcome).
    pub ok: bool,
    /// Why it failed, or why it did not run.
    pub error: Option<String>,
    /// The step's result, exactly as the single tool returns it.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub result: Option<serde_json::Value>,
    /// Whether the step ran (it did not when the batch stopped before it).
    #[serde(skip)]
    pub(crate) ran: bool,
}

/// Result of `run_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunBatchEntry {
    /// One entry per step, in order.
    pub steps: Vec<StepEntry>,
    /// Steps that succeeded.
    pub succeeded: usize,
    /// Steps that failed.
    pub failed: usize,
    /// Steps that did not run.
    pub skipped: usize,
    /// Index of the step the batch stopped at, if it stopped early.
    pub stopped_at: Option<usize>,
    /// Seconds the whole batch took.
    pub elapsed_s: f64,
}

impl Tool for RunBatch {
    const NAME: &'static str = "run_batch";
    const TITLE: &'static str = "Run a pipeline of steps";
    const DESCRIPTION: &'static str = "Run up to 100 steps in one call, each {\"op\": tool, \
        ...its arguments} for send_keys, paste_text, wait_for_text, wait_for_idle, \
        capture_pane, capture_since or run_command; each result has that tool's shape. A \
        step's since/cursor may be \"$prev\" (the latest earlier cursor) or \"$N\" (step N's, \
        from 0). For sequences known in advance. on_error as in send_keys_batch.";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Runs;
    type Params = RunBatchParams;
    type Output = RunBatchEntry;

    async fn call(server: &TermpilotServer, params: RunBatchParams, call: &CallContext) -> Outcome {
        run_batch(server, params, call).await
    }

    fn typed(arguments: &Value) -> Vec<Piece> {
        steps(arguments)
            .flat_map(|(_, op, step)| {
                catalog::find(op).map_or_else(Vec::new, |spec| (spec.typed)(step))
            })
            .collect()
    }

    fn nested(arguments: &Value) -> Vec<Nested> {
        steps(arguments)
            .filter_map(|(index, op, step)| {
                let mut fields = step.as_object()?.clone();
                fields.remove("op");
                Some(Nested {
                    prefix: format!("steps.{index}."),
                    tool: op.to_owned(),
                    arguments: Value::Object(fields),
                })
            })
            .collect()
    }
}

/// The steps of `run_batch` arguments whose `op` names a step tool: index,
/// tool, step.
fn steps(arguments: &Value) -> impl Iterator<Item = (usize, &str, &Value)> {
    items(arguments, "steps")
        .iter()
        .enumerate()
        .filter_map(|(index, step)| {
            let op = step.get("op").and_then(Value::as_str)?;
            BatchStep::OPS.contains(&op).then_some((index, op, step))
        })
}

/// Token budget of a whole run_batch unless the caller gives one.
const RUN_BATCH_TOKENS: u32 = 4_000;

/// Resolves the pane target of a keystroke operation. A target that names no
/// pane fails that operation alone, when its turn comes (`Ok(Err(..))`);
/// any other error refuses the whole batch, naming the field.
async fn batch_pane(
    server: &TermpilotServer,
    host: &Batch,
    target: &str,
    field: &str,
) -> Result<termpilot_tmux::Result<PaneId>> {
    let scope = &server.oversight.scope;
    let (_, target) = address::split(server, target);
    match scope.resolve_pane(&host.engine, target).await {
        Ok(pane) => Ok(Ok(pane)),
        Err(error @ Error::NotFound { .. }) => Ok(Err(error)),
        Err(error) => Err(ToolError::refused(format!("{field}: {error}"))),
    }
}

/// The host every keystroke operation of a batch is on, and its engine:
/// keystrokes go out as chains through one host's connection.
struct Batch {
    host: Host,
    engine: termpilot_tmux::Engine,
}

/// The one host of `targets` (local when there are none); a batch whose
/// keystrokes go to several hosts is refused.
async fn batch_host<'a>(
    server: &TermpilotServer,
    targets: impl Iterator<Item = &'a str>,
) -> Result<Batch> {
    let mut host: Option<Host> = None;
    for target in targets {
        let (this, _) = address::split(server, target);
        match &host {
            None => host = Some(this),
            Some(first) if *first != this => {
                return Err(ToolError::refused(format!(
                    "a batch types into one host's panes, but it names hosts {} and {};                      send one batch per host",
                    first.name(),
                    this.name()
                )));
            }
            Some(_) => {}
        }
    }
    let host = host.unwrap_or_default();
    let engine = host.engine(server).await?;
    Ok(Batch { host, engine })
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
    let batch = batch_host(server, params.operations.iter().map(|op| op.pane.as_str())).await?;
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
    batch: &Batch,
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
            ToolError::refused(format!(
                "steps[{index}]: {text:?} is not a reference; use \"$prev\" or \"$N\""
            ))
        })?;
        if step >= index {
            return Err(ToolError::refused(format!(
                "steps[{index}]: {text} refers to a step that has not run before it"
            )));
        }
        cursors.get(step).cloned().flatten()
    };
    found.ok_or_else(|| {
        ToolError::refused(format!(
            "steps[{index}]: {text} names no step that returned a cursor"
        ))
    })
}

fn op_name(step: &BatchStep) -> &'static str {
    match step {
        BatchStep::SendKeys(_) => SendKeys::NAME,
        BatchStep::PasteText(_) => PasteText::NAME,
        BatchStep::WaitForText(_) => WaitForText::NAME,
        BatchStep::WaitForIdle(_) => WaitForIdle::NAME,
        BatchStep::CapturePane(_) => CapturePane::NAME,
        BatchStep::CaptureSince(_) => CaptureSince::NAME,
        BatchStep::RunCommand(_) => RunCommand::NAME,
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
    batch: &Batch,
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
                let pane = batch_pane(server, batch, &p.pane, &format!("{prefix}pane")).await?;
                Some(BatchOp {
                    pane,
                    keys: Keystrokes::Type(input),
                })
            }
            BatchStep::PasteText(p) => {
                total += p.text.len();
                refuse_nul(&format!("{prefix}text"), &p.text)?;
                let pane = batch_pane(server, batch, &p.pane, &format!("{prefix}pane")).await?;
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

async fn run_batch(
    server: &TermpilotServer,
    params: RunBatchParams,
    call: &CallContext,
) -> Result<Done> {
    let started = Instant::now();
    let keystroke_panes = params.steps.iter().filter_map(|step| match step {
        BatchStep::SendKeys(p) => Some(p.pane.as_str()),
        BatchStep::PasteText(p) => Some(p.pane.as_str()),
        _ => None,
    });
    let batch = batch_host(server, keystroke_panes).await?;
    let ops = validate_steps(server, &batch, &params.steps).await?;
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
                run_chain(&batch, chain, stop, call, &mut entries, &mut cursors, n).await?;
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
    batch: &Batch,
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
    let reports = run_ops(batch, &ops, on_error, call, count).await?;
    let mut failed = false;
    for ((index, op), report) in chain.into_iter().zip(reports) {
        let name = match op.keys {
            Keystrokes::Type(_) => SendKeys::NAME,
            Keystrokes::Paste { .. } => PasteText::NAME,
        };
        let result = match (report.status, op.pane) {
            (OpStatus::Done { cursor }, Ok(id)) => {
                let pane = address::Pane {
                    host: batch.host.clone(),
                    engine: batch.engine.clone(),
                    id,
                };
                sent(&pane, cursor).map(|done| (name, done))
            }
            // The engine sends nothing to a target that named no pane.
            (OpStatus::Done { .. }, Err(error)) | (OpStatus::Failed(error), _) => Err(error.into()),
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
            capture::capture_pane(server, p).await
        }
        BatchStep::CaptureSince(mut p) => {
            p.cursor = resolve_reference(&p.cursor, cursors, index)?;
            p.max_tokens = budget(p.max_tokens).map(|t| t.max(100));
            capture::capture_since(server, p).await
        }
        BatchStep::RunCommand(mut p) => {
            p.max_tokens = budget(p.max_tokens).map(|t| t.max(100));
            commands::run_command(server, p, call).await
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
        ran: false,
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
                ran: true,
            });
        }
        Err(error) => {
            cursors.push(None);
            entries.push(StepEntry {
                index,
                op: op.to_owned(),
                ok: false,
                error: Some(error.to_string()),
                result: None,
                ran: true,
            });
        }
    }
}

fn summary(steps: Vec<StepEntry>, on_error: OnError, started: Instant) -> RunBatchEntry {
    let ok: Vec<bool> = steps.iter().map(|s| s.ok).collect();
    let tried: Vec<bool> = steps.iter().map(|s| s.ran).collect();
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
