//! `termpilot attach` driven through a real terminal: a pane of a second,
//! private tmux server plays the person's terminal.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use termpilot_tmux::{
    Engine, EngineConfig, Error, Input, Needle, Outcome, PaneScope, Socket, TextWait,
};

const LIMIT: Duration = Duration::from_secs(10);

fn config_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tmux/tests/support/tmux.conf")
}

/// A private tmux server, killed (only it) when dropped.
struct Server(String);

impl Server {
    fn new(role: &str) -> Server {
        Server(format!("tp-attach-{role}-{}", std::process::id()))
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.0, "-f"])
            .arg(config_file())
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
        // tmux leaves its socket file behind, also when the server ended by itself.
        let _ = std::fs::remove_file(support::socket_path(&self.0));
    }
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn typed(text: &str) -> Input {
    Input {
        text: Some(text.to_owned()),
        ..Input::default()
    }
}

#[tokio::test]
async fn a_person_takes_over_hands_back_cancels_and_detaches() {
    let agent = Server::new("agent");
    let person = Server::new("person");
    let engine = Engine::connect(EngineConfig {
        socket: Socket::Name(agent.0.clone()),
        server_config: Some(config_file()),
        host: None,
        ..EngineConfig::default()
    })
    .await
    .unwrap();
    let pane = engine.resolve_pane(&"%0".parse().unwrap()).await.unwrap();

    let attach = format!(
        "{} attach %0 -L {}",
        env!("CARGO_BIN_EXE_termpilot"),
        agent.0
    );
    person.tmux(&["new-session", "-d", "-x", "100", "-y", "30", &attach]);
    eventually("the person's terminal is attached", async || {
        agent
            .tmux(&["list-clients", "-F", "#{client_control_mode}"])
            .lines()
            .any(|l| l == "0")
    })
    .await;

    person.tmux(&["send-keys", "-t", "%0", "C-]", "t"]);
    eventually("the pane is held", async || {
        matches!(
            engine.send_input(pane, &typed("x")).await,
            Err(Error::HeldByPerson { .. })
        )
    })
    .await;
    let panes = engine.list_panes(&PaneScope::All).await.unwrap();
    let held = panes.iter().find(|p| p.id == pane).unwrap().held_by.clone();
    assert!(
        held.is_some_and(|h| h.contains("termpilot attach")),
        "list_panes shows the holder"
    );

    person.tmux(&["send-keys", "-t", "%0", "C-]", "h"]);
    eventually("the pane is handed back", async || {
        engine.send_input(pane, &typed("y")).await.is_ok()
    })
    .await;

    let waiting = engine.clone();
    let wait = tokio::spawn(async move {
        let spec = TextWait {
            patterns: vec![Needle::Literal("never printed".into())],
            stop: Vec::new(),
            match_case: true,
            since: None,
            include_screen: false,
            timeout: Duration::from_secs(20),
        };
        waiting.wait_for_text(pane, &spec).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancelled_at = Instant::now();
    person.tmux(&["send-keys", "-t", "%0", "C-]", "c"]);
    let report = tokio::time::timeout(LIMIT, wait)
        .await
        .expect("the wait ends")
        .unwrap()
        .unwrap();
    assert_eq!(report.outcome, Outcome::CancelledByUser);
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(5),
        "{:?}",
        cancelled_at.elapsed()
    );

    person.tmux(&["send-keys", "-t", "%0", "C-]", "t"]);
    eventually("the pane is held again", async || {
        engine.send_input(pane, &typed("z")).await.is_err()
    })
    .await;
    person.tmux(&["send-keys", "-t", "%0", "C-]", "d"]);
    eventually("the person's terminal detached", async || {
        !agent
            .tmux(&["list-clients", "-F", "#{client_control_mode}"])
            .lines()
            .any(|l| l == "0")
    })
    .await;
    eventually("detaching handed the pane back", async || {
        engine.send_input(pane, &typed("w")).await.is_ok()
    })
    .await;
    assert!(
        engine
            .list_panes(&PaneScope::All)
            .await
            .unwrap()
            .iter()
            .any(|p| p.id == pane)
    );
}
