//! A tool that also works as a step of `run_batch` ([`StepTool`]): what a
//! step's arguments name and type, and how they become the engine's step
//! ([`termpilot_tmux::PlannedStep`]) whose result shows exactly as the tool
//! shows it. A tool implements it in its own module; `run_batch` lists the
//! tools that do, one line each (`step_tools!`).

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use termpilot_tmux::{
    Cursor, CursorRef, Engine, JobResult, Keystrokes, PaneId, PlannedStep, StepJob, WorkKind,
};

use super::batch::{OneHost, batch_pane};
use crate::address::{self, Host};
use crate::catalog::Tool;
use crate::error::ToolResult;
use crate::server::{Reply, TermpilotServer};

/// A tool that also works as a `run_batch` step.
pub(crate) trait StepTool: Tool {
    /// Its arguments as a step takes them (unknown fields refused).
    type StepParams: DeserializeOwned + Debug + Send;
    /// Whether its result carries text, which gets a share of the batch's
    /// token budget.
    const RETURNS_TEXT: bool = true;

    /// The pane target its arguments name.
    fn target(params: &Self::StepParams) -> &str;

    /// Bytes of text it types, counted against the batch's limit.
    fn typed_len(_params: &Self::StepParams) -> usize {
        0
    }

    /// The engine's step for these arguments, everything that can be
    /// checked before the batch runs checked: an error refuses the whole
    /// batch (nothing is sent); a step that fails alone when its turn comes
    /// is [`PlannedStep::Refused`].
    fn plan<'a>(
        params: Self::StepParams,
        at: &StepPlace<'a>,
    ) -> impl Future<Output = ToolResult<PlannedBatchStep<'a>>> + Send;
}

/// A step as `run_batch` hands it to the engine.
pub(crate) type PlannedBatchStep<'a> = PlannedStep<'a, JobReply>;

/// A step's result as the batch shows it.
#[derive(Debug)]
pub(crate) struct ShownResult {
    /// The tool's structured result, exactly as the single tool returns it.
    pub(crate) structured: Value,
    /// The result in a few words, for the batch's text.
    pub(crate) summary: String,
}

/// What a job left: the cursor it returned (for later steps' `$prev` and
/// `$N`), and its result as shown, or why it could not be shown.
#[derive(Debug)]
pub(crate) struct JobReply {
    cursor: Cursor,
    /// The result as shown.
    pub(crate) shown: ToolResult<ShownResult>,
}

impl JobResult for JobReply {
    fn cursor(&self) -> Cursor {
        self.cursor
    }
}

/// What the engine's work for a step returns, as far as later steps need
/// it: the cursor it hands on (for `$prev` and `$N`). Implemented beside
/// the tool that runs the work.
pub(crate) trait HandsCursor {
    /// Where a later step may start.
    fn cursor(&self) -> Cursor;
}

/// A single tool's result in a batch's text.
pub(crate) trait StepSummary {
    /// Its outcome and its text, if any; else that it went well and where
    /// its cursor is.
    fn summary(&self) -> String;
}

/// The summary of a result with these outcome words, this text and this
/// cursor.
pub(crate) fn summary_of(parts: &[String], body: &str, cursor: &str) -> String {
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

/// A tool's reply as a step shows it.
pub(crate) fn shown_result<T: Serialize + StepSummary>(reply: Reply<T>) -> ToolResult<ShownResult> {
    let summary = reply.entry.summary();
    let done = reply.done()?;
    Ok(ShownResult {
        structured: done.structured,
        summary,
    })
}

/// Where a step is planned: its batch, its place in it and its share of
/// the batch's token budget.
pub(crate) struct StepPlace<'a> {
    /// The server.
    pub(crate) server: &'a TermpilotServer,
    /// The batch's host and engine.
    pub(crate) batch: &'a OneHost,
    /// The step's index, from 0.
    pub(crate) index: usize,
    /// Tokens each step that returns text may use at most.
    pub(crate) share: u32,
}

impl<'a> StepPlace<'a> {
    /// The name of the step's argument `name` in errors: `steps[3].text`.
    pub(crate) fn field(&self, name: &str) -> String {
        format!("{}{name}", self.prefix())
    }

    /// What the step's argument names start with in errors: `steps[3].`.
    pub(crate) fn prefix(&self) -> String {
        format!("steps[{}].", self.index)
    }

    /// The step's token budget: its own `max_tokens` within its share.
    pub(crate) fn budget(&self, own: Option<u32>) -> Option<u32> {
        Some(own.map_or(self.share, |own| own.min(self.share)))
    }

    /// As [`Self::budget`], at least 100 tokens (what a capture takes).
    pub(crate) fn text_budget(&self, own: Option<u32>) -> Option<u32> {
        self.budget(own).map(|tokens| tokens.max(100))
    }

    /// The cursor a step's `since` or `cursor` names.
    pub(crate) fn cursor(&self, text: &str) -> ToolResult<CursorRef> {
        address::step_cursor(self.server, &self.batch.host, text, self.index)
    }

    /// A keystroke step into the pane `target` names. A target that names
    /// no pane fails this step alone; another problem with it refuses the
    /// batch.
    pub(crate) async fn keys(
        &self,
        target: &str,
        keys: Keystrokes,
    ) -> ToolResult<PlannedBatchStep<'a>> {
        let pane = batch_pane(self.server, self.batch, target, &self.field("pane")).await?;
        Ok(PlannedStep::Keys(termpilot_tmux::BatchOp { pane, keys }))
    }

    /// A job on the pane `target` names, from `since`: `run` does its work
    /// once the engine resolved its pane and cursor, and `show` turns what it
    /// produced into the tool's result. `kind` and `limit` say what the work
    /// is and how long it may take, for progress reports.
    pub(crate) fn job<V, T, Work>(
        &self,
        target: String,
        since: Option<CursorRef>,
        (kind, limit): (WorkKind, Option<Duration>),
        run: impl FnOnce(&'a Engine, PaneId, Option<Cursor>) -> Work + Send + 'a,
        show: impl FnOnce(&'a TermpilotServer, &'a Host, PaneId, V) -> ToolResult<Reply<T>> + Send + 'a,
    ) -> PlannedBatchStep<'a>
    where
        Work: Future<Output = termpilot_tmux::Result<V>> + Send + 'a,
        V: HandsCursor,
        T: Serialize + StepSummary,
    {
        let (server, batch) = (self.server, self.batch);
        PlannedStep::Job(StepJob {
            pane: target,
            since,
            kind,
            limit,
            run: Box::new(move |pane, since| {
                Box::pin(async move {
                    let produced = run(&batch.engine, pane, since).await?;
                    let cursor = produced.cursor();
                    let shown = show(server, &batch.host, pane, produced).and_then(shown_result);
                    Ok(JobReply { cursor, shown })
                })
            }),
        })
    }
}
