//! Batches (`batch.rs`): chains of keystrokes over pipelined commands,
//! per-operation reports, stop and continue modes, refusals, cancelling.

use std::time::Duration;

use termpilot_control::{PaneId, TargetKind};
use tokio_util::sync::CancellationToken;

use super::fake::model::Input as Sent;
use super::fake::{Act, Fake, Response};
use super::*;
use crate::error::Error;
use crate::{BatchOp, Input, Keystrokes, OpReport, OpStatus};

fn typing(pane: u32, text: &str) -> BatchOp {
    BatchOp {
        pane: Ok(PaneId(pane)),
        keys: Keystrokes::Type(Input {
            text: Some(text.into()),
            ..Input::default()
        }),
    }
}

fn inputs(fake: &Fake, pane: u32) -> Vec<Sent> {
    fake.server(|server| server.panes[&pane].inputs.clone())
}

fn text(text: &str) -> Sent {
    Sent::Text(text.into())
}

/// Two sessions, panes `%0` and `%1`, and tmux refusing keys for `%1`.
async fn refusing_pane_one() -> (Fake, Engine) {
    let fake = Fake::local().with_session("main");
    fake.add_session("other");
    let engine = connect(&fake).await;
    fake.hook(|cmd| {
        (cmd.name == "send-keys" && cmd.target() == "%1")
            .then(|| Response::act(Act::Error("can't find pane: %1".into())))
    });
    (fake, engine)
}

async fn run(engine: &Engine, ops: &[BatchOp], stop: bool) -> Vec<OpReport> {
    engine
        .send_batch(ops, stop, &CancellationToken::new(), |_| {})
        .await
}

fn is_done(report: &OpReport) -> bool {
    matches!(report.status, OpStatus::Done { .. })
}

#[tokio::test(start_paused = true)]
async fn every_operation_is_sent_and_reported_with_its_cursor() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.add_session("other");
        let engine = connect(&fake).await;
        fake.output(0, b"abc");
        fake.output(1, b"12");
        settle().await;
        let ops = vec![
            typing(0, "a"),
            typing(1, "b"),
            BatchOp {
                pane: Ok(PaneId(0)),
                keys: Keystrokes::Paste {
                    text: "c".into(),
                    bracketed: false,
                    enter: true,
                },
            },
        ];
        let mut progress = Vec::new();
        let reports = engine
            .send_batch(&ops, false, &CancellationToken::new(), |n| progress.push(n))
            .await;
        let cursors: Vec<_> = reports
            .iter()
            .map(|r| match r.status {
                OpStatus::Done { cursor } => cursor.offset,
                ref other => panic!("not done: {other:?}"),
            })
            .collect();
        // %1's output comes through another client: its cursor is its journal
        // end before the chain was written, still before the input.
        assert_eq!(cursors, [3, 2, 3]);
        assert_eq!(progress, [3]);
        assert_eq!(inputs(&fake, 1), [text("b")]);
        assert_eq!(
            inputs(&fake, 0),
            [
                text("a"),
                Sent::Paste {
                    text: "c".into(),
                    bracketed: false
                },
                Sent::Keys(vec!["Enter".into()]),
            ]
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_cursor_is_taken_in_stream_order() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.output(0, b"$ ");
        settle().await;
        let mut count = 0;
        fake.hook(move |cmd| {
            if cmd.name != "send-keys" {
                return None;
            }
            count += 1;
            // Output that reached tmux's client stream before the second
            // operation's reply happened before its keys went in.
            (count == 2).then(|| Response::act(Act::Model).before("%output %0 a\n"))
        });
        let reports = run(&engine, &[typing(0, "a"), typing(0, "b")], false).await;
        let cursors: Vec<_> = reports
            .iter()
            .map(|r| match r.status {
                OpStatus::Done { cursor } => cursor.offset,
                _ => panic!("not done"),
            })
            .collect();
        assert_eq!(cursors, [2, 3]);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn stop_mode_sends_one_line_and_tmux_skips_the_rest_after_a_failure() {
    bounded(async {
        let (fake, engine) = refusing_pane_one().await;
        let ops = [typing(0, "a"), typing(1, "b"), typing(0, "c")];
        let reports = run(&engine, &ops, true).await;
        assert!(is_done(&reports[0]));
        assert!(
            matches!(
                &reports[1].status,
                OpStatus::Failed(Error::NotFound {
                    kind: TargetKind::Pane,
                    ..
                })
            ),
            "{:?}",
            reports[1]
        );
        assert!(matches!(reports[2].status, OpStatus::Skipped));
        assert_eq!(
            inputs(&fake, 0),
            [text("a")],
            "nothing after the failure reached a pane"
        );
        let lines = fake.conn(0, |c| c.lines.clone());
        let chained = lines
            .iter()
            .filter(|l| l.windows(3).any(|w| w == b" ; "))
            .count();
        assert_eq!(chained, 1, "the run went as one command line");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn continue_mode_goes_on_after_a_failure() {
    bounded(async {
        let (fake, engine) = refusing_pane_one().await;
        let ops = [typing(0, "a"), typing(1, "b"), typing(0, "c")];
        let reports = run(&engine, &ops, false).await;
        assert!(is_done(&reports[0]) && is_done(&reports[2]));
        assert!(matches!(reports[1].status, OpStatus::Failed(_)));
        assert_eq!(inputs(&fake, 0), [text("a"), text("c")]);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_operation_without_a_pane_fails_in_its_place() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let nowhere = BatchOp {
            pane: Err(Error::InvalidArgument("no such target".into())),
            ..typing(0, "x")
        };
        let ops = [typing(0, "a"), nowhere.clone(), typing(0, "c")];
        let reports = run(&engine, &ops, false).await;
        assert!(is_done(&reports[0]) && is_done(&reports[2]));
        assert!(
            matches!(&reports[1].status, OpStatus::Failed(Error::InvalidArgument(m)) if m == "no such target")
        );
        let ops = [typing(0, "d"), nowhere, typing(0, "e")];
        let reports = run(&engine, &ops, true).await;
        assert!(matches!(reports[2].status, OpStatus::Skipped));
        assert_eq!(inputs(&fake, 0), [text("a"), text("c"), text("d")]);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn held_and_missing_panes_are_refused_before_anything_is_sent() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.add_session("other");
        let engine = connect(&fake).await;
        engine.hold(PaneId(1), "someone").await.unwrap();
        let ops = [typing(1, "b"), typing(42, "x"), typing(0, "a")];
        let reports = run(&engine, &ops, false).await;
        assert!(
            matches!(&reports[0].status, OpStatus::Failed(Error::HeldByPerson { note, .. }) if note == "someone")
        );
        assert!(matches!(
            &reports[1].status,
            OpStatus::Failed(Error::NotFound { .. })
        ));
        assert!(is_done(&reports[2]));
        assert!(inputs(&fake, 1).is_empty());
        assert_eq!(fake.sent("send-keys").len(), 1);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn long_batches_go_in_chains_and_cancelling_stops_between_them() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let ops: Vec<BatchOp> = (0..40).map(|i| typing(0, &i.to_string())).collect();
        let cancel = CancellationToken::new();
        let mut progress = Vec::new();
        let reports = engine
            .send_batch(&ops, false, &cancel, |n| {
                progress.push(n);
                cancel.cancel();
            })
            .await;
        assert_eq!(progress, [32], "one chain of 32, then the cancel");
        assert_eq!(reports.iter().filter(|r| is_done(r)).count(), 32);
        assert!(
            reports[32..]
                .iter()
                .all(|r| matches!(r.status, OpStatus::Skipped))
        );
        assert_eq!(inputs(&fake, 0).len(), 32);
        let reports = run(&engine, &ops, false).await;
        assert!(reports.iter().all(is_done));
        assert!(reports.iter().all(|r| r.elapsed < Duration::from_secs(1)));
    })
    .await;
}

/// What the jobs of the pipeline tests produce: the cursor each was started
/// with, which it hands on.
#[derive(Debug)]
struct Started {
    pane: PaneId,
    since: crate::Cursor,
}

impl crate::JobResult for Started {
    fn cursor(&self) -> crate::Cursor {
        self.since
    }
}

/// A job on `target` from `since` that reports what it was started with,
/// or fails; `started` counts the jobs that were started.
fn job<'a>(
    target: &str,
    since: crate::CursorRef,
    fails: bool,
    started: &'a std::sync::atomic::AtomicUsize,
) -> crate::PlannedStep<'a, Started> {
    crate::PlannedStep::Job(crate::StepJob {
        pane: target.into(),
        since: Some(since),
        kind: crate::WorkKind::Capture,
        limit: None,
        run: Box::new(move |pane, since| {
            Box::pin(async move {
                started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let since = since.expect("the engine resolves a job's cursor");
                match fails {
                    true => Err(Error::InvalidArgument("the job failed".into())),
                    false => Ok(Started { pane, since }),
                }
            })
        }),
    })
}

/// Drives a pipeline with no scope, progress or cancellation of its own.
struct Plain;

impl crate::StepDriver for Plain {
    async fn resolve(&self, target: &str) -> crate::Result<PaneId> {
        (target.parse()).map_err(|e| Error::InvalidArgument(format!("{target}: {e}")))
    }

    async fn job<T: Send>(
        &self,
        _index: usize,
        _total: usize,
        _work: crate::StepWork,
        run: impl Future<Output = crate::Result<T>> + Send,
    ) -> crate::Result<T> {
        run.await
    }

    async fn keys<T: Send>(
        &self,
        _total: usize,
        _done: tokio::sync::watch::Receiver<usize>,
        sending: impl Future<Output = T> + Send,
    ) -> T {
        sending.await
    }

    async fn count(&self, _done: usize, _total: usize) {}
}

#[tokio::test(start_paused = true)]
async fn a_pipeline_hands_cursors_to_any_job_and_stops_at_a_failure() {
    use crate::{CursorRef, PlannedStep, StepStatus};
    use std::sync::atomic::{AtomicUsize, Ordering};

    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.output(0, b"abc");
        settle().await;
        let started = AtomicUsize::new(0);
        let steps = |stop_at_job: bool| {
            vec![
                PlannedStep::Keys(typing(0, "a")),
                job("%0", CursorRef::Latest, false, &started),
                job("%0", CursorRef::Step(0), stop_at_job, &started),
                job("%0", CursorRef::Step(9), false, &started),
                job("nowhere", CursorRef::Latest, false, &started),
                PlannedStep::Refused(Error::InvalidArgument("refused".into())),
                job("%0", CursorRef::Step(1), false, &started),
            ]
        };
        let cancel = CancellationToken::new();
        let went_on = engine.run_steps(steps(false), false, &cancel, &Plain).await;
        let StepStatus::Sent { cursor: typed, .. } = &went_on[0] else {
            panic!("{went_on:?}");
        };
        for done in [&went_on[1], &went_on[2], &went_on[6]] {
            let StepStatus::Done { pane, result } = done else {
                panic!("{went_on:?}");
            };
            assert_eq!(
                (*pane, result.pane, result.since),
                (PaneId(0), PaneId(0), *typed)
            );
        }
        let errors: Vec<String> = went_on[3..6]
            .iter()
            .map(|status| match status {
                StepStatus::Failed(error) => error.to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(
            errors[0].contains("refers to a step that has not run"),
            "{errors:?}"
        );
        assert!(errors[1].starts_with("nowhere: "), "{errors:?}");
        assert_eq!(errors[2], "refused");
        // A job refused before it starts (its cursor, its pane) never runs.
        assert_eq!(started.swap(0, Ordering::SeqCst), 3);

        let stopped = engine.run_steps(steps(true), true, &cancel, &Plain).await;
        assert!(matches!(stopped[2], StepStatus::Failed(_)), "{stopped:?}");
        assert!(
            stopped[3..]
                .iter()
                .all(|s| matches!(s, StepStatus::Skipped)),
            "{stopped:?}"
        );
        assert_eq!(started.load(Ordering::SeqCst), 2);
    })
    .await;
}
