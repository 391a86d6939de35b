//! tmux's history limit: a server termpilot starts gives new panes the
//! configured limit, and a capture says when the history was full.

mod support;

use support::{LIMIT, TestTmux, eventually};
use termpilot_tmux::{Engine, EngineConfig, NewSession, PaneScope, Scrollback};

async fn connect(config: EngineConfig) -> Engine {
    tokio::time::timeout(LIMIT, Engine::connect(config))
        .await
        .expect("connect in time")
        .expect("connect")
}

#[tokio::test]
async fn sessions_created_on_a_started_server_get_the_history_limit() {
    let tmux = TestTmux::new();
    let engine = connect(tmux.config()).await;
    let created = engine.create_session(&NewSession::default()).await.unwrap();
    let capture = engine
        .capture(created.pane, Scrollback::None)
        .await
        .unwrap();
    assert_eq!(capture.history_limit, 50_000);
}

#[tokio::test]
async fn the_first_pane_of_a_started_server_gets_the_history_limit() {
    let tmux = TestTmux::new();
    let engine = connect(tmux.config()).await;
    let panes = engine.list_panes(&PaneScope::All).await.unwrap();
    let [first] = panes.as_slice() else {
        panic!("one pane on a new server: {panes:?}");
    };
    assert_eq!(first.session_name, "main");
    let capture = engine.capture(first.id, Scrollback::None).await.unwrap();
    assert_eq!(capture.history_limit, 50_000);
}

#[tokio::test]
async fn a_capture_says_when_the_history_was_full() {
    let tmux = TestTmux::new();
    let engine = connect(EngineConfig {
        history_limit: 100,
        ..tmux.config()
    })
    .await;
    let options = NewSession {
        command: Some("seq 1 500; exec sleep 60".into()),
        ..NewSession::default()
    };
    let created = engine.create_session(&options).await.unwrap();
    let full = eventually(LIMIT, async || {
        let capture = engine.capture(created.pane, Scrollback::All).await.ok()?;
        capture.lines.iter().any(|l| l == "500").then_some(capture)
    })
    .await
    .expect("the output is on the screen");
    assert_eq!(full.history_limit, 100);
    assert!(
        full.history_full(),
        "{} of {}",
        full.history_size,
        full.history_limit
    );
    assert_ne!(full.lines.first().map(String::as_str), Some("1"));

    let roomy = engine
        .create_session(&NewSession {
            command: Some("seq 1 20; exec sleep 60".into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let short = eventually(LIMIT, async || {
        let capture = engine.capture(roomy.pane, Scrollback::All).await.ok()?;
        capture.lines.iter().any(|l| l == "20").then_some(capture)
    })
    .await
    .expect("the output is on the screen");
    assert!(!short.history_full());
}
