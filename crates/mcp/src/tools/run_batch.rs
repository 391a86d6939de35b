//! `run_batch`: a pipeline of steps, each one of the single tools, run by
//! the engine ([`termpilot_tmux::Engine::run_steps`]); here the steps are
//! checked and planned, and their outcomes shown as their tools show them.

use std::borrow::Cow;
use std::time::Instant;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use termpilot_tmux::{
    BatchOp, Keystrokes, PaneId, Scrollback, Step, StepDriver, StepOutcome, StepStatus, StepWork,
};
use tokio::sync::watch;

use super::batch::{OnError, OneHost, batch_pane, check_text_total, items, one_host, stopped_at};
use super::capture::{self, CapturePane, CapturePaneParams, CaptureSince, CaptureSinceParams};
use super::commands::{self, RunCommand, RunCommandParams};
use super::input::{
    self, PasteText, PasteTextParams, SendKeys, SendKeysParams, checked_input, refuse_nul,
};
use super::waits::{self, WaitForIdle, WaitForIdleParams, WaitForText, WaitForTextParams};
use crate::address::{self, Host};
use crate::approval::Piece;
use crate::catalog::{self, Effect, Nested, Outcome, Tool};
use crate::error::ToolResult;
use crate::server::{CallContext, Done, Reply, TermpilotServer};
use crate::toolset::Toolset;

type Result<T> = ToolResult<T>;

/// Token budget of a whole run_batch unless the caller gives one.
const RUN_BATCH_TOKENS: u32 = 4_000;

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
    /// The result in a few words, for the batch's text.
    #[serde(skip)]
    pub(crate) summary: String,
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

    /// Each step's pieces, from its arguments as its tool takes them.
    fn typed(arguments: &Value) -> Vec<Piece> {
        steps(arguments)
            .flat_map(|(_, op, step)| {
                let mut fields = step.as_object().cloned().unwrap_or_default();
                fields.remove("op");
                let step = Value::Object(fields);
                catalog::find(op).map_or_else(Vec::new, |spec| (spec.typed)(&step))
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

/// How a planned step's outcome is shown: its tool, and the budget and
/// scrollback its result is rendered with.
struct Shown {
    op: &'static str,
    max_tokens: Option<u32>,
    scrollback: Scrollback,
}

impl Shown {
    fn new(op: &'static str, max_tokens: Option<u32>) -> Shown {
        Shown {
            op,
            max_tokens,
            scrollback: Scrollback::None,
        }
    }
}

impl BatchStep {
    fn op(&self) -> &'static str {
        match self {
            BatchStep::SendKeys(_) => SendKeys::NAME,
            BatchStep::PasteText(_) => PasteText::NAME,
            BatchStep::WaitForText(_) => WaitForText::NAME,
            BatchStep::WaitForIdle(_) => WaitForIdle::NAME,
            BatchStep::CapturePane(_) => CapturePane::NAME,
            BatchStep::CaptureSince(_) => CaptureSince::NAME,
            BatchStep::RunCommand(_) => RunCommand::NAME,
        }
    }

    fn returns_text(&self) -> bool {
        !matches!(self, BatchStep::SendKeys(_) | BatchStep::PasteText(_))
    }

    /// The pane the step names.
    fn pane(&self) -> &str {
        match self {
            BatchStep::SendKeys(p) => &p.pane,
            BatchStep::PasteText(p) => &p.pane,
            BatchStep::WaitForText(p) => &p.pane,
            BatchStep::WaitForIdle(p) => &p.pane,
            BatchStep::CapturePane(p) => &p.pane,
            BatchStep::CaptureSince(p) => &p.pane,
            BatchStep::RunCommand(p) => &p.pane,
        }
    }

    fn text_len(&self) -> usize {
        match self {
            BatchStep::SendKeys(p) => p.text.as_ref().map_or(0, String::len),
            BatchStep::PasteText(p) => p.text.len(),
            _ => 0,
        }
    }
}

/// The engine's steps for `steps`, and how each is shown. Everything that
/// can be checked before a step runs is: a problem with keystrokes refuses
/// the whole batch (nothing is sent), a problem with another step fails
/// that step when its turn comes.
async fn plan(
    server: &TermpilotServer,
    batch: &OneHost,
    steps: Vec<BatchStep>,
    share: u32,
) -> Result<Vec<(Step, Shown)>> {
    let text_total = steps.iter().map(BatchStep::text_len).sum();
    let budget = |own: Option<u32>| Some(own.map_or(share, |own| own.min(share)));
    let at_least = |tokens: Option<u32>| tokens.map(|t| t.max(100));
    let mut planned = Vec::with_capacity(steps.len());
    for (index, step) in steps.into_iter().enumerate() {
        let op = step.op();
        let prefix = format!("steps[{index}].");
        let field = format!("{prefix}pane");
        let (step, shown) = match step {
            BatchStep::SendKeys(p) => {
                let keys = Keystrokes::Type(checked_input(&p, &prefix)?);
                let pane = batch_pane(server, batch, &p.pane, &field).await?;
                (Step::Keys(BatchOp { pane, keys }), Shown::new(op, None))
            }
            BatchStep::PasteText(p) => {
                refuse_nul(&format!("{prefix}text"), &p.text)?;
                let pane = batch_pane(server, batch, &p.pane, &field).await?;
                let keys = Keystrokes::Paste {
                    text: p.text,
                    bracketed: p.bracketed,
                    enter: p.enter,
                };
                (Step::Keys(BatchOp { pane, keys }), Shown::new(op, None))
            }
            BatchStep::WaitForText(p) => {
                let (wait, settle) = waits::text_wait(server, &p);
                let since = (p.since.as_deref())
                    .map(|s| address::step_cursor(server, &batch.host, s, index));
                let step = match since.transpose() {
                    Ok(since) => Step::WaitForText {
                        pane: p.pane,
                        wait,
                        since,
                        settle,
                    },
                    Err(error) => Step::Refused(error.into_engine()),
                };
                (step, Shown::new(op, budget(p.max_tokens)))
            }
            BatchStep::WaitForIdle(p) => {
                let idle = waits::idle_wait(server, &p);
                let step = Step::WaitForIdle {
                    pane: p.pane,
                    quiet: idle.quiet,
                    timeout: idle.timeout,
                    settle: idle.settle,
                };
                (step, Shown::new(op, None))
            }
            BatchStep::CapturePane(p) => {
                if p.format.is_some() {
                    return Err(crate::error::ToolError::refused(format!(
                        "{prefix}format: a batch returns text only; call capture_pane for a picture"
                    )));
                }
                let scrollback = capture::scrollback(p.scrollback);
                let shown = Shown {
                    scrollback,
                    ..Shown::new(op, at_least(budget(p.max_tokens)))
                };
                let step = Step::Capture {
                    pane: p.pane,
                    scrollback,
                };
                (step, shown)
            }
            BatchStep::CaptureSince(p) => {
                let step = match address::step_cursor(server, &batch.host, &p.cursor, index) {
                    Ok(since) => Step::CaptureSince {
                        pane: p.pane,
                        since,
                    },
                    Err(error) => Step::Refused(error.into_engine()),
                };
                (step, Shown::new(op, at_least(budget(p.max_tokens))))
            }
            BatchStep::RunCommand(p) => {
                let step = match commands::refuse_nul(&p.command) {
                    Ok(()) => Step::RunCommand {
                        pane: p.pane,
                        timeout: server.wait_time(p.timeout_s),
                        settle: crate::awaiting::settle(p.input_settle_ms),
                        command: p.command,
                    },
                    Err(error) => Step::Refused(error.into_engine()),
                };
                (step, Shown::new(op, at_least(budget(p.max_tokens))))
            }
        };
        planned.push((step, shown));
    }
    check_text_total(text_total)?;
    Ok(planned)
}

async fn run_batch(
    server: &TermpilotServer,
    params: RunBatchParams,
    call: &CallContext,
) -> Result<Done> {
    let started = Instant::now();
    let texts = params.steps.iter().filter(|s| s.returns_text()).count();
    let share = (params.max_tokens.unwrap_or(RUN_BATCH_TOKENS) / texts.max(1) as u32).max(100);
    let batch = one_host(server, params.steps.iter().map(BatchStep::pane)).await?;
    let (steps, shown): (Vec<Step>, Vec<Shown>) = plan(server, &batch, params.steps, share)
        .await?
        .into_iter()
        .unzip();
    let stop = params.on_error == OnError::Stop;
    let driver = Driver {
        server,
        batch: &batch,
        call,
    };
    let cancel = call.cancellation();
    let statuses = batch.engine.run_steps(steps, stop, &cancel, &driver).await;
    let entries = shown
        .into_iter()
        .zip(statuses)
        .enumerate()
        .map(|(index, (shown, status))| step_entry(server, &batch.host, index, shown, status))
        .collect();
    let entry = summary(entries, params.on_error, started);
    let text = batch_text(&entry);
    Done::new(&entry, text)
}

/// How a batch's steps are driven from an MCP call: panes resolved within
/// the operator's scope, progress reported on the batch's count of steps,
/// and the client's cancellation heeded.
struct Driver<'a> {
    server: &'a TermpilotServer,
    batch: &'a OneHost,
    call: &'a CallContext,
}

/// What a batch's progress messages say.
const RUNNING: &str = "running batch";

impl StepDriver for Driver<'_> {
    async fn resolve(&self, target: &str) -> termpilot_tmux::Result<PaneId> {
        let (_, target) = address::split(self.server, target);
        address::pane_on(self.server, &self.batch.engine, target).await
    }

    async fn step<T: Send>(
        &self,
        index: usize,
        total: usize,
        work: StepWork,
        run: impl Future<Output = termpilot_tmux::Result<T>> + Send,
    ) -> termpilot_tmux::Result<T> {
        // On the heap: a step's work (a whole run_command, a wait) is a
        // large future, and a batch nests it several levels deep.
        let running = Box::pin(self.call.run_work(&self.batch.host, work, Box::pin(run)));
        self.call.in_step(index, total, running).await
    }

    async fn keys<T: Send>(
        &self,
        total: usize,
        done: watch::Receiver<usize>,
        sending: impl Future<Output = T> + Send,
    ) -> T {
        self.call.run_counted(RUNNING, total, done, sending).await
    }

    async fn count(&self, done: usize, total: usize) {
        self.call.count(RUNNING, done, total).await;
    }
}

/// The error of a step that did not run.
const NOT_RUN: &str = "not run: the batch stopped before this step";

/// A step's entry: its result as its tool shows it, or why it failed or
/// did not run.
fn step_entry(
    server: &TermpilotServer,
    host: &Host,
    index: usize,
    shown: Shown,
    status: StepStatus,
) -> StepEntry {
    let entry = |error: Option<String>, result: Option<(Value, String)>, ran| {
        let (result, summary) = result.unzip();
        StepEntry {
            index,
            op: shown.op.to_owned(),
            ok: error.is_none() && ran,
            error,
            result,
            ran,
            summary: summary.unwrap_or_default(),
        }
    };
    match status {
        StepStatus::Skipped => entry(Some(NOT_RUN.to_owned()), None, false),
        StepStatus::Failed(error) => entry(Some(error.to_string()), None, true),
        StepStatus::Done { pane, outcome } => {
            match shown_result(server, host, &shown, pane, outcome) {
                Ok(result) => entry(None, Some(result), true),
                Err(error) => entry(Some(error.to_string()), None, true),
            }
        }
    }
}

/// A step's result exactly as its tool returns it, and a short text form.
fn shown_result(
    server: &TermpilotServer,
    host: &Host,
    shown: &Shown,
    pane: PaneId,
    outcome: StepOutcome,
) -> Result<(Value, String)> {
    let tokens = shown.max_tokens;
    match outcome {
        StepOutcome::Sent(cursor) => summed(input::sent(host, pane, cursor)),
        StepOutcome::Waited(report) => {
            summed(waits::wait_done(server, host, pane, report, tokens)?)
        }
        StepOutcome::Captured(capture) => summed(capture::captured(
            server,
            host,
            capture,
            shown.scrollback,
            tokens,
        )?),
        StepOutcome::Read(read) => summed(capture::read_since(server, host, pane, read, tokens)?),
        StepOutcome::Ran(report) => summed(commands::command_done(server, host, report, tokens)?),
    }
}

/// A result as a step shows it: its structured content, and its outcome
/// and its text, if any, in a few words.
fn summed<T: Serialize + StepSummary>(reply: Reply<T>) -> Result<(Value, String)> {
    let summary = reply.entry.summary();
    let done = reply.done()?;
    Ok((done.structured, summary))
}

/// A single tool's result in a batch's text.
trait StepSummary {
    /// Its outcome and its text, if any; else that it went well and where
    /// its cursor is.
    fn summary(&self) -> String;
}

/// The summary of a result with these outcome words, this text and this
/// cursor.
fn summary_of(parts: &[String], body: &str, cursor: &str) -> String {
    let mut out = parts.join(", ");
    if !body.is_empty() {
        out.push('\n');
        out.push_str(body);
    }
    if out.is_empty() {
        out = format!("ok, cursor {cursor}");
    }
    out
}

impl StepSummary for input::SentEntry {
    fn summary(&self) -> String {
        summary_of(&[], "", &self.cursor)
    }
}

impl StepSummary for waits::WaitEntry {
    fn summary(&self) -> String {
        summary_of(
            std::slice::from_ref(&self.outcome),
            &self.tail,
            &self.cursor,
        )
    }
}

impl StepSummary for capture::CaptureEntry {
    fn summary(&self) -> String {
        summary_of(&[], &self.text, &self.cursor)
    }
}

impl StepSummary for capture::SinceEntry {
    fn summary(&self) -> String {
        summary_of(&[], &self.text, &self.cursor)
    }
}

impl StepSummary for commands::CommandEntry {
    fn summary(&self) -> String {
        let code = match (&self.exit_code, &self.not_run) {
            (Some(code), _) => Some(format!("exit code {code}")),
            (None, Some(why)) => Some(format!("not run ({why})")),
            (None, None) if self.awaiting_input => Some(awaiting_words(self)),
            (None, None) => None,
        };
        summary_of(code.as_slice(), &self.output, &self.cursor)
    }
}

/// A command waiting for input in a few words: at which prompt, and
/// whether the terminal hides what is typed (answer with type_secret).
fn awaiting_words(entry: &commands::CommandEntry) -> String {
    let prompt = entry.prompt.as_deref().unwrap_or_default();
    let hidden = match entry.secret {
        Some(true) => ", secret",
        _ => "",
    };
    format!(
        "awaiting input at '{prompt}'{hidden}, command_id {}",
        entry.command_id.as_deref().unwrap_or_default()
    )
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
        match &step.error {
            Some(error) => text.push_str(error),
            None => text.push_str(&step.summary),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(exit_code: Option<i32>) -> commands::CommandEntry {
        commands::CommandEntry {
            pane: "%1".into(),
            exit_code,
            timed_out: false,
            interrupted: false,
            host_lost: false,
            ended_unseen: false,
            command_id: None,
            output: String::new(),
            truncated: false,
            total_lines: 0,
            output_id: None,
            lost_bytes: 0,
            elapsed_s: 0.5,
            cursor: "c1.0.1.2".into(),
            awaiting_input: false,
            prompt: None,
            secret: None,
            line_mode: None,
            program: None,
            alternate_screen: None,
            not_run: None,
        }
    }

    #[test]
    fn a_command_step_says_it_awaits_input_and_where() {
        let asked = commands::CommandEntry {
            awaiting_input: true,
            command_id: Some("tp1".into()),
            prompt: Some("Password: ".into()),
            secret: Some(true),
            output: "Password: ".into(),
            ..command(None)
        };
        let summary = asked.summary();
        let first = summary.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "awaiting input at 'Password: ', secret, command_id tp1"
        );
        assert_eq!(command(Some(0)).summary(), "exit code 0");
    }
}
