//! The engine against a real tmux server, one private server per test.

mod support;

use std::time::Duration;

use support::{TestTmux, eventually, raw_sink, read_sink, wait_for_journal};
use termpilot_tmux::{
    Engine, Error, HostPane, Input, NewSession, NewWindow, PaneId, PaneScope, Scrollback, Split,
    SplitDirection, TargetKind,
};

use support::LIMIT;

async fn connect(tmux: &TestTmux) -> Engine {
    tokio::time::timeout(LIMIT, Engine::connect(tmux.config()))
        .await
        .expect("connect in time")
        .expect("connect")
}

fn text(value: &str) -> Input {
    Input {
        text: Some(value.to_owned()),
        ..Input::default()
    }
}

#[tokio::test]
async fn starts_its_own_server_with_a_first_session() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let sessions = engine.list_sessions().await.unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0].name, "main");
    assert_eq!(
        sessions[0].attached, 0,
        "termpilot's own clients are not counted"
    );
    let panes = engine.list_panes(&PaneScope::All).await.unwrap();
    assert_eq!(panes.len(), 1);
    assert_eq!((panes[0].width, panes[0].height), (100, 30));
}

#[tokio::test]
async fn text_arrives_byte_for_byte() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let payload = "echo $(whoami) `id` 'single' \"double\" #{pane_id} %1 ~ \\; a\tb é 日本 🦀 -- ;";
    let (pane, out) = raw_sink(&engine, payload.len()).await;
    engine.send_input(pane, &text(payload)).await.unwrap();
    assert_eq!(read_sink(&out, payload.len()).await, payload.as_bytes());
    let _ = std::fs::remove_file(out);
}

#[tokio::test]
async fn text_starting_with_a_dash_is_not_a_flag() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let payload = "-l -t %0 ;";
    let (pane, out) = raw_sink(&engine, payload.len()).await;
    engine.send_input(pane, &text(payload)).await.unwrap();
    assert_eq!(read_sink(&out, payload.len()).await, payload.as_bytes());
    let _ = std::fs::remove_file(out);
}

#[tokio::test]
async fn paste_keeps_newlines_and_tabs() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let payload = "line one;\n\tline two $HOME\nlast `x`\n";
    let (pane, out) = raw_sink(&engine, payload.len()).await;
    engine.paste(pane, payload, false, false).await.unwrap();
    assert_eq!(read_sink(&out, payload.len()).await, payload.as_bytes());
    let _ = std::fs::remove_file(out);
}

#[tokio::test]
async fn cursor_from_send_covers_the_commands_output() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine
        .resolve_pane(&"main:0.0".parse().unwrap())
        .await
        .unwrap();
    let input = Input {
        text: Some("echo tp-$((6*7))-done".into()),
        enter: true,
        ..Input::default()
    };
    let cursor = engine.send_input(pane, &input).await.unwrap();
    let seen = wait_for_journal(&engine, pane, cursor, "tp-42-done").await;
    assert!(seen.lines().any(|l| l.trim() == "tp-42-done"), "{seen:?}");
    let later = engine.journal_end(pane);
    assert!(later > cursor.offset, "the journal grew past the cursor");
}

#[tokio::test]
async fn key_names_reach_the_program() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let run = Input {
        text: Some("sleep 30; echo after-sleep".into()),
        enter: true,
        ..Input::default()
    };
    engine.send_input(pane, &run).await.unwrap();
    let interrupt = Input {
        keys: vec!["C-c".parse().unwrap()],
        ..Input::default()
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cursor = engine.send_input(pane, &interrupt).await.unwrap();
    let echo = Input {
        text: Some("echo interrupted-ok".into()),
        enter: true,
        ..Input::default()
    };
    engine.send_input(pane, &echo).await.unwrap();
    let seen = wait_for_journal(&engine, pane, cursor, "\ninterrupted-ok").await;
    assert!(
        !seen.contains("after-sleep"),
        "C-c ended the whole command line: {seen:?}"
    );
}

#[tokio::test]
async fn capture_reads_the_screen_and_history() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let input = Input {
        text: Some("seq 1 200".into()),
        enter: true,
        ..Input::default()
    };
    let cursor = engine.send_input(pane, &input).await.unwrap();
    wait_for_journal(&engine, pane, cursor, "\n200").await;
    let screen = engine.capture(pane, Scrollback::None).await.unwrap();
    assert!(screen.lines.len() <= 30, "the screen is 30 lines");
    assert!(screen.lines.iter().any(|l| l == "200"));
    assert!(!screen.lines.iter().any(|l| l == "1"));
    let all = engine.capture(pane, Scrollback::All).await.unwrap();
    assert!(
        all.lines.iter().any(|l| l == "1"),
        "history has the first line"
    );
    assert!(all.history_size > 0);
    assert!(all.cursor >= cursor);
}

#[tokio::test]
async fn lifecycle_create_split_kill() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let session = engine
        .create_session(&NewSession {
            name: Some("work".into()),
            width: Some(120),
            height: Some(40),
            ..NewSession::default()
        })
        .await
        .unwrap();
    assert_eq!(session.session_name, "work");
    let window = engine
        .create_window(
            &"work".parse().unwrap(),
            &NewWindow {
                name: Some("logs".into()),
                ..NewWindow::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(window.session, session.session);
    let split = engine
        .split_pane(&Split {
            target: window.pane.to_string().parse().unwrap(),
            direction: SplitDirection::Below,
            size: Some("30%".into()),
            command: None,
            cwd: None,
            env: vec![],
        })
        .await
        .unwrap();
    let panes = engine
        .list_panes(&PaneScope::Session("work".parse().unwrap()))
        .await
        .unwrap();
    assert_eq!(panes.len(), 3, "{panes:?}");
    assert!(
        panes.iter().all(|p| p.width == 120),
        "sizes are the session's: {panes:?}"
    );
    let killed = engine
        .kill_pane(&split.pane.to_string().parse().unwrap())
        .await
        .unwrap();
    assert_eq!(killed.panes, vec![split.pane]);
    assert!(killed.windows.is_empty());
    let killed = engine
        .kill_window(&window.window.to_string().parse().unwrap())
        .await
        .unwrap();
    assert_eq!(killed.windows, vec![window.window]);
    let killed = engine.kill_session(&"work".parse().unwrap()).await.unwrap();
    assert_eq!(killed.session, session.session);
    let names: Vec<String> = engine
        .list_sessions()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, vec!["main"]);
}

#[tokio::test]
async fn new_session_output_is_journaled_from_the_first_byte() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let created = engine
        .create_session(&NewSession {
            command: Some("echo first-byte-marker; sleep 30".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    wait_for_journal(&engine, created.pane, 0, "first-byte-marker").await;
}

#[tokio::test]
async fn sessions_made_outside_termpilot_are_tracked() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let out = tmux.tmux(&[
        "new-session",
        "-d",
        "-s",
        "outside",
        "-P",
        "-F",
        "#{pane_id}",
    ]);
    assert!(out.status.success());
    let pane: PaneId = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // Give the engine a moment to attach, then type and expect the output.
    let input = Input {
        text: Some("echo outside-$((2+3))".into()),
        enter: true,
        ..Input::default()
    };
    let cursor = engine.send_input(pane, &input).await.unwrap();
    wait_for_journal(&engine, pane, cursor, "outside-5").await;
}

fn assert_no_session(err: &Error) {
    assert!(
        matches!(
            err,
            Error::NotFound {
                kind: TargetKind::Session,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn missing_targets_are_clear_errors() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let err = engine
        .send_input(PaneId(9999), &text("x"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotFound {
                kind: TargetKind::Pane,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("list_panes"), "{err}");
    let err = engine
        .resolve_pane(&"nosuch:1.0".parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    // A window or pane that is not there in a session that is: never some
    // other pane of that session.
    for target in ["main:9.0", "main:0.7", "main:nowindow.0"] {
        let err = engine
            .resolve_pane(&target.parse().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{target}: {err}");
        let err = engine
            .kill_pane(&target.parse().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{target}: {err}");
    }
    assert_eq!(
        engine
            .resolve_pane(&"main:0.0".parse().unwrap())
            .await
            .unwrap(),
        PaneId(0)
    );
    let err = engine
        .kill_session(&"nosuch".parse().unwrap())
        .await
        .unwrap_err();
    assert_no_session(&err);
    let err = engine
        .create_session(&NewSession {
            name: Some("main".into()),
            ..NewSession::default()
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("duplicate session"), "{err}");
    // Still serving.
    assert_eq!(engine.list_sessions().await.unwrap().len(), 1);
}

#[tokio::test]
async fn refuses_to_touch_its_own_pane() {
    let tmux = TestTmux::new();
    let probe = connect(&tmux).await;
    let socket = probe
        .command(
            termpilot_control::Command::new("display-message")
                .flag("-p")
                .arg("#{socket_path}"),
        )
        .await
        .unwrap()
        .text();
    drop(probe);
    let mut config = tmux.config();
    config.host = Some(HostPane {
        socket_path: socket.trim().to_owned(),
        pane: PaneId(0),
    });
    let engine = Engine::connect(config).await.unwrap();
    assert_eq!(engine.own_pane(), Some(PaneId(0)));
    let err = engine.send_input(PaneId(0), &text("x")).await.unwrap_err();
    assert!(matches!(err, Error::OwnPane { .. }), "{err}");
    let err = engine.kill_pane(&"%0".parse().unwrap()).await.unwrap_err();
    assert!(matches!(err, Error::OwnPane { .. }), "{err}");
    let err = engine
        .kill_session(&"main".parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::OwnPane { .. }), "{err}");
    assert_eq!(
        engine.list_sessions().await.unwrap().len(),
        1,
        "nothing was killed"
    );
}

#[tokio::test]
async fn survives_the_server_dying_and_reconnects() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    assert_eq!(engine.list_sessions().await.unwrap().len(), 1);
    let first_epoch = engine.server_pid();
    tmux.kill_server();
    // Calls fail clearly or, once the clients noticed, reconnect by starting
    // a fresh server; either way the engine keeps answering.
    let recovered = eventually(LIMIT, async || engine.list_sessions().await.ok()).await;
    let sessions = recovered.expect("the engine reconnects to a new server");
    assert_eq!(sessions.len(), 1);
    assert_ne!(
        engine.server_pid(),
        first_epoch,
        "a new server is a new epoch"
    );
    let pane = engine
        .resolve_pane(&"main:0.0".parse().unwrap())
        .await
        .unwrap();
    let input = Input {
        text: Some("echo back-again".into()),
        enter: true,
        ..Input::default()
    };
    let cursor = engine.send_input(pane, &input).await.unwrap();
    wait_for_journal(&engine, pane, cursor, "\nback-again").await;
}

#[tokio::test]
async fn pending_calls_fail_when_the_server_dies() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    // tmux answers `wait-for` at once but runs nothing after it on the same
    // client until the channel is signalled, which never happens: the next
    // call is pending when the server dies.
    engine
        .command(termpilot_control::Command::new("wait-for").arg("never-signalled"))
        .await
        .unwrap();
    let waiting = engine.clone();
    let pending = tokio::spawn(async move {
        waiting
            .command(
                termpilot_control::Command::new("display-message")
                    .flag("-p")
                    .arg("x"),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!pending.is_finished(), "the call after wait-for is pending");
    // SIGKILL, so tmux cannot wake its waiters on the way out (kill-server
    // would, and the pending call would then be answered).
    let pid = tmux.tmux(&["display-message", "-p", "#{pid}"]);
    let pid = String::from_utf8_lossy(&pid.stdout).trim().to_owned();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
    assert!(killed.success(), "killed the test's own tmux server {pid}");
    let outcome = tokio::time::timeout(LIMIT, pending)
        .await
        .expect("the pending call ends in time")
        .expect("the task did not panic");
    let err = outcome.expect_err("a call pending when tmux dies fails");
    assert!(matches!(err, Error::Disconnected { .. }), "{err}");
    assert!(err.to_string().contains("reconnects"), "{err}");
}

#[tokio::test]
async fn session_names_match_exactly_never_as_prefixes() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    engine
        .create_session(&NewSession {
            name: Some("web-old".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    // tmux alone would take "web" for "web-old".
    let err = engine
        .kill_session(&"web".parse().unwrap())
        .await
        .unwrap_err();
    assert_no_session(&err);
    let err = engine
        .resolve_pane(&"web:0.0".parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    let err = engine
        .list_panes(&PaneScope::Session("web".parse().unwrap()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    let err = engine
        .create_window(
            &"web".parse().unwrap(),
            &NewWindow {
                ..NewWindow::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    // The whole name, and the session's id, still work.
    let panes = engine
        .list_panes(&PaneScope::Session("web-old".parse().unwrap()))
        .await
        .unwrap();
    assert_eq!(panes.len(), 1);
    let pane = engine
        .resolve_pane(&"web-old:0.0".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(pane, panes[0].id);
    engine
        .kill_session(&"web-old".parse().unwrap())
        .await
        .unwrap();
}

/// The tmux server's pid, or `None` when it no longer answers.
fn server_pid(tmux: &TestTmux) -> Option<u32> {
    let out = tmux.tmux(&["display-message", "-p", "#{pid}"]);
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn process_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// tmux 3.3a crashed ("segfault at f0") when a session ended while a control
/// client held a format subscription (`refresh-client -B`) and listings went
/// out on `%sessions-changed`. Sessions whose command exits after about a
/// second, one after another, must leave the server running.
/// `TERMPILOT_END_CYCLES` sets the number of session ends (default 40).
#[tokio::test]
async fn sessions_ending_never_crash_the_server() {
    let cycles: usize = std::env::var("TERMPILOT_END_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pid = server_pid(&tmux).expect("the server runs");
    let all = async {
        for cycle in 0..cycles {
            let created = engine
                .create_session(&NewSession {
                    name: Some(format!("end-{cycle}")),
                    command: Some("sleep 1".into()),
                    ..NewSession::default()
                })
                .await;
            assert!(process_alive(pid), "tmux died at cycle {cycle}");
            let created = created.unwrap_or_else(|e| panic!("cycle {cycle}: {e}"));
            // The session ends by itself; listings meanwhile, as a client does.
            let gone = eventually(LIMIT, async || {
                let _ = engine.list_panes(&PaneScope::All).await;
                let sessions = engine.list_sessions().await.ok()?;
                (!sessions.iter().any(|s| s.id == created.session)).then_some(())
            })
            .await;
            assert!(process_alive(pid), "tmux died at cycle {cycle}");
            assert!(gone.is_some(), "session of cycle {cycle} did not end");
        }
    };
    tokio::time::timeout(Duration::from_secs(30 + 2 * cycles as u64), all)
        .await
        .expect("the cycles finish in time");
    assert_eq!(server_pid(&tmux), Some(pid), "the same server still runs");
}

/// A call pending on the control client of a session that is killed fails
/// saying the session ended, not that the server may have exited: the
/// server still runs.
#[tokio::test]
async fn a_call_pending_when_its_session_is_killed_says_the_session_ended() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    // Another session keeps the server running once `main` is killed.
    engine.create_session(&NewSession::default()).await.unwrap();
    // As in `pending_calls_fail_when_the_server_dies`: the call after
    // `wait-for` is pending on the client of the first session, `main`.
    engine
        .command(termpilot_control::Command::new("wait-for").arg("never-signalled"))
        .await
        .unwrap();
    let waiting = engine.clone();
    let pending = tokio::spawn(async move {
        waiting
            .command(
                termpilot_control::Command::new("display-message")
                    .flag("-p")
                    .arg("x"),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!pending.is_finished(), "the call after wait-for is pending");
    let killed = tmux.tmux(&["kill-session", "-t", "main"]);
    assert!(killed.status.success(), "{killed:?}");
    let outcome = tokio::time::timeout(LIMIT, pending)
        .await
        .expect("the pending call ends in time")
        .expect("the task did not panic");
    let err = outcome.expect_err("a call pending when its session is killed fails");
    assert!(server_pid(&tmux).is_some(), "the server still runs");
    let message = err.to_string();
    assert!(!message.contains("server may have exited"), "{message}");
    assert!(message.contains("session"), "{message}");
    assert!(matches!(err, Error::SessionEnded { .. }), "{err}");
}

/// Engines connecting at the same instant to one socket, new or already
/// running: every one connects, they share one server, and the first
/// session is created once. 8 at once, 20 rounds (`TERMPILOT_START_ROUNDS`
/// sets the rounds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engines_starting_at_once_all_connect() {
    let rounds: usize = std::env::var("TERMPILOT_START_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let mut failures = Vec::new();
    for round in 0..rounds {
        let tmux = TestTmux::new();
        // Every other round the server already runs, with a session of its own.
        if round % 2 == 1 {
            let started = tmux.tmux(&["new-session", "-d", "-s", "before"]);
            assert!(started.status.success(), "{started:?}");
        }
        let mut starts = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let config = tmux.config();
            starts.spawn(async move {
                tokio::time::timeout(Duration::from_secs(30), Engine::connect(config)).await
            });
        }
        let mut engines = Vec::new();
        while let Some(done) = starts.join_next().await {
            match done.expect("no panic") {
                Ok(Ok(engine)) => engines.push(engine),
                Ok(Err(e)) => failures.push(format!("round {round}: {e}")),
                Err(_) => failures.push(format!("round {round}: timed out")),
            }
        }
        let pid = server_pid(&tmux);
        assert!(pid.is_some(), "round {round}: the server runs");
        for engine in &engines {
            assert_eq!(Some(engine.server_pid()), pid, "round {round}: one server");
            let sessions = engine.list_sessions().await.unwrap();
            let names: Vec<&str> = sessions.iter().map(|s| s.name.as_str()).collect();
            let expected: &[&str] = if round % 2 == 1 {
                &["before"]
            } else {
                &["main"]
            };
            assert_eq!(names, expected, "round {round}: sessions");
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed: {failures:#?}",
        failures.len()
    );
}
