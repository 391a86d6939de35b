//! The engine's core tested without tmux: control clients talk to a fake
//! tmux (`fake`) through in-memory pipes, playing recorded control-mode
//! transcripts (`fixtures/*.tx`, made with `fixtures/record.py` from tmux
//! 3.3a) or a small model of a tmux server. Time is tokio's paused clock,
//! so timeouts take no real time and the tests assert no durations of the
//! machine they run on.

mod fake;

mod batch;
mod channel;
mod client;
mod connection;
mod engine;
mod ops;
mod wait;

use std::future::Future;
use std::time::Duration;

use crate::{Engine, EngineConfig};
use fake::Fake;

/// The configuration every test engine uses: nothing from the
/// environment (`$TMUX`).
fn config() -> EngineConfig {
    EngineConfig {
        host: None,
        ..EngineConfig::default()
    }
}

/// An engine connected to `fake`.
async fn connect(fake: &Fake) -> Engine {
    Engine::connect_with(config(), fake.transport())
        .await
        .expect("the engine connects to the fake")
}

/// Lets every task run until all wait (on the paused clock, a sleep ends
/// only when nothing else can run).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

/// Runs a test's body, failing it (rather than hanging) when it waits for
/// something that never comes: on the paused clock a virtual hour passes
/// at once when every task waits and no timer is due sooner.
async fn bounded<F: Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(3600), body)
        .await
        .expect("the test ended within its virtual hour")
}
