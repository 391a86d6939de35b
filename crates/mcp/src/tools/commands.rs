//! Running shell commands: `run_command`, and `wait_for_command` to pick
//! one up again.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use termpilot_tmux::{CommandEnd, CommandReport, Cursor, NotRun, PlannedStep, StepWork, WorkKind};

use super::batch_step::{
    HandsCursor, PlannedBatchStep, StepPlace, StepSummary, StepTool, summary_of,
};
use super::params::{pane_params, tool_params};
use crate::address::{self, Host, pane};
use crate::approval::Piece;
use crate::awaiting::InputFields;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::server::{CallContext, Done, Reply, TermpilotServer};
use crate::toolset::Toolset;

type Result<T> = ToolResult<T>;

/// Tokens of a command's output unless the caller says otherwise (or the
/// server's default is lower): about one screen, head and tail. Measured
/// with `tests/e2e/bench_tasks.py`: a 5,000-line build log costs an agent
/// this much and still shows its first lines and the error at its end;
/// the rest is one read_output away.
const OUTPUT_TOKENS: u32 = 400;

/// `run_command`.
pub(crate) struct RunCommand;

pane_params! {
    /// Arguments of `run_command`.
    pub struct RunCommandParams {
        /// Command line, as typed at the prompt.
        #[schemars(length(min = 1, max = 16384))]
        pub command: String,
        ..timeout_s,
        ..input_settle_ms,
        ..max_tokens(400),
    }
}

/// Result of `run_command` and `wait_for_command`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommandEntry {
    /// The pane id.
    pub pane: String,
    /// The exit code; null while the command is still running, or when it
    /// was interrupted.
    pub exit_code: Option<i32>,
    /// The command did not finish in time; it keeps running.
    pub timed_out: bool,
    /// The command ended without reporting its exit code, as after a C-c: its
    /// shell is idle at its prompt again, or took another run_command.
    pub interrupted: bool,
    /// The connection to the pane's host dropped: the command may still run there; call
    /// wait_for_command with command_id (it connects again).
    pub host_lost: bool,
    /// The command ended while the connection to the pane's host was down: its shell is
    /// idle at its prompt again, but its exit code and the output it printed meanwhile are
    /// not known (output holds what arrived before the drop); capture_pane shows the screen.
    pub ended_unseen: bool,
    /// Give this to wait_for_command to pick up a command that timed out.
    pub command_id: Option<String>,
    /// The command's own output (no prompt, no echoed command line), cut to budget; after an
    /// awaiting_input result, from the line that result ended on. A full-screen program
    /// waiting for input shows as its screen (shown again: the rows that changed); its
    /// drawing is left out of output, with a line naming it ("[vim: full screen]").
    pub output: String,
    /// Whether output was left out.
    pub truncated: bool,
    /// Lines of output in full.
    pub total_lines: usize,
    /// Id of the full output when it was cut, for read_output.
    pub output_id: Option<String>,
    /// Bytes of the command's output that are gone because it printed more
    /// than the pane's journal keeps (`--journal-mb`): the output then holds
    /// its head and its tail, with a line between them saying how much is lost.
    pub lost_bytes: u64,
    /// Seconds since the command was typed.
    pub elapsed_s: f64,
    /// Cursor just after the command's output.
    pub cursor: String,
    /// The command waits for input (it keeps running; answer it with send_keys or
    /// type_secret, then call wait_for_command with command_id).
    pub awaiting_input: bool,
    /// What waits for input, for "awaiting_input" (described there).
    #[serde(flatten)]
    pub input: InputFields,
    /// For "awaiting_input": a full-screen program (a pager, an editor) is on the
    /// alternate screen; capture_pane shows what it draws.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alternate_screen: Option<bool>,
    /// Set when the shell ran none of the command line: "syntax_error" (it could not parse
    /// it; output holds its message) or "incomplete" (an unfinished line: an unclosed
    /// quote, bracket, block or here-document; the prompt is back).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

impl Tool for RunCommand {
    const NAME: &'static str = "run_command";
    const TITLE: &'static str = "Run a shell command";
    const DESCRIPTION: &'static str = "Run a command line in a pane's shell (cd and export \
        persist); return its exit code and own output (no prompt, no echo). Needs a shell at \
        its prompt. On timeout it keeps running: wait_for_command takes the command_id. Ends \
        early with not_run (a rejected or unfinished line) or awaiting_input.";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Runs;
    type Params = RunCommandParams;
    type Output = CommandEntry;

    async fn call(
        server: &TermpilotServer,
        params: RunCommandParams,
        call: &CallContext,
    ) -> Outcome {
        run_command(server, params, call).await
    }

    fn typed(arguments: &Value) -> Vec<Piece> {
        let command = Piece::field(arguments, "command");
        Piece::of(arguments, command, true)
    }
}

impl StepTool for RunCommand {
    type StepParams = RunCommandParams;

    fn target(params: &RunCommandParams) -> &str {
        &params.pane
    }

    async fn plan<'a>(
        params: RunCommandParams,
        at: &StepPlace<'a>,
    ) -> Result<PlannedBatchStep<'a>> {
        if let Err(error) = refuse_nul(&params.command) {
            return Ok(PlannedStep::Refused(error.into_engine()));
        }
        let timeout = at.server.wait_time(params.timeout_s);
        let settle = crate::awaiting::settle(params.input_settle_ms);
        let tokens = at.text_budget(params.max_tokens);
        let command = params.command;
        Ok(at.job(
            params.pane,
            None,
            (WorkKind::RunCommand, Some(timeout)),
            move |engine, pane, _| async move {
                (engine.run_command_or_input(pane, &command, timeout, settle)).await
            },
            move |server, host, _, report| command_done(server, host, report, tokens),
        ))
    }
}

impl StepSummary for CommandEntry {
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

impl HandsCursor for CommandReport {
    fn cursor(&self) -> Cursor {
        self.cursor
    }
}

/// A command waiting for input in a few words: at which prompt, and
/// whether the terminal hides what is typed (answer with type_secret).
fn awaiting_words(entry: &CommandEntry) -> String {
    let prompt = entry.input.prompt.as_deref().unwrap_or_default();
    let hidden = match entry.input.secret {
        Some(true) => ", secret",
        _ => "",
    };
    format!(
        "awaiting input at '{prompt}'{hidden}, command_id {}",
        entry.command_id.as_deref().unwrap_or_default()
    )
}

pub(crate) async fn run_command(
    server: &TermpilotServer,
    params: RunCommandParams,
    call: &CallContext,
) -> Result<Done> {
    refuse_nul(&params.command)?;
    let pane = pane(server, &params.pane).await?;
    let timeout = server.wait_time(params.timeout_s);
    let settle = crate::awaiting::settle(params.input_settle_ms);
    let work = StepWork {
        kind: WorkKind::RunCommand,
        pane: pane.id,
        limit: Some(timeout),
    };
    let running = (pane.engine).run_command_or_input(pane.id, &params.command, timeout, settle);
    let report = call.run_work(&pane.host, work, running).await?;
    command_done(server, &pane.host, report, params.max_tokens)?.done()
}

/// Refuses a command line with a NUL character (a shell cannot take it).
pub(crate) fn refuse_nul(command: &str) -> Result<()> {
    match command.contains('\0') {
        true => Err(ToolError::refused("command contains a NUL character")),
        false => Ok(()),
    }
}

/// `wait_for_command`.
pub(crate) struct WaitForCommand;

tool_params! {
    /// Arguments of `wait_for_command`.
    pub struct WaitForCommandParams {
        /// From a timed-out run_command.
        #[schemars(length(min = 1, max = 64))]
        pub command_id: String,
        ..timeout_s,
        ..input_settle_ms,
        ..max_tokens(400),
    }
}

impl Tool for WaitForCommand {
    const NAME: &'static str = "wait_for_command";
    const TITLE: &'static str = "Wait for a running command";
    const DESCRIPTION: &'static str = "Keep waiting for a command run_command left running; \
        return its exit code and output, or interrupted after a C-c.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = WaitForCommandParams;
    type Output = CommandEntry;

    async fn call(
        server: &TermpilotServer,
        params: WaitForCommandParams,
        call: &CallContext,
    ) -> Outcome {
        wait_for_command(server, params, call).await
    }
}

pub(crate) async fn wait_for_command(
    server: &TermpilotServer,
    params: WaitForCommandParams,
    call: &CallContext,
) -> Result<Done> {
    let timeout = server.wait_time(params.timeout_s);
    let what = format!("waiting for command {}", params.command_id);
    let (host, id) = address::split(server, &params.command_id);
    let engine = host.engine(server).await?;
    let report = call
        .run(
            &what,
            timeout,
            engine.wait_for_command_or_input(
                id,
                timeout,
                crate::awaiting::settle(params.input_settle_ms),
            ),
        )
        .await??;
    command_done(server, &host, report, params.max_tokens)?.done()
}

pub(crate) fn command_done(
    server: &TermpilotServer,
    host: &Host,
    report: CommandReport,
    max_tokens: Option<u32>,
) -> Result<Reply<CommandEntry>> {
    let default = OUTPUT_TOKENS.min(server.options.default_max_tokens);
    let budget = server.budget(max_tokens, Some(default));
    let output = server.fit_text(&report.output, &budget)?;
    let not_run = match report.end {
        CommandEnd::NotRun(NotRun::SyntaxError) => Some("syntax_error"),
        CommandEnd::NotRun(NotRun::Incomplete) => Some("incomplete"),
        _ => None,
    };
    let entry = CommandEntry {
        pane: host.qualify(report.pane),
        exit_code: report.exit_code(),
        timed_out: report.end == CommandEnd::Running,
        interrupted: report.end == CommandEnd::Interrupted,
        host_lost: report.end == CommandEnd::HostLost,
        ended_unseen: report.end == CommandEnd::EndedUnseen,
        command_id: (report.still_running()).then(|| address::command_id(host, &report.id)),
        output: output.text.clone(),
        truncated: output.truncated,
        total_lines: output.total_lines,
        output_id: output.output_id.clone(),
        lost_bytes: report.lost_bytes,
        elapsed_s: report.elapsed.as_secs_f64(),
        cursor: host.qualify(report.cursor),
        awaiting_input: report.input().is_some(),
        input: InputFields::new(report.input()),
        alternate_screen: report.input().map(|input| input.alternate_screen),
        not_run: not_run.map(str::to_owned),
    };
    let status = command_status(host, &report, &entry);
    let text = match entry.output.is_empty() {
        true => status,
        false => format!("{status}\n{}", entry.output),
    };
    Ok(Reply { entry, text })
}

/// The first line of a command result's text: the outcome in few words.
/// Only an outcome that needs the caller to do something unusual says
/// what; the rest is in the server's instructions.
fn command_status(host: &Host, report: &CommandReport, entry: &CommandEntry) -> String {
    let elapsed = entry.elapsed_s;
    // The id once per command: the caller has it from then on.
    let id = |id: &str| match report.id_given {
        true => String::new(),
        false => format!("; command_id {id}"),
    };
    let command = entry.command_id.as_deref().unwrap_or_default();
    match &report.end {
        CommandEnd::HostLost => format!(
            "host {} lost after {elapsed:.1} s; the command may still run there: \
             wait_for_command {command} connects again",
            host.name()
        ),
        CommandEnd::AwaitingInput(input) => format!(
            "awaiting input {}{}",
            crate::awaiting::describe(input, report.screen),
            id(command)
        ),
        CommandEnd::Exited(code) => format!("exit {code} in {elapsed:.1} s"),
        CommandEnd::EndedUnseen => format!(
            "ended while the connection to host {} was down: exit code and output printed \
             meanwhile unknown \
             (below: what came before); capture_pane shows the screen",
            host.name()
        ),
        CommandEnd::NotRun(NotRun::SyntaxError) => "not run: the shell could not parse it:".into(),
        CommandEnd::NotRun(NotRun::Incomplete) => {
            "not run: unfinished line (unclosed quote, bracket or here-document?); \
             termpilot pressed C-c"
                .into()
        }
        CommandEnd::Running => format!("running after {elapsed:.1} s{}", id(command)),
        CommandEnd::Interrupted => format!("interrupted after {elapsed:.1} s"),
    }
}
