//! Part 5: what following a flooding pane costs the program that floods:
//! `seq 1 1000000` timed inside the pane, with termpilot's control client
//! attached (every byte streamed to it and journaled) and on a server with
//! no client at all.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::json;

use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::{TERMPILOT, client_runtime, create_pane, run_tmux, structured_str};

const RUNS: usize = 3;
/// Bounds each run; `seq` takes a second or two here.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the unfollowed pane's screen is read while waiting for the result.
const POLL: Duration = Duration::from_millis(100);
/// Both panes get this size, so tmux does the same work drawing either.
const WIDTH: u16 = 160;
const HEIGHT: u16 = 48;

/// The timed command for run `run`. It prints `DUR-<run> <nanoseconds>`;
/// its echoed command line shows `DUR-<run> $((`, which matches no result.
fn flood_command(run: usize) -> String {
    format!(
        r#"s=$(date +%s%N); seq 1 1000000; e=$(date +%s%N); echo "DUR-{run} $((e-s))""#
    )
}

/// `plain` is a server that nothing but this benchmark's subprocesses talks to.
pub fn flood(server: &PrivateServer, plain: &PrivateServer) -> anyhow::Result<Section> {
    ensure!(
        pane_size(plain)? == (WIDTH, HEIGHT),
        "the unfollowed pane is not {WIDTH}x{HEIGHT}"
    );
    let (followed, unfollowed) = client_runtime()?.block_on(measure(server, plain))?;
    Ok(
        Section::new("5. `seq 1 1000000` in a 160x48 pane, timed inside the pane")
            .row(
                "flood_followed",
                "termpilot following the pane",
                followed,
            )
            .row(
                "flood_unfollowed",
                "no client attached to the server",
                unfollowed,
            )
            .ratio(
                "flood_followed_vs_unfollowed",
                "following vs not: times slower",
                unfollowed.times_faster_than(&followed),
            )
            .note("target: following at most 1.5x slower, by median"),
    )
}

/// Alternates the two cases, so a drift in machine load hits both alike.
async fn measure(
    server: &PrivateServer,
    plain: &PrivateServer,
) -> anyhow::Result<(Summary, Summary)> {
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let session = json!({ "name": "bench-flood", "width": WIDTH, "height": HEIGHT });
    let pane = create_pane(&mut client, session).await?;
    ensure!(
        followed_size(&mut client, &pane).await? == (WIDTH, HEIGHT),
        "the followed pane is not {WIDTH}x{HEIGHT}"
    );
    let (mut followed, mut unfollowed) = (Vec::new(), Vec::new());
    for run in 1..=RUNS {
        followed.push(run_followed(&mut client, &pane, run).await?);
        unfollowed.push(run_unfollowed(plain, run)?);
    }
    client.close().await?;
    Ok((Summary::of(followed), Summary::of(unfollowed)))
}

/// Types the command and collects its result with `wait_for_text` from the
/// cursor `send_keys` returned: termpilot follows every byte in between.
async fn run_followed(client: &mut McpClient, pane: &str, run: usize) -> anyhow::Result<Duration> {
    let keys = json!({ "pane": pane, "text": flood_command(run), "enter": true });
    let sent = client.call_tool("send_keys", keys).await?;
    let wait = json!({
        "pane": pane,
        "pattern": format!("DUR-{run} [0-9]+"),
        "regex": true,
        "since": structured_str(&sent, "cursor")?,
        "timeout_s": RUN_TIMEOUT.as_secs(),
    });
    let timeout = RUN_TIMEOUT + Duration::from_secs(5);
    let result = client.call_tool_within("wait_for_text", wait, timeout).await?;
    let outcome = structured_str(&result, "outcome")?;
    ensure!(outcome == "matched", "wait_for_text ended {outcome}: {result}");
    let matched = structured_str(&result, "matched")?;
    duration_in(matched, run).with_context(|| format!("no duration in {matched:?}"))
}

/// Types the command with `tmux send-keys` and reads the result off the
/// screen with `tmux capture-pane`, the only clients this server ever sees.
fn run_unfollowed(plain: &PrivateServer, run: usize) -> anyhow::Result<Duration> {
    let command = flood_command(run);
    run_tmux(plain, &["send-keys", "-t", "main", "-l", &command])?;
    run_tmux(plain, &["send-keys", "-t", "main", "Enter"])?;
    let deadline = Instant::now() + RUN_TIMEOUT;
    loop {
        let screen = String::from_utf8(run_tmux(plain, &["capture-pane", "-p", "-t", "main"])?)?;
        if let Some(duration) = screen.lines().find_map(|line| duration_in(line, run)) {
            return Ok(duration);
        }
        if Instant::now() >= deadline {
            bail!("no DUR-{run} line within {RUN_TIMEOUT:?}:\n{screen}");
        }
        thread::sleep(POLL);
    }
}

/// The duration in a `DUR-<run> <nanoseconds>` line.
fn duration_in(line: &str, run: usize) -> Option<Duration> {
    let digits = line.trim().strip_prefix(&format!("DUR-{run} "))?;
    digits.parse().ok().map(Duration::from_nanos)
}

fn pane_size(plain: &PrivateServer) -> anyhow::Result<(u16, u16)> {
    let format = "#{pane_width} #{pane_height}";
    let size = String::from_utf8(run_tmux(plain, &["display-message", "-p", "-t", "main", format])?)?;
    let (width, height) = size.trim().split_once(' ').context("no pane size")?;
    Ok((width.parse()?, height.parse()?))
}

async fn followed_size(client: &mut McpClient, pane: &str) -> anyhow::Result<(u16, u16)> {
    let listed = client.call_tool("list_panes", json!({})).await?;
    let entries = listed["structuredContent"]["panes"].as_array();
    let entry = entries
        .into_iter()
        .flatten()
        .find(|entry| entry["id"] == pane)
        .with_context(|| format!("list_panes does not show {pane}: {listed}"))?;
    let dimension = |key: &str| {
        entry[key]
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .with_context(|| format!("no {key} in {entry}"))
    };
    Ok((dimension("width")?, dimension("height")?))
}
