//! Part 8: a quiet pane while 20 other panes flood output. The quiet pane's
//! wait wake-up lag (part 4's measurement) and the latency of `send_keys
//! ["C-c"]` and `capture_pane` to it, with no flood and during the flood, in
//! one run.
//!
//! Half the flooding panes run `yes`, half `seq 1 10000000` in a loop; each
//! has a session (and so a control client) of its own, and a `wait_for_text`
//! that never matches scans its output, as an agent waiting for a build
//! would. The floors are what tmux itself takes in the same moments, seen by
//! a bare `tmux -C` client attached to the quiet pane's session: the time
//! from the marker's print to its `%output`, and a `display-message -p`
//! round trip. The round trip is measured once more with the same floods on
//! the plain server, where nothing follows them: what following every byte
//! costs tmux itself.
//!
//! Between the two, the quiet pane's wake-up lag is measured once more
//! while waits scan a whole 8 MiB journal each (see `scan_load`).
//!
//! The floods always stop while termpilot still reads its control clients:
//! tmux 3.3a does not end a control client whose reader went away with
//! output still queued, and its server then outlives `kill-server`.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use crate::bare_client::BareClient;
use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::scan_load;
use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::{TERMPILOT, client_runtime, create_pane, run_tmux, wake_lag};

const FLOODING_PANES: usize = 20;
const LAGS: usize = 30;
const CALLS: usize = 50;
const PROBES: usize = 50;
const WARMUP: usize = 3;
/// How long after its command line the quiet pane prints a marker: during
/// the flood, `send_keys` and the wait's own first round trip take 100-300
/// ms here, and the print must come after the wait is registered.
const MARKER_DELAY: Duration = Duration::from_millis(600);
/// Time for every flood to be in full swing before anything is measured.
const FLOOD_RAMP: Duration = Duration::from_secs(2);
const QUIET_SESSION: &str = "bench-quiet";
/// What the waits on the flooding panes look for: nothing prints it.
const NEVER_PRINTED: &str = "tp-bench-never-printed";

/// The figures of one phase (with no flood, or during it).
struct Figures {
    lag: Summary,
    send_keys: Summary,
    capture: Summary,
    /// A bare control client's time from the marker's print to its
    /// `%output`: the least wake-up lag tmux allows.
    output_floor: Summary,
    /// A bare control client's command round trip: tmux's own latency.
    command_floor: Summary,
}

/// Everything part 8 measures.
struct Phases {
    quiet: Figures,
    /// The quiet pane's wake-up lag, no flood, while waits scan 8 MiB each.
    scans: Summary,
    flood: Figures,
    /// The bare client's round trip during the same floods on the plain
    /// server, which no termpilot follows.
    unfollowed_floor: Summary,
}

/// `plain` is a server that only this benchmark's subprocesses talk to.
pub fn neighbour_flood(server: &PrivateServer, plain: &PrivateServer) -> anyhow::Result<Section> {
    let (quiet, scans, flood) = client_runtime()?.block_on(measure(server))?;
    let unfollowed_floor = unfollowed_floor(plain);
    // The floods must stop whatever happened: they would load every later part.
    let stopped = stop_floods(plain);
    let phases = Phases {
        quiet,
        scans,
        flood,
        unfollowed_floor: unfollowed_floor?,
    };
    stopped?;
    Ok(section(&phases))
}

fn section(phases: &Phases) -> Section {
    let Phases {
        quiet,
        scans,
        flood,
        unfollowed_floor,
    } = phases;
    let vs_commands = |summary: &Summary| flood.command_floor.times_faster_than(summary);
    let mut section = Section::new(format!(
        "8. a quiet pane while {FLOODING_PANES} panes in other sessions flood and are waited on"
    ));
    for (phase, figures, keys) in [
        ("no flood", quiet, QUIET_KEYS),
        ("flood", flood, FLOOD_KEYS),
    ] {
        let [lag, send_keys, capture, output, command] = keys;
        section = section
            .row(lag, format!("{phase}: wait wake-up lag"), figures.lag)
            .row(
                send_keys,
                format!("{phase}: send_keys [\"C-c\"]"),
                figures.send_keys,
            )
            .row(capture, format!("{phase}: capture_pane"), figures.capture)
            .row(
                output,
                format!("{phase}: tmux -C: print to %output"),
                figures.output_floor,
            )
            .row(
                command,
                format!("{phase}: tmux -C: command round trip"),
                figures.command_floor,
            );
    }
    section
        .row(
            "scans_wake_lag",
            "no flood, 4 waits scanning 8 MiB each: wait wake-up lag",
            *scans,
        )
        .row(
            "unfollowed_tmux_round_trip",
            "same floods, nothing following: tmux -C round trip",
            *unfollowed_floor,
        )
        .ratio(
            "flood_vs_quiet_wake_lag",
            "wake-up lag, flood / no flood (target <= 3)",
            quiet.lag.times_faster_than(&flood.lag),
        )
        .ratio(
            "scans_vs_quiet_wake_lag",
            "wake-up lag, scans / nothing",
            quiet.lag.times_faster_than(scans),
        )
        .ratio(
            "flood_wake_lag_vs_tmux",
            "flood: wake-up lag / tmux -C print to %output",
            flood.output_floor.times_faster_than(&flood.lag),
        )
        .ratio(
            "flood_send_keys_vs_tmux",
            "flood: send_keys / tmux -C round trip",
            vs_commands(&flood.send_keys),
        )
        .ratio(
            "flood_capture_pane_vs_tmux",
            "flood: capture_pane / tmux -C round trip",
            vs_commands(&flood.capture),
        )
        .ratio(
            "followed_vs_unfollowed_tmux_round_trip",
            "tmux -C round trip, termpilot following the floods / not",
            unfollowed_floor.times_faster_than(&flood.command_floor),
        )
        .note(
            "targets: wake-up lag during the flood <= 3x the quiet figure and < 10 ms; \
             send_keys and capture_pane < 100 ms (medians)",
        )
        .note(
            "tmux -C: a bare control client attached to the quiet pane's session, the least \
             any control-mode tool can take",
        )
}

/// The JSON keys of each phase's rows, in the order of [`Figures`].
const QUIET_KEYS: [&str; 5] = [
    "quiet_wake_lag",
    "quiet_send_keys",
    "quiet_capture_pane",
    "quiet_tmux_output",
    "quiet_tmux_round_trip",
];
const FLOOD_KEYS: [&str; 5] = [
    "flood_wake_lag",
    "flood_send_keys",
    "flood_capture_pane",
    "flood_tmux_output",
    "flood_tmux_round_trip",
];

/// The quiet pane's figures with no flood, its wake-up lag while waits scan
/// big journals, then its figures during the flood.
async fn measure(server: &PrivateServer) -> anyhow::Result<(Figures, Summary, Figures)> {
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let session = json!({ "name": QUIET_SESSION });
    let pane = create_pane(&mut client, session).await?;
    let quiet = figures(server, &mut client, &pane)
        .await
        .context("no flood")?;
    let scans = scan_load::lags_while_scanning(&mut client, &pane)
        .await
        .context("while waits scan")?;
    let flood = flood_figures(server, &mut client, &pane).await;
    // Stopped while termpilot still reads (see the module docs); the waits
    // on the floods end with their panes.
    let stopped = stop_floods(server);
    let flood = flood.context("during the flood")?;
    stopped?;
    client.close().await?;
    Ok((quiet, scans, flood))
}

async fn flood_figures(
    server: &PrivateServer,
    client: &mut McpClient,
    pane: &str,
) -> anyhow::Result<Figures> {
    start_floods(client).await?;
    tokio::time::sleep(FLOOD_RAMP).await;
    let figures = figures(server, client, pane).await?;
    ensure_flooding(server)?;
    Ok(figures)
}

/// The floor during the same floods on `plain`, where nothing follows them.
fn unfollowed_floor(plain: &PrivateServer) -> anyhow::Result<Summary> {
    for index in 0..FLOODING_PANES {
        let session = flood_session(index);
        run_tmux(
            plain,
            &["new-session", "-d", "-s", &session, flood_command(index)],
        )?;
    }
    thread::sleep(FLOOD_RAMP);
    let floor = BareClient::attach(plain, "main", false)?.round_trips(WARMUP, PROBES)?;
    ensure_flooding(plain)?;
    Ok(floor)
}

/// The measurements on `pane`, in the current conditions.
async fn figures(
    server: &PrivateServer,
    client: &mut McpClient,
    pane: &str,
) -> anyhow::Result<Figures> {
    for _ in 0..WARMUP {
        wake_lag::one_lag_after(client, pane, MARKER_DELAY).await?;
    }
    let mut lags = Vec::with_capacity(LAGS);
    for _ in 0..LAGS {
        lags.push(wake_lag::one_lag_after(client, pane, MARKER_DELAY).await?);
    }
    let keys = json!({ "pane": pane, "keys": ["C-c"] });
    let send_keys = time_calls(client, "send_keys", &keys).await?;
    let capture = time_calls(client, "capture_pane", &json!({ "pane": pane })).await?;
    // Blocking, but nothing else runs on this runtime meanwhile.
    let output_floor = BareClient::attach(server, QUIET_SESSION, true)?.marker_lags(
        pane,
        MARKER_DELAY,
        WARMUP,
        LAGS,
    )?;
    let command_floor =
        BareClient::attach(server, QUIET_SESSION, false)?.round_trips(WARMUP, PROBES)?;
    Ok(Figures {
        lag: Summary::of(lags),
        send_keys,
        capture,
        output_floor,
        command_floor,
    })
}

async fn time_calls(
    client: &mut McpClient,
    tool: &str,
    arguments: &Value,
) -> anyhow::Result<Summary> {
    for _ in 0..WARMUP {
        client.call_tool(tool, arguments.clone()).await?;
    }
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        client.call_tool(tool, arguments.clone()).await?;
        samples.push(start.elapsed());
    }
    Ok(Summary::of(samples))
}

fn flood_session(index: usize) -> String {
    format!("bench-flood-{index}")
}

/// Half the floods print `y` lines, half numbers.
fn flood_command(index: usize) -> &'static str {
    match index % 2 {
        0 => "yes",
        _ => "while :; do seq 1 10000000; done",
    }
}

/// Starts the flooding panes, each in a session of its own with a wait on
/// it. The waits' answers come after the run and are never read.
async fn start_floods(client: &mut McpClient) -> anyhow::Result<()> {
    for index in 0..FLOODING_PANES {
        let command = flood_command(index);
        let session = json!({ "name": flood_session(index), "command": command });
        let pane = create_pane(client, session).await?;
        let wait = json!({ "pane": pane, "pattern": NEVER_PRINTED, "timeout_s": 3_600 });
        let call = json!({ "name": "wait_for_text", "arguments": wait });
        client.start_request("tools/call", call).await?;
    }
    Ok(())
}

/// Fails unless every flooding pane still runs its flood (read with one
/// `tmux` subprocess: the panes' own control clients are far behind). A
/// flood that ended would have closed its pane.
fn ensure_flooding(server: &PrivateServer) -> anyhow::Result<()> {
    let format = "#{session_name} #{pane_dead}";
    let listed = String::from_utf8(run_tmux(server, &["list-panes", "-a", "-F", format])?)?;
    let flooding = (listed.lines())
        .filter(|line| line.starts_with("bench-flood-"))
        .filter(|line| line.ends_with(" 0"))
        .count();
    ensure!(
        flooding == FLOODING_PANES,
        "only {flooding} panes still flood:\n{listed}"
    );
    Ok(())
}

/// Kills the flooding sessions and the quiet one with `tmux kill-session`
/// (the MCP server's destructive tools are off by default). Sessions that
/// were never created are no failure.
fn stop_floods(server: &PrivateServer) -> anyhow::Result<()> {
    let names = (0..FLOODING_PANES).map(flood_session);
    let others = [QUIET_SESSION, scan_load::BIG_SESSION].map(str::to_owned);
    for session in names.chain(others) {
        let target = format!("={session}");
        if run_tmux(server, &["has-session", "-t", &target]).is_ok() {
            run_tmux(server, &["kill-session", "-t", &target])?;
        }
    }
    Ok(())
}
