//! Pipelines of steps (what `run_batch` runs) against a real tmux server.

mod support;

use std::sync::Mutex;
use std::time::Duration;

use support::{LIMIT, TestTmux, shell_pane};
use termpilot_tmux::{
    BatchOp, Capture, Cursor, CursorRef, Engine, Error, Input, JobResult, Keystrokes, Needle,
    Outcome, PaneId, PlannedStep, Result, Scrollback, Since, StepDriver, StepJob, StepStatus,
    StepWork, TextWait, WaitReport, WorkKind,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Drives steps straight through the engine, noting the counts reported
/// and the work each step announced.
struct Direct<'a> {
    engine: &'a Engine,
    counts: Mutex<Vec<usize>>,
    work: Mutex<Vec<String>>,
}

impl<'a> Direct<'a> {
    fn new(engine: &'a Engine) -> Self {
        Direct {
            engine,
            counts: Mutex::default(),
            work: Mutex::default(),
        }
    }
}

impl StepDriver for Direct<'_> {
    async fn resolve(&self, target: &str) -> Result<PaneId> {
        let parsed = (target.parse())
            .map_err(|e: termpilot_control::TargetError| Error::InvalidArgument(e.to_string()))?;
        self.engine.resolve_pane(&parsed).await
    }

    async fn job<T: Send>(
        &self,
        _index: usize,
        _total: usize,
        work: StepWork,
        run: impl Future<Output = Result<T>> + Send,
    ) -> Result<T> {
        self.work.lock().unwrap().push(work.to_string());
        run.await
    }

    async fn keys<T: Send>(
        &self,
        _total: usize,
        _done: watch::Receiver<usize>,
        sending: impl Future<Output = T> + Send,
    ) -> T {
        sending.await
    }

    async fn count(&self, done: usize, _total: usize) {
        self.counts.lock().unwrap().push(done);
    }
}

/// What the jobs of these tests produce.
#[derive(Debug)]
enum Got {
    Waited(WaitReport),
    Read(Since),
    Captured(Capture),
}

impl JobResult for Got {
    fn cursor(&self) -> Cursor {
        match self {
            Got::Waited(report) => report.cursor,
            Got::Read(read) => read.cursor,
            Got::Captured(capture) => capture.cursor,
        }
    }
}

type Step<'a> = PlannedStep<'a, Got>;

fn line<'a>(pane: PaneId, text: &str) -> Step<'a> {
    PlannedStep::Keys(BatchOp {
        pane: Ok(pane),
        keys: Keystrokes::Type(Input {
            text: Some(text.to_owned()),
            enter: true,
            ..Input::default()
        }),
    })
}

fn wait_for<'a>(
    engine: &'a Engine,
    pane: PaneId,
    text: &str,
    since: Option<CursorRef>,
) -> Step<'a> {
    let wait = TextWait {
        patterns: vec![Needle::Literal(text.to_owned())],
        stop: Vec::new(),
        match_case: true,
        since: None,
        include_screen: false,
        timeout: LIMIT,
    };
    PlannedStep::Job(StepJob {
        pane: pane.to_string(),
        since,
        kind: WorkKind::WaitForText,
        limit: Some(LIMIT),
        run: Box::new(move |pane, since| {
            Box::pin(async move {
                let wait = TextWait { since, ..wait };
                let waiting = engine.wait_for_text_or_input(pane, &wait, Duration::ZERO);
                waiting.await.map(Got::Waited)
            })
        }),
    })
}

fn read_since(engine: &Engine, pane: PaneId, since: CursorRef) -> Step<'_> {
    PlannedStep::Job(StepJob {
        pane: pane.to_string(),
        since: Some(since),
        kind: WorkKind::CaptureSince,
        limit: None,
        run: Box::new(move |pane, since| {
            Box::pin(async move {
                let since = since.expect("the engine resolves a job's cursor");
                engine.read_since(pane, since).await.map(Got::Read)
            })
        }),
    })
}

fn capture(engine: &Engine, pane: PaneId) -> Step<'_> {
    PlannedStep::Job(StepJob {
        pane: pane.to_string(),
        since: None,
        kind: WorkKind::Capture,
        limit: None,
        run: Box::new(move |pane, _| {
            Box::pin(async move {
                let capture = engine.capture(pane, Scrollback::None).await;
                capture.map(Got::Captured)
            })
        }),
    })
}

async fn run(
    engine: &Engine,
    steps: Vec<Step<'_>>,
    stop: bool,
    driver: &Direct<'_>,
) -> Vec<StepStatus<Got>> {
    let cancel = CancellationToken::new();
    tokio::time::timeout(LIMIT * 2, engine.run_steps(steps, stop, &cancel, driver))
        .await
        .expect("steps in time")
}

#[tokio::test]
async fn steps_take_their_cursors_from_earlier_steps() {
    let tmux = TestTmux::new();
    let engine = Engine::connect(tmux.config()).await.expect("connect");
    let pane = shell_pane(&engine, "sh", None).await;
    let driver = Direct::new(&engine);
    let steps = vec![
        line(pane, "echo step-$((20+1))"),
        wait_for(&engine, pane, "step-21", Some(CursorRef::Latest)),
        read_since(&engine, pane, CursorRef::Step(0)),
        capture(&engine, pane),
    ];
    let statuses = run(&engine, steps, true, &driver).await;
    let [sent, waited, read, captured] = statuses.as_slice() else {
        panic!("four statuses: {statuses:?}");
    };
    let StepStatus::Sent { cursor: before, .. } = sent else {
        panic!("{sent:?}");
    };
    let StepStatus::Done {
        result: Got::Waited(report),
        ..
    } = waited
    else {
        panic!("{waited:?}");
    };
    assert_eq!(report.outcome, Outcome::Matched, "{report:?}");
    assert_eq!(report.baseline, *before, "$prev is the send's cursor");
    let StepStatus::Done {
        result: Got::Read(since),
        ..
    } = read
    else {
        panic!("{read:?}");
    };
    assert!(since.text.contains("step-21"), "{since:?}");
    assert!(since.cursor.offset > before.offset);
    assert!(matches!(
        captured,
        StepStatus::Done {
            result: Got::Captured(_),
            ..
        }
    ));
    assert_eq!(
        *driver.work.lock().unwrap(),
        [
            format!("waiting for text in {pane}"),
            format!("reading the output of {pane}"),
            format!("capturing {pane}"),
        ]
    );
    assert_eq!(driver.counts.lock().unwrap().last(), Some(&4));
}

#[tokio::test]
async fn a_failed_step_stops_the_rest_or_not() {
    let tmux = TestTmux::new();
    let engine = Engine::connect(tmux.config()).await.expect("connect");
    let pane = shell_pane(&engine, "sh", None).await;
    let steps = || {
        vec![
            PlannedStep::Refused(Error::InvalidArgument("refused before the batch".into())),
            wait_for(&engine, pane, "never", Some(CursorRef::Step(0))),
            line(pane, "echo after"),
        ]
    };
    let driver = Direct::new(&engine);
    let stopped = run(&engine, steps(), true, &driver).await;
    assert!(
        matches!(&stopped[0], StepStatus::Failed(Error::InvalidArgument(m)) if m == "refused before the batch")
    );
    assert!(matches!(stopped[1], StepStatus::Skipped), "{stopped:?}");
    assert!(matches!(stopped[2], StepStatus::Skipped), "{stopped:?}");
    let went_on = run(&engine, steps(), false, &driver).await;
    // Step 0 returned no cursor, so step 1 fails without waiting.
    let StepStatus::Failed(error) = &went_on[1] else {
        panic!("{went_on:?}");
    };
    assert_eq!(
        error.to_string(),
        "steps[1]: $0 names no step that returned a cursor"
    );
    assert!(matches!(went_on[2], StepStatus::Sent { .. }), "{went_on:?}");
}
