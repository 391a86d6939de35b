//! Waiting for panes against a real tmux server.

mod support;

use std::time::Duration;

use support::{LIMIT, TestTmux, shell_installed, shell_pane};
use termpilot_tmux::{Cursor, Engine, Input, Needle, NewSession, Outcome, TextWait};

async fn connect(tmux: &TestTmux) -> Engine {
    Engine::connect(tmux.config()).await.expect("connect")
}

fn wait_for(pattern: &str, since: Option<Cursor>, timeout: Duration) -> TextWait {
    TextWait {
        patterns: vec![Needle::Literal(pattern.to_owned())],
        stop: Vec::new(),
        match_case: true,
        since,
        include_screen: false,
        timeout,
    }
}

fn line(text: &str) -> Input {
    Input {
        text: Some(text.to_owned()),
        enter: true,
        ..Input::default()
    }
}

#[tokio::test]
async fn finds_a_marker_that_scrolled_out_of_history() {
    let tmux = TestTmux::new();
    // tmux's own default history, which 100,000 lines overrun.
    let engine = Engine::connect(termpilot_tmux::EngineConfig {
        history_limit: 2000,
        ..tmux.config()
    })
    .await
    .expect("connect");
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let cursor = engine
        .send_input(
            pane,
            &line("seq 1 100000 | sed 's/^50000$/MID-MARK/'; echo END-MARK"),
        )
        .await
        .unwrap();
    let mid = engine
        .wait_for_text(pane, &wait_for("MID-MARK", Some(cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(mid.outcome, Outcome::Matched);
    assert_eq!(mid.found.unwrap().line, "MID-MARK");
    let end = engine
        .wait_for_text(pane, &wait_for("END-MARK", Some(mid.cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(
        end.outcome,
        Outcome::Matched,
        "continuing from the returned cursor"
    );
    let screen = engine
        .capture(pane, termpilot_tmux::Scrollback::All)
        .await
        .unwrap();
    assert!(
        !screen.lines.iter().any(|l| l == "MID-MARK"),
        "the marker left tmux's history"
    );
}

#[tokio::test]
async fn the_echo_of_typed_text_never_matches() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let cursor = engine
        .send_input(pane, &line("echo ONLY-ECHO-$((1+1))"))
        .await
        .unwrap();
    let echo = engine
        .wait_for_text(
            pane,
            &wait_for("echo ONLY-ECHO", Some(cursor), Duration::from_millis(500)),
        )
        .await
        .unwrap();
    assert_eq!(echo.outcome, Outcome::Timeout, "{:?}", echo.found);
    let output = engine
        .wait_for_text(pane, &wait_for("ONLY-ECHO", Some(cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(output.outcome, Outcome::Matched);
    assert_eq!(output.found.unwrap().line, "ONLY-ECHO-2");
}

#[tokio::test]
async fn a_killed_pane_ends_the_wait() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    let killer = engine.clone();
    let pane = created.pane;
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        killer
            .kill_pane(&pane.to_string().parse().unwrap())
            .await
            .unwrap();
    });
    let started = std::time::Instant::now();
    let report = engine
        .wait_for_text(pane, &wait_for("never", None, LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::PaneExited);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// Killing the server's last pane ends its last session, and so the
/// server: waits on that pane often learn of it only once the server is
/// gone, and still say the pane exited. A few servers, since the order in
/// which the engine hears of the two varies.
#[tokio::test]
async fn killing_the_last_pane_of_the_server_ends_the_wait_with_pane_exited() {
    for _ in 0..4 {
        let tmux = TestTmux::new();
        let engine = connect(&tmux).await;
        let panes = engine
            .list_panes(&termpilot_tmux::PaneScope::All)
            .await
            .unwrap();
        let [only] = panes.as_slice() else {
            panic!("one pane: {panes:?}")
        };
        let pane = only.id;
        let killer = engine.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            // Its reply may be lost with the server.
            let _ = killer.kill_pane(&pane.to_string().parse().unwrap()).await;
        });
        let never = wait_for("never", None, LIMIT);
        let text = engine.wait_for_text(pane, &never);
        let idle = engine.wait_for_idle(pane, LIMIT, LIMIT);
        let (text, idle) = tokio::join!(text, idle);
        assert_eq!(text.unwrap().outcome, Outcome::PaneExited, "wait_for_text");
        assert_eq!(idle.unwrap().outcome, Outcome::PaneExited, "wait_for_idle");
    }
}

/// A killed server tells its control clients to exit one after the other:
/// a wait that learns of its pane's end while some are still there still
/// says the server exited. Several sessions (so several clients) on a few
/// servers, since the order varies.
#[tokio::test]
async fn a_killed_server_ends_the_waits_with_server_exited() {
    for _ in 0..4 {
        let tmux = TestTmux::new();
        let engine = connect(&tmux).await;
        let mut panes = Vec::new();
        for _ in 0..4 {
            let created = engine.create_session(&NewSession::default()).await.unwrap();
            panes.push(created.pane);
        }
        let killer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            tokio::task::spawn_blocking(move || tmux.tmux(&["kill-server"]))
                .await
                .unwrap()
        });
        let mut waits = tokio::task::JoinSet::new();
        for pane in panes {
            let engine = engine.clone();
            waits.spawn(async move {
                let never = wait_for("never", None, LIMIT);
                engine.wait_for_text(pane, &never).await
            });
        }
        while let Some(report) = waits.join_next().await {
            assert_eq!(report.unwrap().unwrap().outcome, Outcome::ServerExited);
        }
        assert!(killer.await.unwrap().status.success());
    }
}

#[tokio::test]
async fn a_program_exiting_ends_the_wait() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let created = engine
        .create_session(&NewSession {
            command: Some("sleep 0.3".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let report = engine
        .wait_for_text(created.pane, &wait_for("never", None, LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::PaneExited);
}

/// With `remain-on-exit`, a pane whose program exited stays, dead; tmux
/// tells control clients nothing. Waits end with `pane_exited` all the same,
/// also when the pane is already dead when they start.
#[tokio::test]
async fn a_dead_pane_kept_by_remain_on_exit_ends_the_wait() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let created = engine
        .create_session(&NewSession {
            command: Some("sleep 1".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let pane = created.pane;
    engine
        .command(
            termpilot_control::Command::new("set-option")
                .flag("-p")
                .opt("-t", pane.to_string())
                .arg("remain-on-exit")
                .arg("on"),
        )
        .await
        .unwrap();
    let report = engine
        .wait_for_text(pane, &wait_for("never", None, LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::PaneExited);
    let panes = engine
        .list_panes(&termpilot_tmux::PaneScope::All)
        .await
        .unwrap();
    let kept = panes.iter().find(|p| p.id == pane).expect("the pane stays");
    assert!(kept.dead, "{kept:?}");
    let again = engine
        .wait_for_text(pane, &wait_for("never", None, LIMIT))
        .await
        .unwrap();
    assert_eq!(again.outcome, Outcome::PaneExited, "already dead");
    let idle = engine
        .wait_for_idle(pane, Duration::from_secs(9), LIMIT)
        .await
        .unwrap();
    assert_eq!(idle.outcome, Outcome::PaneExited, "already dead");
}

/// tmux killed during a wait: the wait says the server went away, not
/// that the pane exited.
#[tokio::test]
async fn the_server_dying_ends_the_wait_with_server_exited() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let pid = tmux.tmux(&["display-message", "-p", "#{pid}"]);
    let pid = String::from_utf8_lossy(&pid.stdout).trim().to_owned();
    assert!(!pid.is_empty(), "the server runs");
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status();
    });
    let report = engine
        .wait_for_text(pane, &wait_for("never", None, LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::ServerExited);
}

#[tokio::test]
async fn dropped_output_is_reported_as_lost() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let cursor = engine.sync_pane(pane).await.unwrap();
    // Make tmux pause the pane for our client, as it does when a client falls
    // behind: the engine records a gap and resumes the pane.
    engine
        .command(
            termpilot_control::Command::new("refresh-client").opt("-A", format!("{pane}:pause")),
        )
        .await
        .unwrap();
    let report = engine
        .wait_for_text(pane, &wait_for("never", Some(cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::Lost, "{report:?}");
    assert!(report.lost_bytes > 0);
    // Output flows again after the gap.
    let after = engine
        .send_input(pane, &line("echo flowing-again"))
        .await
        .unwrap();
    let resumed = engine
        .wait_for_text(pane, &wait_for("flowing-again", Some(after), LIMIT))
        .await;
    assert_eq!(resumed.unwrap().outcome, Outcome::Matched);
}

#[tokio::test]
async fn idle_comes_after_the_output_stops() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let cursor = engine
        .send_input(
            pane,
            &line("for i in 1 2 3 4; do echo tick-$i; sleep 0.1; done"),
        )
        .await
        .unwrap();
    let first = engine
        .wait_for_text(pane, &wait_for("tick-1", Some(cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(first.outcome, Outcome::Matched);
    // The ticks come 0.1 s apart, so 0.3 s of quiet can only come after the last.
    let report = engine
        .wait_for_idle(pane, Duration::from_millis(300), LIMIT)
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::Idle);
    let ticks: Vec<String> = engine.read_journal(pane, |journal| {
        let view = journal.lines(cursor.offset);
        view.lines
            .into_iter()
            .map(|line| line.text)
            .filter(|text| text.starts_with("tick-"))
            .collect()
    });
    assert_eq!(ticks, ["tick-1", "tick-2", "tick-3", "tick-4"]);
}

#[tokio::test]
async fn a_person_cancelling_ends_the_wait() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let canceller = engine.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        canceller.cancel_waits(pane).await.unwrap();
    });
    let report = engine
        .wait_for_text(pane, &wait_for("never", None, LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::CancelledByUser);
    // A cancel from before a wait started does not end it.
    let later = engine
        .wait_for_text(pane, &wait_for("never", None, Duration::from_millis(1500)))
        .await
        .unwrap();
    assert_eq!(later.outcome, Outcome::Timeout);
}

/// A long command line in a narrow pane: zsh wraps it with a carriage return
/// at the margin and redraws the rest from the first column; bash lets the
/// terminal wrap. Either way only the program's output matches.
#[tokio::test]
async fn the_echo_of_a_wrapped_command_line_never_matches() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let shells = ["bash", "zsh"]
        .into_iter()
        .filter(|shell| shell_installed(shell));
    for shell in shells {
        let pane = shell_pane(&engine, shell, Some(40)).await;
        // 30 y: on two rows of 40 columns, with the mark whole on the second.
        let output = format!("{} LONG-MARK", "y".repeat(30));
        let cursor = engine
            .send_input(pane, &line(&format!("sleep 0.3; echo {output}")))
            .await
            .unwrap();
        let found = engine
            .wait_for_text(pane, &wait_for("LONG-MARK", Some(cursor), LIMIT))
            .await
            .unwrap();
        assert_eq!(found.outcome, Outcome::Matched, "{shell}");
        assert_eq!(found.found.unwrap().line, output, "{shell}");
    }
}

#[tokio::test]
async fn a_full_screen_program_gets_its_screen_as_the_tail() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    // Draws on the alternate screen with cursor movement, as full-screen
    // programs do: a line view of the bytes would run the rows together.
    let draw = "printf '\\033[?1049h\\033[HSCREEN-TOP\\033[5;1HSCREEN-ROW5'; sleep 30";
    let cursor = engine.send_input(pane, &line(draw)).await.unwrap();
    let report = engine
        .wait_for_text(pane, &wait_for("SCREEN-ROW5", Some(cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::Matched);
    assert!(report.alternate_screen);
    assert_eq!(report.tail, ["SCREEN-TOP", "", "", "", "SCREEN-ROW5"]);
}

#[tokio::test]
async fn the_report_sees_copy_mode_entered_during_the_wait() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let cursor = engine
        .send_input(pane, &line("sleep 1; echo MODE''-MARK"))
        .await
        .unwrap();
    let spec = wait_for("MODE-MARK", Some(cursor), LIMIT);
    let waiting = engine.wait_for_text(pane, &spec);
    let enter_copy_mode = async {
        // The wait has read the pane's state by now; the marker comes later.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let output = tmux.tmux(&["copy-mode", "-t", "%0"]);
        assert!(output.status.success(), "{output:?}");
    };
    let (report, ()) = tokio::join!(waiting, enter_copy_mode);
    let report = report.unwrap();
    assert_eq!(report.outcome, Outcome::Matched);
    assert!(
        report.in_mode,
        "the report must not keep the state from the start"
    );
    assert!(!report.alternate_screen);
}

#[tokio::test]
async fn the_report_sees_a_switch_to_the_alternate_screen_during_the_wait() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    let draw = "sleep 0.5; printf '\\033[?1049hALT''-MARK\\n'; sleep 30";
    let cursor = engine.send_input(pane, &line(draw)).await.unwrap();
    let report = engine
        .wait_for_text(pane, &wait_for("ALT-MARK", Some(cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::Matched);
    assert!(report.alternate_screen);
    assert!(!report.in_mode);
}

#[tokio::test]
async fn a_wait_from_far_back_scans_megabytes_off_the_runtime_threads() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();
    // About 1.3 MB of output before the marker: the wait's first step reads
    // more than it scans on a runtime thread.
    let cursor = engine
        .send_input(pane, &line("seq 1 200000; echo FAR''-MARK"))
        .await
        .unwrap();
    support::wait_for_journal(&engine, pane, cursor, "FAR-MARK").await;
    assert!(engine.journal_end(pane) - cursor.offset > 1_000_000);
    let report = engine
        .wait_for_text(pane, &wait_for("FAR-MARK", Some(cursor), LIMIT))
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::Matched);
    assert_eq!(report.found.unwrap().line, "FAR-MARK");
    assert_eq!(report.lost_bytes, 0);
}
