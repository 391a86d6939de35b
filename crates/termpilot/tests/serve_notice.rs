//! `termpilot serve` typed at a terminal says once, on stderr, that it speaks
//! MCP and waits for a client; started by a client (stdin a pipe), it says
//! nothing.

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NOTICE: &str = "speaking MCP on stdin/stdout and waiting for a client";

/// The private tmux socket of one test, killed and removed when dropped.
struct Socket(String);

impl Drop for Socket {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_file(support::socket_path(&self.0));
    }
}

/// Reads what `child` prints on `pipe` for up to `limit`, or until `until`
/// appears; then kills it.
fn read_for(
    child: std::process::Child,
    mut pipe: impl Read + Send + 'static,
    limit: Duration,
    until: &str,
) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(chunk) => seen.extend(chunk),
            Err(_) => break,
        }
        if String::from_utf8_lossy(&seen).contains(until) {
            break;
        }
    }
    end(child);
    String::from_utf8_lossy(&seen).into_owned()
}

/// Ends the server as a client does, by closing its input (a Ctrl-D through
/// the terminal, or the pipe's end), so that it removes its kept-output
/// directory; kills it only if it has not exited after a while.
fn end(mut child: std::process::Child) {
    use std::io::Write;
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(b"\x04");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn serve_at_a_terminal_says_what_it_waits_for() {
    let socket = Socket(format!("tp-notice-tty-{}", std::process::id()));
    // script(1) gives the server a terminal as its stdin.
    let line = format!("{} serve -L {}", env!("CARGO_BIN_EXE_termpilot"), socket.0);
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("script(1) runs");
    let terminal = child.stdout.take().expect("stdout is piped");
    let shown = read_for(child, terminal, Duration::from_secs(10), NOTICE);
    assert_eq!(shown.matches(NOTICE).count(), 1, "{shown:?}");
}

#[test]
fn serve_started_by_a_client_says_nothing() {
    let socket = Socket(format!("tp-notice-pipe-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_termpilot"))
        .args(["serve", "-L", &socket.0])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("termpilot runs");
    let stderr = child.stderr.take().expect("stderr is piped");
    let shown = read_for(child, stderr, Duration::from_secs(2), NOTICE);
    assert!(!shown.contains(NOTICE), "{shown:?}");
}
