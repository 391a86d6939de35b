//! The optional `wait` of the input tools: one call types an answer and
//! returns what comes next (the command asking again or ending, a pattern,
//! the pane going quiet), from a cursor taken before the input, so nothing
//! the input caused is missed.

use schemars::JsonSchema;
use serde::Deserialize;
use termpilot_tmux::{Cursor, StepWork, TextWait, WorkKind};

use super::commands::command_done;
use super::input::SentEntry;
use super::waits::wait_done;
use crate::address::Pane;
use crate::error::{ToolError, ToolResult};
use crate::server::{CallContext, Done, Reply, TermpilotServer};

/// Then wait; result in `wait`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputWait {
    /// command: its run_command ends or asks; text: `pattern` (regex); idle.
    #[serde(rename = "for")]
    pub what: WaitFor,
    pub pattern: Option<String>,
    /// Default 30.
    pub timeout_s: Option<f64>,
}

/// What an input's wait waits for (no variant docs: they would cost the
/// schema a `oneOf`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum WaitFor {
    Command,
    Text,
    Idle,
}

/// How long the pane must print nothing for `idle`.
const QUIET: std::time::Duration = std::time::Duration::from_millis(500);

/// Checks a wait before anything is typed: a text wait needs its pattern.
pub(crate) fn check(wait: Option<&InputWait>) -> ToolResult<()> {
    match wait {
        Some(InputWait {
            what: WaitFor::Text,
            pattern: None,
            ..
        }) => Err(ToolError::refused(
            "wait.for \"text\" needs wait.pattern; nothing was typed",
        )),
        Some(InputWait {
            pattern: Some(pattern),
            ..
        }) if pattern.is_empty() || pattern.len() > 1024 => Err(ToolError::refused(
            "wait.pattern must have 1 to 1024 characters; nothing was typed",
        )),
        Some(InputWait {
            timeout_s: Some(timeout),
            ..
        }) if !(0.001..=86400.0).contains(timeout) => Err(ToolError::refused(
            "wait.timeout_s must be 0.001 to 86400; nothing was typed",
        )),
        _ => Ok(()),
    }
}

/// `sent`, the result of input typed at `cursor`, followed by the result
/// of `wait` when there is one: its text, and its entry as `wait`.
pub(crate) async fn then_wait(
    server: &TermpilotServer,
    call: &CallContext,
    pane: &Pane,
    cursor: Cursor,
    wait: Option<InputWait>,
    mut sent: Reply<SentEntry>,
) -> ToolResult<Done> {
    let Some(wait) = wait else {
        return sent.done();
    };
    let (entry, text) = waited(server, call, pane, cursor, &wait).await?;
    sent.entry.wait = entry.as_object().cloned();
    sent.text = text;
    sent.done()
}

/// Runs `wait` from `cursor`: its result as JSON, and its text.
pub(crate) async fn waited(
    server: &TermpilotServer,
    call: &CallContext,
    pane: &Pane,
    cursor: Cursor,
    wait: &InputWait,
) -> ToolResult<(serde_json::Value, String)> {
    let timeout = server.wait_time(wait.timeout_s);
    let settle = crate::awaiting::settle(None);
    let engine = &pane.engine;
    let command = match wait.what {
        WaitFor::Command => engine.command_in(pane.id),
        _ => None,
    };
    if let Some(id) = command {
        let what = format!("waiting for command {id}");
        let following = engine.wait_for_command_or_input(&id, timeout, settle);
        let report = call.run(&what, timeout, following).await??;
        return encoded(command_done(server, &pane.host, report, None)?);
    }
    let report = match (wait.what, &wait.pattern) {
        (WaitFor::Text, Some(pattern)) => {
            let spec = TextWait {
                patterns: vec![termpilot_tmux::Needle::Regex(pattern.clone())],
                stop: Vec::new(),
                match_case: true,
                since: Some(cursor),
                include_screen: false,
                timeout,
            };
            let waiting = engine.wait_for_text_or_input(pane.id, &spec, settle);
            call.run_work(
                &pane.host,
                work(WorkKind::WaitForText, pane, timeout),
                waiting,
            )
            .await?
        }
        // No command runs in the pane (or no pattern): wait for quiet.
        _ => {
            let waiting = engine.wait_for_idle_or_input(pane.id, QUIET, timeout, settle);
            call.run_work(
                &pane.host,
                work(WorkKind::WaitForIdle, pane, timeout),
                waiting,
            )
            .await?
        }
    };
    encoded(wait_done(server, &pane.host, pane.id, report, None)?)
}

/// The work a wait does, for a person watching the pane.
fn work(kind: WorkKind, pane: &Pane, timeout: std::time::Duration) -> StepWork {
    StepWork {
        kind,
        pane: pane.id,
        limit: Some(timeout),
    }
}

/// A reply as the JSON of its entry and its text.
fn encoded<T: serde::Serialize>(reply: Reply<T>) -> ToolResult<(serde_json::Value, String)> {
    let value = serde_json::to_value(&reply.entry)
        .map_err(|e| ToolError::Failed(format!("cannot encode the result: {e}")))?;
    Ok((value, reply.text))
}
