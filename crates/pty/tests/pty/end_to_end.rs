//! The real `termpilot run`, when `TERMPILOT_BIN` names the built binary (skipped
//! otherwise: a test of this crate cannot build another package's binary).

use std::process::Command;

use crate::fixture::{Fixture, RECORD};
use crate::harness::{OuterTerminal, wait_bounded};

fn binary() -> Option<String> {
    let bin = std::env::var("TERMPILOT_BIN")
        .ok()
        .filter(|b| !b.is_empty());
    if bin.is_none() {
        eprintln!("TERMPILOT_BIN is not set: skipping the end-to-end test");
    }
    bin
}

#[test]
fn termpilot_run_binds_keys_and_writes_events_to_an_inherited_descriptor() {
    let Some(bin) = binary() else { return };
    // The shell opens descriptor 3 on the events file and hands it to termpilot.
    let mut command = Command::new("sh");
    command.args(["-c", r#"exec 3>>"$EV"; exec "$@""#, "sh", &bin, "run"]);
    command.args(["--bind", "C-c=event:ctrl-c", "--bind", "M-c=event:alt-c"]);
    command.args(["--bind", "C-]=terminate", "--escape-timeout-ms", "50"]);
    command.args(["--events", "fd:3", "--", "sh", "-c", RECORD]);
    let fixture = Fixture::start_command(command);
    fixture.assert_raw();
    fixture.terminal.write(b"a\x03b\x1bcc\xc3\xa9");
    fixture.terminal.write(b"\x1b");
    fixture.assert_recorded("abc\u{e9}\x1b".as_bytes());
    assert_eq!(fixture.wait_for_events(2), ["ctrl-c", "alt-c"]);
    assert_eq!(fixture.finish(), 128 + 15);
}

#[test]
fn termpilot_run_exits_with_the_child_status() {
    let Some(bin) = binary() else { return };
    let mut run = Command::new(&bin);
    run.args(["run", "--", "sh", "-c", "printf READY; exit 7"]);
    let mut terminal = OuterTerminal::start(run);
    terminal.wait_for_output("READY");
    assert_eq!(terminal.wait().code(), Some(7));
}

#[test]
fn termpilot_run_with_a_detach_binding_leaves_the_command_in_a_tmux_pane() {
    let Some(bin) = binary() else { return };
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("no tmux: skipping the detach test");
        return;
    }
    let socket = format!("termpilot-pty-test-{}", std::process::id());
    let mut run = Command::new(&bin);
    // A detach binding implies --detachable.
    run.args(["run", "-L", &socket, "--bind", "C-]=detach", "--"]);
    run.args(["sh", "-c", "printf 'READY\\n'; exec sleep 30"]);
    let tmux = TmuxServer(socket);
    let mut terminal = OuterTerminal::start(run);
    terminal.wait_for_output("READY");
    terminal.write(b"\x1d");
    assert_eq!(terminal.wait().code(), Some(0));
    // One live pane, in a session named for termpilot run, still showing the command.
    let panes = tmux.run(&["list-panes", "-a", "-F", "#{session_name} #{pane_dead}"]);
    assert!(
        panes.starts_with("run-") && panes.ends_with(" 0\n"),
        "panes: {panes:?}"
    );
    let session = panes.split(' ').next().unwrap();
    let screen = tmux.run(&["capture-pane", "-p", "-t", &format!("={session}:")]);
    assert!(screen.contains("READY"), "screen: {screen:?}");
    assert_eq!(terminal.modes(), terminal.modes_at_start);
}

#[test]
fn termpilot_run_detachable_interrupts_the_pane_and_returns_its_status() {
    let Some(bin) = binary() else { return };
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("no tmux: skipping the detachable interrupt test");
        return;
    }
    let socket = format!("termpilot-pty-test-int-{}", std::process::id());
    let _tmux = TmuxServer(socket.clone());
    let mut run = Command::new(&bin);
    run.args([
        "run",
        "--detachable",
        "-L",
        &socket,
        "--bind",
        "C-c=interrupt",
        "--",
    ]);
    run.args([
        "sh",
        "-c",
        "trap 'exit 9' INT; printf 'READY\\n'; while :; do sleep 0.02; done",
    ]);
    let mut terminal = OuterTerminal::start(run);
    terminal.wait_for_output("READY");
    terminal.write(b"\x03");
    // The pane's command got SIGINT (not the attach client) and its status came back.
    assert_eq!(terminal.wait().code(), Some(9));
    assert_eq!(terminal.modes(), terminal.modes_at_start);
}

/// A tmux server of this test's own, killed at the end.
struct TmuxServer(String);

impl TmuxServer {
    fn run(&self, args: &[&str]) -> String {
        let mut command = Command::new("tmux");
        command.arg("-L").arg(&self.0).args(args);
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        wait_bounded(&mut child);
        text
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        // tmux leaves its socket file behind, even when the server exits by itself.
        let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".into());
        let uid = rustix::process::getuid().as_raw();
        let _ = std::fs::remove_file(format!("{dir}/tmux-{uid}/{}", self.0));
    }
}
