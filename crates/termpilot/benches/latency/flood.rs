//! Part 5: what following a flooding pane costs the program that floods:
//! `seq 1 1000000` timed inside the pane, with termpilot's control client
//! attached (every byte streamed to it and journaled) and on a server with
//! no client at all. A third case, a bare `tmux -C` client whose output goes
//! to /dev/null, shows how much of the cost is tmux's own streaming.

use std::path::Path;
use std::process::{Child, Stdio};
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

/// The timed command, tagged so that each run's result line is its own. It
/// prints `DUR-<tag> <nanoseconds>`; its echoed command line shows
/// `DUR-<tag> $((`, which matches no result.
fn flood_command(tag: &str) -> String {
    format!(r#"s=$(date +%s%N); seq 1 1000000; e=$(date +%s%N); echo "DUR-{tag} $((e-s))""#)
}

/// The in-pane times of each case.
struct Cases {
    followed: Summary,
    bare: Summary,
    unfollowed: Summary,
}

/// `plain` is a server that only this benchmark's subprocesses talk to.
pub fn flood(server: &PrivateServer, plain: &PrivateServer) -> anyhow::Result<Section> {
    ensure!(
        pane_size(plain)? == (WIDTH, HEIGHT),
        "the unfollowed pane is not {WIDTH}x{HEIGHT}"
    );
    let cases = client_runtime()?.block_on(measure(server, plain))?;
    let slower = |summary: &Summary| cases.unfollowed.times_faster_than(summary);
    Ok(
        Section::new("5. `seq 1 1000000` in a 160x48 pane, timed inside the pane")
            .row(
                "flood_followed",
                "termpilot following the pane",
                cases.followed,
            )
            .row(
                "flood_bare_control_client",
                "floor: bare `tmux -C` client into /dev/null",
                cases.bare,
            )
            .row(
                "flood_unfollowed",
                "no client attached to the server",
                cases.unfollowed,
            )
            .ratio(
                "flood_followed_vs_unfollowed",
                "termpilot following vs none: times slower",
                slower(&cases.followed),
            )
            .ratio(
                "flood_bare_vs_unfollowed",
                "bare control client vs none: times slower",
                slower(&cases.bare),
            )
            .note("target: termpilot following at most 1.5x slower, by median"),
    )
}

/// Takes turns between the cases, so a drift in machine load hits all alike.
async fn measure(server: &PrivateServer, plain: &PrivateServer) -> anyhow::Result<Cases> {
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let session = json!({ "name": "bench-flood", "width": WIDTH, "height": HEIGHT });
    let pane = create_pane(&mut client, session).await?;
    ensure!(
        followed_size(&mut client, &pane).await? == (WIDTH, HEIGHT),
        "the followed pane is not {WIDTH}x{HEIGHT}"
    );
    let (mut followed, mut bare, mut unfollowed) = (Vec::new(), Vec::new(), Vec::new());
    for run in 1..=RUNS {
        followed.push(run_followed(&mut client, &pane, &format!("F{run}")).await?);
        let control = BareControlClient::attach(plain)?;
        ensure!(
            pane_size(plain)? == (WIDTH, HEIGHT),
            "the control client resized the pane"
        );
        bare.push(run_unfollowed(plain, &format!("B{run}"))?);
        control.detach()?;
        unfollowed.push(run_unfollowed(plain, &format!("U{run}"))?);
    }
    client.close().await?;
    Ok(Cases {
        followed: Summary::of(followed),
        bare: Summary::of(bare),
        unfollowed: Summary::of(unfollowed),
    })
}

/// Types the command and collects its result with `wait_for_text` from the
/// cursor `send_keys` returned: termpilot follows every byte in between.
pub async fn run_followed(
    client: &mut McpClient,
    pane: &str,
    tag: &str,
) -> anyhow::Result<Duration> {
    let keys = json!({ "pane": pane, "text": flood_command(tag), "enter": true });
    let sent = client.call_tool("send_keys", keys).await?;
    let wait = json!({
        "pane": pane,
        "pattern": format!("DUR-{tag} [0-9]+"),
        "regex": true,
        "since": structured_str(&sent, "cursor")?,
        "timeout_s": RUN_TIMEOUT.as_secs(),
    });
    let timeout = RUN_TIMEOUT + Duration::from_secs(5);
    let result = client
        .call_tool_within("wait_for_text", wait, timeout)
        .await?;
    let outcome = structured_str(&result, "outcome")?;
    ensure!(
        outcome == "matched",
        "wait_for_text ended {outcome}: {result}"
    );
    let matched = structured_str(&result, "matched")?;
    duration_in(matched, tag).with_context(|| format!("no duration in {matched:?}"))
}

/// Types the command with `tmux send-keys` and reads the result off the
/// screen with `tmux capture-pane`: short-lived clients that stream nothing.
fn run_unfollowed(plain: &PrivateServer, tag: &str) -> anyhow::Result<Duration> {
    let command = flood_command(tag);
    run_tmux(plain, &["send-keys", "-t", "main", "-l", &command])?;
    run_tmux(plain, &["send-keys", "-t", "main", "Enter"])?;
    let deadline = Instant::now() + RUN_TIMEOUT;
    loop {
        let screen = String::from_utf8(run_tmux(plain, &["capture-pane", "-p", "-t", "main"])?)?;
        if let Some(duration) = screen.lines().find_map(|line| duration_in(line, tag)) {
            return Ok(duration);
        }
        if Instant::now() >= deadline {
            bail!("no DUR-{tag} line within {RUN_TIMEOUT:?}:\n{screen}");
        }
        thread::sleep(POLL);
    }
}

/// The duration in a `DUR-<tag> <nanoseconds>` line.
fn duration_in(line: &str, tag: &str) -> Option<Duration> {
    let digits = line.trim().strip_prefix(&format!("DUR-{tag} "))?;
    digits.parse().ok().map(Duration::from_nanos)
}

fn pane_size(plain: &PrivateServer) -> anyhow::Result<(u16, u16)> {
    let format = "#{pane_width} #{pane_height}";
    let size = String::from_utf8(run_tmux(
        plain,
        &["display-message", "-p", "-t", "main", format],
    )?)?;
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

/// `tmux -C attach` to the plain server's session, its output thrown away as
/// fast as tmux writes it: the least any control-mode follower can cost.
/// Killed when dropped, should [`BareControlClient::detach`] not be reached.
struct BareControlClient {
    child: Child,
}

impl BareControlClient {
    /// Attaches, and returns once tmux lists the client.
    fn attach(plain: &PrivateServer) -> anyhow::Result<BareControlClient> {
        let child = plain
            .tmux()
            .args(["-C", "attach-session", "-t", "main"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run tmux -C")?;
        let client = BareControlClient { child };
        let deadline = Instant::now() + Duration::from_secs(3);
        while !has_control_client(plain)? {
            ensure!(Instant::now() < deadline, "tmux -C did not attach");
            thread::sleep(Duration::from_millis(5));
        }
        Ok(client)
    }

    /// Closes its stdin, which ends a control client, and waits for it.
    fn detach(mut self) -> anyhow::Result<()> {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.child.try_wait()?.is_none() {
            ensure!(Instant::now() < deadline, "tmux -C did not exit");
            thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }
}

impl Drop for BareControlClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Whether a control client is attached to the plain server.
fn has_control_client(plain: &PrivateServer) -> anyhow::Result<bool> {
    let clients = run_tmux(plain, &["list-clients", "-F", "#{client_control_mode}"])?;
    Ok(String::from_utf8(clients)?.lines().any(|line| line == "1"))
}
