//! A bare `tmux -C` client: the floor that tmux itself sets for any
//! control-mode tool, measured in the same moments as termpilot.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use termpilot_control::Command;

use crate::server::PrivateServer;
use crate::stats::Summary;
use crate::wake_lag::{marker_command, printed_at};

/// Bounds every answer, so a stalled tmux fails the run instead of hanging it.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);

/// What the reader thread passes on.
enum Seen {
    /// A reply of this client's own command ends (`%end` or `%error`).
    End(String),
    /// A `WAKE-<microseconds>` marker arrived in `%output`, at this time.
    Marker {
        printed: Duration,
        arrived: Duration,
    },
}

/// `tmux -C attach-session -f ignore-size[,no-output]`, its stdout read by a
/// thread of its own. Detaches at the end of a measurement; killed when
/// dropped before that.
pub struct BareClient {
    child: Child,
    stdin: ChildStdin,
    seen: mpsc::Receiver<Seen>,
}

impl BareClient {
    /// Attaches to `session`. Without `output`, every line tmux sends is
    /// part of a reply, so a round trip is tmux's command latency alone.
    pub fn attach(server: &PrivateServer, session: &str, output: bool) -> anyhow::Result<Self> {
        let flags = if output {
            "ignore-size"
        } else {
            "ignore-size,no-output"
        };
        let mut child = server
            .tmux()
            .args(["-C", "attach-session", "-f", flags, "-t"])
            .arg(format!("={session}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run tmux -C")?;
        let stdin = child.stdin.take().context("stdin is piped")?;
        let stdout = child.stdout.take().context("stdout is piped")?;
        let (tx, seen) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(seen) = classify(&line) {
                    let _ = tx.send(seen);
                }
            }
        });
        Ok(BareClient { child, stdin, seen })
    }

    /// Times `runs` round trips of `display-message -p` after `warmup`
    /// untimed ones, then detaches.
    pub fn round_trips(mut self, warmup: usize, runs: usize) -> anyhow::Result<Summary> {
        let mut samples = Vec::with_capacity(runs);
        for run in 0..warmup + runs {
            let start = Instant::now();
            self.write(b"display-message -p x\n")?;
            let end = self.next_end()?;
            ensure!(end.starts_with("%end"), "display-message failed: {end}");
            if run >= warmup {
                samples.push(start.elapsed());
            }
        }
        self.detach()?;
        Ok(Summary::of(samples))
    }

    /// Types part 4's marker command into `pane` (printing `delay` after its
    /// line arrives) `runs` times after `warmup`, and returns the time from
    /// each print to its `%output` reaching this client. Needs `output`.
    pub fn marker_lags(
        mut self,
        pane: &str,
        delay: Duration,
        warmup: usize,
        runs: usize,
    ) -> anyhow::Result<Summary> {
        let text = Command::new("send-keys")
            .opt("-t", pane)
            .flag("-l")
            .arg(marker_command(delay))
            .build()?;
        let enter = Command::new("send-keys")
            .opt("-t", pane)
            .arg("Enter")
            .build()?;
        let mut samples = Vec::with_capacity(runs);
        for run in 0..warmup + runs {
            self.write(&[&text[..], &enter[..]].concat())?;
            let lag = self.next_marker()?;
            if run >= warmup {
                samples.push(lag);
            }
        }
        self.detach()?;
        Ok(Summary::of(samples))
    }

    fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.stdin.write_all(bytes)?;
        Ok(self.stdin.flush()?)
    }

    fn next_end(&mut self) -> anyhow::Result<String> {
        loop {
            if let Seen::End(end) = self.next()? {
                return Ok(end);
            }
        }
    }

    fn next_marker(&mut self) -> anyhow::Result<Duration> {
        loop {
            if let Seen::Marker { printed, arrived } = self.next()? {
                return arrived
                    .checked_sub(printed)
                    .context("a marker arrived before it was printed");
            }
        }
    }

    fn next(&mut self) -> anyhow::Result<Seen> {
        (self.seen.recv_timeout(ANSWER_TIMEOUT))
            .with_context(|| format!("the bare control client got nothing in {ANSWER_TIMEOUT:?}"))
    }

    /// Detaches (an empty line) and waits for the client to exit.
    fn detach(&mut self) -> anyhow::Result<()> {
        self.write(b"\n")?;
        let deadline = Instant::now() + Duration::from_secs(3);
        while self.child.try_wait()?.is_none() {
            ensure!(Instant::now() < deadline, "tmux -C did not detach");
            thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }
}

impl Drop for BareClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What a line from tmux means to the measurements, if anything.
fn classify(line: &str) -> Option<Seen> {
    // Blocks of this client's own commands have flags 1.
    let ours = line.split(' ').nth(3) == Some("1");
    if (line.starts_with("%end ") || line.starts_with("%error ")) && ours {
        return Some(Seen::End(line.to_owned()));
    }
    if !line.starts_with("%output ") {
        return None;
    }
    let arrived = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
    let at = line.find("WAKE-")?;
    let marker = line.get(at..at + "WAKE-".len() + 16)?;
    let printed = printed_at(marker).ok()?;
    Some(Seen::Marker { printed, arrived })
}
