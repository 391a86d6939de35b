//! `termpilot run` with a detach binding, driven through a real terminal: a
//! pane of a private tmux server plays the person's terminal, and the command
//! runs in a pane of a second private server (termpilot's).

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

/// Generous: the machines tests run on are shared, and a bound costs time
/// only when a test fails.
const LIMIT: Duration = Duration::from_secs(30);

/// A private tmux server, killed (only it) when dropped.
struct Server(String);

impl Server {
    fn new(role: &str) -> Server {
        Server(format!("tp-run-{role}-{}", std::process::id()))
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.0, "-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `(session name, current command)` of every pane.
    fn panes(&self) -> Vec<(String, String)> {
        self.tmux(&[
            "list-panes",
            "-a",
            "-F",
            "#{session_name}\t#{pane_current_command}",
        ])
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(session, command)| (session.to_owned(), command.to_owned()))
        .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
        // tmux leaves its socket file behind, also when the server ended by itself.
        let _ = std::fs::remove_file(support::socket_path(&self.0));
    }
}

/// Polls `probe` until it returns `Some`, for at most [`LIMIT`]; the last value
/// it saw goes into the failure message.
fn eventually<T>(what: &str, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + LIMIT;
    loop {
        match probe() {
            Ok(found) => return found,
            Err(last) if Instant::now() >= deadline => {
                panic!("timed out waiting until {what}; last seen: {last}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// The command of the pane `termpilot run` created (its session is `run-PID`).
fn run_pane_command(agent: &Server) -> Result<String, String> {
    let panes = agent.panes();
    panes
        .iter()
        .find(|(session, _)| session.starts_with("run-"))
        .map(|(_, command)| command.clone())
        .ok_or_else(|| format!("{panes:?}"))
}

#[test]
fn the_pane_of_a_detachable_run_shows_the_program_not_a_shell() {
    let agent = Server::new("agent");
    let person = Server::new("person");
    let run = format!(
        "{} run -L {} --bind 'C-] d=detach' -- sleep 30",
        env!("CARGO_BIN_EXE_termpilot"),
        agent.0
    );
    person.tmux(&["new-session", "-d", "-x", "100", "-y", "30", &run]);

    eventually("the pane shows sleep as its program", || {
        run_pane_command(&agent).and_then(|command| match command.as_str() {
            "sleep" => Ok(()),
            _ => Err(command),
        })
    });

    // The person's terminal is attached (termpilot run reads its keys by
    // then): keys sent earlier could reach the terminal before anyone reads
    // them for bindings.
    eventually("the person's terminal is attached", || {
        let clients = agent.tmux(&["list-clients", "-F", "#{client_tty}"]);
        match clients.trim() {
            "" => Err("no client".to_owned()),
            _ => Ok(()),
        }
    });
    // Detached, the command keeps running in its pane, still named for it.
    person.tmux(&["send-keys", "-t", "%0", "C-]", "d"]);
    eventually("termpilot run has exited", || {
        let sessions = person.tmux(&["list-sessions", "-F", "#{session_name}"]);
        match sessions.trim() {
            "" => Ok(()),
            left => Err(left.to_owned()),
        }
    });
    assert_eq!(run_pane_command(&agent).as_deref(), Ok("sleep"));
}
