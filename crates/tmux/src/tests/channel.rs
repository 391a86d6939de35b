//! Channels (`channel.rs`): `wait-for` runs as its own one-shot command
//! through the transport, never on a shared control client.

use std::time::Duration;

use tokio::time::{Instant, sleep};

use super::fake::Fake;
use super::*;
use crate::ChannelOutcome;
use crate::transport::OneShot;

#[tokio::test(start_paused = true)]
async fn a_signal_wakes_the_waiter() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let signaller = engine.clone();
        tokio::spawn(async move {
            sleep(Duration::from_secs(1)).await;
            signaller.signal_channel("build").await.unwrap();
        });
        let started = Instant::now();
        let outcome = engine
            .wait_for_channel("build", Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(outcome, ChannelOutcome::Signalled);
        assert_eq!(started.elapsed(), Duration::from_secs(1));
        let waits: Vec<_> = fake
            .runs()
            .into_iter()
            .filter(|r| r[0] == "wait-for")
            .collect();
        assert_eq!(waits, [["wait-for", "--", "build"]]);
        assert!(
            fake.sent("wait-for").iter().all(|c| c.has('S')),
            "no control client ever waits on a channel"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_signal_nobody_waited_for_is_kept_for_the_next_waiter() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        engine.signal_channel("-odd name").await.unwrap();
        let started = Instant::now();
        let outcome = engine
            .wait_for_channel("-odd name", Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(outcome, ChannelOutcome::Signalled);
        assert_eq!(started.elapsed(), Duration::ZERO);
        // Kept once only.
        let outcome = engine
            .wait_for_channel("-odd name", Duration::from_secs(1))
            .await
            .unwrap();
        assert_eq!(outcome, ChannelOutcome::Timeout);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_times_out_leaves_no_waiter_behind() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let started = Instant::now();
        let outcome = engine
            .wait_for_channel("never", Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(outcome, ChannelOutcome::Timeout);
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        assert_eq!(
            fake.channel_waiters("never"),
            0,
            "the wait-for command was ended"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_ends_when_the_server_exits() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let killer = fake.clone();
        tokio::spawn(async move {
            sleep(Duration::from_secs(2)).await;
            assert_eq!(killer.channel_waiters("ch"), 1);
            killer.kill_server(true);
        });
        let outcome = engine
            .wait_for_channel("ch", Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(outcome, ChannelOutcome::ServerExited);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_woken_by_another_server_counts_as_its_exit() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        // tmux wakes waiters when it exits; by the time the engine asks, a new
        // server (another pid) answers.
        fake.on_run(|args| match args[0].as_str() {
            "wait-for" => Some(OneShot::Reply(String::new())),
            "display-message" => Some(OneShot::Reply("4242\n".into())),
            _ => None,
        });
        let outcome = engine
            .wait_for_channel("ch", Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(outcome, ChannelOutcome::ServerExited);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_wait_whose_host_cannot_be_reached_ends_with_host_lost() {
    bounded(async {
        for (fake, outcome) in [
            (Fake::remote(), ChannelOutcome::HostLost),
            (Fake::local(), ChannelOutcome::ServerExited),
        ] {
            let fake = fake.with_session("main");
            let engine = connect(&fake).await;
            // The wait's ssh ended with its connection, and no new one gets
            // through to ask the host about its server.
            fake.on_run(|args| match args[0].as_str() {
                "wait-for" | "display-message" => Some(OneShot::Refused {
                    why: "ssh: connect to host build-1 port 22: Connection refused".into(),
                }),
                _ => None,
            });
            let got = engine
                .wait_for_channel("ch", Duration::from_secs(30))
                .await
                .unwrap();
            assert_eq!(got, outcome);
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_host_whose_server_exited_says_so() {
    bounded(async {
        let fake = Fake::remote().with_session("main");
        let engine = connect(&fake).await;
        let killer = fake.clone();
        tokio::spawn(async move {
            sleep(Duration::from_secs(1)).await;
            killer.kill_server(true);
        });
        let outcome = engine
            .wait_for_channel("ch", Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(outcome, ChannelOutcome::ServerExited);
    })
    .await;
}
