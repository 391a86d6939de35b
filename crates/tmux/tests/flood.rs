//! Commands to a pane flooding output, against a real tmux server: C-c
//! stops the flood and captures are right while 20 panes flood. tmux sends
//! a flooding pane's output to its session's client far faster than any
//! client reads it, so replies on that client queue behind seconds of
//! output; these commands must not.

mod support;

use std::time::Duration;

use support::{TestTmux, eventually, foreground, journal_text, shell_pane, wait_for_journal};
use termpilot_tmux::{
    BatchOp, Created, Engine, Input, Keystrokes, NewSession, OpStatus, PaneId, Scrollback,
};

/// The longest a flood may take to stop, or its session's output to catch
/// up: with 20 panes flooding, far longer than [`support::LIMIT`].
const FLOOD_LIMIT: Duration = Duration::from_secs(60);

const FLOODS: usize = 19;

async fn connect(tmux: &TestTmux) -> Engine {
    tokio::time::timeout(support::LIMIT, Engine::connect(tmux.config()))
        .await
        .expect("connect in time")
        .expect("connect")
}

fn keys(names: &[&str]) -> Input {
    Input {
        keys: names
            .iter()
            .map(|name| name.parse().expect("a key"))
            .collect(),
        ..Input::default()
    }
}

fn typed(text: &str) -> Input {
    Input {
        text: Some(text.into()),
        enter: true,
        ..Input::default()
    }
}

/// Starts `yes` in `pane` (a bash at its prompt) and waits until it runs.
async fn start_yes(engine: &Engine, tmux: &TestTmux, pane: PaneId) {
    engine
        .send_input(pane, &typed("yes"))
        .await
        .expect("type yes");
    let running = eventually(FLOOD_LIMIT, async || {
        (foreground(|args| tmux.tmux(args), pane) == "yes").then_some(())
    });
    running.await.expect("yes runs");
}

/// Starts the floods, each in a session of its own.
async fn start_floods(engine: &Engine) -> Vec<Created> {
    let mut floods = Vec::new();
    for index in 0..FLOODS {
        let command = match index % 2 {
            0 => "yes",
            _ => "while :; do seq 1 10000000; done",
        };
        let created = engine
            .create_session(&NewSession {
                command: Some(command.into()),
                ..NewSession::default()
            })
            .await
            .expect("create a flooding session");
        floods.push(created);
    }
    floods
}

/// Whether a capture shows a flood of `y` lines.
fn shows_yes(lines: &[String]) -> bool {
    lines.len() > 10 && lines.iter().rev().take(10).all(|line| line == "y")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_flood_and_captures_work_while_twenty_panes_flood() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let floods = start_floods(&engine).await;
    for flood in &floods {
        wait_for_journal(&engine, flood.pane, 0, "\n").await;
    }

    for round in 0..3 {
        start_yes(&engine, &tmux, pane).await;
        // Let tmux queue a backlog for the pane's client.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let capture = engine.capture(pane, Scrollback::None).await.unwrap();
        assert!(
            shows_yes(&capture.lines),
            "round {round}: {:?}",
            capture.lines
        );
        let other = engine
            .capture(floods[0].pane, Scrollback::None)
            .await
            .unwrap();
        assert!(shows_yes(&other.lines), "{:?}", other.lines);

        // The first round presses C-c as a batch's operation, the others
        // as send_keys does.
        let cursor = match round {
            0 => {
                let op = BatchOp {
                    pane: Ok(pane),
                    keys: Keystrokes::Type(keys(&["C-c"])),
                };
                let cancel = tokio_util::sync::CancellationToken::new();
                let reports = engine.send_batch(&[op], true, &cancel, |_| {}).await;
                match &reports[0].status {
                    OpStatus::Done { cursor } => *cursor,
                    other => panic!("the batch's C-c: {other:?}"),
                }
            }
            _ => engine.send_input(pane, &keys(&["C-c"])).await.unwrap(),
        };
        let stopped = eventually(FLOOD_LIMIT, async || {
            (foreground(|args| tmux.tmux(args), pane) == "bash").then_some(())
        });
        assert!(stopped.await.is_some(), "round {round}: yes still runs");
        // The prompt came back, and the screen shows it.
        let prompt = eventually(FLOOD_LIMIT, async || {
            let capture = engine.capture(pane, Scrollback::None).await.ok()?;
            let last = capture.lines.last()?.clone();
            last.starts_with("bash-ready$").then_some(capture)
        });
        let capture = prompt.await.expect("the prompt shows after C-c");
        assert!(
            capture.lines.iter().any(|line| line == "y"),
            "{:?}",
            capture.lines
        );
        // What the key caused comes after its cursor: the ^C, then the
        // prompt.
        let text = eventually(FLOOD_LIMIT, async || {
            let text = journal_text(&engine, pane, cursor);
            let interrupted = text.find("^C")?;
            text[interrupted..].contains("bash-ready$").then_some(())
        });
        assert!(
            text.await.is_some(),
            "round {round}: no ^C and prompt after the cursor: {:?}",
            journal_text(&engine, pane, cursor)
        );
    }

    // The client that takes commands while the floods go on gets no output
    // and changes no sizes.
    let clients = tmux.tmux(&["list-clients", "-F", "#{client_flags}"]);
    let clients = String::from_utf8_lossy(&clients.stdout).into_owned();
    assert!(
        clients.lines().any(|flags| {
            let flags: Vec<&str> = flags.split(',').collect();
            flags.contains(&"no-output") && flags.contains(&"ignore-size")
        }),
        "{clients}"
    );

    // Stopped while the engine still reads its clients: tmux 3.3a does not
    // end a control client whose reader went away with output queued.
    for flood in floods {
        let killed = tmux.tmux(&["kill-session", "-t", &flood.session.to_string()]);
        assert!(killed.status.success(), "{killed:?}");
    }
}
