//! Part 9: the same MCP calls and waits on a host reached over ssh and on
//! the local server, through one `termpilot serve --host ssh=ssh:ALIAS`, so
//! their ratio is what the ssh transport adds.
//!
//! The host is a private sshd on 127.0.0.1 (the tests' own helper), so the
//! far side is this machine: no network, only ssh's encryption and framing
//! and one more hop of pipes. Its tmux (`tmux -L termpilot`, started by
//! termpilot through ssh) is the benchmark's own: sshd's `SetEnv
//! TMUX_TMPDIR` puts its socket in a temporary directory, and the server is
//! killed through that socket at the end.

#[path = "../../../tmux/tests/support/sshd.rs"]
pub(crate) mod sshd;

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, ensure};
use serde_json::{Value, json};

use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::wake_lag::one_lag;
use crate::{MCP_CALLS, MCP_WARMUP, TERMPILOT, client_runtime, structured_str};

const TITLE: &str =
    "9. hosts: MCP calls and wait wake-up lag on an ssh host over loopback vs local";

/// The name termpilot knows the ssh host by (`ssh/%3`).
const HOST: &str = "ssh";

/// The local host's name in termpilot's arguments.
const LOCAL: &str = "local";

/// The socket name termpilot's tmux has on other hosts.
const FAR_SOCKET: &str = "termpilot";

const LAGS: usize = 50;
const LAG_WARMUP: usize = 3;

/// The wake-up panes' shell on both hosts. The far side's tmux starts
/// without the benchmark's `tmux.conf` (termpilot gives it `-f /dev/null`),
/// so the command is given with the session rather than left to tmux.
const SHELL: &str = "exec env HISTFILE=/dev/null bash --norc --noprofile";

/// Takes any number of keystrokes without running anything.
const CAT: &str = "cat > /dev/null";

pub fn hosts(server: &PrivateServer) -> anyhow::Result<Section> {
    if let Some(reason) = sshd::missing_reason() {
        return Ok(Section::new(TITLE).note(format!("skipped: {reason}")));
    }
    let far = FarTmux::create()?;
    let sshd = start_sshd(&far)?;
    let figures = client_runtime()?.block_on(measure(server, &sshd.config, &far));
    // The per-connection servers go first, taking ssh's master connection
    // with them; then the far side's tmux and its directory.
    drop(sshd);
    drop(far);
    Ok(section(&figures?))
}

/// The far side's tmux server, known by its `TMUX_TMPDIR`: killed and its
/// directory removed when dropped.
pub(crate) struct FarTmux {
    dir: tempfile::TempDir,
}

impl FarTmux {
    pub(crate) fn create() -> anyhow::Result<FarTmux> {
        let dir = tempfile::Builder::new()
            .prefix("tp-bench-far-")
            .tempdir()
            .context("cannot make the far side's TMUX_TMPDIR")?;
        Ok(FarTmux { dir })
    }

    fn dir(&self) -> anyhow::Result<&str> {
        (self.dir.path().to_str()).context("the temporary directory's path is not UTF-8")
    }

    /// Where tmux puts the socket `-L termpilot` in this `TMUX_TMPDIR`.
    fn socket(&self) -> anyhow::Result<std::path::PathBuf> {
        let uid = std::fs::metadata(self.dir.path())?.uid();
        Ok(self.dir.path().join(format!("tmux-{uid}")).join(FAR_SOCKET))
    }
}

impl Drop for FarTmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", FAR_SOCKET, "kill-server"])
            .env("TMUX_TMPDIR", self.dir.path())
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A private sshd whose sessions get the far side's `TMUX_TMPDIR`, checked
/// before any tmux runs through it, so the user's own `-L termpilot`
/// server is never touched.
pub(crate) fn start_sshd(far: &FarTmux) -> anyhow::Result<sshd::Sshd> {
    let dir = far.dir()?;
    let env = [("TMUX_TMPDIR", dir)];
    // The helper panics on failure (it serves tests); its message is printed.
    let sshd = std::panic::catch_unwind(|| sshd::Sshd::start_with_env(&env))
        .map_err(|_| anyhow!("the private sshd did not start"))?;
    let seen = sshd.ssh(&["printenv", "TMUX_TMPDIR"]);
    let seen = String::from_utf8_lossy(&seen.stdout);
    ensure!(
        seen.trim() == dir,
        "sshd's sessions do not get TMUX_TMPDIR={dir} (they see {seen:?}):\n{}",
        sshd.log_text()
    );
    Ok(sshd)
}

/// One host's figures.
struct HostFigures {
    list_panes: Summary,
    send_keys: Summary,
    capture_pane: Summary,
    wake_lag: Summary,
}

/// The benchmark's two sessions on one host.
struct Panes {
    /// The `cat` session, for `list_panes`.
    session: String,
    /// Its pane, for `send_keys` and `capture_pane`.
    cat: String,
    /// A shell pane, for the wake-up lag.
    shell: String,
}

impl Panes {
    async fn create(client: &mut McpClient, host: &str) -> anyhow::Result<Panes> {
        let arguments = json!({ "host": host, "name": "bench-host-cat", "command": CAT });
        let created = client.call_tool("create_session", arguments).await?;
        let session = structured_str(&created, "session")?.to_owned();
        let cat = structured_str(&created, "pane")?.to_owned();
        let arguments = json!({ "host": host, "name": "bench-host-wake", "command": SHELL });
        let created = client.call_tool("create_session", arguments).await?;
        let shell = structured_str(&created, "pane")?.to_owned();
        Ok(Panes {
            session,
            cat,
            shell,
        })
    }
}

async fn measure(
    server: &PrivateServer,
    ssh_config: &Path,
    far: &FarTmux,
) -> anyhow::Result<[HostFigures; 2]> {
    let host = format!("{HOST}=ssh:{}", sshd::ALIAS);
    let extra: [&OsStr; 4] = [
        "--host".as_ref(),
        host.as_ref(),
        "--ssh-config".as_ref(),
        ssh_config.as_os_str(),
    ];
    let binary = Path::new(TERMPILOT);
    let mut client = McpClient::spawn_with(binary, server.name(), server.config(), &extra)?;
    client.initialize().await?;
    let local = Panes::create(&mut client, LOCAL).await?;
    // The first call on the host connects to it (ssh, then tmux).
    let remote = Panes::create(&mut client, HOST).await?;
    ensure!(
        remote.cat.starts_with("ssh/%") && !local.cat.contains('/'),
        "unexpected pane ids: {} and {}",
        local.cat,
        remote.cat
    );
    let socket = far.socket()?;
    ensure!(
        socket.exists(),
        "the far side's tmux has no socket at {}",
        socket.display()
    );
    let figures = time_both(&mut client, [&local, &remote]).await?;
    client.close().await?;
    Ok(figures)
}

/// Times every call on both hosts, local first.
async fn time_both(client: &mut McpClient, panes: [&Panes; 2]) -> anyhow::Result<[HostFigures; 2]> {
    let hosts = [LOCAL, HOST];
    let list = |i: usize| json!({ "host": hosts[i], "session": panes[i].session });
    let keys = |i: usize| json!({ "pane": panes[i].cat, "text": "x", "enter": false });
    let capture = |i: usize| json!({ "pane": panes[i].cat });
    let listed = client.call_tool("list_panes", list(1)).await?;
    ensure!(
        listed["structuredContent"]["panes"]
            .as_array()
            .map(Vec::len)
            == Some(1),
        "list_panes on {HOST} does not list its one bench pane: {listed}"
    );
    let [list_local, list_ssh] = time_alternately(client, "list_panes", [list(0), list(1)]).await?;
    let [keys_local, keys_ssh] = time_alternately(client, "send_keys", [keys(0), keys(1)]).await?;
    let [capture_local, capture_ssh] =
        time_alternately(client, "capture_pane", [capture(0), capture(1)]).await?;
    let [lag_local, lag_ssh] = lags_alternately(client, [&panes[0].shell, &panes[1].shell]).await?;
    Ok([
        HostFigures {
            list_panes: list_local,
            send_keys: keys_local,
            capture_pane: capture_local,
            wake_lag: lag_local,
        },
        HostFigures {
            list_panes: list_ssh,
            send_keys: keys_ssh,
            capture_pane: capture_ssh,
            wake_lag: lag_ssh,
        },
    ])
}

/// Times tool `name` with each of `arguments`, one call of each in turn, so
/// that a change in the machine's load weighs on both alike.
async fn time_alternately(
    client: &mut McpClient,
    name: &str,
    arguments: [Value; 2],
) -> anyhow::Result<[Summary; 2]> {
    let mut samples = [Vec::with_capacity(MCP_CALLS), Vec::with_capacity(MCP_CALLS)];
    for round in 0..MCP_WARMUP + MCP_CALLS {
        for (side, arguments) in arguments.iter().enumerate() {
            let arguments = arguments.clone();
            let start = Instant::now();
            client.call_tool(name, arguments).await?;
            if round >= MCP_WARMUP {
                samples[side].push(start.elapsed());
            }
        }
    }
    Ok(samples.map(Summary::of))
}

/// The wake-up lag of each of `panes`, one wait of each in turn.
async fn lags_alternately(
    client: &mut McpClient,
    panes: [&str; 2],
) -> anyhow::Result<[Summary; 2]> {
    let mut samples: [Vec<Duration>; 2] = [Vec::with_capacity(LAGS), Vec::with_capacity(LAGS)];
    for round in 0..LAG_WARMUP + LAGS {
        for (side, pane) in panes.iter().enumerate() {
            let lag = one_lag(client, pane).await?;
            if round >= LAG_WARMUP {
                samples[side].push(lag);
            }
        }
    }
    Ok(samples.map(Summary::of))
}

fn section([local, ssh]: &[HostFigures; 2]) -> Section {
    // How many times slower the ssh host is, by median.
    let slower = |local: &Summary, ssh: &Summary| local.times_faster_than(ssh);
    Section::new(TITLE)
        .row(
            "host_local_list_panes",
            "local: list_panes (one session)",
            local.list_panes,
        )
        .row(
            "host_ssh_list_panes",
            "ssh host: list_panes (one session)",
            ssh.list_panes,
        )
        .row(
            "host_local_send_keys",
            "local: send_keys (\"x\" into a `cat` pane)",
            local.send_keys,
        )
        .row(
            "host_ssh_send_keys",
            "ssh host: send_keys (\"x\" into a `cat` pane)",
            ssh.send_keys,
        )
        .row(
            "host_local_capture_pane",
            "local: capture_pane (that pane)",
            local.capture_pane,
        )
        .row(
            "host_ssh_capture_pane",
            "ssh host: capture_pane (that pane)",
            ssh.capture_pane,
        )
        .row(
            "host_local_wake_lag",
            "local: wait wake-up lag (printf to result)",
            local.wake_lag,
        )
        .row(
            "host_ssh_wake_lag",
            "ssh host: wait wake-up lag (printf to result)",
            ssh.wake_lag,
        )
        .ratio(
            "host_ssh_vs_local_list_panes",
            "ssh / local: list_panes (target <= 2)",
            slower(&local.list_panes, &ssh.list_panes),
        )
        .ratio(
            "host_ssh_vs_local_send_keys",
            "ssh / local: send_keys (target <= 2)",
            slower(&local.send_keys, &ssh.send_keys),
        )
        .ratio(
            "host_ssh_vs_local_capture_pane",
            "ssh / local: capture_pane (target <= 2)",
            slower(&local.capture_pane, &ssh.capture_pane),
        )
        .ratio(
            "host_ssh_vs_local_wake_lag",
            "ssh / local: wait wake-up lag",
            slower(&local.wake_lag, &ssh.wake_lag),
        )
        .note(
            "targets: calls on the ssh host <= 2x local (ratios: times slower, by median), \
             wake-up lag on the ssh host < 5 ms",
        )
        .note(
            "ssh host: a private sshd on 127.0.0.1 and one ssh master connection; the far \
             side is this machine, so this is what ssh adds without a network; calls alternate \
             between the hosts",
        )
}
