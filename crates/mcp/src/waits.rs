//! The tools that wait: for text, for quiet, for a channel, for a command.

use std::time::Instant;

use termpilot_tmux::{
    ChannelOutcome, CommandReport, Needle, Outcome, TextWait, WaitReport, hide_wrappers,
};

use crate::handlers::{cursor_offset, engine_error, pane};
use crate::params::*;
use crate::results::*;
use crate::server::{CallContext, Done, TermpilotServer};

type Result<T> = std::result::Result<T, String>;

/// Tokens for a wait's tail unless the caller says otherwise.
const TAIL_TOKENS: u32 = 300;

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

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Matched => "matched",
        Outcome::Stopped => "stopped",
        Outcome::Timeout => "timeout",
        Outcome::PaneExited => "pane_exited",
        Outcome::ServerExited => "server_exited",
        Outcome::HostLost => "host_lost",
        Outcome::Lost => "lost",
        Outcome::Idle => "idle",
        Outcome::CancelledByUser => "cancelled_by_user",
        Outcome::AwaitingInput => "awaiting_input",
    }
}

pub(crate) async fn wait_for_text(
    server: &TermpilotServer,
    params: WaitForTextParams,
    call: &CallContext,
) -> Result<Done> {
    let pane = pane(server, &params.pane).await?;
    let since = match &params.since {
        Some(cursor) => Some(cursor_offset(server, pane, cursor)?),
        None => None,
    };
    let spec = TextWait {
        patterns: needles(params.pattern.into_vec(), params.regex),
        stop: needles(
            params.stop.map(OneOrMany::into_vec).unwrap_or_default(),
            params.regex,
        ),
        match_case: params.match_case,
        since,
        include_screen: params.include_screen,
        timeout: server.wait_time(params.timeout_s),
    };
    let what = format!("waiting for text in {pane}");
    let settle = crate::awaiting::settle(params.input_settle_ms);
    let report = call
        .run(
            &what,
            spec.timeout,
            server.engine.wait_for_text_or_input(pane, &spec, settle),
        )
        .await?
        .map_err(engine_error)?;
    wait_done(server, pane, report, params.max_tokens)
}

pub(crate) async fn wait_for_idle(
    server: &TermpilotServer,
    params: WaitForIdleParams,
    call: &CallContext,
) -> Result<Done> {
    let pane = pane(server, &params.pane).await?;
    let quiet = std::time::Duration::from_millis(params.quiet_ms.unwrap_or(500));
    let timeout = server.wait_time(params.timeout_s);
    let what = format!("waiting for {pane} to go quiet");
    let settle = crate::awaiting::settle(params.input_settle_ms);
    let report = call
        .run(
            &what,
            timeout,
            server
                .engine
                .wait_for_idle_or_input(pane, quiet, timeout, settle),
        )
        .await?
        .map_err(engine_error)?;
    wait_done(server, pane, report, None)
}

fn wait_done(
    server: &TermpilotServer,
    pane: termpilot_tmux::PaneId,
    report: WaitReport,
    max_tokens: Option<u32>,
) -> Result<Done> {
    let budget = server.budget(max_tokens, Some(TAIL_TOKENS));
    let tail = report.tail.join("\n");
    let tail = server.fit_text(&hide_wrappers(&tail), &budget)?;
    let found = report.found.as_ref();
    let input = crate::awaiting::InputFields::new(report.input.as_ref());
    let entry = WaitEntry {
        pane: pane.to_string(),
        outcome: outcome_name(report.outcome).to_owned(),
        matched: found.map(|f| f.text.clone()),
        line: found.map(|f| f.line.clone()),
        pattern_index: found.map(|f| f.index),
        on_screen: found.is_some_and(|f| f.on_screen),
        elapsed_s: report.elapsed.as_secs_f64(),
        cursor: server.cursor(pane, report.cursor),
        lost_bytes: report.lost_bytes,
        tail: tail.text,
        alternate_screen: report.alternate_screen,
        in_mode: report.in_mode,
        prompt: input.prompt,
        secret: input.secret,
        line_mode: input.line_mode,
        program: input.program,
    };
    let mut text = format!("{} after {:.3} s", entry.outcome, entry.elapsed_s);
    if let Some(input) = &report.input {
        text.push_str(&crate::awaiting::describe(input));
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
    if entry.alternate_screen {
        text.push_str(" [full-screen program]");
    }
    if entry.in_mode {
        text.push_str(" [pane in copy mode]");
    }
    text.push_str(&format!(
        "\ncursor {}\n--- last output ---\n{}",
        entry.cursor, entry.tail
    ));
    Done::new(&entry, text)
}

pub(crate) async fn wait_for_channel(
    server: &TermpilotServer,
    params: WaitForChannelParams,
    call: &CallContext,
) -> Result<Done> {
    let started = Instant::now();
    let timeout = server.wait_time(params.timeout_s);
    let what = format!("waiting for channel {}", params.channel);
    let outcome = call
        .run(
            &what,
            timeout,
            server.engine.wait_for_channel(&params.channel, timeout),
        )
        .await?
        .map_err(engine_error)?;
    let outcome = match outcome {
        ChannelOutcome::Signalled => "signalled",
        ChannelOutcome::Timeout => "timeout",
        ChannelOutcome::ServerExited => "server_exited",
    };
    channel_done(params.channel, outcome, started)
}

pub(crate) async fn signal_channel(
    server: &TermpilotServer,
    params: SignalChannelParams,
) -> Result<Done> {
    let started = Instant::now();
    server
        .engine
        .signal_channel(&params.channel)
        .await
        .map_err(engine_error)?;
    channel_done(params.channel, "sent", started)
}

fn channel_done(channel: String, outcome: &str, started: Instant) -> Result<Done> {
    let entry = ChannelEntry {
        channel,
        outcome: outcome.to_owned(),
        elapsed_s: started.elapsed().as_secs_f64(),
    };
    let text = format!("channel {}: {}", entry.channel, entry.outcome);
    Done::new(&entry, text)
}

pub(crate) async fn run_command(
    server: &TermpilotServer,
    params: RunCommandParams,
    call: &CallContext,
) -> Result<Done> {
    if params.command.contains('\0') {
        return Err("command contains a NUL character".into());
    }
    let pane = pane(server, &params.pane).await?;
    let timeout = server.wait_time(params.timeout_s);
    let what = format!("running a command in {pane}");
    let report = call
        .run(
            &what,
            timeout,
            server.engine.run_command_or_input(
                pane,
                &params.command,
                timeout,
                crate::awaiting::settle(params.input_settle_ms),
            ),
        )
        .await?
        .map_err(engine_error)?;
    command_done(server, report, params.max_tokens)
}

pub(crate) async fn wait_for_command(
    server: &TermpilotServer,
    params: WaitForCommandParams,
    call: &CallContext,
) -> Result<Done> {
    let timeout = server.wait_time(params.timeout_s);
    let what = format!("waiting for command {}", params.command_id);
    let report = call
        .run(
            &what,
            timeout,
            server.engine.wait_for_command_or_input(
                &params.command_id,
                timeout,
                crate::awaiting::settle(params.input_settle_ms),
            ),
        )
        .await?
        .map_err(engine_error)?;
    command_done(server, report, params.max_tokens)
}

fn command_done(
    server: &TermpilotServer,
    report: CommandReport,
    max_tokens: Option<u32>,
) -> Result<Done> {
    let budget = server.budget(max_tokens, None);
    let output = server.fit_text(&report.output, &budget)?;
    let awaiting = report.input.is_some();
    let timed_out = report.exit_code.is_none() && !report.interrupted && !awaiting;
    let input = crate::awaiting::InputFields::new(report.input.as_ref());
    let entry = CommandEntry {
        pane: report.pane.to_string(),
        exit_code: report.exit_code,
        timed_out,
        interrupted: report.interrupted,
        command_id: (timed_out || awaiting).then(|| report.id.clone()),
        output: output.text.clone(),
        truncated: output.truncated,
        total_lines: output.total_lines,
        output_id: output.output_id.clone(),
        lost_bytes: report.lost_bytes,
        elapsed_s: report.elapsed.as_secs_f64(),
        cursor: server.cursor(report.pane, report.cursor),
        awaiting_input: awaiting,
        prompt: input.prompt,
        secret: input.secret,
        line_mode: input.line_mode,
        program: input.program,
    };
    let status = match (entry.exit_code, &entry.command_id) {
        (None, Some(id)) if let Some(input) = &report.input => format!(
            "awaiting input after {:.3} s{}; answer it, then call wait_for_command with \
             command_id {id}",
            entry.elapsed_s,
            crate::awaiting::describe(input)
        ),
        (Some(code), _) => format!("exit code {code} after {:.3} s", entry.elapsed_s),
        (None, Some(id)) => format!(
            "still running after {:.3} s; call wait_for_command with command_id {id}",
            entry.elapsed_s
        ),
        (None, None) => format!(
            "interrupted after {:.3} s: the shell went back to its prompt without the \
             command's exit code (a C-c?) and took the next command",
            entry.elapsed_s
        ),
    };
    Done::new(&entry, format!("{status}\n{}", entry.output))
}
