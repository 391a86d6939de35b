//! Hosts other than the local server: an `exec:` host that runs tmux under
//! another `TMUX_TMPDIR` (a separate machine, as far as termpilot can tell),
//! and ssh hosts that cannot be reached.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::{LIMIT, foreground};
use termpilot_tmux::hosts::HostSpec;
use termpilot_tmux::{
    CommandEnd, EngineConfig, Error, HostOptions, Hosts, NewSession, Outcome, TextWait,
};

/// A directory standing for another machine's `/tmp`: its tmux server is
/// killed and the directory removed when the test ends.
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            dir: tempfile::Builder::new()
                .prefix("tp-host-")
                .tempdir()
                .expect("temp dir"),
        }
    }

    /// The host's panes run bash, whatever shell runs the tests (the
    /// commands typed below are bash's), with this directory for a home:
    /// the user's own `~/.bashrc` is not read (one that starts a tool's
    /// setup can keep a new shell busy for a minute, e.g. a `pyenv rehash`
    /// waiting on a lock that a shell killed mid-start left behind).
    fn spec(&self, name: &str) -> HostSpec {
        let dir = self.dir.path().display();
        format!("{name}=exec:env TMUX_TMPDIR={dir} HOME={dir} SHELL=/bin/bash")
            .parse()
            .expect("spec parses")
    }

    /// [`Machine::spec`] for a machine where no `sh` can be started from
    /// outside (its `PATH` holds only tmux and the few programs a dump of
    /// `/proc` uses): its processes can be read only through its tmux
    /// server.
    fn spec_without_sh(&self, name: &str) -> HostSpec {
        let bin = self.dir.path().join("bin");
        std::fs::create_dir(&bin).expect("bin directory");
        for program in ["tmux", "od", "tr", "ls", "stty"] {
            let found = Command::new("which")
                .arg(program)
                .output()
                .expect("which runs");
            let path = String::from_utf8_lossy(&found.stdout).trim().to_owned();
            assert!(!path.is_empty(), "{program} is installed");
            std::os::unix::fs::symlink(path, bin.join(program)).expect("link");
        }
        let dir = self.dir.path().display();
        let bin = bin.display();
        format!("{name}=exec:env TMUX_TMPDIR={dir} HOME={dir} SHELL=/bin/bash PATH={bin}")
            .parse()
            .expect("spec parses")
    }

    /// Runs tmux against termpilot's server on this "machine".
    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .env("TMUX_TMPDIR", self.dir.path())
            .args(["-L", "termpilot"])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// The control clients are the connection: ends them (the processes
    /// the engine started) as a dropped connection would; the server stays.
    fn drop_connection(&self) {
        let clients = self.tmux(&["list-clients", "-F", "#{client_pid}"]);
        let pids: Vec<i32> = String::from_utf8_lossy(&clients.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        assert!(!pids.is_empty(), "the engine's clients are listed");
        for pid in pids {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }

    fn socket(&self) -> PathBuf {
        let uid = rustix_uid();
        self.dir
            .path()
            .join(format!("tmux-{uid}"))
            .join("termpilot")
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

fn rustix_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
}

fn options(dir: &Path) -> HostOptions {
    HostOptions {
        ssh_config: None,
        timeout: Duration::from_secs(5),
        control_dir: dir.to_owned(),
    }
}

/// Hosts whose local server is a test server that is never started.
fn hosts(specs: &[HostSpec], control: &Path) -> Hosts {
    let local = EngineConfig {
        socket: termpilot_tmux::Socket::Name("tp-never-started".into()),
        host: None,
        ..EngineConfig::default()
    };
    Hosts::new(local, specs, &options(control)).expect("hosts")
}

#[tokio::test]
async fn an_exec_host_runs_its_own_server() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    assert!(
        hosts.connected("box").is_none(),
        "nothing connects up front"
    );
    let engine = tokio::time::timeout(LIMIT, hosts.engine("box"))
        .await
        .expect("in time")
        .expect("connects");
    assert!(machine.socket().exists(), "the server lives on the host");
    let created = engine
        .create_session(&NewSession {
            name: Some("work".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let report = engine
        .run_command(created.pane, "echo $TMUX_TMPDIR; echo made-$((6*7))", LIMIT)
        .await
        .unwrap();
    assert_eq!(report.exit_code(), Some(0), "{report:?}");
    assert!(report.output.contains("made-42"), "{report:?}");
    assert!(
        report
            .output
            .contains(&machine.dir.path().display().to_string()),
        "the pane runs on the host: {report:?}"
    );
    let listed = machine.tmux(&["list-sessions", "-F", "#{session_name}"]);
    let names = String::from_utf8_lossy(&listed.stdout);
    assert!(names.lines().any(|n| n == "work"), "{names}");
    // The local server was never needed.
    assert!(hosts.connected("local").is_none());
}

#[tokio::test]
async fn a_dropped_connection_ends_a_wait_with_host_lost_and_the_next_call_reconnects() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    let engine = hosts.engine("box").await.unwrap();
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    let spec = TextWait {
        patterns: vec![termpilot_tmux::Needle::Literal("never-printed".into())],
        timeout: Duration::from_secs(30),
        stop: Vec::new(),
        match_case: true,
        since: None,
        include_screen: false,
    };
    let waiting = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.wait_for_text(created.pane, &spec).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    machine.drop_connection();
    let report = tokio::time::timeout(LIMIT, waiting)
        .await
        .expect("the wait ends in time")
        .unwrap()
        .unwrap();
    assert_eq!(report.outcome, Outcome::HostLost, "{report:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The next call connects again, to the same server.
    let sessions = tokio::time::timeout(LIMIT, engine.list_sessions())
        .await
        .expect("in time")
        .expect("reconnects");
    assert!(!sessions.is_empty());
}

/// Runs `command` in a new session on `engine`'s host and drops the
/// connection `after_ms` later: the call's report, which says the host was
/// lost, and how long after the drop it came.
async fn cut_by_a_drop(
    machine: &Machine,
    engine: &termpilot_tmux::Engine,
    command: &'static str,
    after_ms: u64,
) -> (termpilot_tmux::CommandReport, Duration) {
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    let running = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.run_command(created.pane, command, LIMIT).await })
    };
    tokio::time::sleep(Duration::from_millis(after_ms)).await;
    let dropped = Instant::now();
    machine.drop_connection();
    let report = tokio::time::timeout(LIMIT, running)
        .await
        .expect("the command's call ends in time")
        .unwrap()
        .expect("a report, not a closed pane");
    assert_eq!(report.end, CommandEnd::HostLost, "{report:?}");
    (report, dropped.elapsed())
}

#[tokio::test]
async fn a_command_whose_host_drops_keeps_its_id_for_after_the_reconnect() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    let engine = hosts.engine("box").await.unwrap();
    let (report, took) = cut_by_a_drop(&machine, &engine, "sleep 3; echo finished", 800).await;
    assert_eq!(report.exit_code(), None, "{report:?}");
    assert!(took < Duration::from_secs(2), "{report:?}");
    // The next call connects again and picks the command up.
    let done = tokio::time::timeout(LIMIT, engine.wait_for_command(&report.id, LIMIT))
        .await
        .expect("in time")
        .expect("the id is still known");
    assert_eq!(done.end, CommandEnd::Exited(0), "{done:?}");
    assert!(done.output.contains("finished"), "{done:?}");
}

#[tokio::test]
async fn a_command_that_ends_while_its_host_is_unreachable_ends_unseen_after_the_reconnect() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    let engine = hosts.engine("box").await.unwrap();
    let (report, _) = cut_by_a_drop(&machine, &engine, "sleep 1; echo finished", 400).await;
    // The command ends while no client reads the pane: tmux never sends its
    // end marker to the client that attaches later.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let started = Instant::now();
    let wait = Duration::from_secs(6);
    let done = tokio::time::timeout(LIMIT, engine.wait_for_command(&report.id, wait))
        .await
        .expect("in time")
        .expect("the id is still known");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "found ended at once, not at the timeout: {done:?}"
    );
    assert_eq!(done.end, CommandEnd::EndedUnseen, "{done:?}");
    assert!(
        engine.wait_for_command(&report.id, LIMIT).await.is_err(),
        "an ended command's id is forgotten"
    );
}

#[tokio::test]
async fn an_unreachable_ssh_host_fails_fast_with_ssh_s_message() {
    let control = tempfile::tempdir().unwrap();
    let config = control.path().join("ssh_config");
    // Nothing listens on port 1 of the loopback address.
    std::fs::write(
        &config,
        "Host nowhere\n  HostName 127.0.0.1\n  Port 1\n  UserKnownHostsFile /dev/null\n",
    )
    .unwrap();
    let specs: Vec<HostSpec> = ["gone=ssh:nowhere", "unknown=ssh:no-such-host.invalid"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let local = EngineConfig {
        socket: termpilot_tmux::Socket::Name("tp-never-started".into()),
        host: None,
        ..EngineConfig::default()
    };
    let options = HostOptions {
        ssh_config: Some(config),
        ..options(control.path())
    };
    let hosts = Hosts::new(local, &specs, &options).unwrap();
    for (name, says) in [("gone", "refused"), ("unknown", "resolve")] {
        let started = Instant::now();
        let error = tokio::time::timeout(LIMIT, hosts.engine(name))
            .await
            .expect("fails in time")
            .expect_err("cannot connect");
        let message = error.to_string();
        assert!(matches!(error, Error::Connect { .. }), "{error:?}");
        assert!(message.contains(&format!("host {name}")), "{message}");
        assert!(message.to_lowercase().contains(says), "{message}");
        assert!(started.elapsed() < Duration::from_secs(8), "{name}");
        let (remembered, _) = hosts
            .recent_failure(name)
            .expect("the failure is remembered");
        assert_eq!(remembered.to_string(), message);
    }
    assert!(matches!(
        hosts.engine("elsewhere").await,
        Err(Error::UnknownHost { .. })
    ));
}

#[tokio::test]
async fn a_password_prompt_on_a_host_is_read_there() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    let engine = hosts.engine("box").await.unwrap();
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    let typed = termpilot_tmux::Input {
        text: Some("read -s -p 'Password: ' pw; echo got-it".into()),
        enter: true,
        ..termpilot_tmux::Input::default()
    };
    engine.send_input(created.pane, &typed).await.unwrap();
    let spec = TextWait {
        patterns: vec![termpilot_tmux::Needle::Literal("never-printed".into())],
        stop: Vec::new(),
        match_case: true,
        since: None,
        include_screen: false,
        timeout: LIMIT,
    };
    let report = engine
        .wait_for_text_or_input(created.pane, &spec, Duration::from_millis(300))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::AwaitingInput, "{report:?}");
    let input = report.input.expect("what it waits for");
    assert!(input.secret, "{input:?}");
    assert!(input.prompt.contains("Password:"), "{input:?}");
}

#[tokio::test]
async fn a_host_s_processes_are_read_through_its_tmux_server() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec_without_sh("box")], control.path());
    let engine = hosts.engine("box").await.unwrap();
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    // run_command finds the shell at its prompt and back in charge after
    // the command: both read the host's processes.
    let report = engine
        .run_command(created.pane, "echo made-$((6*7))", LIMIT)
        .await
        .unwrap();
    assert_eq!(report.exit_code(), Some(0), "{report:?}");
    assert!(report.output.contains("made-42"), "{report:?}");
    let typed = termpilot_tmux::Input {
        text: Some("read -s -p 'Password: ' pw; echo got-it".into()),
        enter: true,
        ..termpilot_tmux::Input::default()
    };
    engine.send_input(created.pane, &typed).await.unwrap();
    let input = tokio::time::timeout(LIMIT, async {
        loop {
            if let Some(input) = engine.awaiting_input(created.pane).await.unwrap() {
                return input;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the prompt is found in time");
    assert!(
        input.secret,
        "echo is off, as the host's terminal says: {input:?}"
    );
    assert!(input.prompt.contains("Password:"), "{input:?}");
    // Nothing was left in the server's paste buffers, nor shown in a pane.
    let buffers = machine.tmux(&["list-buffers"]);
    assert_eq!(String::from_utf8_lossy(&buffers.stdout), "");
    let modes = machine.tmux(&["list-panes", "-a", "-F", "#{pane_in_mode}"]);
    let modes = String::from_utf8_lossy(&modes.stdout);
    assert!(modes.lines().all(|mode| mode == "0"), "{modes}");
}

#[tokio::test]
async fn on_a_host_an_end_marker_counts_only_once_the_shell_has_the_terminal() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    let engine = hosts.engine("box").await.unwrap();
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    // Reads the running command's nonce off its own screen (through the
    // host's tmux), prints a forged end marker claiming success, runs on.
    let script = machine.dir.path().join("forger");
    std::fs::write(
        &script,
        "for i in 1 2 3 4 5 6 7 8 9 10; do\n\
         n=$(tmux capture-pane -p -t \"$TMUX_PANE\" | grep -o 'tp[0-9a-f]\\{16\\}' | head -n 1)\n\
         [ -n \"$n\" ] && break; sleep 0.1\n\
         done\n\
         [ -n \"$n\" ] && echo forger-found-the-nonce\n\
         printf '\\033]7770;%s;0\\007' \"$n\"\n\
         sleep 1\n\
         exit 42\n",
    )
    .unwrap();
    let command = format!("sh {}", script.display());
    let report = engine
        .run_command(created.pane, &command, LIMIT)
        .await
        .unwrap();
    assert!(
        report.output.contains("forger-found-the-nonce"),
        "{report:?}"
    );
    assert_eq!(report.end, CommandEnd::Exited(42));
    // A line the host's shell cannot parse ends at once there too.
    let broken = engine
        .run_command(created.pane, "echo )", LIMIT)
        .await
        .unwrap();
    assert_eq!(
        broken.end,
        CommandEnd::NotRun(termpilot_tmux::NotRun::SyntaxError),
        "{broken:?}"
    );
    let next = engine
        .run_command(created.pane, "echo next", LIMIT)
        .await
        .unwrap();
    assert_eq!((next.exit_code(), next.output.as_str()), (Some(0), "next"));
}

/// Input to a pane goes on one line behind a guard that tmux runs first
/// (no question before it): a pane a person holds on the host gets none of
/// it, typed or pasted, and gets it again once handed back.
#[tokio::test]
async fn a_pane_a_person_holds_on_a_host_gets_no_agent_keys() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    let engine = hosts.engine("box").await.unwrap();
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    let pane = created.pane.to_string();
    let held = termpilot_tmux::person::HELD_OPTION;
    let note = "a person (test), since now";
    let set = machine.tmux(&["set-option", "-p", "-t", &pane, held, note]);
    assert!(set.status.success(), "{set:?}");
    let typed = termpilot_tmux::Input {
        text: Some("echo agent-typed-$((6*7))".into()),
        enter: true,
        ..termpilot_tmux::Input::default()
    };
    match engine.send_input(created.pane, &typed).await {
        Err(Error::HeldByPerson { note: said, .. }) => assert_eq!(said, note),
        other => panic!("expected HeldByPerson, got {other:?}"),
    }
    let pasted = engine
        .paste(created.pane, "echo agent-pasted-$((6*7))", false, true)
        .await;
    assert!(
        matches!(pasted, Err(Error::HeldByPerson { .. })),
        "{pasted:?}"
    );
    let unset = machine.tmux(&["set-option", "-p", "-u", "-t", &pane, held]);
    assert!(unset.status.success(), "{unset:?}");
    let report = engine
        .run_command(created.pane, "echo handed-back-$((6*7))", LIMIT)
        .await
        .unwrap();
    assert_eq!(report.output, "handed-back-42", "{report:?}");
    // Keys that had gone in would show by now, the command after them done.
    let screen = machine.tmux(&["capture-pane", "-p", "-t", &pane, "-S", "-"]);
    let screen = String::from_utf8_lossy(&screen.stdout);
    assert!(!screen.contains("agent-"), "{screen}");
    let buffers = machine.tmux(&["list-buffers"]);
    assert_eq!(String::from_utf8_lossy(&buffers.stdout), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_flood_on_an_exec_host() {
    let machine = Machine::new();
    let control = tempfile::tempdir().unwrap();
    let hosts = hosts(&[machine.spec("box")], control.path());
    let engine = tokio::time::timeout(LIMIT, hosts.engine("box"))
        .await
        .expect("in time")
        .expect("connects");
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    let pane = created.pane;
    let typed = termpilot_tmux::Input {
        text: Some("yes".into()),
        enter: true,
        ..Default::default()
    };
    engine.send_input(pane, &typed).await.unwrap();
    let running = support::eventually(LIMIT, async || {
        (foreground(|args| machine.tmux(args), pane) == "yes").then_some(())
    });
    running.await.expect("yes runs");
    // tmux queues a `yes` flood for the session's client faster than it
    // writes it: the client falls behind, and commands take the quiet client.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let capture = engine
        .capture(pane, termpilot_tmux::Scrollback::None)
        .await
        .unwrap();
    assert!(capture.lines.iter().any(|line| line == "y"), "{capture:?}");
    let ctrl_c = termpilot_tmux::Input {
        keys: vec!["C-c".parse().unwrap()],
        ..Default::default()
    };
    engine.send_input(pane, &ctrl_c).await.unwrap();
    let stopped = support::eventually(Duration::from_secs(60), async || {
        (foreground(|args| machine.tmux(args), pane) == "bash").then_some(())
    });
    assert!(stopped.await.is_some(), "yes still runs");
    let clients = machine.tmux(&["list-clients", "-F", "#{client_flags}"]);
    let clients = String::from_utf8_lossy(&clients.stdout).into_owned();
    assert!(
        clients
            .lines()
            .any(|flags| flags.split(',').any(|f| f == "no-output")),
        "the quiet client runs on the host too: {clients}"
    );
}
