//! `termpilot status` and `termpilot stop` against private tmux servers.

mod support;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_termpilot");

/// A private tmux socket, its server killed and socket file removed at the end.
struct Socket(String);

impl Socket {
    fn new(tag: &str) -> Socket {
        Socket(format!("tp-admin-{tag}-{}", std::process::id()))
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.0, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn termpilot(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .args(["-L", &self.0])
            .stdin(Stdio::null())
            .output()
            .expect("termpilot runs")
    }

    fn running(&self) -> bool {
        self.tmux(&["list-sessions"]).status.success()
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        let _ = std::fs::remove_file(support::socket_path(&self.0));
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn status_and_stop_of_a_server_serve_started() {
    let socket = Socket::new("serve");
    let mut serve = Command::new(BIN)
        .args(["serve", "-L", &socket.0])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let status = socket.termpilot(&["status"]);
        if text(&status).contains("started by termpilot") || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // Closing its input ends serve as a client does (it removes its kept
    // outputs); the tmux server stays.
    drop(serve.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    while serve.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = serve.kill();
    let _ = serve.wait();
    let shown = text(&status);
    assert!(
        shown.contains("server: running, started by termpilot"),
        "{shown}"
    );
    assert!(
        shown.contains("  main: 1 windows, 0 people attached"),
        "{shown}"
    );
    // The sessions outlive serve.
    assert!(socket.running());
    let stopped = socket.termpilot(&["stop"]);
    assert!(stopped.status.success(), "{}", text(&stopped));
    assert!(!socket.running(), "the server still runs");
    let file = support::socket_path(&socket.0);
    assert!(!file.exists(), "stop left {}", file.display());
    let again = socket.termpilot(&["status"]);
    assert!(
        text(&again).contains("server: not running"),
        "{}",
        text(&again)
    );
}

#[test]
fn stop_refuses_a_server_termpilot_did_not_start_unless_forced() {
    let socket = Socket::new("plain");
    assert!(
        socket
            .tmux(&["new-session", "-d", "-s", "mine"])
            .status
            .success()
    );
    let refused = socket.termpilot(&["stop"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("not started by termpilot"),
        "{}",
        text(&refused)
    );
    assert!(socket.running(), "a refused stop ended the server");
    let forced = socket.termpilot(&["stop", "--force"]);
    assert!(forced.status.success(), "{}", text(&forced));
    assert!(!socket.running());
}

#[test]
fn stop_without_a_terminal_refuses_while_people_are_attached() {
    let socket = Socket::new("people");
    assert!(
        socket
            .tmux(&["new-session", "-d", "-s", "work"])
            .status
            .success()
    );
    assert!(
        socket
            .tmux(&["set-option", "-g", "@termpilot-started", "1"])
            .status
            .success()
    );
    // A person's client: tmux attach under script(1), which gives it a terminal.
    let attach = format!("tmux -L {} attach -t work", socket.0);
    let mut person = Command::new("script")
        .args(["-qec", &attach, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("script(1) runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let clients = socket.tmux(&["list-clients", "-F", "#{client_control_mode}"]);
        if String::from_utf8_lossy(&clients.stdout)
            .lines()
            .any(|l| l == "0")
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let refused = socket.termpilot(&["stop"]);
    let _ = person.kill();
    let _ = person.wait();
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("1 people are attached"),
        "{}",
        text(&refused)
    );
    assert!(socket.running(), "a refused stop ended the server");
}
