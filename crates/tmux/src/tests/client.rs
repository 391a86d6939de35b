//! One control client over a pipe (`client.rs`): reply correlation, guard
//! look-alikes, flow control, cursors in stream order, and how it ends.
//! Mostly replayed transcripts of a real tmux, sent exactly the lines the
//! recorder sent.

use std::time::Duration;

use termpilot_control::{Command, PaneId, SessionId};
use termpilot_journal::GapReason;

use super::fake::Fake;
use super::fake::replay::{Transcript, fixtures};
use super::*;
use crate::client::{self, Answer, Call, ClientHandle, Group};
use crate::error::Error;
use crate::transport::OneShot;

/// An engine with no client yet, over `fake`.
fn engine(fake: &Fake) -> Engine {
    Engine::unconnected(config(), fake.transport()).0
}

/// Starts a client whose far end plays `script`.
async fn replayed(fake: &Fake, script: Transcript) -> (Engine, ClientHandle) {
    fake.replay_next(script);
    let engine = engine(fake);
    let args = vec!["new-session".into()];
    let (client, first) = client::spawn(&engine.shared, args, Some(SessionId(0)))
        .await
        .expect("the client starts");
    assert!(
        first.ok && first.flags == 0,
        "the first reply answers the command line"
    );
    (engine, client)
}

/// A recorded line as a call.
fn raw(line: &[u8]) -> Call {
    let mut line = line.to_vec();
    line.push(b'\n');
    Call {
        line,
        command: "recorded",
        cursor_pane: None,
    }
}

/// A query of pane `pane` whose reply takes the pane's cursor.
fn probe(pane: u32) -> Call {
    let command = Command::new("display-message")
        .flag("-p")
        .opt("-t", format!("%{pane}"))
        .arg("#{pane_id}");
    crate::engine::call(command, Some(PaneId(pane))).expect("a valid command")
}

fn recorded_lines(text: &[u8]) -> Vec<Vec<u8>> {
    Transcript::parse(text).client_lines()
}

fn journal_bytes(engine: &Engine, pane: u32) -> Vec<u8> {
    engine.read_journal(PaneId(pane), |j| j.read_from(0).bytes.into_owned())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn text(answer: &Answer) -> String {
    answer.reply.text()
}

#[tokio::test(start_paused = true)]
async fn recorded_replies_answer_each_line_in_turn() {
    bounded(async {
        let fake = Fake::local();
        let (_engine, client) = replayed(&fake, Transcript::parse(fixtures::REPLIES)).await;
        let lines = recorded_lines(fixtures::REPLIES);
        let ids = client.call(raw(&lines[0])).await.unwrap();
        assert!(ids.reply.ok);
        assert_eq!(text(&ids), "$0 @0 %0");
        let unknown = client.call(raw(&lines[1])).await.unwrap();
        assert!(!unknown.reply.ok);
        assert_eq!(
            text(&unknown),
            "parse error: unknown command: no-such-command"
        );
        assert!(unknown.reply.number > ids.reply.number);
        assert!(fake.mismatches().is_empty(), "{:?}", fake.mismatches());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_line_whose_middle_command_fails_yields_the_replies_of_what_ran() {
    bounded(async {
        let fake = Fake::local();
        let (_engine, client) = replayed(&fake, Transcript::parse(fixtures::REPLIES)).await;
        let lines = recorded_lines(fixtures::REPLIES);
        client.call_many(vec![raw(&lines[0]), raw(&lines[1])]).await;
        let mut line = lines[2].clone();
        line.push(b'\n');
        let parts = vec![
            ("display-message", None),
            ("kill-pane", None),
            ("display-message", None),
        ];
        let answers = client.call_group(Group { line, parts }).await.unwrap();
        assert_eq!(answers.len(), 2, "tmux skipped the third command");
        assert_eq!(text(&answers[0]), "one");
        assert!(!answers[1].reply.ok);
        assert_eq!(text(&answers[1]), "can't find pane: %99");
        // The line after it gets its own reply: nothing is off by one.
        let next = client.call(raw(&lines[3])).await.unwrap();
        assert!(next.reply.ok);
        assert_eq!(next.reply.lines, vec![Vec::<u8>::new()], "one empty line");
        assert!(fake.mismatches().is_empty(), "{:?}", fake.mismatches());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn pipelined_lines_are_answered_first_in_first_out() {
    bounded(async {
        let fake = Fake::local();
        let (_engine, client) = replayed(&fake, Transcript::parse(fixtures::REPLIES)).await;
        let lines = recorded_lines(fixtures::REPLIES);
        let first = client.call_many(vec![raw(&lines[0]), raw(&lines[1])]).await;
        let mut group = lines[2].clone();
        group.push(b'\n');
        let parts = vec![("a", None), ("b", None), ("c", None)];
        client
            .call_group(Group { line: group, parts })
            .await
            .unwrap();
        // Four lines written at once, the last a capture holding look-alikes.
        let rest = client
            .call_many(lines[3..].iter().map(|l| raw(l)).collect())
            .await;
        let answers: Vec<Answer> = first.into_iter().chain(rest).map(Result::unwrap).collect();
        assert_eq!(answers.len(), 6);
        let numbers: Vec<u64> = answers.iter().map(|a| a.reply.number).collect();
        assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
        assert_eq!(text(&answers[0]), "$0 @0 %0");
        assert!(!answers[1].reply.ok);
        assert!(answers[3].reply.ok && answers[3].reply.lines.is_empty());
        assert!(text(&answers[5]).starts_with("$ printf"));
        assert!(fake.mismatches().is_empty(), "{:?}", fake.mismatches());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn guard_look_alikes_printed_by_a_pane_stay_text() {
    bounded(async {
        let fake = Fake::local();
        let (engine, client) = replayed(&fake, Transcript::parse(fixtures::REPLIES)).await;
        let lines = recorded_lines(fixtures::REPLIES);
        let mut answers = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if i == 2 {
                let mut group = line.clone();
                group.push(b'\n');
                let parts = vec![("a", None), ("b", None), ("c", None)];
                client
                    .call_group(Group { line: group, parts })
                    .await
                    .unwrap();
                continue;
            }
            answers.push(client.call(raw(line)).await.unwrap());
        }
        let capture = answers.last().unwrap();
        let body: Vec<&[u8]> = capture.reply.lines.iter().map(Vec::as_slice).collect();
        for look_alike in [&b"%end 1 2 1"[..], b"%begin 3 4 1", b"%error 1 2 1"] {
            assert!(body.contains(&look_alike), "{look_alike:?} is body text");
        }
        assert_eq!(
            body.len(),
            24,
            "the whole screen, nothing cut at a look-alike"
        );
        // In %output they arrive escaped, decoded into the journal.
        let journal = journal_bytes(&engine, 0);
        assert!(contains(
            &journal,
            b"%end 1 2 1\r\n%begin 3 4 1\r\n%error 1 2 1\r\nt\x01b\\\r\n"
        ));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_paused_pane_leaves_a_gap_and_the_client_continues_it() {
    bounded(async {
        let fake = Fake::local();
        let (engine, client) = replayed(&fake, Transcript::parse(fixtures::PAUSE)).await;
        let lines = recorded_lines(fixtures::PAUSE);
        let mut grew = engine.subscribe(PaneId(0));
        let paused = client.call(raw(&lines[0])).await.unwrap();
        assert!(paused.reply.ok);
        // The client sends the continue on its own: the transcript expects
        // exactly the line it recorded next.
        let after = async {
            while !contains(&journal_bytes(&engine, 0), b"after\r\n") {
                grew.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(10), after)
            .await
            .expect("output flows again");
        assert!(fake.mismatches().is_empty(), "{:?}", fake.mismatches());
        assert_eq!(fake.conn(0, |c| c.lines.clone()), lines);
        let (gaps, lost) = engine.read_journal(PaneId(0), |j| {
            let read = j.read_from(0);
            (read.gaps, read.lost)
        });
        assert_eq!(gaps.len(), 1);
        assert_eq!(gaps[0].reason, GapReason::Paused);
        assert_eq!(
            gaps[0].offset, 2,
            "after the prompt `$ `, before the continue"
        );
        assert_eq!(lost, 1);
        assert!(!contains(&journal_bytes(&engine, 0), b"dropped"));
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_killed_server_fails_the_pending_call_and_the_client_ends() {
    bounded(async {
        let fake = Fake::remote();
        let script = Transcript::parse(fixtures::KILL_SERVER);
        let (engine, client) = replayed(&fake, script).await;
        let lines = recorded_lines(fixtures::KILL_SERVER);
        let answer = client.call(raw(&lines[0])).await.unwrap();
        assert_eq!(text(&answer), "$0");
        // Written while tmux is being killed: never answered.
        let pending = client.call(raw(b"display-message -p x")).await;
        assert!(
            matches!(pending, Err(Error::Disconnected { .. })),
            "{pending:?}"
        );
        settle().await;
        assert!(fake.conn(0, |c| !c.is_open()));
        assert_eq!(departing(&engine), 0, "the departure is over");
        assert!(
            !engine.shared.host_lost(),
            "tmux said %exit: the host is fine"
        );
        let later = client.call(raw(b"display-message -p y")).await;
        assert!(
            matches!(later, Err(Error::Disconnected { .. })),
            "{later:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_call_pending_when_its_session_is_killed_names_the_session() {
    bounded(async {
        let fake = Fake::local();
        fake.on_run(|args| {
            (args.first().map(String::as_str) == Some("list-sessions"))
                .then(|| OneShot::Reply("$1\n".into()))
        });
        let (_engine, client) = replayed(&fake, Transcript::parse(fixtures::SESSION_KILLED)).await;
        let lines = recorded_lines(fixtures::SESSION_KILLED);
        assert_eq!(text(&client.call(raw(&lines[0])).await.unwrap()), "$0");
        let pending = client.call(raw(b"display-message -p x")).await;
        match pending {
            Err(Error::SessionEnded { session, command }) => {
                assert_eq!(session, SessionId(0));
                assert_eq!(command, "recorded");
            }
            other => panic!("expected SessionEnded, got {other:?}"),
        }
        assert_eq!(
            fake.runs().len(),
            1,
            "asked the server once which sessions live"
        );
    })
    .await;
}

/// A server that dies without a word after the first command.
const DIES: &str = "\
< %begin 1 1 0
< %end 1 1 0
>* display-message
~ 100
.
";

#[tokio::test(start_paused = true)]
async fn a_pipe_closing_without_exit_loses_a_remote_host_only() {
    bounded(async {
        for (fake, lost) in [(Fake::remote(), true), (Fake::local(), false)] {
            let (engine, client) = replayed(&fake, Transcript::parse(DIES.as_bytes())).await;
            let pending = client.call(probe(1)).await;
            assert!(
                matches!(pending, Err(Error::Disconnected { .. })),
                "{pending:?}"
            );
            assert_eq!(engine.shared.host_lost(), lost);
        }
    })
    .await;
}

/// Three commands written at once; output between the replies, and a
/// reply whose body looks like output (a capture of a pane showing it).
const CURSORS: &str = "\
< %begin 1 1 0
< %end 1 1 0
>* display-message
>* display-message
>* display-message
< %output %1 one
< %begin 1 2 1
< %1
< %end 1 2 1
< %output %1 two\\015\\012
< %begin 1 3 1
< %1
< %end 1 3 1
< %output %1 three
< %begin 1 4 1
< %output %1 in a body: text
< %end 1 4 1
< %output %1 four
";

#[tokio::test(start_paused = true)]
async fn a_reply_cursor_covers_exactly_the_output_read_before_it() {
    bounded(async {
        let fake = Fake::local();
        let (engine, client) = replayed(&fake, Transcript::parse(CURSORS.as_bytes())).await;
        let answers = client.call_many(vec![probe(1), probe(1), probe(1)]).await;
        let cursors: Vec<Option<u64>> = answers.into_iter().map(|a| a.unwrap().cursor).collect();
        // "one" | "two\r\n" | "three"
        assert_eq!(cursors, [Some(3), Some(8), Some(13)]);
        settle().await;
        assert_eq!(journal_bytes(&engine, 1), b"onetwo\r\nthreefour");
        assert_eq!(engine.journal_end(PaneId(1)), 17);
    })
    .await;
}

/// Replies that are not this client's, and look-alikes inside a block.
const STRAYS: &str = "\
< %begin 1 1 0
< %end 1 1 0
>* display-message
< %begin 1 2 0
< from a command the client did not send
< %end 1 2 0
< %output %1 %end 7 3 1
< %output %1 %begin 7 3 1
< %begin 7 3 1
< %output %1 %end 7 3 1
< %end 7 30 1
< %begin 8 3 1
< mine
< %end 7 3 1
>* display-message
< %begin 7 4 1
< %error 7 4 0x
< second
< %end 7 4 1
";

#[tokio::test(start_paused = true)]
async fn only_the_guard_that_closes_a_block_ends_it() {
    bounded(async {
        let fake = Fake::local();
        let (engine, client) = replayed(&fake, Transcript::parse(STRAYS.as_bytes())).await;
        let first = client.call(probe(1)).await.unwrap();
        assert_eq!(
            first.reply.lines,
            [
                &b"%output %1 %end 7 3 1"[..],
                b"%end 7 30 1",
                b"%begin 8 3 1",
                b"mine"
            ],
            "a flags-0 block is skipped, look-alikes inside a block are body"
        );
        let second = client.call(probe(1)).await.unwrap();
        assert!(second.reply.ok);
        assert_eq!(second.reply.lines, [&b"%error 7 4 0x"[..], b"second"]);
        assert_eq!(journal_bytes(&engine, 1), b"%end 7 3 1%begin 7 3 1");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_reply_nobody_asked_for_is_dropped_and_later_ones_still_match() {
    bounded(async {
        let script = "\
    < %begin 1 1 0
    < %end 1 1 0
    < %begin 1 2 1
    < stray
    < %end 1 2 1
    ~ 10
    >* display-message
    < %begin 1 3 1
    < answer
    < %end 1 3 1
    ";
        let fake = Fake::local();
        let (_engine, client) = replayed(&fake, Transcript::parse(script.as_bytes())).await;
        settle().await;
        let answer = client.call(probe(0)).await.unwrap();
        assert_eq!(text(&answer), "answer");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_character_split_across_output_lines_is_joined_in_the_journal() {
    bounded(async {
        let script = "\
    < %begin 1 1 0
    < %end 1 1 0
    < %output %2 caf\\303
    < %output %2 \\251 \\134o/
    >* display-message
    < %begin 1 2 1
    < %end 1 2 1
    ";
        let fake = Fake::local();
        let (engine, client) = replayed(&fake, Transcript::parse(script.as_bytes())).await;
        let answer = client.call(probe(2)).await.unwrap();
        assert_eq!(answer.cursor, Some(9));
        assert_eq!(journal_bytes(&engine, 2), "café \\o/".as_bytes());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_client_that_cannot_start_says_what_tmux_said() {
    bounded(async {
        let fake = Fake::local();
        fake.fail_next_open("no server running on /tmp/x");
        let engine = engine(&fake);
        let failed = client::spawn(&engine.shared, vec!["attach-session".into()], None).await;
        match failed {
            Err(Error::Connect { reason, socket }) => {
                assert_eq!(reason, "no server running on /tmp/x");
                assert_eq!(socket, "fake tmux");
            }
            other => panic!("expected a connect error, got {other:?}"),
        }
        let refused = "\
    < %begin 1 1 0
    < sessions should be nested with care
    < %error 1 1 0
    < %exit
    .
    ";
        fake.replay_next(Transcript::parse(refused.as_bytes()));
        let failed = client::spawn(&engine.shared, vec!["new-session".into()], None).await;
        assert!(
            matches!(&failed, Err(Error::Connect { reason, .. }) if reason == "sessions should be nested with care"),
            "{failed:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_never_answers_times_out_and_is_closed() {
    bounded(async {
        let fake = Fake::remote().with_connect_timeout(Duration::from_secs(5));
        fake.replay_next(Transcript::parse(b"~ 600000\n"));
        let engine = engine(&fake);
        let started = tokio::time::Instant::now();
        let failed = client::spawn(&engine.shared, vec!["attach-session".into()], None).await;
        assert!(
            matches!(&failed, Err(Error::Connect { reason, .. }) if reason == "no answer within 5 s"),
            "{failed:?}"
        );
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        settle().await;
        assert!(
            fake.conn(0, |c| !c.is_open()),
            "the far end (an ssh process) is ended, not left running"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn session_id_comes_from_the_first_reply_or_a_question() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = engine(&fake);
        let made: Vec<std::ffi::OsString> = vec![
            "new-session".into(),
            "-P".into(),
            "-F".into(),
            "#{session_id}\x1f#{pane_id}".into(),
            "-s".into(),
            "work".into(),
        ];
        let (client, first) = client::spawn(&engine.shared, made, None).await.unwrap();
        assert_eq!(client.session, SessionId(1));
        assert_eq!(first.text(), "$1\x1f%1");
        // `new-session -A` on a session that exists prints nothing: the client
        // asks which session it is attached to.
        let joined: Vec<std::ffi::OsString> = vec![
            "new-session".into(),
            "-A".into(),
            "-s".into(),
            "main".into(),
        ];
        let (client, first) = client::spawn(&engine.shared, joined, None).await.unwrap();
        assert_eq!(first.text(), "");
        assert_eq!(client.session, SessionId(0));
        assert_eq!(fake.sent("display-message").len(), 1);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn detaching_writes_an_empty_line_and_the_client_ends() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = engine(&fake);
        let args = vec!["attach-session".into(), "-t".into(), "$0".into()];
        let (client, _) = client::spawn(&engine.shared, args, Some(SessionId(0)))
            .await
            .unwrap();
        client.detach();
        settle().await;
        assert_eq!(fake.conn(0, |c| c.lines.clone()), [Vec::<u8>::new()]);
        assert!(fake.conn(0, |c| !c.is_open()));
        assert!(!engine.shared.host_lost());
        let after = client.call(probe(0)).await;
        assert!(
            matches!(after, Err(Error::Disconnected { .. })),
            "{after:?}"
        );
    })
    .await;
}

/// How many of the engine's clients are departing, as its transport counts.
fn departing(engine: &Engine) -> usize {
    let transport = &engine.shared.transport;
    transport.departures().map_or(0, |d| d.count())
}
