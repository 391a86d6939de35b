//! Part 7: how long after a `read -s` prompt appears a wait returns
//! `awaiting_input`, and what the detection costs a wait that follows a
//! flooding pane.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::{TERMPILOT, client_runtime, create_pane, structured_str};

const PROMPTS: usize = 10;
const FLOODS: usize = 3;
pub(crate) const SETTLE_MS: u64 = 300;
const WAIT_TIMEOUT_S: u64 = 30;

/// The prompt carries the time it was printed (bash's `EPOCHREALTIME`, in
/// microseconds), read back from the result's `prompt`.
pub(crate) const PROMPT_COMMAND: &str = r#"read -s -p "PW-${EPOCHREALTIME//[!0-9]/}: " pw"#;

/// The echoed command line shows `FLOOD''-DONE`, which the pattern cannot match.
const FLOOD_COMMAND: &str = "seq 1 1000000; echo FLOOD''-DONE";

pub fn awaiting_lag(server: &PrivateServer) -> anyhow::Result<Section> {
    let (lag, with, without) = client_runtime()?.block_on(measure(server))?;
    Ok(Section::new(
        "7. awaiting_input: read -s prompt printed to the wait's result; a flood followed",
    )
    .row(
        "awaiting_input_lag",
        format!("read -s prompt to awaiting_input result (settle {SETTLE_MS} ms)"),
        lag,
    )
    .row(
        "flood_wait_with_detection",
        "seq 1 1000000 followed by wait_for_text, detection on",
        with,
    )
    .row(
        "flood_wait_without_detection",
        "the same with input_settle_ms 0",
        without,
    )
    .note("target: lag under settle + 100 ms; no measurable change in the flood wait"))
}

async fn measure(server: &PrivateServer) -> anyhow::Result<(Summary, Summary, Summary)> {
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let pane = create_pane(&mut client, json!({ "name": "bench-awaiting" })).await?;
    let mut lags = Vec::with_capacity(PROMPTS);
    for _ in 0..PROMPTS {
        lags.push(one_prompt(&mut client, &pane).await?);
    }
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..FLOODS {
        with.push(one_flood(&mut client, &pane, SETTLE_MS).await?);
        without.push(one_flood(&mut client, &pane, 0).await?);
    }
    client.close().await?;
    Ok((Summary::of(lags), Summary::of(with), Summary::of(without)))
}

async fn wait(client: &mut McpClient, arguments: Value) -> anyhow::Result<Value> {
    let timeout = Duration::from_secs(WAIT_TIMEOUT_S + 5);
    client
        .call_tool_within("wait_for_text", arguments, timeout)
        .await
}

/// Types the prompt command, waits, answers the prompt; returns arrival
/// time minus the time the prompt was printed.
pub(crate) async fn one_prompt(client: &mut McpClient, pane: &str) -> anyhow::Result<Duration> {
    let keys = json!({ "pane": pane, "text": PROMPT_COMMAND, "enter": true });
    let sent = client.call_tool("send_keys", keys).await?;
    let cursor = structured_str(&sent, "cursor")?.to_owned();
    let arguments = json!({
        "pane": pane, "pattern": "tp-never-printed", "since": cursor,
        "timeout_s": WAIT_TIMEOUT_S, "input_settle_ms": SETTLE_MS,
    });
    let result = wait(client, arguments).await?;
    let arrived = SystemTime::now().duration_since(UNIX_EPOCH)?;
    let outcome = structured_str(&result, "outcome")?;
    ensure!(
        outcome == "awaiting_input",
        "the wait ended {outcome}: {result}"
    );
    let printed = printed_at(structured_str(&result, "prompt")?)?;
    let answer = json!({ "pane": pane, "text": "x", "enter": true });
    client.call_tool("send_keys", answer).await?;
    arrived
        .checked_sub(printed)
        .with_context(|| format!("the prompt was printed after the result: {result}"))
}

/// Floods the pane and follows it to its end marker; returns the call's time.
async fn one_flood(client: &mut McpClient, pane: &str, settle_ms: u64) -> anyhow::Result<Duration> {
    let keys = json!({ "pane": pane, "text": FLOOD_COMMAND, "enter": true });
    let sent = client.call_tool("send_keys", keys).await?;
    let cursor = structured_str(&sent, "cursor")?.to_owned();
    let started = Instant::now();
    let arguments = json!({
        "pane": pane, "pattern": "FLOOD-DONE", "since": cursor,
        "timeout_s": WAIT_TIMEOUT_S, "input_settle_ms": settle_ms,
    });
    let result = wait(client, arguments).await?;
    let outcome = structured_str(&result, "outcome")?;
    ensure!(
        outcome == "matched",
        "the flood wait ended {outcome}: {result}"
    );
    Ok(started.elapsed())
}

/// The time since the epoch in a `PW-<microseconds>: ` prompt.
pub(crate) fn printed_at(prompt: &str) -> anyhow::Result<Duration> {
    let digits = prompt
        .trim()
        .strip_prefix("PW-")
        .and_then(|rest| rest.strip_suffix(':'))
        .with_context(|| format!("not the benchmark's prompt: {prompt:?}"))?;
    ensure!(
        digits.len() == 16,
        "the pane's shell gave no EPOCHREALTIME: {prompt:?}"
    );
    Ok(Duration::from_micros(digits.parse()?))
}
