//! Waiting for panes: `wait_for_text` and `wait_for_idle` (channels are
//! in `channels`).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_tmux::{
    Cursor, Needle, Outcome as WaitOutcome, PlannedStep, StepWork, TextWait, WaitReport, WorkKind,
};

use super::batch_step::{
    HandsCursor, PlannedBatchStep, StepPlace, StepSummary, StepTool, summary_of,
};
use super::params::pane_params;
use crate::address::{Host, pane};
use crate::awaiting::InputFields;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::ToolResult;
use crate::server::{CallContext, Done, Reply, TermpilotServer};
use crate::toolset::Toolset;

type Result<T> = ToolResult<T>;

/// Tokens for a wait's tail unless the caller says otherwise.
const TAIL_TOKENS: u32 = 300;

fn yes() -> bool {
    true
}

/// `wait_for_text`.
pub(crate) struct WaitForText;

/// One pattern or several.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single pattern.
    One(#[schemars(length(min = 1, max = 1024))] String),
    /// Several patterns; any of them counts.
    Many(#[schemars(length(min = 1, max = 32))] Vec<PatternText>),
}

/// One pattern.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct PatternText(#[schemars(length(min = 1, max = 1024))] pub String);

impl OneOrMany {
    /// The patterns as a list.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(text) => vec![text],
            OneOrMany::Many(list) => list.into_iter().map(|p| p.0).collect(),
        }
    }
}

pane_params! {
    /// Arguments of `wait_for_text`.
    pub struct WaitForTextParams {
        /// Text, or a list of alternatives; matched within one line.
        pub pattern: OneOrMany,
        /// Patterns are Rust regexes.
        #[serde(default)]
        pub regex: bool,
        /// Case-sensitive.
        #[serde(default = "yes")]
        pub match_case: bool,
        /// Cursor to scan from (default: now); pass the one send_keys returned.
        #[schemars(length(min = 1, max = 64))]
        pub since: Option<String>,
        /// Patterns that end the wait as "stopped", e.g. "error:".
        pub stop: Option<OneOrMany>,
        /// Also match the screen as it is when the wait starts.
        #[serde(default)]
        pub include_screen: bool,
        ..timeout_s,
        ..input_settle_ms,
        /// Budget of the returned tail (default 300).
        #[schemars(range(min = 50, max = 100000))]
        pub max_tokens: Option<u32>,
    }
}

/// Result of `wait_for_text` and `wait_for_idle`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WaitEntry {
    /// The pane id.
    pub pane: String,
    /// "matched", "stopped", "timeout", "pane_exited", "server_exited" (the tmux server
    /// went away), "host_lost" (the connection to the pane's host dropped), "lost" (output the wait needed was dropped), "idle" (wait_for_idle),
    /// "cancelled_by_user" (a person at the pane cancelled the wait with termpilot attach),
    /// or "awaiting_input" (the program waits for input: answer with send_keys,
    /// type_secret when secret, or ask your person).
    pub outcome: String,
    /// The matched text.
    pub matched: Option<String>,
    /// The whole line the match is on.
    pub line: Option<String>,
    /// Which pattern (or stop pattern) matched, counted from 0.
    pub pattern_index: Option<usize>,
    /// The match was on the screen when the wait started (include_screen).
    pub on_screen: bool,
    /// Seconds the wait took.
    pub elapsed_s: f64,
    /// Cursor just after the matched line (or after what was read): pass it as `since`
    /// to continue from here.
    pub cursor: String,
    /// Bytes of output between the baseline and the cursor that were lost.
    pub lost_bytes: u64,
    /// The last lines of output since the wait's baseline; for a full-screen
    /// program (alternate_screen), the last lines of its screen.
    pub tail: String,
    /// A full-screen program is on the alternate screen (matching sees the text it draws,
    /// which may be split by cursor movement; prefer include_screen there).
    pub alternate_screen: bool,
    /// The pane is in copy mode: the program keeps running and printing, but the screen
    /// shown is frozen.
    pub in_mode: bool,
    /// What waits for input, for "awaiting_input" (described there).
    #[serde(flatten)]
    pub input: InputFields,
}

impl Tool for WaitForText {
    const NAME: &'static str = "wait_for_text";
    const TITLE: &'static str = "Wait for text in a pane";
    const DESCRIPTION: &'static str = "Wait until a pane prints a text or regex, scanning \
        every byte after `since` (nothing that scrolled past is missed; the echo of typed input \
        does not count). Ends early with awaiting_input.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = WaitForTextParams;
    type Output = WaitEntry;

    async fn call(
        server: &TermpilotServer,
        params: WaitForTextParams,
        call: &CallContext,
    ) -> Outcome {
        wait_for_text(server, params, call).await
    }
}

impl StepTool for WaitForText {
    type StepParams = WaitForTextParams;

    fn target(params: &WaitForTextParams) -> &str {
        &params.pane
    }

    async fn plan<'a>(
        params: WaitForTextParams,
        at: &StepPlace<'a>,
    ) -> Result<PlannedBatchStep<'a>> {
        let (wait, settle) = text_wait(at.server, &params);
        let since = match params.since.as_deref().map(|s| at.cursor(s)).transpose() {
            Ok(since) => since,
            Err(error) => return Ok(PlannedStep::Refused(error.into_engine())),
        };
        let tokens = at.budget(params.max_tokens);
        let work = (WorkKind::WaitForText, Some(wait.timeout));
        Ok(at.job(
            params.pane,
            since,
            work,
            move |engine, pane, since| async move {
                let wait = TextWait { since, ..wait };
                engine.wait_for_text_or_input(pane, &wait, settle).await
            },
            move |server, host, pane, report| wait_done(server, host, pane, report, tokens),
        ))
    }
}

impl StepSummary for WaitEntry {
    fn summary(&self) -> String {
        summary_of(
            std::slice::from_ref(&self.outcome),
            &self.tail,
            &self.cursor,
        )
    }
}

impl HandsCursor for WaitReport {
    fn cursor(&self) -> Cursor {
        self.cursor
    }
}

fn needles(patterns: Vec<String>, regex: bool) -> Vec<Needle> {
    patterns
        .into_iter()
        .map(|p| {
            if regex {
                Needle::Regex(p)
            } else {
                Needle::Literal(p)
            }
        })
        .collect()
}

fn outcome_name(outcome: WaitOutcome) -> &'static str {
    match outcome {
        WaitOutcome::Matched => "matched",
        WaitOutcome::Stopped => "stopped",
        WaitOutcome::Timeout => "timeout",
        WaitOutcome::PaneExited => "pane_exited",
        WaitOutcome::ServerExited => "server_exited",
        WaitOutcome::HostLost => "host_lost",
        WaitOutcome::Lost => "lost",
        WaitOutcome::Idle => "idle",
        WaitOutcome::CancelledByUser => "cancelled_by_user",
        WaitOutcome::AwaitingInput => "awaiting_input",
    }
}

pub(crate) async fn wait_for_text(
    server: &TermpilotServer,
    params: WaitForTextParams,
    call: &CallContext,
) -> Result<Done> {
    let pane = pane(server, &params.pane).await?;
    let since = (params.since.as_deref())
        .map(|since| pane.cursor(server, since))
        .transpose()?;
    let (mut wait, settle) = text_wait(server, &params);
    wait.since = since;
    let work = StepWork {
        kind: WorkKind::WaitForText,
        pane: pane.id,
        limit: Some(wait.timeout),
    };
    let waiting = pane.engine.wait_for_text_or_input(pane.id, &wait, settle);
    let report = call.run_work(&pane.host, work, waiting).await?;
    wait_done(server, &pane.host, pane.id, report, params.max_tokens)?.done()
}

/// What `wait_for_text` arguments wait for (from now: `since` is left to
/// the caller), and the settle time of their input detection.
pub(crate) fn text_wait(
    server: &TermpilotServer,
    params: &WaitForTextParams,
) -> (TextWait, Duration) {
    let wait = TextWait {
        patterns: needles(params.pattern.clone().into_vec(), params.regex),
        stop: needles(
            params
                .stop
                .clone()
                .map(OneOrMany::into_vec)
                .unwrap_or_default(),
            params.regex,
        ),
        match_case: params.match_case,
        since: None,
        include_screen: params.include_screen,
        timeout: server.wait_time(params.timeout_s),
    };
    (wait, crate::awaiting::settle(params.input_settle_ms))
}

/// `wait_for_idle`.
pub(crate) struct WaitForIdle;

pane_params! {
    /// Arguments of `wait_for_idle`.
    pub struct WaitForIdleParams {
        /// Milliseconds of silence (default 500).
        #[schemars(range(min = 10, max = 600000))]
        pub quiet_ms: Option<u64>,
        ..timeout_s,
        ..input_settle_ms,
    }
}

impl Tool for WaitForIdle {
    const NAME: &'static str = "wait_for_idle";
    const TITLE: &'static str = "Wait for a pane to go quiet";
    const DESCRIPTION: &'static str = "Wait until a pane prints nothing for `quiet_ms`, when its \
        last output is unknown (an installer); else prefer wait_for_text. Ends early with \
        awaiting_input.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = WaitForIdleParams;
    type Output = WaitEntry;

    async fn call(
        server: &TermpilotServer,
        params: WaitForIdleParams,
        call: &CallContext,
    ) -> Outcome {
        wait_for_idle(server, params, call).await
    }
}

impl StepTool for WaitForIdle {
    type StepParams = WaitForIdleParams;

    fn target(params: &WaitForIdleParams) -> &str {
        &params.pane
    }

    /// Its result's tail has the single tool's budget.
    async fn plan<'a>(
        params: WaitForIdleParams,
        at: &StepPlace<'a>,
    ) -> Result<PlannedBatchStep<'a>> {
        let idle = idle_wait(at.server, &params);
        Ok(at.job(
            params.pane,
            None,
            (WorkKind::WaitForIdle, Some(idle.timeout)),
            move |engine, pane, _| {
                engine.wait_for_idle_or_input(pane, idle.quiet, idle.timeout, idle.settle)
            },
            |server, host, pane, report| wait_done(server, host, pane, report, None),
        ))
    }
}

pub(crate) async fn wait_for_idle(
    server: &TermpilotServer,
    params: WaitForIdleParams,
    call: &CallContext,
) -> Result<Done> {
    let pane = pane(server, &params.pane).await?;
    let idle = idle_wait(server, &params);
    let work = StepWork {
        kind: WorkKind::WaitForIdle,
        pane: pane.id,
        limit: Some(idle.timeout),
    };
    let waiting =
        (pane.engine).wait_for_idle_or_input(pane.id, idle.quiet, idle.timeout, idle.settle);
    let report = call.run_work(&pane.host, work, waiting).await?;
    wait_done(server, &pane.host, pane.id, report, None)?.done()
}

/// What `wait_for_idle` arguments ask for.
pub(crate) struct IdleWait {
    /// How long the pane must print nothing.
    pub(crate) quiet: Duration,
    /// How long to wait.
    pub(crate) timeout: Duration,
    /// The settle time of input detection.
    pub(crate) settle: Duration,
}

/// The wait `wait_for_idle` arguments ask for.
pub(crate) fn idle_wait(server: &TermpilotServer, params: &WaitForIdleParams) -> IdleWait {
    IdleWait {
        quiet: Duration::from_millis(params.quiet_ms.unwrap_or(500)),
        timeout: server.wait_time(params.timeout_s),
        settle: crate::awaiting::settle(params.input_settle_ms),
    }
}

pub(crate) fn wait_done(
    server: &TermpilotServer,
    host: &Host,
    pane: termpilot_tmux::PaneId,
    report: WaitReport,
    max_tokens: Option<u32>,
) -> Result<Reply<WaitEntry>> {
    let budget = server.budget(max_tokens, Some(TAIL_TOKENS));
    let tail = server.fit_text(&report.tail.join("\n"), &budget)?;
    let found = report.found.as_ref();
    let entry = WaitEntry {
        pane: host.qualify(pane),
        outcome: outcome_name(report.outcome).to_owned(),
        matched: found.map(|f| f.text.clone()),
        line: found.map(|f| f.line.clone()),
        pattern_index: found.map(|f| f.index),
        on_screen: found.is_some_and(|f| f.on_screen),
        elapsed_s: report.elapsed.as_secs_f64(),
        cursor: host.qualify(report.cursor),
        lost_bytes: report.lost_bytes,
        tail: tail.text,
        alternate_screen: report.alternate_screen,
        in_mode: report.in_mode,
        input: InputFields::new(report.input.as_ref()),
    };
    let mut text = format!("{} in {:.1} s", entry.outcome, entry.elapsed_s);
    if let Some(input) = &report.input {
        let screen = report.alternate_screen;
        text.push_str(&format!(" {}", crate::awaiting::describe(input, screen)));
    }
    if let Some(line) = &entry.line {
        text.push_str(&format!(": {line}"));
    }
    if entry.lost_bytes > 0 {
        text.push_str(&format!(
            " ({} bytes of output were lost)",
            entry.lost_bytes
        ));
    }
    if entry.alternate_screen && report.input.is_none() {
        text.push_str(" [screen]");
    }
    if entry.in_mode {
        text.push_str(" [pane in copy mode]");
    }
    text.push_str(&format!("\ncursor {}", entry.cursor));
    // The matched line alone is the tail when nothing came after it.
    if entry.tail.trim() != entry.line.as_deref().unwrap_or_default().trim() {
        text.push('\n');
        text.push_str(&entry.tail);
    }
    Ok(Reply { entry, text })
}
