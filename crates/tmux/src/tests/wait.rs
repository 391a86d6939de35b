//! Waits (`wait.rs`) and how each ends: matched, stopped, timed out, the
//! pane or the server or the host gone, output lost, idle, cancelled.

use std::time::Duration;

use termpilot_control::{PaneId, TargetKind};
use termpilot_journal::Needle;
use tokio::time::sleep;

use super::fake::Fake;
use super::fake::model::Input as Sent;
use super::*;
use crate::error::Error;
use crate::{Input, Outcome, TextWait};

fn text_wait(pattern: &str) -> TextWait {
    TextWait {
        patterns: vec![Needle::Literal(pattern.into())],
        stop: Vec::new(),
        match_case: true,
        since: None,
        include_screen: false,
        timeout: Duration::from_secs(30),
    }
}

/// Runs `f` on the fake after `delay`, in the background.
fn later(fake: &Fake, delay: Duration, f: impl FnOnce(&Fake) + Send + 'static) {
    let fake = fake.clone();
    tokio::spawn(async move {
        sleep(delay).await;
        f(&fake);
    });
}

#[tokio::test(start_paused = true)]
async fn a_wait_matches_output_printed_after_it_started() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        later(&fake, Duration::from_secs(1), |fake| {
            fake.output(0, b"building\r\ndone: ok\r\n$ ");
        });
        let report = engine
            .wait_for_text(PaneId(0), &text_wait("done"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::Matched);
        let found = report.found.unwrap();
        assert_eq!(
            (found.text.as_str(), found.line.as_str()),
            ("done", "done: ok")
        );
        assert!(!found.on_screen);
        assert_eq!(report.elapsed, Duration::from_secs(1));
        assert_eq!(report.baseline.offset, 0);
        assert_eq!(report.cursor.offset, 20, "just after the matched line");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_with_nothing_to_match_times_out_on_time() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.output(0, b"one\r\ntwo\r\n");
        settle().await;
        later(&fake, Duration::from_secs(3), |fake| {
            fake.output(0, b"three\r\n")
        });
        let report = engine
            .wait_for_text(PaneId(0), &text_wait("never"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::Timeout);
        assert_eq!(report.elapsed, Duration::from_secs(30));
        assert_eq!(report.baseline.offset, 10);
        assert_eq!(report.cursor.offset, 17);
        assert_eq!(report.tail, ["three"], "only output after the baseline");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_cursor_from_before_covers_output_printed_before_the_wait() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let cursor = engine.sync_pane(PaneId(0)).await.unwrap();
        fake.output(0, b"ready\r\n");
        settle().await;
        let spec = TextWait {
            since: Some(cursor),
            ..text_wait("ready")
        };
        let report = engine.wait_for_text(PaneId(0), &spec).await.unwrap();
        assert_eq!(report.outcome, Outcome::Matched);
        assert_eq!(report.elapsed, Duration::ZERO);
        // Without the cursor, that output was before the wait.
        let spec = TextWait {
            timeout: Duration::from_secs(1),
            ..text_wait("ready")
        };
        let report = engine.wait_for_text(PaneId(0), &spec).await.unwrap();
        assert_eq!(report.outcome, Outcome::Timeout);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_stop_pattern_ends_the_wait_as_a_failure() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        later(&fake, Duration::from_millis(10), |fake| {
            fake.output(0, b"error: no such file\r\nok\r\n");
        });
        let spec = TextWait {
            stop: vec![Needle::Regex("^error:".into())],
            ..text_wait("ok")
        };
        let report = engine.wait_for_text(PaneId(0), &spec).await.unwrap();
        assert_eq!(report.outcome, Outcome::Stopped);
        let found = report.found.unwrap();
        assert_eq!((found.index, found.text.as_str()), (0, "error:"));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_screen_can_count_for_a_wait() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|s| s.panes.get_mut(&0).unwrap().screen = vec!["login: ready".into()]);
        let engine = connect(&fake).await;
        let spec = TextWait {
            include_screen: true,
            ..text_wait("ready")
        };
        let report = engine.wait_for_text(PaneId(0), &spec).await.unwrap();
        assert_eq!(report.outcome, Outcome::Matched);
        assert!(report.found.unwrap().on_screen);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_echo_of_typed_input_does_not_match() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| {
            // A shell: echoes what is typed, runs it on Enter.
            server.panes.get_mut(&0).unwrap().program = Some(Box::new(|input| match input {
                Sent::Text(text) => text.clone().into_bytes(),
                Sent::Keys(keys) if keys == &["Enter"] => b"\r\ndone\r\n$ ".to_vec(),
                _ => Vec::new(),
            }));
        });
        let engine = connect(&fake).await;
        let input = Input {
            text: Some("echo done".into()),
            enter: true,
            ..Input::default()
        };
        let cursor = engine.send_input(PaneId(0), &input).await.unwrap();
        let spec = TextWait {
            since: Some(cursor),
            ..text_wait("done")
        };
        let report = engine.wait_for_text(PaneId(0), &spec).await.unwrap();
        assert_eq!(report.outcome, Outcome::Matched);
        assert_eq!(
            report.found.unwrap().line,
            "done",
            "not the echoed `echo done`"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_ends_when_its_pane_is_killed() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let made = engine
            .split_pane(&crate::Split {
                target: "%0".parse().unwrap(),
                direction: crate::SplitDirection::Right,
                size: None,
                command: None,
                cwd: None,
                env: Vec::new(),
            })
            .await
            .unwrap();
        later(&fake, Duration::from_secs(2), move |fake| {
            fake.exit_pane(made.pane.0)
        });
        let report = engine
            .wait_for_text(made.pane, &text_wait("never"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::PaneExited);
        assert_eq!(report.elapsed, Duration::from_secs(2));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_pane_kept_dead_by_remain_on_exit_ends_the_wait_too() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| server.remain_on_exit = true);
        let engine = connect(&fake).await;
        later(&fake, Duration::from_secs(1), |fake| fake.exit_pane(0));
        let report = engine
            .wait_for_text(PaneId(0), &text_wait("never"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::PaneExited);
        // tmux says nothing about a dead pane: the engine reads its dead flag
        // every `CANCEL_POLL`.
        assert!(report.elapsed <= Duration::from_secs(1) + crate::person::CANCEL_POLL);
        let again = engine
            .wait_for_text(PaneId(0), &text_wait("never"))
            .await
            .unwrap();
        assert_eq!(
            again.outcome,
            Outcome::PaneExited,
            "a dead pane ends a new wait at once"
        );
        assert_eq!(again.elapsed, Duration::ZERO);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_ends_when_the_server_exits() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        later(&fake, Duration::from_secs(1), |fake| fake.kill_server(true));
        let report = engine
            .wait_for_text(PaneId(0), &text_wait("never"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::ServerExited);
        assert_eq!(report.elapsed, Duration::from_secs(1));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_remote_pipe_closing_without_exit_is_a_lost_host() {
    bounded(async {
        for (exit, outcome) in [(false, Outcome::HostLost), (true, Outcome::ServerExited)] {
            let fake = Fake::remote().with_session("main");
            let engine = connect(&fake).await;
            later(&fake, Duration::from_secs(1), move |fake| {
                fake.kill_server(exit)
            });
            let report = engine
                .wait_for_text(PaneId(0), &text_wait("never"))
                .await
                .unwrap();
            assert_eq!(report.outcome, outcome, "exit said: {exit}");
            assert_eq!(engine.shared.host_lost(), !exit);
            // The next call connects again, through a new pipe.
            engine.list_sessions().await.unwrap();
            assert_eq!(fake.opened(), 2);
            assert!(!engine.shared.host_lost());
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_local_pipe_closing_without_exit_is_a_server_exit() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        later(&fake, Duration::from_secs(1), |fake| {
            fake.kill_server(false)
        });
        let report = engine
            .wait_for_text(PaneId(0), &text_wait("never"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::ServerExited);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn output_dropped_by_a_pause_is_reported_lost_and_the_pane_continued() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        later(&fake, Duration::from_secs(1), |fake| {
            fake.output(0, b"before\r\n");
            fake.pause(0);
            fake.output(0, b"the match, dropped\r\n");
        });
        let report = engine
            .wait_for_text(PaneId(0), &text_wait("match"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::Lost);
        assert_eq!(report.lost_bytes, 1, "one gap");
        settle().await;
        let resumed = fake.sent("refresh-client");
        assert!(
            resumed.iter().any(|c| c.opt('A') == Some("%0:continue")),
            "the engine asked tmux to continue the pane"
        );
        // Output flows again, and a wait from after the gap sees it.
        let cursor = engine.journal_end(PaneId(0));
        later(&fake, Duration::from_millis(5), |fake| {
            fake.output(0, b"the match\r\n")
        });
        let spec = TextWait {
            since: Some(engine.cursor(PaneId(0), cursor)),
            ..text_wait("match")
        };
        let report = engine.wait_for_text(PaneId(0), &spec).await.unwrap();
        assert_eq!(report.outcome, Outcome::Matched);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_idle_wait_ends_after_the_quiet_period() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let ticker = fake.clone();
        tokio::spawn(async move {
            for _ in 0..10 {
                sleep(Duration::from_millis(100)).await;
                ticker.output(0, b".");
            }
        });
        let quiet = Duration::from_millis(500);
        let report = engine
            .wait_for_idle(PaneId(0), quiet, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::Idle);
        assert_eq!(
            report.elapsed,
            Duration::from_millis(1500),
            "last output at 1 s"
        );
        assert_eq!(report.cursor.offset, 10);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_idle_wait_on_a_busy_pane_times_out() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let ticker = fake.clone();
        tokio::spawn(async move {
            loop {
                sleep(Duration::from_millis(100)).await;
                ticker.output(0, b"tick\r\n");
            }
        });
        let report = engine
            .wait_for_idle(
                PaneId(0),
                Duration::from_millis(500),
                Duration::from_secs(2),
            )
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::Timeout);
        assert_eq!(report.elapsed, Duration::from_secs(2));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_person_can_cancel_a_wait() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let person = engine.clone();
        tokio::spawn(async move {
            sleep(Duration::from_secs(1)).await;
            person.cancel_waits(PaneId(0)).await.unwrap();
        });
        let report = engine
            .wait_for_text(PaneId(0), &text_wait("never"))
            .await
            .unwrap();
        assert_eq!(report.outcome, Outcome::CancelledByUser);
        assert!(report.elapsed <= Duration::from_secs(1) + crate::person::CANCEL_POLL);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_on_a_pane_that_does_not_exist_fails() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let missing = engine.wait_for_text(PaneId(42), &text_wait("x")).await;
        assert!(
            matches!(
                missing,
                Err(Error::NotFound {
                    kind: TargetKind::Pane,
                    ..
                })
            ),
            "{missing:?}"
        );
        let missing = engine
            .wait_for_idle(PaneId(42), Duration::from_secs(1), Duration::from_secs(2))
            .await;
        assert!(
            matches!(missing, Err(Error::NotFound { .. })),
            "{missing:?}"
        );
    })
    .await;
}
