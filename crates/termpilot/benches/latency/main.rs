//! `cargo bench -p termpilot --bench latency`: what one persistent control-mode
//! connection buys over a `tmux` process per call, measured in one run on a
//! private tmux server (socket `tp-bench-<pid>`; parts 5 and 8 also use
//! `tp-bench-<pid>-plain`; both killed at the end).
//!
//! 1. A command round trip through the engine vs the same command as a
//!    `tmux` subprocess.
//! 2. MCP `tools/call` latency over stdio with the real binary vs one `tmux`
//!    subprocess per call; the same calls over streamable HTTP (a session,
//!    and stateless 2026-07-28 requests), with their ratio to stdio.
//! 3. Process start to an answered `tools/list`, with the tmux server running
//!    and without.
//! 4. Wake-up lag: a line printed in a pane to the `wait_for_text` result
//!    arriving at the MCP client.
//! 5. A pane flooding output (`seq 1 1000000`), timed with termpilot
//!    following it, with a bare `tmux -C` client, and with no client attached.
//! 6. 50 keystroke operations in one `send_keys_batch` call vs 50 single
//!    `send_keys` calls.
//! 7. How long after a `read -s` prompt a wait returns `awaiting_input`,
//!    and a flood followed with the detection on and off.
//! 8. A quiet pane while 20 other panes flood: its wait wake-up lag and the
//!    latency of `send_keys` and `capture_pane` to it, against the same
//!    with no flood; its lag while waits scan 8 MiB journals.
//! 9. On a host reached over ssh (a private sshd on 127.0.0.1) against the
//!    local host in the same process: MCP call latency and wait wake-up lag.
//! 10. `send_keys ["C-c"]` and `capture_pane` to a pane flooding output
//!     itself, alone and with 19 other floods, against the tmux CLI.
//! 11. `run_command`, `send_keys` + `wait_for_text`, `capture_pane` and the
//!     `awaiting_input` of a `read -s` on a local pane and on a host behind
//!     a link with 20 ms added each way: what the link adds, in round trips.
//! 12. `seq 1 1000000` followed with and without `serve --record` (one run
//!     each, as a ratio); a 200x50 screen as a PNG, drawn in-process and
//!     through `capture_pane`, and its size.
//!
//! Numbers given after `--` run only those parts (`-- 4 8`).
//!
//! Every pane runs plain `bash --norc --noprofile` (a `tmux.conf` in a
//! private temporary directory), so the user's startup files slow nothing.
//!
//! Prints a table on stdout and writes the figures to
//! `target/bench-latency.json`.
#![allow(clippy::print_stdout)]

mod awaiting_lag;
mod bare_client;
mod batch_cost;
mod delayed_link;
mod flood;
mod flooding_pane;
mod hosts;
mod http_client;
mod mcp_client;
mod neighbour_flood;
mod recording;
mod remote_link;
mod report;
mod scan_load;
mod server;
mod stats;
mod wake_lag;

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use termpilot_control::Command;
use termpilot_tmux::{Engine, EngineConfig, Socket};

use crate::http_client::{HttpClient, Mode};
use crate::mcp_client::McpClient;
use crate::report::{Report, Section};
use crate::server::{ConfigDir, PrivateServer, clean_up_on_interrupt};
use crate::stats::{Summary, time_async, time_blocking};

/// The binary under test, built by the same `cargo bench` invocation.
const TERMPILOT: &str = env!("CARGO_BIN_EXE_termpilot");

const ROUND_TRIPS: usize = 2_000;
const ROUND_TRIP_WARMUP: usize = 200;
const SUBPROCESS_RUNS: usize = 200;
const SUBPROCESS_WARMUP: usize = 20;
const MCP_CALLS: usize = 500;
const MCP_WARMUP: usize = 50;
const STARTS: usize = 20;
const START_WARMUP: usize = 2;
/// Each cold start also pays for killing the server first, so a few suffice.
const COLD_STARTS: usize = 5;

/// The format the subprocess baseline of `list_panes` asks for: about what
/// the `list_panes` tool reports.
const LIST_PANES_FORMAT: &str = "#{pane_id}\t#{session_name}\t#{window_index}\t#{pane_index}\t\
     #{pane_width}x#{pane_height}\t#{pane_active}\t#{pane_current_command}\t#{pane_title}";

fn main() -> anyhow::Result<()> {
    let name = format!("tp-bench-{}", std::process::id());
    let config = ConfigDir::create(&name)?;
    let server = PrivateServer::start(name.clone(), &config.tmux_conf())?;
    let plain = PrivateServer::start(format!("{name}-plain"), &config.tmux_conf())?;
    clean_up_on_interrupt(vec![
        Box::new(server.guard()),
        Box::new(plain.guard()),
        Box::new(config.guard()),
    ]);
    let mut report = Report::new(context(&server, &plain)?);
    let measured = measure(&mut report, &server, &plain);
    if measured.is_err() {
        // The figures measured before a failing part are still worth seeing.
        print!("{}", report.table());
    }
    measured?;
    print!("{}", report.table());
    let target = Path::new(TERMPILOT)
        .ancestors()
        .nth(2)
        .context("the binary is not in target/<profile>/")?;
    let path = report.write_json(target)?;
    println!("JSON written to {}", path.display());
    Ok(())
}

/// Runs the parts in order, adding each section to `report`; with part
/// numbers on the command line, only those.
fn measure(
    report: &mut Report,
    server: &PrivateServer,
    plain: &PrivateServer,
) -> anyhow::Result<()> {
    let chosen = chosen_parts()?;
    let wanted = |part: u8| chosen.is_empty() || chosen.contains(&part);
    if wanted(1) {
        report.push(round_trips(server)?);
    }
    if wanted(2) {
        report.push(mcp_calls(server)?);
    }
    // Before the sessions of parts 4-8 exist: termpilot's start-up time grows
    // with the number of sessions it finds.
    if wanted(3) {
        report.push(startup(server)?);
    }
    // Part 3 leaves the server killed and restarted by termpilot; the
    // sessions that follow are created anew either way.
    if !server.is_running() {
        server.launch()?;
    }
    if wanted(4) {
        report.push(wake_lag::wake_lag(server)?);
    }
    if wanted(5) {
        report.push(flood::flood(server, plain)?);
    }
    if wanted(6) {
        report.push(batch_cost::batch_cost(server)?);
    }
    if wanted(7) {
        report.push(awaiting_lag::awaiting_lag(server)?);
    }
    if wanted(8) {
        report.push(neighbour_flood::neighbour_flood(server, plain)?);
    }
    if wanted(9) {
        report.push(hosts::hosts(server)?);
    }
    if wanted(10) {
        report.push(flooding_pane::flooding_pane(server)?);
    }
    if wanted(11) {
        report.push(remote_link::remote_link(server)?);
    }
    if wanted(12) {
        report.push(recording::recording(server)?);
    }
    Ok(())
}

/// The part numbers given on the command line (`cargo bench` adds `--bench`,
/// which is not one).
fn chosen_parts() -> anyhow::Result<Vec<u8>> {
    std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .map(|arg| {
            arg.parse()
                .ok()
                .filter(|part| (1..=12).contains(part))
                .with_context(|| format!("{arg:?} is not a part number (1 to 12)"))
        })
        .collect()
}

/// The facts a reader needs to compare runs across machines.
fn context(
    server: &PrivateServer,
    plain: &PrivateServer,
) -> anyhow::Result<Vec<(&'static str, String)>> {
    let version = String::from_utf8(server.tmux().arg("-V").output()?.stdout)?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    Ok(vec![
        ("tmux", version.trim().to_owned()),
        ("cores", cores.to_string()),
        ("socket", server.name().to_owned()),
        ("plain_socket", plain.name().to_owned()),
        (
            "tmux_conf",
            std::fs::read_to_string(server.config())?.trim().to_owned(),
        ),
        ("binary", TERMPILOT.to_owned()),
    ])
}

/// The runtime shape of `termpilot serve`, so the engine runs as it does there.
fn engine_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// A light runtime for the MCP client side, which only drives pipes.
fn client_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// A string field of a tool result's structured content.
fn structured_str<'a>(result: &'a Value, key: &str) -> anyhow::Result<&'a str> {
    result["structuredContent"][key]
        .as_str()
        .with_context(|| format!("no {key} in {result}"))
}

/// Creates a session with `arguments` and returns its pane id.
async fn create_pane(client: &mut McpClient, arguments: Value) -> anyhow::Result<String> {
    let created = client.call_tool("create_session", arguments).await?;
    Ok(structured_str(&created, "pane")?.to_owned())
}

/// Runs a tmux subprocess to completion, failing on a non-zero exit.
fn run_tmux(server: &PrivateServer, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let output = server.tmux().args(args).output()?;
    ensure!(
        output.status.success(),
        "tmux {args:?} failed: {}",
        output.status
    );
    Ok(output.stdout)
}

// Part 1 ---------------------------------------------------------------------

fn pane_id_command() -> Command {
    Command::new("display-message").flag("-p").arg("#{pane_id}")
}

fn round_trips(server: &PrivateServer) -> anyhow::Result<Section> {
    let control = control_mode_round_trips(server.name())?;
    let args = ["display-message", "-p", "#{pane_id}"];
    ensure!(
        run_tmux(server, &args)?.starts_with(b"%"),
        "display-message printed no pane id"
    );
    let subprocess = time_blocking(SUBPROCESS_WARMUP, SUBPROCESS_RUNS, || {
        run_tmux(server, &args).map(drop)
    })?;
    Ok(
        Section::new("1. command round trip: display-message -p '#{pane_id}'")
            .row(
                "control_mode_round_trip",
                "control mode (Engine::command)",
                control,
            )
            .row(
                "subprocess_round_trip",
                "tmux subprocess per command",
                subprocess,
            )
            .ratio(
                "control_mode_vs_subprocess",
                "control mode vs subprocess: times faster",
                control.times_faster_than(&subprocess),
            ),
    )
}

/// Times `Engine::command` on its own runtime, which is shut down afterwards:
/// that kills the engine's control clients, which would otherwise attach to
/// the sessions part 2 creates and load the tmux server while it is measured.
fn control_mode_round_trips(socket: &str) -> anyhow::Result<Summary> {
    let runtime = engine_runtime()?;
    let summary = runtime.block_on(async {
        let config = EngineConfig {
            socket: Socket::Name(socket.to_owned()),
            host: None,
            ..EngineConfig::default()
        };
        let engine = Engine::connect(config).await?;
        let reply = engine.command(pane_id_command()).await?;
        ensure!(
            reply.text().starts_with('%'),
            "unexpected reply {:?}",
            reply.text()
        );
        time_async(ROUND_TRIP_WARMUP, ROUND_TRIPS, async || {
            engine.command(pane_id_command()).await?;
            Ok(())
        })
        .await
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    summary
}

// Part 2 ---------------------------------------------------------------------

/// The three timed tool calls, in the order they are measured.
struct ToolTimes {
    /// `ping` touches no tmux: it is what the stdio transport alone costs.
    ping: Summary,
    list_panes: Summary,
    send_keys: Summary,
    capture_pane: Summary,
    /// `ping` over HTTP in a session: what the HTTP transport alone costs.
    http_ping: Summary,
    http_list_panes: Summary,
    stateless_list_panes: Summary,
}

fn mcp_calls(server: &PrivateServer) -> anyhow::Result<Section> {
    let tools = client_runtime()?.block_on(time_tools(server))?;
    let args = ["list-panes", "-a", "-F", LIST_PANES_FORMAT];
    let baseline = time_blocking(SUBPROCESS_WARMUP, SUBPROCESS_RUNS, || {
        run_tmux(server, &args).map(drop)
    })?;
    let vs = |summary: &Summary| summary.times_faster_than(&baseline);
    Ok(
        Section::new("2. MCP tools/call over stdio (termpilot serve), request to response")
            .row(
                "mcp_ping",
                "ping (stdio transport only, no tmux)",
                tools.ping,
            )
            .row("mcp_list_panes", "list_panes", tools.list_panes)
            .row(
                "mcp_send_keys",
                "send_keys (\"x\" into a `cat` pane)",
                tools.send_keys,
            )
            .row(
                "mcp_capture_pane",
                "capture_pane (that pane)",
                tools.capture_pane,
            )
            .row(
                "mcp_http_ping",
                "HTTP session: ping (transport only, no tmux)",
                tools.http_ping,
            )
            .row(
                "mcp_http_list_panes",
                "HTTP session: list_panes",
                tools.http_list_panes,
            )
            .row(
                "mcp_http_stateless_list_panes",
                "HTTP stateless (2026-07-28): list_panes",
                tools.stateless_list_panes,
            )
            .row(
                "subprocess_list_panes",
                "baseline: tmux list-panes -a subprocess",
                baseline,
            )
            .ratio(
                "list_panes_vs_subprocess",
                "list_panes vs one tmux subprocess per call",
                vs(&tools.list_panes),
            )
            .ratio(
                "send_keys_vs_subprocess",
                "send_keys vs one tmux subprocess per call",
                vs(&tools.send_keys),
            )
            .ratio(
                "capture_pane_vs_subprocess",
                "capture_pane vs one tmux subprocess per call",
                vs(&tools.capture_pane),
            )
            .ratio(
                "http_vs_stdio_list_panes",
                "HTTP session list_panes / stdio list_panes (target <= 2)",
                tools.list_panes.times_faster_than(&tools.http_list_panes),
            )
            .ratio(
                "stateless_vs_stdio_list_panes",
                "HTTP stateless list_panes / stdio list_panes (target <= 2)",
                tools
                    .list_panes
                    .times_faster_than(&tools.stateless_list_panes),
            )
            .note("ratios are times faster, by median, except the HTTP / stdio ones (times slower)")
            .note(
                "context, not measured here: existing tmux MCP servers spawn 2-12 tmux \
             processes per call, 9-15 ms a call (as reported by them)",
            ),
    )
}

async fn time_tools(server: &PrivateServer) -> anyhow::Result<ToolTimes> {
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let pane = cat_pane(&mut client).await?;
    let listed = client.call_tool("list_panes", json!({})).await?;
    ensure!(
        listed.to_string().contains(&pane),
        "list_panes does not show {pane}: {listed}"
    );
    let keys = json!({ "pane": pane, "text": "x", "enter": false });
    let capture = json!({ "pane": pane });
    let ping = time_async(MCP_WARMUP, MCP_CALLS, async || {
        client.request("ping", json!({})).await.map(drop)
    })
    .await?;
    let list_panes = time_tool(&mut client, "list_panes", json!({})).await?;
    let send_keys = time_tool(&mut client, "send_keys", keys).await?;
    let capture_pane = time_tool(&mut client, "capture_pane", capture).await?;
    client.close().await?;
    let (http_ping, http_list_panes) = time_http(server, Mode::Session, &pane).await?;
    let http_ping = http_ping.context("a session times ping")?;
    let (_, stateless_list_panes) = time_http(server, Mode::Stateless, &pane).await?;
    Ok(ToolTimes {
        ping,
        list_panes,
        send_keys,
        capture_pane,
        http_ping,
        http_list_panes,
        stateless_list_panes,
    })
}

/// `ping` (in a session: 2026-07-28 has no `ping`) and `list_panes` over
/// HTTP, on one keep-alive connection.
async fn time_http(
    server: &PrivateServer,
    mode: Mode,
    pane: &str,
) -> anyhow::Result<(Option<Summary>, Summary)> {
    let mut client =
        HttpClient::spawn(Path::new(TERMPILOT), server.name(), server.config(), mode).await?;
    client.initialize().await?;
    let listed = client.call_tool("list_panes", json!({})).await?;
    ensure!(
        listed.to_string().contains(pane),
        "list_panes over HTTP does not show {pane}: {listed}"
    );
    let ping = if mode == Mode::Session {
        let ping = time_async(MCP_WARMUP, MCP_CALLS, async || {
            client.request("ping", json!({})).await.map(drop)
        })
        .await?;
        Some(ping)
    } else {
        None
    };
    let list_panes = time_async(MCP_WARMUP, MCP_CALLS, async || {
        client.call_tool("list_panes", json!({})).await.map(drop)
    })
    .await?;
    client.close().await?;
    Ok((ping, list_panes))
}

/// Creates a session running `cat > /dev/null`, a pane that can take any
/// number of keystrokes without running anything, and returns its pane id.
async fn cat_pane(client: &mut McpClient) -> anyhow::Result<String> {
    let arguments = json!({ "name": "bench-cat", "command": "cat > /dev/null" });
    create_pane(client, arguments).await
}

async fn time_tool(
    client: &mut McpClient,
    name: &str,
    arguments: Value,
) -> anyhow::Result<Summary> {
    time_async(MCP_WARMUP, MCP_CALLS, async || {
        client.call_tool(name, arguments.clone()).await?;
        Ok(())
    })
    .await
}

// Part 3 ---------------------------------------------------------------------

fn startup(server: &PrivateServer) -> anyhow::Result<Section> {
    let runtime = client_runtime()?;
    let warm = runtime.block_on(async {
        time_async(START_WARMUP, STARTS, async || {
            start_to_tools_list(server).await.map(drop)
        })
        .await
    })?;
    let mut cold = Vec::with_capacity(COLD_STARTS);
    for _ in 0..COLD_STARTS {
        server.stop()?;
        cold.push(runtime.block_on(start_to_tools_list(server))?);
        ensure!(
            server.is_running(),
            "termpilot did not start the tmux server"
        );
    }
    Ok(
        Section::new("3. process start to answered tools/list (initialize handshake included)")
            .row("start_server_running", "tmux server already running", warm)
            .row(
                "start_server_not_running",
                "tmux server not running (termpilot starts it)",
                Summary::of(cold),
            ),
    )
}

/// Spawns a fresh `termpilot serve`, and returns the time from spawn to the
/// answer to `tools/list` (the client's handshake comes first, as in real use).
async fn start_to_tools_list(server: &PrivateServer) -> anyhow::Result<std::time::Duration> {
    let start = Instant::now();
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let listed = client.request("tools/list", json!({})).await?;
    let elapsed = start.elapsed();
    let count = listed["tools"].as_array().map_or(0, Vec::len);
    ensure!(count > 0, "tools/list returned no tools: {listed}");
    client.close().await?;
    Ok(elapsed)
}
