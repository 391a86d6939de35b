//! Part 4: how long after a program prints a line the `wait_for_text`
//! result reaches the MCP client.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use serde_json::json;

use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::{TERMPILOT, client_runtime, create_pane, structured_str};

const LAGS: usize = 50;
const LAG_WARMUP: usize = 3;
/// Bounds every wait, so a missed marker fails the run instead of stalling it.
const WAIT_TIMEOUT_S: u64 = 5;

/// How long the marker command sleeps before it prints: long enough that
/// the print happens well after the wait is registered, so what is measured
/// is the wake-up, not a scan of text already there.
const MARKER_DELAY: Duration = Duration::from_millis(50);

/// The command that prints the marker after `delay`. The timestamp is
/// bash's own `EPOCHREALTIME`, read in the same process just before the
/// builtin `printf` writes the line: no `date` start-up in between. The
/// echoed command line shows `WAKE-%s`, which the pattern cannot match.
pub fn marker_command(delay: Duration) -> String {
    let seconds = delay.as_secs_f64();
    format!(r#"sleep {seconds}; printf 'WAKE-%s\n' "${{EPOCHREALTIME//[!0-9]/}}""#)
}

pub fn wake_lag(server: &PrivateServer) -> anyhow::Result<Section> {
    let lag = client_runtime()?.block_on(measure(server))?;
    Ok(Section::new(
        "4. wait wake-up lag: line printed in a pane to wait_for_text result at client",
    )
    .row("wait_wake_lag", "printf in bash to result over stdio", lag)
    .note("target: median <= 5 ms (polling servers: ~43 ms, context only)"))
}

async fn measure(server: &PrivateServer) -> anyhow::Result<Summary> {
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let pane = create_pane(&mut client, json!({ "name": "bench-wake" })).await?;
    for _ in 0..LAG_WARMUP {
        one_lag(&mut client, &pane).await?;
    }
    let mut lags = Vec::with_capacity(LAGS);
    for _ in 0..LAGS {
        lags.push(one_lag(&mut client, &pane).await?);
    }
    client.close().await?;
    Ok(Summary::of(lags))
}

/// Types the marker command, waits for its line from the cursor `send_keys`
/// returned, and returns arrival time minus the time the line was printed.
pub(crate) async fn one_lag(client: &mut McpClient, pane: &str) -> anyhow::Result<Duration> {
    one_lag_after(client, pane, MARKER_DELAY).await
}

/// [`one_lag`] with a marker printed `delay` after its command line arrives,
/// for when calls take longer than usual to reach the pane.
pub async fn one_lag_after(
    client: &mut McpClient,
    pane: &str,
    delay: Duration,
) -> anyhow::Result<Duration> {
    let cursor = type_marker(client, pane, delay).await?;
    await_marker(client, pane, &cursor).await
}

/// Types the marker command; returns the cursor `send_keys` returned.
pub async fn type_marker(
    client: &mut McpClient,
    pane: &str,
    delay: Duration,
) -> anyhow::Result<String> {
    let keys = json!({ "pane": pane, "text": marker_command(delay), "enter": true });
    let sent = client.call_tool("send_keys", keys).await?;
    Ok(structured_str(&sent, "cursor")?.to_owned())
}

/// Waits for the marker's line from `cursor` on and returns arrival time
/// minus the time the line was printed.
pub async fn await_marker(
    client: &mut McpClient,
    pane: &str,
    cursor: &str,
) -> anyhow::Result<Duration> {
    let wait = json!({
        "pane": pane,
        "pattern": "WAKE-[0-9]+",
        "regex": true,
        "since": cursor,
        "timeout_s": WAIT_TIMEOUT_S,
    });
    let timeout = Duration::from_secs(WAIT_TIMEOUT_S + 5);
    let result = client
        .call_tool_within("wait_for_text", wait, timeout)
        .await?;
    let arrived = SystemTime::now().duration_since(UNIX_EPOCH)?;
    let outcome = structured_str(&result, "outcome")?;
    ensure!(
        outcome == "matched",
        "wait_for_text ended {outcome}: {result}"
    );
    let printed = printed_at(structured_str(&result, "matched")?)?;
    arrived
        .checked_sub(printed)
        .with_context(|| format!("the line was printed after it arrived: {result}"))
}

/// The time since the epoch in a `WAKE-<microseconds>` marker.
pub fn printed_at(matched: &str) -> anyhow::Result<Duration> {
    let digits = matched
        .strip_prefix("WAKE-")
        .with_context(|| format!("not a marker: {matched:?}"))?;
    // 16 digits: microseconds since 1970, as bash 5's EPOCHREALTIME gives.
    ensure!(
        digits.len() == 16,
        "the pane's shell gave no EPOCHREALTIME (bash 5 needed): {matched:?}"
    );
    Ok(Duration::from_micros(digits.parse()?))
}
