//! Pipelines of steps (what `run_batch` runs) against a real tmux server.

mod support;

use std::sync::Mutex;
use std::time::Duration;

use support::{LIMIT, TestTmux, shell_pane};
use termpilot_tmux::{
    BatchOp, CursorRef, Engine, Error, Input, Keystrokes, Needle, Outcome, PaneId, Result,
    Scrollback, Step, StepDriver, StepOutcome, StepStatus, StepWork, TextWait,
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

    async fn step<T: Send>(
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

fn line(pane: PaneId, text: &str) -> Step {
    Step::Keys(BatchOp {
        pane: Ok(pane),
        keys: Keystrokes::Type(Input {
            text: Some(text.to_owned()),
            enter: true,
            ..Input::default()
        }),
    })
}

fn wait_for(pane: PaneId, text: &str, since: Option<CursorRef>) -> Step {
    Step::WaitForText {
        pane: pane.to_string(),
        wait: TextWait {
            patterns: vec![Needle::Literal(text.to_owned())],
            stop: Vec::new(),
            match_case: true,
            since: None,
            include_screen: false,
            timeout: LIMIT,
        },
        since,
        settle: Duration::ZERO,
    }
}

async fn run(
    engine: &Engine,
    steps: Vec<Step>,
    stop: bool,
    driver: &Direct<'_>,
) -> Vec<StepStatus> {
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
        wait_for(pane, "step-21", Some(CursorRef::Latest)),
        Step::CaptureSince {
            pane: pane.to_string(),
            since: CursorRef::Step(0),
        },
        Step::Capture {
            pane: pane.to_string(),
            scrollback: Scrollback::None,
        },
    ];
    let statuses = run(&engine, steps, true, &driver).await;
    let [sent, waited, read, captured] = statuses.as_slice() else {
        panic!("four statuses: {statuses:?}");
    };
    let StepStatus::Done {
        outcome: StepOutcome::Sent(before),
        ..
    } = sent
    else {
        panic!("{sent:?}");
    };
    let StepStatus::Done {
        outcome: StepOutcome::Waited(report),
        ..
    } = waited
    else {
        panic!("{waited:?}");
    };
    assert_eq!(report.outcome, Outcome::Matched, "{report:?}");
    assert_eq!(report.baseline, *before, "$prev is the send's cursor");
    let StepStatus::Done {
        outcome: StepOutcome::Read(since),
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
            outcome: StepOutcome::Captured(_),
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
            Step::Refused(Error::InvalidArgument("refused before the batch".into())),
            wait_for(pane, "never", Some(CursorRef::Step(0))),
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
    assert!(
        matches!(
            went_on[2],
            StepStatus::Done {
                outcome: StepOutcome::Sent(_),
                ..
            }
        ),
        "{went_on:?}"
    );
}
