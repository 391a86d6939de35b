//! Part 11: the same calls on a local pane and on a pane behind a link with
//! injected latency, and what the link adds, in round trips.
//!
//! The host is the private sshd of part 9, reached through a relay on
//! loopback that holds every byte [`DELAY`] in each direction (see
//! `delayed_link`): a network of that latency, with ssh's own framing and
//! encryption, and the far side on this machine. One `termpilot serve`
//! drives both hosts; calls alternate between them. The round trip is
//! measured through the same kind of relay.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::json;

use crate::awaiting_lag::{SETTLE_MS, one_prompt};
use crate::delayed_link::{DelayedLink, measured_rtt};
use crate::hosts::{FarTmux, sshd, start_sshd};
use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::{TERMPILOT, client_runtime, structured_str};

const TITLE: &str = "11. remote link: calls on a pane behind a link with 20 ms each way vs local";

/// The latency added in each direction.
const DELAY: Duration = Duration::from_millis(20);

/// The host's name in termpilot's arguments.
const HOST: &str = "far";

const RUNS: usize = 20;
const WARMUP: usize = 3;

/// The panes' shell on both hosts.
const SHELL: &str = "exec env HISTFILE=/dev/null bash --norc --noprofile";

pub fn remote_link(server: &PrivateServer) -> anyhow::Result<Section> {
    if let Some(reason) = sshd::missing_reason() {
        return Ok(Section::new(TITLE).note(format!("skipped: {reason}")));
    }
    let rtt = measured_rtt(DELAY, RUNS)?;
    let far = FarTmux::create()?;
    let sshd = start_sshd(&far)?;
    let link = DelayedLink::start(([127, 0, 0, 1], sshd.port).into(), DELAY)?;
    let config = delayed_config(&sshd, link.port)?;
    let figures = client_runtime()?.block_on(measure(server, &config));
    drop(sshd);
    drop(far);
    Ok(section(&figures?, rtt))
}

/// An ssh configuration whose alias reaches the sshd through the relay,
/// with the host key trusted on the relay's port.
fn delayed_config(sshd: &sshd::Sshd, relay: u16) -> anyhow::Result<PathBuf> {
    let port = sshd.port;
    let known = sshd.dir.join("known_hosts");
    let key = std::fs::read_to_string(&known).context("the sshd's known_hosts")?;
    let delayed_known = sshd.dir.join("known_hosts_delayed");
    std::fs::write(
        &delayed_known,
        key.replace(&format!("]:{port} "), &format!("]:{relay} ")),
    )?;
    let text = std::fs::read_to_string(&sshd.config)?
        .replace(&format!("Port {port}\n"), &format!("Port {relay}\n"))
        .replace(
            &known.display().to_string(),
            &delayed_known.display().to_string(),
        );
    let config = sshd.dir.join("ssh_config_delayed");
    std::fs::write(&config, text)?;
    Ok(config)
}

/// The kinds of call timed, in the order of [`Figures`]' fields.
#[derive(Clone, Copy)]
enum Call {
    Run,
    KeysAndWait,
    Capture,
    Awaiting,
}

/// One host's figures, by call type.
struct Figures {
    run_command: Summary,
    keys_and_wait: Summary,
    capture_pane: Summary,
    awaiting_input: Summary,
}

async fn measure(server: &PrivateServer, config: &Path) -> anyhow::Result<[Figures; 2]> {
    let host = format!("{HOST}=ssh:{}", sshd::ALIAS);
    let extra: [&OsStr; 4] = [
        "--host".as_ref(),
        host.as_ref(),
        "--ssh-config".as_ref(),
        config.as_os_str(),
    ];
    let mut client =
        McpClient::spawn_with(Path::new(TERMPILOT), server.name(), server.config(), &extra)?;
    client.initialize().await?;
    let mut panes = Vec::new();
    for host in ["local", HOST] {
        let arguments = json!({ "host": host, "name": "bench-link", "command": SHELL });
        let created = client.call_tool("create_session", arguments).await?;
        panes.push(structured_str(&created, "pane")?.to_owned());
    }
    ensure!(
        panes[1].starts_with("far/%"),
        "unexpected pane id {}",
        panes[1]
    );
    // Each kind of call in a run of its own, so that a call follows one
    // of its kind (a run_command the one before it), alternating between
    // the hosts.
    let mut samples: [[Vec<Duration>; 4]; 2] = Default::default();
    for kind in [Call::Run, Call::KeysAndWait, Call::Capture, Call::Awaiting] {
        for round in 0..WARMUP + RUNS {
            for (side, pane) in panes.iter().enumerate() {
                let time = match kind {
                    Call::Run => run_echo(&mut client, pane).await?,
                    Call::KeysAndWait => keys_and_wait(&mut client, pane, round).await?,
                    Call::Capture => capture(&mut client, pane).await?,
                    Call::Awaiting => one_prompt(&mut client, pane).await?,
                };
                if round >= WARMUP {
                    samples[side][kind as usize].push(time);
                }
            }
        }
    }
    client.close().await?;
    Ok(samples.map(|[run, keys, capture, awaiting]| Figures {
        run_command: Summary::of(run),
        keys_and_wait: Summary::of(keys),
        capture_pane: Summary::of(capture),
        awaiting_input: Summary::of(awaiting),
    }))
}

/// The time `call` took.
async fn timed<T>(call: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<(Duration, T)> {
    let started = Instant::now();
    let done = call.await?;
    Ok((started.elapsed(), done))
}

async fn run_echo(client: &mut McpClient, pane: &str) -> anyhow::Result<Duration> {
    let arguments = json!({ "pane": pane, "command": "echo hi" });
    let (took, ran) = timed(client.call_tool("run_command", arguments)).await?;
    ensure!(ran["structuredContent"]["exit_code"] == 0, "echo hi: {ran}");
    Ok(took)
}

/// `send_keys` of a line, then `wait_for_text` of what it prints.
async fn keys_and_wait(
    client: &mut McpClient,
    pane: &str,
    round: usize,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let keys = json!({ "pane": pane, "text": format!("echo link-$((1+{round}))"), "enter": true });
    let sent = client.call_tool("send_keys", keys).await?;
    let cursor = structured_str(&sent, "cursor")?.to_owned();
    let pattern = format!("link-{}", round + 1);
    let wait = json!({ "pane": pane, "pattern": pattern, "since": cursor, "timeout_s": 20 });
    let waited = client.call_tool("wait_for_text", wait).await?;
    ensure!(structured_str(&waited, "outcome")? == "matched", "{waited}");
    Ok(started.elapsed())
}

async fn capture(client: &mut McpClient, pane: &str) -> anyhow::Result<Duration> {
    let (took, _) = timed(client.call_tool("capture_pane", json!({ "pane": pane }))).await?;
    Ok(took)
}

fn section([local, far]: &[Figures; 2], rtt: Duration) -> Section {
    let trips = |local: &Summary, far: &Summary| {
        (far.median.as_secs_f64() - local.median.as_secs_f64()) / rtt.as_secs_f64()
    };
    let settle = Duration::from_millis(SETTLE_MS).as_secs_f64();
    let over_settle = (far.awaiting_input.median.as_secs_f64() - settle) / rtt.as_secs_f64();
    Section::new(TITLE)
        .row(
            "link_local_run",
            "local: run_command `echo hi`",
            local.run_command,
        )
        .row(
            "link_far_run",
            "far: run_command `echo hi`",
            far.run_command,
        )
        .row(
            "link_local_keys_wait",
            "local: send_keys + wait_for_text",
            local.keys_and_wait,
        )
        .row(
            "link_far_keys_wait",
            "far: send_keys + wait_for_text",
            far.keys_and_wait,
        )
        .row(
            "link_local_capture",
            "local: capture_pane",
            local.capture_pane,
        )
        .row("link_far_capture", "far: capture_pane", far.capture_pane)
        .row(
            "link_local_awaiting",
            format!("local: `read -s` prompt printed to awaiting_input (settle {SETTLE_MS} ms)"),
            local.awaiting_input,
        )
        .row(
            "link_far_awaiting",
            format!("far: `read -s` prompt printed to awaiting_input (settle {SETTLE_MS} ms)"),
            far.awaiting_input,
        )
        .ratio(
            "link_rtt_ms",
            "round trip of the link, ms (median)",
            rtt.as_secs_f64() * 1e3,
        )
        .ratio(
            "link_extra_rtts_run_command",
            "far - local, in round trips: run_command `echo hi` (target <= 2)",
            trips(&local.run_command, &far.run_command),
        )
        .ratio(
            "link_extra_rtts_keys_wait",
            "far - local, in round trips: send_keys + wait_for_text",
            trips(&local.keys_and_wait, &far.keys_and_wait),
        )
        .ratio(
            "link_extra_rtts_capture",
            "far - local, in round trips: capture_pane",
            trips(&local.capture_pane, &far.capture_pane),
        )
        .ratio(
            "link_extra_rtts_awaiting",
            "far - local, in round trips: awaiting_input of `read -s`",
            trips(&local.awaiting_input, &far.awaiting_input),
        )
        .ratio(
            "link_far_awaiting_over_settle",
            "far - settle, in round trips: awaiting_input of `read -s` (target <= 2)",
            over_settle,
        )
        .note(format!(
            "the link: a relay on loopback holding every byte {} ms each way, between ssh and a \
             private sshd; medians of {RUNS} calls of each kind in a row, alternating between \
             the hosts",
            DELAY.as_millis()
        ))
}
