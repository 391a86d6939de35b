//! `run_batch`: a pipeline of steps, each one of the single tools, run by
//! the engine ([`termpilot_tmux::Engine::run_steps`]). The tools a step may
//! call are listed once, in `step_tools!` below; each says in its own module
//! how its arguments become a step ([`StepTool`]). Here the steps are parsed
//! and planned, and their results gathered.

use std::borrow::Cow;
use std::time::Instant;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use termpilot_tmux::{PaneId, StepDriver, StepStatus, StepWork};
use tokio::sync::watch;

use super::batch::{OnError, OneHost, check_text_total, items, one_host, stopped_at};
use super::batch_step::{
    JobReply, PlannedBatchStep, ShownResult, StepPlace, StepTool, shown_result,
};
use super::capture::{CapturePane, CaptureSince};
use super::commands::RunCommand;
use super::input::{self, PasteText, SendKeys};
use super::waits::{WaitForIdle, WaitForText};
use crate::address::{self, Host};
use crate::approval::Piece;
use crate::catalog::{self, Effect, Nested, Outcome, Tool};
use crate::error::ToolResult;
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

type Result<T> = ToolResult<T>;

/// Token budget of a whole run_batch unless the caller gives one.
const RUN_BATCH_TOKENS: u32 = 4_000;

/// `run_batch`.
pub(crate) struct RunBatch;

/// Declares the tools a step may call, each a [`StepTool`]: the enum of a
/// step's arguments by tool ([`StepArgs`]), its parser and what the batch
/// asks of any step.
macro_rules! step_tools {
    ($($tool:ident),+ $(,)?) => {
        /// One step of `run_batch`: `op` names the tool, the other fields are
        /// that tool's arguments. In `since` (wait_for_text) and `cursor`
        /// (capture_since), "$prev" means the cursor of the latest earlier step
        /// that returned one, and "$N" the cursor of step N (counted from 0).
        ///
        /// Its published schema only names the tools (one `oneOf` variant per
        /// `op`): a step's arguments are those of its tool, published once in
        /// that tool's schema and checked against it at run time.
        #[derive(Debug)]
        pub enum StepArgs {
            $(
                #[doc = concat!("Arguments of the step tool `", stringify!($tool), "`.")]
                $tool(<$tool as StepTool>::StepParams),
            )+
        }

        impl StepArgs {
            /// The tools a step may call, as `op` names them.
            pub const OPS: &'static [&'static str] = &[$($tool::NAME),+];

            /// The arguments of a step calling `op`; `None` when no step
            /// tool has that name.
            fn parse(op: &str, arguments: Value) -> Option<serde_json::Result<StepArgs>> {
                match op {
                    $($tool::NAME => Some(serde_json::from_value(arguments).map(StepArgs::$tool)),)+
                    _ => None,
                }
            }

            /// The tool, as `op` names it.
            fn op(&self) -> &'static str {
                match self {
                    $(StepArgs::$tool(_) => $tool::NAME,)+
                }
            }

            /// Whether the tool's result carries text.
            fn returns_text(&self) -> bool {
                match self {
                    $(StepArgs::$tool(_) => $tool::RETURNS_TEXT,)+
                }
            }

            /// The pane target the step names.
            fn target(&self) -> &str {
                match self {
                    $(StepArgs::$tool(params) => $tool::target(params),)+
                }
            }

            /// Bytes of text the step types.
            fn typed_len(&self) -> usize {
                match self {
                    $(StepArgs::$tool(params) => $tool::typed_len(params),)+
                }
            }

            /// The engine's step.
            async fn plan<'a>(self, at: &StepPlace<'a>) -> Result<PlannedBatchStep<'a>> {
                match self {
                    $(StepArgs::$tool(params) => $tool::plan(params, at).await,)+
                }
            }
        }
    };
}

step_tools! {
    SendKeys,
    PasteText,
    WaitForText,
    WaitForIdle,
    CapturePane,
    CaptureSince,
    RunCommand,
}

impl<'de> Deserialize<'de> for StepArgs {
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
        match StepArgs::parse(&op, Value::Object(fields)) {
            Some(step) => step.map_err(D::Error::custom),
            None => Err(D::Error::unknown_variant(&op, StepArgs::OPS)),
        }
    }
}

impl JsonSchema for StepArgs {
    fn schema_name() -> Cow<'static, str> {
        "BatchStep".into()
    }

    /// One variant per tool, tagged by `op` as serde reads it.
    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let variants: Vec<Schema> = StepArgs::OPS
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
    pub steps: Vec<StepArgs>,
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
            StepArgs::OPS.contains(&op).then_some((index, op, step))
        })
}

/// The engine's steps for `steps`. Everything that can be checked before a
/// step runs is: a problem with keystrokes refuses the whole batch (nothing
/// is sent), a problem with another step fails that step when its turn
/// comes.
async fn plan<'a>(
    server: &'a TermpilotServer,
    batch: &'a OneHost,
    steps: Vec<StepArgs>,
    share: u32,
) -> Result<Vec<PlannedBatchStep<'a>>> {
    let text_total = steps.iter().map(StepArgs::typed_len).sum();
    let mut planned = Vec::with_capacity(steps.len());
    for (index, step) in steps.into_iter().enumerate() {
        let at = StepPlace {
            server,
            batch,
            index,
            share,
        };
        planned.push(step.plan(&at).await?);
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
    let batch = one_host(server, params.steps.iter().map(StepArgs::target)).await?;
    let ops: Vec<&'static str> = params.steps.iter().map(StepArgs::op).collect();
    let steps = plan(server, &batch, params.steps, share).await?;
    let stop = params.on_error == OnError::Stop;
    let driver = Driver {
        server,
        batch: &batch,
        call,
    };
    let cancel = call.cancellation();
    let statuses = batch.engine.run_steps(steps, stop, &cancel, &driver).await;
    let entries = ops
        .into_iter()
        .zip(statuses)
        .enumerate()
        .map(|(index, (op, status))| step_entry(&batch.host, index, op, status))
        .collect();
    let entry = batch_entry(entries, params.on_error, started);
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

    async fn job<T: Send>(
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
fn step_entry(host: &Host, index: usize, op: &str, status: StepStatus<JobReply>) -> StepEntry {
    let (error, shown, ran) = match status {
        StepStatus::Skipped => (Some(NOT_RUN.to_owned()), None, false),
        StepStatus::Failed(error) => (Some(error.to_string()), None, true),
        StepStatus::Sent { pane, cursor } => {
            shown_or_error(shown_result(input::sent(host, pane, cursor)))
        }
        StepStatus::Done { result, .. } => shown_or_error(result.shown),
    };
    let (result, summary) = shown.map(|s| (s.structured, s.summary)).unzip();
    StepEntry {
        index,
        op: op.to_owned(),
        ok: error.is_none() && ran,
        error,
        result,
        ran,
        summary: summary.unwrap_or_default(),
    }
}

/// A step that ran: its error, or its result as shown.
fn shown_or_error(shown: Result<ShownResult>) -> (Option<String>, Option<ShownResult>, bool) {
    match shown {
        Ok(shown) => (None, Some(shown), true),
        Err(error) => (Some(error.to_string()), None, true),
    }
}

/// The batch's result from its steps' entries.
fn batch_entry(steps: Vec<StepEntry>, on_error: OnError, started: Instant) -> RunBatchEntry {
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
    use super::super::batch_step::StepSummary;
    use super::super::commands;
    use crate::awaiting::InputFields;

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
            input: InputFields::default(),
            alternate_screen: None,
            not_run: None,
        }
    }

    #[test]
    fn a_command_step_says_it_awaits_input_and_where() {
        let asked = commands::CommandEntry {
            awaiting_input: true,
            command_id: Some("tp1".into()),
            input: InputFields {
                prompt: Some("Password: ".into()),
                secret: Some(true),
                ..InputFields::default()
            },
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
