//! The engine (`engine.rs`): connecting, one client per session, routing,
//! reconnecting, and the guard against tmux 3.3a's identify crash.

use std::time::Duration;

use termpilot_control::{PaneId, SessionId};
use tokio::time::Instant;

use super::fake::replay::{Transcript, fixtures};
use super::fake::{Act, Fake, Response};
use super::*;
use crate::client::SETTLE;
use crate::engine::STARTED_MARK;
use crate::error::Error;
use crate::transport::OneShot;
use crate::{Input, NewSession};

fn typed(text: &str) -> Input {
    Input {
        text: Some(text.into()),
        ..Input::default()
    }
}

#[tokio::test(start_paused = true)]
async fn connecting_starts_the_server_with_a_first_session() {
    bounded(async {
        let fake = Fake::local();
        let engine = connect(&fake).await;
        assert_eq!(fake.opened(), 1);
        let args = fake.conn(0, |c| c.args.clone());
        let start = args.iter().rposition(|arg| arg == ";").map_or(0, |i| i + 1);
        let args = &args[start..];
        assert_eq!(&args[..2], ["new-session", "-A"]);
        assert!(args.contains(&"ignore-size,pause-after=30".to_owned()));
        assert!(args.windows(2).any(|w| w == ["-s", "main"]));
        assert_eq!(engine.server_pid(), 1000, "the epoch is the server's pid");
        fake.server(|server| {
            assert_eq!(server.sessions[&0].name, "main");
            assert_eq!(server.global["history-limit"], "50000");
            assert_eq!(server.global[STARTED_MARK], "1");
        });
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn connecting_attaches_a_client_to_every_session_and_changes_nothing() {
    bounded(async {
        let fake = Fake::local().with_session("a");
        fake.server(|server| server.new_session(Some("b"), (80, 24)));
        let engine = connect(&fake).await;
        assert_eq!(fake.opened(), 2);
        for (conn, target) in [(0, "$0"), (1, "$1")] {
            let args = fake.conn(conn, |c| c.args.clone());
            assert_eq!(args[0], "attach-session");
            assert_eq!(args.last().unwrap(), target);
        }
        assert!(
            fake.sent("set-option").is_empty(),
            "a server termpilot did not start keeps its options"
        );
        assert_eq!(engine.server_pid(), 1000);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_recorded_attach_connects_the_engine() {
    bounded(async {
        let fake = Fake::local();
        fake.on_run(|args| (args[0] == "list-sessions").then(|| OneShot::Reply("$0\n".into())));
        fake.replay_next(Transcript::parse(fixtures::ATTACH).loose());
        let engine = connect(&fake).await;
        assert_eq!(engine.server_pid(), 31046, "the pid tmux 3.3a printed");
        let mut grew = engine.subscribe(PaneId(0));
        let hi = async {
            loop {
                let text = engine.read_journal(PaneId(0), |j| j.read_from(0).bytes.into_owned());
                if text.ends_with(b"hi\r\n$ ") {
                    return;
                }
                grew.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(5), hi)
            .await
            .expect("the recorded output reaches the journal");
        engine.shared.any_client().expect("attached").detach();
        // The recording waited half a second before the client detached.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(fake.mismatches().is_empty(), "{:?}", fake.mismatches());
        assert!(fake.conn(0, |c| !c.is_open()), "tmux said %exit and closed");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_session_made_elsewhere_gets_a_client() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let session = fake.add_session("later");
        settle().await;
        assert_eq!(fake.opened(), 2);
        let args = fake.conn(1, |c| c.args.clone());
        assert_eq!(args.last().unwrap(), &format!("${session}"));
        let pane = fake.server(|server| server.first_pane(session).unwrap());
        engine.send_input(PaneId(pane), &typed("ls")).await.unwrap();
        assert!(fake.conn(1, |c| c.lines.iter().any(|l| runs_send_keys(l))));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn commands_about_a_pane_go_to_the_client_of_its_session() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| server.new_session(Some("other"), (80, 24)));
        let engine = connect(&fake).await;
        engine.send_input(PaneId(1), &typed("ls")).await.unwrap();
        let on = |conn| fake.conn(conn, |c| c.lines.iter().any(|l| runs_send_keys(l)));
        assert!(!on(0));
        assert!(
            on(1),
            "the client attached to the pane's session carries it"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn output_of_a_pane_seen_by_two_clients_is_kept_once() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| server.new_session(Some("linked"), (80, 24)));
        let engine = connect(&fake).await;
        // A window linked into both sessions: tmux sends its output to both.
        fake.send_raw(0, "%output %0 once\n");
        fake.send_raw(1, "%output %0 once\n");
        settle().await;
        let text = engine.read_journal(PaneId(0), |j| j.read_from(0).bytes.into_owned());
        assert_eq!(text, b"once");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_client_moved_to_another_session_leaves() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| server.new_session(Some("other"), (80, 24)));
        let engine = connect(&fake).await;
        // detach-on-destroy off: tmux moves the client of a killed session.
        fake.send_raw(0, "%session-changed $1 other\n");
        settle().await;
        assert_eq!(fake.conn(0, |c| c.lines.last().cloned()), Some(Vec::new()));
        assert!(fake.conn(0, |c| !c.is_open()));
        // The pane of the session it left gets a client of its own again.
        engine.send_input(PaneId(0), &typed("ls")).await.unwrap();
        assert_eq!(fake.opened(), 3);
        assert_eq!(fake.conn(2, |c| c.args.last().cloned()).unwrap(), "$0");
        assert!(fake.conn(2, |c| c.lines.iter().any(|l| runs_send_keys(l))));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_next_call_after_the_server_died_reconnects() {
    bounded(async {
        let fake = Fake::local();
        let engine = connect(&fake).await;
        fake.output(0, b"old output");
        settle().await;
        assert_eq!(engine.journal_end(PaneId(0)), 10);
        fake.kill_server(false);
        settle().await;
        assert!(fake.open_conns().is_empty());
        let sessions = engine.list_sessions().await.expect("reconnects");
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].name, "main");
        assert_eq!(fake.opened(), 2, "a new client through a new open");
        assert_eq!(engine.server_pid(), 2000, "a new server");
        assert_eq!(
            engine.journal_end(PaneId(0)),
            0,
            "pane ids of the old server mean nothing"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_call_pending_when_the_server_dies_fails_then_the_engine_recovers() {
    bounded(async {
        let fake = Fake::local();
        let engine = connect(&fake).await;
        let mut armed = true;
        fake.hook(move |cmd| {
            let fire = armed && cmd.name == "list-sessions";
            armed &= !fire;
            fire.then(|| Response::act(Act::Die))
        });
        let failed = engine.list_sessions().await;
        assert!(
            matches!(failed, Err(Error::Disconnected { .. })),
            "{failed:?}"
        );
        settle().await;
        assert!(fake.open_conns().is_empty());
        // The server itself still runs here: the next call attaches again.
        let sessions = engine.list_sessions().await.unwrap();
        assert_eq!(sessions[0].name, "main");
        assert_eq!(engine.server_pid(), 1000, "same server, same epoch");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_remote_host_fails_at_once() {
    bounded(async {
        let fake = Fake::remote();
        fake.fail_next_open("ssh: connect to host build-1 port 22: Connection refused");
        let started = Instant::now();
        let failed = Engine::connect_with(config(), fake.transport()).await;
        match failed {
            Err(Error::Connect { reason, .. }) => assert!(reason.contains("Connection refused")),
            other => panic!("expected a connect error, got {other:?}"),
        }
        assert_eq!(
            started.elapsed(),
            Duration::ZERO,
            "no retries for a remote host"
        );
        assert_eq!(fake.opened(), 1);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn connecting_to_a_host_takes_its_time_in_all() {
    bounded(async {
        // Listing the sessions takes most of the host's time, then the
        // attached client's first question is never answered.
        let limit = Duration::from_secs(5);
        let fake = Fake::remote()
            .with_session("main")
            .with_connect_timeout(limit)
            .with_run_delay(Duration::from_secs(4));
        fake.hook(|cmd| (cmd.name == "display-message").then(|| Response::act(Act::Hang)));
        let started = Instant::now();
        let failed = Engine::connect_with(config(), fake.transport()).await;
        match failed {
            Err(Error::Connect { reason, .. }) => assert_eq!(reason, "no answer within 5 s"),
            other => panic!("expected a connect error, got {other:?}"),
        }
        assert_eq!(started.elapsed(), limit);
        settle().await;
        assert!(fake.open_conns().is_empty(), "nothing is left connecting");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_local_server_starting_elsewhere_is_retried() {
    bounded(async {
        let fake = Fake::local();
        fake.fail_next_open("server exited unexpectedly");
        fake.fail_next_open("server exited unexpectedly");
        let engine = connect(&fake).await;
        assert_eq!(fake.opened(), 3);
        assert_eq!(engine.server_pid(), 1000);
    })
    .await;
}

/// Connects with sessions `main` and `work` (a client each), then kills
/// `work` from outside with its client slow to leave: it got `%exit`, its
/// pipe is still open.
async fn departing_client(fake: &Fake) -> Engine {
    fake.add_session("work");
    let engine = connect(fake).await;
    assert_eq!(fake.opened(), 2);
    fake.hold_exits(true);
    fake.kill_session(1);
    settle().await;
    assert!(fake.conn(1, |c| c.exited && c.is_open()));
    assert_eq!(departing(&engine), 1);
    engine
}

#[tokio::test(start_paused = true)]
async fn a_new_client_waits_until_departing_clients_are_gone() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = departing_client(&fake).await;
        let create = tokio::spawn({
            let engine = engine.clone();
            async move { engine.create_session(&NewSession::default()).await }
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            fake.opened(),
            2,
            "no client identifies while another departs"
        );
        let closed_at = Instant::now();
        fake.close(1);
        let created = create.await.unwrap().expect("the session is created");
        assert_eq!(fake.opened(), 3);
        assert_eq!(
            fake.conn(2, |c| c.opened),
            closed_at,
            "connected as soon as it was gone"
        );
        assert_eq!(created.session, SessionId(2));
        assert_eq!(departing(&engine), 0);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_departure_that_never_ends_holds_a_new_client_back_for_a_while_only() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = departing_client(&fake).await;
        let started = Instant::now();
        engine.create_session(&NewSession::default()).await.unwrap();
        assert_eq!(fake.conn(2, |c| c.opened) - started, SETTLE);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_call_pending_when_its_session_ends_names_the_session() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.add_session("work");
        let engine = connect(&fake).await;
        // The pane's probe (on its session's client, for the cursor) never
        // gets an answer: the session is killed meanwhile.
        fake.hook(|cmd| {
            let probe = cmd
                .args
                .first()
                .is_some_and(|format| format.contains("pane_dead"));
            (cmd.name == "display-message" && cmd.target() == "%1" && probe)
                .then(|| Response::act(Act::Hang))
        });
        let syncing = tokio::spawn({
            let engine = engine.clone();
            async move { engine.sync_pane(PaneId(1)).await }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        fake.kill_session(1);
        match syncing.await.unwrap() {
            Err(Error::SessionEnded { session, command }) => {
                assert_eq!(session, SessionId(1));
                assert_eq!(command, "display-message");
            }
            other => panic!("expected SessionEnded, got {other:?}"),
        }
        // The other session's client is untouched.
        assert_eq!(fake.open_conns(), [0]);
    })
    .await;
}

/// Whether a line written to tmux runs `send-keys` (input follows the
/// guard that refuses a held pane on its line).
fn runs_send_keys(line: &[u8]) -> bool {
    line.starts_with(b"send-keys") || line.windows(12).any(|w| w == b" ; send-keys")
}

#[tokio::test(start_paused = true)]
async fn an_engine_for_an_existing_server_never_starts_one() {
    bounded(async {
        let fake = Fake::local();
        let refused = Engine::connect_existing_with(config(), fake.transport()).await;
        match refused {
            Err(Error::Connect { reason, .. }) => {
                assert_eq!(reason, "no tmux server is running there");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(!fake.running(), "no server was started");
        assert_eq!(fake.opened(), 0);
        assert_eq!(fake.runs().len(), 1, "asked once, without retrying");
        let fake = Fake::local().with_session("theirs");
        let engine = Engine::connect_existing_with(config(), fake.transport())
            .await
            .expect("attaches to the running server");
        assert_eq!(fake.conn(0, |c| c.args[0].clone()), "attach-session");
        assert!(fake.sent("set-option").is_empty(), "nothing marked as ours");
        assert_eq!(engine.server_pid(), 1000);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_local_host_is_the_engine_already_connected() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let options = crate::HostOptions::default();
        let hosts = crate::Hosts::new(config(), &[], &options)
            .unwrap()
            .with_local(engine.clone());
        let local = hosts.engine(crate::LOCAL).await.unwrap();
        assert!(std::sync::Arc::ptr_eq(&local.shared, &engine.shared));
        assert!(hosts.connected(crate::LOCAL).is_some());
        assert_eq!(fake.opened(), 1, "no second engine connected");
    })
    .await;
}

/// How many of the engine's clients are departing, as its transport counts.
fn departing(engine: &Engine) -> usize {
    let transport = &engine.shared.transport;
    transport.departures().map_or(0, |d| d.count())
}
