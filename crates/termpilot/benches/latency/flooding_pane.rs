//! Part 10: commands to a pane that floods output itself, the pane being
//! the only flood and then one of 20.
//!
//! `send_keys ["C-c"]` to a pane running `yes`: how long the call takes,
//! and how long from the call until the `yes` process is gone (the key
//! landed; read from `/proc`, which no tmux backlog delays). `capture_pane`
//! of the flooding pane. The tmux CLI (`tmux send-keys`, `tmux
//! capture-pane`, one process per call) in the same moments is the
//! reference; its samples alternate with termpilot's.
//!
//! The other 19 floods run in sessions of their own, created through
//! termpilot, so it follows every byte, half of them `yes`, half numbers.
//! They stop while termpilot still reads (see `neighbour_flood`).
//!
//! A call or landing over [`LIMIT`] counts as [`LIMIT`] (a note says how
//! many). `TP_BENCH_TERMPILOT=PATH` measures another build of `termpilot`
//! (an earlier one, to compare); `TP_BENCH_SAMPLES=N` takes N samples of
//! each figure instead of 10.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::{TERMPILOT, client_runtime, create_pane, run_tmux};

const OTHER_FLOODS: usize = 19;
const SAMPLES: usize = 10;
const WARMUP: usize = 1;
/// How long `yes` runs before its C-c, so a backlog builds.
const RAMP: Duration = Duration::from_secs(2);
/// The longest a call or a landing may take: a longer one counts as this
/// long (and the landing is forced with the tmux CLI).
const LIMIT: Duration = Duration::from_secs(60);
const TARGET_SESSION: &str = "bench-flooding";

/// What one phase measures.
struct Figures {
    keys_call: Summary,
    keys_landed: Summary,
    capture: Summary,
    cli_keys_call: Summary,
    cli_keys_landed: Summary,
    cli_capture: Summary,
    /// termpilot calls and landings that took longer than [`LIMIT`].
    timeouts: usize,
}

pub fn flooding_pane(server: &PrivateServer) -> anyhow::Result<Section> {
    let pid_file = std::env::temp_dir().join(format!("tp-bench-{}-yes.pid", std::process::id()));
    let measured = client_runtime()?.block_on(measure(server, &pid_file));
    let _ = std::fs::remove_file(&pid_file);
    let (one, twenty) = measured?;
    let mut section = Section::new(format!(
        "10. commands to a pane that floods output (`yes`); termpilot: {}",
        termpilot_binary().display()
    ));
    for (phase, figures, keys) in [
        ("1 flood", &one, ONE_KEYS),
        ("20 floods", &twenty, TWENTY_KEYS),
    ] {
        let [call, landed, capture, cli_call, cli_landed, cli_capture] = keys;
        section = section
            .row(
                call,
                format!("{phase}: send_keys [\"C-c\"], call"),
                figures.keys_call,
            )
            .row(
                landed,
                format!("{phase}: send_keys [\"C-c\"], call to `yes` gone"),
                figures.keys_landed,
            )
            .row(
                capture,
                format!("{phase}: capture_pane, call"),
                figures.capture,
            )
            .row(
                cli_call,
                format!("{phase}: tmux send-keys C-c, process"),
                figures.cli_keys_call,
            )
            .row(
                cli_landed,
                format!("{phase}: tmux send-keys C-c, start to `yes` gone"),
                figures.cli_keys_landed,
            )
            .row(
                cli_capture,
                format!("{phase}: tmux capture-pane, process"),
                figures.cli_capture,
            );
    }
    Ok(section
        .ratio(
            "flooding_send_keys_vs_cli",
            "20 floods: send_keys call / tmux send-keys",
            twenty.cli_keys_call.times_faster_than(&twenty.keys_call),
        )
        .ratio(
            "flooding_capture_vs_cli",
            "20 floods: capture_pane / tmux capture-pane",
            twenty.cli_capture.times_faster_than(&twenty.capture),
        )
        .note(format!(
            "termpilot calls or landings over {LIMIT:?}, counted as {LIMIT:?}: {} with 1 flood, \
             {} with 20",
            one.timeouts, twenty.timeouts
        ))
        .note("target: C-c lands and capture_pane returns within 100 ms, with 20 floods")
        .note("`yes` gone: from the call's start until the process has exited (read in /proc)"))
}

/// The JSON keys of each phase's rows, in the order of [`Figures`].
const ONE_KEYS: [&str; 6] = [
    "flooding1_send_keys",
    "flooding1_send_keys_landed",
    "flooding1_capture_pane",
    "flooding1_cli_send_keys",
    "flooding1_cli_send_keys_landed",
    "flooding1_cli_capture_pane",
];
const TWENTY_KEYS: [&str; 6] = [
    "flooding20_send_keys",
    "flooding20_send_keys_landed",
    "flooding20_capture_pane",
    "flooding20_cli_send_keys",
    "flooding20_cli_send_keys_landed",
    "flooding20_cli_capture_pane",
];

/// The `termpilot` measured: this build's, or `TP_BENCH_TERMPILOT`.
fn termpilot_binary() -> PathBuf {
    std::env::var_os("TP_BENCH_TERMPILOT").map_or_else(|| PathBuf::from(TERMPILOT), PathBuf::from)
}

fn samples() -> usize {
    let chosen = std::env::var("TP_BENCH_SAMPLES").ok();
    chosen.and_then(|n| n.parse().ok()).unwrap_or(SAMPLES)
}

async fn measure(server: &PrivateServer, pid_file: &Path) -> anyhow::Result<(Figures, Figures)> {
    let mut client = McpClient::spawn(&termpilot_binary(), server.name(), server.config())?;
    client.initialize().await?;
    let pane = create_pane(&mut client, json!({ "name": TARGET_SESSION })).await?;
    let target = Target {
        server,
        pane: &pane,
        pid_file,
    };
    let measured = async {
        let one = figures(&mut client, &target).await.context("one flood")?;
        start_floods(&mut client).await?;
        tokio::time::sleep(RAMP).await;
        let twenty = figures(&mut client, &target).await.context("20 floods")?;
        anyhow::Ok((one, twenty))
    }
    .await;
    // Stopped while termpilot still reads (see the module docs).
    let stopped = stop_floods(server);
    let figures = measured?;
    stopped?;
    client.close().await?;
    Ok(figures)
}

/// The flooding pane and how to reach it outside termpilot.
struct Target<'a> {
    server: &'a PrivateServer,
    pane: &'a str,
    /// Where the pane's `yes` writes its pid.
    pid_file: &'a Path,
}

impl Target<'_> {
    /// Starts `yes` in the pane (typed with the tmux CLI) and returns its
    /// pid once it runs.
    fn start_yes(&self) -> anyhow::Result<u32> {
        let _ = std::fs::remove_file(self.pid_file);
        let command = format!("sh -c 'echo $$ > {}; exec yes'", self.pid_file.display());
        self.cli(&["send-keys", "-t", self.pane, "-l", &command])?;
        self.cli(&["send-keys", "-t", self.pane, "Enter"])?;
        let deadline = Instant::now() + LIMIT;
        loop {
            let written = std::fs::read_to_string(self.pid_file).unwrap_or_default();
            if let Ok(pid) = written.trim().parse() {
                return Ok(pid);
            }
            ensure!(
                Instant::now() < deadline,
                "yes did not start in {}",
                self.pane
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops `yes` with the tmux CLI, if it still runs.
    fn stop_yes(&self, pid: u32) -> anyhow::Result<()> {
        let gone = watch_exit(pid, Instant::now());
        self.cli(&["send-keys", "-t", self.pane, "C-c"])?;
        gone.join()
            .map_err(|_| anyhow::anyhow!("the watching thread panicked"))?
            .with_context(|| format!("yes ({pid}) outlived C-c from the tmux CLI"))?;
        Ok(())
    }

    fn cli(&self, args: &[&str]) -> anyhow::Result<Vec<u8>> {
        run_tmux(self.server, args)
    }
}

/// Calls a tool; a call over [`LIMIT`] counts as [`LIMIT`], with no result.
async fn timed_call(
    client: &mut McpClient,
    tool: &str,
    arguments: &Value,
) -> anyhow::Result<(Duration, Option<Value>)> {
    let start = Instant::now();
    match client
        .call_tool_within(tool, arguments.clone(), LIMIT)
        .await
    {
        Ok(result) => Ok((start.elapsed(), Some(result))),
        Err(e) if e.to_string().starts_with("no answer") => Ok((LIMIT, None)),
        Err(e) => Err(e),
    }
}

async fn figures(client: &mut McpClient, target: &Target<'_>) -> anyhow::Result<Figures> {
    let mut keys_call = Vec::new();
    let mut keys_landed = Vec::new();
    let mut cli_keys_call = Vec::new();
    let mut cli_keys_landed = Vec::new();
    let mut timeouts = 0;
    let keys = json!({ "pane": target.pane, "keys": ["C-c"] });
    for sample in 0..WARMUP + samples() {
        for termpilot in [true, false] {
            let pid = target.start_yes()?;
            tokio::time::sleep(RAMP).await;
            let start = Instant::now();
            let gone = watch_exit(pid, start);
            let call = if termpilot {
                let (took, answered) = timed_call(client, "send_keys", &keys).await?;
                timeouts += usize::from(answered.is_none());
                took
            } else {
                target.cli(&["send-keys", "-t", target.pane, "C-c"])?;
                start.elapsed()
            };
            let landed = gone
                .join()
                .map_err(|_| anyhow::anyhow!("the watching thread panicked"))?;
            let landed = match landed {
                Ok(landed) => landed,
                Err(_) => {
                    target.stop_yes(pid)?;
                    timeouts += 1;
                    LIMIT
                }
            };
            if sample < WARMUP {
                continue;
            }
            if termpilot {
                keys_call.push(call);
                keys_landed.push(landed);
            } else {
                cli_keys_call.push(call);
                cli_keys_landed.push(landed);
            }
        }
    }
    let (capture, cli_capture, late) = captures(client, target).await?;
    Ok(Figures {
        keys_call: Summary::of(keys_call),
        keys_landed: Summary::of(keys_landed),
        capture,
        cli_keys_call: Summary::of(cli_keys_call),
        cli_keys_landed: Summary::of(cli_keys_landed),
        cli_capture,
        timeouts: timeouts + late,
    })
}

/// Times captures of the pane while `yes` floods it, then stops `yes`;
/// also returns how many captures took longer than [`LIMIT`].
async fn captures(
    client: &mut McpClient,
    target: &Target<'_>,
) -> anyhow::Result<(Summary, Summary, usize)> {
    let pid = target.start_yes()?;
    tokio::time::sleep(RAMP).await;
    let arguments = json!({ "pane": target.pane });
    let mut ours = Vec::new();
    let mut cli = Vec::new();
    let mut timeouts = 0;
    for sample in 0..WARMUP + samples() {
        let (took, captured) = timed_call(client, "capture_pane", &arguments).await?;
        match captured {
            Some(captured) => ensure_flood_shown(&captured)?,
            None => timeouts += 1,
        }
        let start = Instant::now();
        target.cli(&["capture-pane", "-p", "-t", target.pane])?;
        let cli_took = start.elapsed();
        if sample >= WARMUP {
            ours.push(took);
            cli.push(cli_took);
        }
    }
    target.stop_yes(pid)?;
    Ok((Summary::of(ours), Summary::of(cli), timeouts))
}

/// Fails unless a capture of the flooding pane shows `y` lines (repeated
/// lines come folded: `y  [×47 identical lines]`).
fn ensure_flood_shown(captured: &Value) -> anyhow::Result<()> {
    let text = captured["content"][0]["text"].as_str().unwrap_or_default();
    let shown = (text.lines()).any(|line| line == "y" || line.starts_with("y  [×"));
    ensure!(shown, "the capture shows no flood: {text}");
    Ok(())
}

/// A thread that returns how long after `start` process `pid` was gone
/// (exited, a zombie or reaped).
fn watch_exit(pid: u32, start: Instant) -> thread::JoinHandle<anyhow::Result<Duration>> {
    let stat = PathBuf::from(format!("/proc/{pid}/stat"));
    thread::spawn(move || {
        loop {
            let gone = match std::fs::read_to_string(&stat) {
                Ok(text) => text
                    .rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('Z')),
                Err(_) => true,
            };
            if gone {
                return Ok(start.elapsed());
            }
            if start.elapsed() > LIMIT {
                bail!("process {pid} still runs {LIMIT:?} after C-c");
            }
            thread::sleep(Duration::from_micros(500));
        }
    })
}

fn flood_session(index: usize) -> String {
    format!("bench-flooder-{index}")
}

/// Starts the other floods, each in a session of its own.
async fn start_floods(client: &mut McpClient) -> anyhow::Result<()> {
    for index in 0..OTHER_FLOODS {
        let command = match index % 2 {
            0 => "yes",
            _ => "while :; do seq 1 10000000; done",
        };
        let session = json!({ "name": flood_session(index), "command": command });
        create_pane(client, session).await?;
    }
    Ok(())
}

/// Kills the flooding sessions and the target one with the tmux CLI.
fn stop_floods(server: &PrivateServer) -> anyhow::Result<()> {
    let names = (0..OTHER_FLOODS).map(flood_session);
    for session in names.chain([TARGET_SESSION.to_owned()]) {
        let target = format!("={session}");
        if run_tmux(server, &["has-session", "-t", &target]).is_ok() {
            run_tmux(server, &["kill-session", "-t", &target])?;
        }
    }
    Ok(())
}
