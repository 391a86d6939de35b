//! A person at a pane (what `termpilot attach` does) against a real tmux
//! server: holding, handing back, and the guard that hands the pane back
//! however the person's code ends.

mod support;

use support::{LIMIT, TestTmux};
use termpilot_tmux::person::Person;
use termpilot_tmux::{Engine, Error, Input, PaneId, TargetKind};

fn typed(text: &str) -> Input {
    Input {
        text: Some(text.to_owned()),
        ..Input::default()
    }
}

async fn agent_and_pane(tmux: &TestTmux) -> (Engine, PaneId) {
    let engine = tokio::time::timeout(LIMIT, Engine::connect(tmux.config()))
        .await
        .expect("connect in time")
        .expect("connect");
    let pane = engine
        .resolve_pane(&"%0".parse().unwrap())
        .await
        .expect("the first pane");
    (engine, pane)
}

async fn person(tmux: &TestTmux, note: &str) -> Person {
    tokio::time::timeout(LIMIT, Person::connect(tmux.config(), "%0", note.into()))
        .await
        .expect("connect in time")
        .expect("the person connects")
}

async fn agent_may_type(engine: &Engine, pane: PaneId) -> bool {
    match engine.send_input(pane, &typed("")).await {
        Ok(_) => true,
        Err(Error::HeldByPerson { .. }) => false,
        Err(other) => panic!("unexpected error {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_holds_hands_back_and_knows_their_own_hold() {
    let tmux = TestTmux::new();
    let (agent, pane) = agent_and_pane(&tmux).await;
    let alice = person(&tmux, "a person (alice)").await;
    let bob = person(&tmux, "a person (bob)").await;
    assert_eq!(alice.pane(), pane);

    alice.take_over().await.unwrap();
    assert!(!agent_may_type(&agent, pane).await);
    assert!(alice.holds().await.unwrap());
    assert!(!bob.holds().await.unwrap());
    // Bob's leaving does not hand back Alice's hold.
    assert!(!bob.release_if_held().await.unwrap());
    assert!(!agent_may_type(&agent, pane).await);
    assert!(alice.release_if_held().await.unwrap());
    assert!(agent_may_type(&agent, pane).await);

    bob.take_over().await.unwrap();
    alice.hand_back().await.unwrap();
    assert!(
        agent_may_type(&agent, pane).await,
        "hand back releases any hold"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_hands_the_pane_back_when_a_panic_unwinds() {
    let tmux = TestTmux::new();
    let (agent, pane) = agent_and_pane(&tmux).await;
    let alice = person(&tmux, "a person (alice)").await;
    alice.take_over().await.unwrap();
    let runtime = tokio::runtime::Handle::current();
    let holder = alice.clone();
    // Blocking code outside the runtime, as `termpilot attach` is, that
    // panics while holding.
    let thread = std::thread::spawn(move || {
        let _guard = holder.release_on_drop(runtime);
        panic!("the person's code failed");
    });
    let ended = tokio::task::spawn_blocking(move || thread.join()).await;
    assert!(ended.unwrap().is_err(), "the thread panicked");
    assert!(agent_may_type(&agent, pane).await);

    // Dropped in the runtime's blocking pool, it hands back too.
    alice.take_over().await.unwrap();
    let runtime = tokio::runtime::Handle::current();
    let holder = alice.clone();
    tokio::task::spawn_blocking(move || drop(holder.release_on_drop(runtime)))
        .await
        .unwrap();
    assert!(agent_may_type(&agent, pane).await);

    // A guard that is disarmed leaves the hold.
    alice.take_over().await.unwrap();
    let runtime = tokio::runtime::Handle::current();
    let holder = alice.clone();
    tokio::task::spawn_blocking(move || holder.release_on_drop(runtime).disarm())
        .await
        .unwrap();
    assert!(!agent_may_type(&agent, pane).await);
}

#[tokio::test]
async fn a_person_never_starts_a_server_and_needs_an_existing_pane() {
    let tmux = TestTmux::new();
    let absent = Person::connect(tmux.config(), "%0", "a person".into()).await;
    assert!(matches!(absent, Err(Error::Connect { .. })), "{absent:?}");
    assert!(
        !tmux.tmux(&["list-sessions"]).status.success(),
        "no server was started"
    );

    let (_agent, _pane) = agent_and_pane(&tmux).await;
    let missing = Person::connect(tmux.config(), "%99", "a person".into()).await;
    assert!(
        matches!(
            &missing,
            Err(Error::NotFound {
                kind: TargetKind::Pane,
                ..
            })
        ),
        "{missing:?}"
    );
    let relative = Person::connect(tmux.config(), "main:^", "a person".into()).await;
    assert!(
        matches!(&relative, Err(Error::InvalidArgument(_))),
        "{relative:?}"
    );
}
