//! The [`Connection`] alone, on a bare `tokio::io::duplex`: the test plays
//! tmux, writing control-mode lines and reading the command lines sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use termpilot_control::{Event, Notification, PaneId, SessionId};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::oneshot;

use super::bounded;
use crate::connection::{Answer, Call, Connection, Group, Incoming};
use crate::error::{Error, Result};

/// tmux's side of the pipe.
struct Tmux {
    says: DuplexStream,
    reads: BufReader<DuplexStream>,
    /// The command number of the next block.
    number: u64,
}

impl Tmux {
    async fn say(&mut self, text: &str) {
        self.says.write_all(text.as_bytes()).await.unwrap();
    }

    /// A block with `flags` (1: answering a line from the connection).
    fn block(&mut self, flags: u32, ok: bool, body: &str) -> String {
        self.number += 1;
        let guard = format!("1700000000 {} {flags}", self.number);
        let end = if ok { "%end" } else { "%error" };
        format!("%begin {guard}\n{body}{end} {guard}\n")
    }

    async fn line(&mut self) -> String {
        let mut line = String::new();
        self.reads.read_line(&mut line).await.unwrap();
        line
    }
}

/// A connection to a tmux started with `setup + 1` commands on its command
/// line, and tmux's end of it.
fn connect(setup: usize) -> (Connection, Tmux) {
    let (conn_reads, says) = tokio::io::duplex(1 << 16);
    let (conn_writes, reads) = tokio::io::duplex(1 << 16);
    let conn = Connection::new(Box::pin(conn_reads), Box::pin(conn_writes), setup);
    let tmux = Tmux {
        says,
        reads: BufReader::new(reads),
        number: 0,
    };
    (conn, tmux)
}

/// A connection that tmux has started (one command on its command line).
async fn started() -> (Connection, Tmux) {
    let (mut conn, mut tmux) = connect(0);
    let first = tmux.block(0, true, "$0\n");
    tmux.say(&first).await;
    match conn.read_event(&no_cursor).await {
        Incoming::Started(Ok(reply)) => assert_eq!(reply.text(), "$0"),
        other => panic!("expected the start, got {other:?}"),
    }
    assert!(matches!(
        conn.read_event(&no_cursor).await,
        Incoming::Drained
    ));
    (conn, tmux)
}

fn no_cursor(_: PaneId) -> u64 {
    0
}

fn call(line: &str, cursor_pane: Option<PaneId>) -> Call {
    Call {
        line: format!("{line}\n").into_bytes(),
        command: "display-message",
        cursor_pane,
    }
}

/// Sends one call; its reply's receiver.
async fn send(conn: &mut Connection, line: &str) -> oneshot::Receiver<Result<Answer>> {
    let (tx, rx) = oneshot::channel();
    conn.send(vec![(call(line, None), tx)]).await.unwrap();
    rx
}

/// The next event that is not [`Incoming::Drained`].
async fn next(conn: &mut Connection, journal_end: &(dyn Fn(PaneId) -> u64 + Sync)) -> Incoming {
    loop {
        match conn.read_event(journal_end).await {
            Incoming::Drained => {}
            other => return other,
        }
    }
}

#[tokio::test(start_paused = true)]
async fn replies_go_to_the_lines_in_the_order_they_were_written() {
    bounded(async {
        let (mut conn, mut tmux) = started().await;
        let first = send(&mut conn, "display-message -p a").await;
        let second = send(&mut conn, "display-message -p b").await;
        assert_eq!(tmux.line().await, "display-message -p a\n");
        assert_eq!(tmux.line().await, "display-message -p b\n");
        assert!(conn.has_pending());
        let replies = tmux.block(1, true, "a\n") + &tmux.block(1, true, "b\n");
        tmux.say(&replies).await;
        assert!(matches!(
            conn.read_event(&no_cursor).await,
            Incoming::Drained
        ));
        assert_eq!(first.await.unwrap().unwrap().reply.text(), "a");
        assert_eq!(second.await.unwrap().unwrap().reply.text(), "b");
        assert!(!conn.has_pending());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn output_read_before_a_reply_comes_out_before_its_cursor_is_taken() {
    bounded(async {
        let (mut conn, mut tmux) = started().await;
        let (tx, rx) = oneshot::channel();
        let probe = call("display-message -p -t %1 x", Some(PaneId(1)));
        conn.send(vec![(probe, tx)]).await.unwrap();
        let reply = tmux.block(1, true, "x\n");
        tmux.say(&format!("%output %1 hello\n{reply}")).await;
        // The journal as the task keeps it: grows as output is applied.
        let journal = Arc::new(AtomicU64::new(0));
        let end = {
            let journal = Arc::clone(&journal);
            move |pane: PaneId| {
                assert_eq!(pane, PaneId(1));
                journal.load(Ordering::SeqCst)
            }
        };
        match next(&mut conn, &end).await {
            Incoming::Event(Event::Output { pane, data }) => {
                assert_eq!((pane, data.as_slice()), (PaneId(1), &b"hello"[..]));
                journal.fetch_add(data.len() as u64, Ordering::SeqCst);
            }
            other => panic!("expected the output, got {other:?}"),
        }
        assert!(matches!(conn.read_event(&end).await, Incoming::Drained));
        let answer = rx.await.unwrap().unwrap();
        assert_eq!(answer.cursor, Some(5), "taken after the output before it");
        assert_eq!(answer.command, "display-message");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_error_ends_a_group_and_the_next_line_gets_the_next_reply() {
    bounded(async {
        let (mut conn, mut tmux) = started().await;
        let (tx, group) = oneshot::channel();
        let parts = vec![
            ("send-keys", None),
            ("send-keys", None),
            ("send-keys", None),
        ];
        let line = b"send-keys a ; send-keys b ; send-keys c\n".to_vec();
        conn.send_group(Group { line, parts }, tx).await.unwrap();
        let after = send(&mut conn, "display-message -p after").await;
        let replies = tmux.block(1, true, "")
            + &tmux.block(1, false, "no such key\n")
            + &tmux.block(1, true, "after\n");
        tmux.say(&replies).await;
        assert!(matches!(
            conn.read_event(&no_cursor).await,
            Incoming::Drained
        ));
        let answers = group.await.unwrap().unwrap();
        assert_eq!(answers.len(), 2, "tmux skipped the rest of the line");
        assert!(answers[0].reply.ok && !answers[1].reply.ok);
        assert_eq!(answers[1].reply.text(), "no such key");
        assert_eq!(after.await.unwrap().unwrap().reply.text(), "after");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_last_command_line_block_starts_the_connection() {
    bounded(async {
        let (mut conn, mut tmux) = connect(2);
        let blocks = tmux.block(0, true, "")
            + &tmux.block(0, true, "")
            + &tmux.block(0, true, "$3\n")
            + "%sessions-changed\n";
        tmux.say(&blocks).await;
        assert!(!conn.started());
        match conn.read_event(&no_cursor).await {
            Incoming::Started(Ok(reply)) => assert_eq!(reply.text(), "$3"),
            other => panic!("expected the start, got {other:?}"),
        }
        assert!(conn.started());
        let notification = conn.read_event(&no_cursor).await;
        assert!(
            matches!(
                notification,
                Incoming::Event(Event::Notification(Notification::SessionsChanged))
            ),
            "{notification:?}"
        );
        // A block with flags 0 after the start is nobody's.
        let stray = tmux.block(0, true, "stray\n");
        tmux.say(&format!("{stray}%exit\n")).await;
        let exit = next(&mut conn, &no_cursor).await;
        assert!(
            matches!(exit, Incoming::Event(Event::Exit { .. })),
            "{exit:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_command_line_command_refuses_the_connection_at_once() {
    bounded(async {
        let (mut conn, mut tmux) = connect(1);
        let refused = tmux.block(0, false, "no server running\n");
        tmux.say(&refused).await;
        match conn.read_event(&no_cursor).await {
            Incoming::Started(Err(why)) => assert_eq!(why, "no server running"),
            other => panic!("expected a refusal, got {other:?}"),
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_closed_pipe_ends_the_connection_and_fails_what_waits() {
    bounded(async {
        let (mut conn, mut tmux) = started().await;
        let lost = send(&mut conn, "display-message -p a").await;
        let ended = send(&mut conn, "display-message -p b").await;
        assert_eq!(tmux.line().await, "display-message -p a\n");
        drop(tmux);
        match next(&mut conn, &no_cursor).await {
            Incoming::Closed(why) => assert!(why.contains("closed"), "{why}"),
            other => panic!("expected the end, got {other:?}"),
        }
        conn.fail_pending("tmux closed the control connection", None);
        assert!(matches!(
            lost.await.unwrap(),
            Err(Error::Disconnected { .. })
        ));
        // Failed already: a second failing (with a session) changes nothing.
        conn.fail_pending("", Some(SessionId(0)));
        assert!(matches!(
            ended.await.unwrap(),
            Err(Error::Disconnected { .. })
        ));
        assert!(!conn.has_pending());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn lines_pending_when_the_session_ended_name_it() {
    bounded(async {
        let (mut conn, tmux) = started().await;
        let pending = send(&mut conn, "display-message -p a").await;
        drop(tmux);
        conn.fail_pending("tmux closed the control connection", Some(SessionId(4)));
        match pending.await.unwrap() {
            Err(Error::SessionEnded { session, command }) => {
                assert_eq!(
                    (session, command.as_str()),
                    (SessionId(4), "display-message")
                );
            }
            other => panic!("expected SessionEnded, got {other:?}"),
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn output_that_waited_in_tmux_marks_the_stream_behind() {
    bounded(async {
        let (mut conn, mut tmux) = started().await;
        let lag = conn.lag();
        tmux.say("%extended-output %2 10 : fresh\n").await;
        let fresh = next(&mut conn, &no_cursor).await;
        assert!(matches!(
            fresh,
            Incoming::Event(Event::ExtendedOutput { age_ms: 10, .. })
        ));
        assert!(!conn.output_late() && !lag.is_behind());
        tmux.say("%extended-output %2 400 : stale\n").await;
        next(&mut conn, &no_cursor).await;
        assert!(conn.output_late() && lag.is_behind());
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        assert!(!lag.is_behind(), "late output is forgotten");
        // A command unanswered for long is behind too.
        let _waiting = send(&mut conn, "display-message -p a").await;
        assert!(!lag.is_behind());
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(lag.is_behind());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_reply_nobody_waits_for_is_dropped() {
    bounded(async {
        let (mut conn, mut tmux) = started().await;
        let stray = tmux.block(1, true, "stray\n");
        tmux.say(&format!("{stray}%pause %7\n")).await;
        let pause = next(&mut conn, &no_cursor).await;
        assert!(
            matches!(pause, Incoming::Event(Event::Pause { pane: PaneId(7) })),
            "{pause:?}"
        );
        assert!(matches!(
            conn.read_event(&no_cursor).await,
            Incoming::Drained
        ));
        // Lines whose replies nobody wants are matched all the same.
        conn.send_unanswered(vec![b"refresh-client\n".to_vec()], "refresh-client")
            .await
            .unwrap();
        let asked = send(&mut conn, "display-message -p a").await;
        let replies = tmux.block(1, true, "") + &tmux.block(1, true, "a\n");
        tmux.say(&replies).await;
        assert!(matches!(
            conn.read_event(&no_cursor).await,
            Incoming::Drained
        ));
        assert_eq!(asked.await.unwrap().unwrap().reply.text(), "a");
    })
    .await;
}
