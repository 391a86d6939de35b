//! Batches of keystrokes against a real tmux server.

mod support;

use std::time::Duration;

use support::{LIMIT, TestTmux, eventually, temp_path, wait_for_journal};
use termpilot_tmux::{
    BatchOp, Engine, Error, Input, Keystrokes, NewSession, OpStatus, PaneId, TargetKind,
};
use tokio_util::sync::CancellationToken;

async fn connect(tmux: &TestTmux) -> Engine {
    Engine::connect(tmux.config()).await.expect("connect")
}

/// A session whose pane appends its raw input to a file.
async fn sink(engine: &Engine, name: Option<&str>) -> (PaneId, support::TempPath) {
    let out = temp_path("batch");
    let command = format!("stty raw -echo; echo sink-ready; cat > '{}'", out.display());
    let created = engine
        .create_session(&NewSession {
            name: name.map(str::to_owned),
            command: Some(command),
            ..NewSession::default()
        })
        .await
        .unwrap();
    wait_for_journal(engine, created.pane, 0, "sink-ready").await;
    (created.pane, out)
}

/// Waits until the file holds `expected`, then checks nothing else arrives.
async fn assert_sink(path: &std::path::Path, expected: &str) {
    let seen = eventually(LIMIT, async || {
        let bytes = std::fs::read(path).ok()?;
        (bytes.len() >= expected.len()).then_some(bytes)
    })
    .await
    .unwrap_or_else(|| std::fs::read(path).unwrap_or_default());
    tokio::time::sleep(Duration::from_millis(150)).await;
    let settled = std::fs::read(path).unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&settled),
        expected,
        "first seen: {:?}",
        String::from_utf8_lossy(&seen)
    );
}

fn typed(pane: PaneId, text: &str) -> BatchOp {
    BatchOp {
        pane: Ok(pane),
        keys: Keystrokes::Type(Input {
            text: Some(text.to_owned()),
            ..Input::default()
        }),
    }
}

fn failing_paste(pane: PaneId) -> BatchOp {
    // An empty paste makes tmux fail (`no buffer`) in the middle of a chain.
    BatchOp {
        pane: Ok(pane),
        keys: Keystrokes::Paste {
            text: String::new(),
            bracketed: false,
            enter: false,
        },
    }
}

async fn run(engine: &Engine, ops: &[BatchOp], stop: bool) -> Vec<OpStatus> {
    let cancel = CancellationToken::new();
    let reports = tokio::time::timeout(LIMIT, engine.send_batch(ops, stop, &cancel, |_| {}))
        .await
        .expect("batch in time");
    reports.into_iter().map(|r| r.status).collect()
}

#[tokio::test]
async fn fifty_operations_to_one_pane_arrive_in_order() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let (pane, out) = sink(&engine, None).await;
    let ops: Vec<BatchOp> = (0..50).map(|i| typed(pane, &format!("op{i};"))).collect();
    let statuses = run(&engine, &ops, true).await;
    assert!(
        statuses.iter().all(|s| matches!(s, OpStatus::Done { .. })),
        "{statuses:?}"
    );
    let expected: String = (0..50).map(|i| format!("op{i};")).collect();
    assert_sink(&out, &expected).await;
    let cursors: Vec<u64> = statuses
        .iter()
        .map(|s| match s {
            OpStatus::Done { cursor } => cursor.offset,
            _ => unreachable!(),
        })
        .collect();
    assert!(
        cursors.windows(2).all(|w| w[0] <= w[1]),
        "cursors never go back: {cursors:?}"
    );
}

#[tokio::test]
async fn fifty_operations_across_three_sessions_keep_their_order() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let mut sinks = Vec::new();
    for name in ["a", "b", "c"] {
        sinks.push(sink(&engine, Some(name)).await);
    }
    let ops: Vec<BatchOp> = (0..50)
        .map(|i| typed(sinks[i % 3].0, &format!("<{i}>")))
        .collect();
    let statuses = run(&engine, &ops, false).await;
    assert!(
        statuses.iter().all(|s| matches!(s, OpStatus::Done { .. })),
        "{statuses:?}"
    );
    for (k, (_, out)) in sinks.iter().enumerate() {
        let expected: String = (0..50)
            .filter(|i| i % 3 == k)
            .map(|i| format!("<{i}>"))
            .collect();
        assert_sink(out, &expected).await;
    }
}

#[tokio::test]
async fn stop_sends_nothing_after_the_first_failure() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let (pane, out) = sink(&engine, None).await;
    let ops = vec![
        typed(pane, "one;"),
        typed(pane, "two;"),
        failing_paste(pane),
        typed(pane, "four;"),
    ];
    let statuses = run(&engine, &ops, true).await;
    assert!(matches!(statuses[0], OpStatus::Done { .. }), "{statuses:?}");
    assert!(matches!(statuses[1], OpStatus::Done { .. }), "{statuses:?}");
    match &statuses[2] {
        OpStatus::Failed(e) => assert!(e.to_string().contains("no buffer"), "{e}"),
        other => panic!("operation 2 fails: {other:?}"),
    }
    assert!(matches!(statuses[3], OpStatus::Skipped), "{statuses:?}");
    assert_sink(&out, "one;two;").await;
}

#[tokio::test]
async fn continue_runs_everything_after_a_failure() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let (pane, out) = sink(&engine, None).await;
    let ops = vec![
        typed(pane, "one;"),
        failing_paste(pane),
        typed(pane, "three;"),
    ];
    let statuses = run(&engine, &ops, false).await;
    assert!(matches!(statuses[0], OpStatus::Done { .. }), "{statuses:?}");
    assert!(matches!(statuses[1], OpStatus::Failed(_)), "{statuses:?}");
    assert!(matches!(statuses[2], OpStatus::Done { .. }), "{statuses:?}");
    assert_sink(&out, "one;three;").await;
}

#[tokio::test]
async fn a_missing_pane_stops_the_batch_there() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let (pane, out) = sink(&engine, None).await;
    let ops = vec![
        typed(pane, "one;"),
        typed(PaneId(9999), "lost"),
        typed(pane, "three;"),
    ];
    let statuses = run(&engine, &ops, true).await;
    assert!(matches!(statuses[1], OpStatus::Failed(_)), "{statuses:?}");
    assert!(matches!(statuses[2], OpStatus::Skipped), "{statuses:?}");
    assert_sink(&out, "one;").await;
}

fn assert_not_found(status: &OpStatus, pane: &str) {
    match status {
        OpStatus::Failed(Error::NotFound { target, .. }) => assert_eq!(target, pane),
        other => panic!("expected pane {pane} not found, got {other:?}"),
    }
}

#[tokio::test]
async fn a_missing_pane_with_continue_fails_alone_and_the_rest_arrive() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let (pane, out) = sink(&engine, None).await;
    let mut ops: Vec<BatchOp> = (0..10).map(|i| typed(pane, &format!("c{i};"))).collect();
    ops[5] = typed(PaneId(9999), "lost");
    let mut counted = Vec::new();
    let cancel = CancellationToken::new();
    let reports = engine
        .send_batch(&ops, false, &cancel, |done| counted.push(done))
        .await;
    for (i, report) in reports.iter().enumerate() {
        if i == 5 {
            assert_not_found(&report.status, "%9999");
        } else {
            assert!(
                matches!(report.status, OpStatus::Done { .. }),
                "{i}: {report:?}"
            );
        }
    }
    assert_eq!(
        counted.last(),
        Some(&10),
        "every operation counted: {counted:?}"
    );
    assert!(counted.windows(2).all(|w| w[0] < w[1]), "{counted:?}");
    let expected: String = (0..10)
        .filter(|i| *i != 5)
        .map(|i| format!("c{i};"))
        .collect();
    assert_sink(&out, &expected).await;
}

#[tokio::test]
async fn a_target_that_named_no_pane_fails_in_its_place() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    for stop in [true, false] {
        let (pane, out) = sink(&engine, None).await;
        let unresolved = BatchOp {
            pane: Err(Error::NotFound {
                kind: TargetKind::Pane,
                target: "nowhere:1.0".into(),
            }),
            ..typed(pane, "lost")
        };
        let ops = vec![typed(pane, "one;"), unresolved, typed(pane, "three;")];
        let statuses = run(&engine, &ops, stop).await;
        assert!(matches!(statuses[0], OpStatus::Done { .. }), "{statuses:?}");
        assert_not_found(&statuses[1], "nowhere:1.0");
        if stop {
            assert!(matches!(statuses[2], OpStatus::Skipped), "{statuses:?}");
            assert_sink(&out, "one;").await;
        } else {
            assert!(matches!(statuses[2], OpStatus::Done { .. }), "{statuses:?}");
            assert_sink(&out, "one;three;").await;
        }
    }
}

/// A pane the engine already knew is killed behind its back: tmux refuses
/// the send-keys (or the pane is found missing first), and the operation
/// fails there.
#[tokio::test]
async fn a_killed_pane_fails_its_operations_only() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    for stop in [true, false] {
        let (doomed, _) = sink(
            &engine,
            Some(if stop { "doomed-stop" } else { "doomed-go" }),
        )
        .await;
        let (pane, out) = sink(&engine, None).await;
        let killed = tmux.tmux(&["kill-pane", "-t", &doomed.to_string()]);
        assert!(killed.status.success(), "{killed:?}");
        let ops = vec![
            typed(pane, "one;"),
            typed(doomed, "lost;"),
            typed(pane, "three;"),
        ];
        let statuses = run(&engine, &ops, stop).await;
        assert!(matches!(statuses[0], OpStatus::Done { .. }), "{statuses:?}");
        assert_not_found(&statuses[1], &doomed.to_string());
        if stop {
            assert!(matches!(statuses[2], OpStatus::Skipped), "{statuses:?}");
            assert_sink(&out, "one;").await;
        } else {
            assert!(matches!(statuses[2], OpStatus::Done { .. }), "{statuses:?}");
            assert_sink(&out, "one;three;").await;
        }
    }
}

#[tokio::test]
async fn cancellation_stops_between_chains() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let (a, out_a) = sink(&engine, Some("a")).await;
    let (b, out_b) = sink(&engine, Some("b")).await;
    // 48 operations across two sessions: chains of 32.
    let ops: Vec<BatchOp> = (0..48)
        .map(|i| typed(if i % 2 == 0 { a } else { b }, &format!("[{i}]")))
        .collect();
    let cancel = CancellationToken::new();
    let mut finished = Vec::new();
    let reports = engine
        .send_batch(&ops, true, &cancel, |done| {
            finished.push(done);
            cancel.cancel();
        })
        .await;
    let done = reports
        .iter()
        .filter(|r| matches!(r.status, OpStatus::Done { .. }))
        .count();
    let skipped = reports
        .iter()
        .filter(|r| matches!(r.status, OpStatus::Skipped))
        .count();
    assert_eq!(
        (done, skipped),
        (32, 16),
        "stopped right after the first chain"
    );
    assert_eq!(finished, vec![32]);
    let expected = |parity: usize| {
        (0..32)
            .filter(|i| i % 2 == parity)
            .map(|i| format!("[{i}]"))
            .collect::<String>()
    };
    assert_sink(&out_a, &expected(0)).await;
    assert_sink(&out_b, &expected(1)).await;
}
