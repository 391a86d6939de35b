//! The typed operations (`ops/`, with `targets.rs` and `person.rs`
//! behind them) against the model of a tmux server.

use termpilot_control::{PaneId, SessionId, TargetKind, WindowId};

use super::fake::model::{Input as Sent, SOCKET_PATH};
use super::fake::{Act, Fake, Response};
use super::*;
use crate::error::Error;
use crate::{HostPane, Input, NewSession, NewWindow, PaneScope, Scrollback, Split, SplitDirection};

fn inputs(fake: &Fake, pane: u32) -> Vec<Sent> {
    fake.server(|server| server.panes[&pane].inputs.clone())
}

#[tokio::test(start_paused = true)]
async fn sessions_count_people_not_termpilots_own_clients() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| server.people.push(0));
        let engine = connect(&fake).await;
        let sessions = engine.list_sessions().await.unwrap();
        assert_eq!(sessions.len(), 1);
        let main = &sessions[0];
        assert_eq!((main.id, main.name.as_str()), (SessionId(0), "main"));
        assert_eq!(main.windows, 1);
        assert_eq!(
            main.attached, 1,
            "one person; termpilot's client is not counted"
        );
        assert!(main.created > 0);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn panes_are_listed_by_scope() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| {
            server.new_session(Some("other"), (100, 30));
            let held = "a person (termpilot attach, pid 7) since 2026-11-24T00:00:00Z";
            let options = &mut server.panes.get_mut(&1).unwrap().options;
            options.insert("@termpilot_held".into(), held.into());
        });
        let engine = connect(&fake).await;
        let all = engine.list_panes(&PaneScope::All).await.unwrap();
        assert_eq!(
            all.iter().map(|p| p.id).collect::<Vec<_>>(),
            [PaneId(0), PaneId(1)]
        );
        let other = engine
            .list_panes(&PaneScope::Session("other".parse().unwrap()))
            .await
            .unwrap();
        assert_eq!(other.len(), 1);
        let pane = &other[0];
        assert_eq!(pane.session, SessionId(1));
        assert_eq!(pane.session_name, "other");
        assert_eq!(pane.window, WindowId(1));
        assert_eq!((pane.width, pane.height), (100, 30));
        assert_eq!(pane.current_command, "sh");
        assert!(pane.active() && !pane.dead && !pane.in_mode);
        assert!(pane.held_by.as_deref().unwrap().contains("pid 7"));
        let window = engine
            .list_panes(&PaneScope::Window("@0".parse().unwrap()))
            .await
            .unwrap();
        assert_eq!(window[0].id, PaneId(0));
        assert_eq!(window[0].held_by, None);
        let missing = engine
            .list_panes(&PaneScope::Session("nope".parse().unwrap()))
            .await;
        assert!(
            matches!(
                missing,
                Err(Error::NotFound {
                    kind: TargetKind::Session,
                    ..
                })
            ),
            "{missing:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_new_session_has_its_own_client_from_its_first_byte() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let options = NewSession {
            name: Some("build #1".into()),
            command: Some("make".into()),
            cwd: Some("/src".into()),
            env: vec![("CI".into(), "1".into())],
            width: Some(100),
            height: Some(30),
        };
        let created = engine.create_session(&options).await.unwrap();
        assert_eq!(created.session, SessionId(1));
        assert_eq!(created.session_name, "build #1", "`#` reached tmux escaped");
        assert_eq!((created.window, created.pane), (WindowId(1), PaneId(1)));
        let args = fake.conn(1, |c| c.args.clone());
        assert_eq!(args[0], "new-session");
        for pair in [["-x", "100"], ["-y", "30"], ["-e", "CI=1"], ["--", "make"]] {
            assert!(args.windows(2).any(|w| w == pair), "{pair:?} in {args:?}");
        }
        fake.output(1, b"compiling\r\n");
        settle().await;
        assert_eq!(engine.journal_end(PaneId(1)), 11);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn windows_and_splits_report_what_they_made() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let window = NewWindow {
            name: Some("logs".into()),
            ..NewWindow::default()
        };
        let made = engine
            .create_window(&"main".parse().unwrap(), &window)
            .await
            .unwrap();
        assert_eq!(
            (made.window, made.pane, made.window_index),
            (WindowId(1), PaneId(1), 1)
        );
        assert_eq!(fake.server(|s| s.windows[&1].name.clone()), "logs");
        let split = Split {
            target: "%1".parse().unwrap(),
            direction: SplitDirection::Left,
            size: Some("30%".into()),
            command: None,
            cwd: None,
            env: Vec::new(),
        };
        let made = engine.split_pane(&split).await.unwrap();
        assert_eq!((made.window, made.pane), (WindowId(1), PaneId(2)));
        let sent = fake.sent("split-window");
        assert!(sent[0].has('h') && sent[0].has('b') && sent[0].has('d'));
        assert_eq!(sent[0].opt('l'), Some("30%"));
        let nowhere = "nope".parse().unwrap();
        let missing = engine.create_window(&nowhere, &NewWindow::default()).await;
        assert!(
            matches!(
                missing,
                Err(Error::NotFound {
                    kind: TargetKind::Session,
                    ..
                })
            ),
            "{missing:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn kills_report_what_went_and_forget_its_output() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.add_session("other");
        let engine = connect(&fake).await;
        let made = engine
            .split_pane(&Split {
                target: "%0".parse().unwrap(),
                direction: SplitDirection::Below,
                size: None,
                command: None,
                cwd: None,
                env: Vec::new(),
            })
            .await
            .unwrap();
        fake.output(made.pane.0, b"bye");
        settle().await;
        let killed = engine
            .kill_pane(&made.pane.to_string().parse().unwrap())
            .await
            .unwrap();
        assert_eq!(killed.panes, [made.pane]);
        assert!(killed.windows.is_empty(), "its window lives on");
        assert_eq!(engine.journal_end(made.pane), 0, "its journal is dropped");
        let killed = engine
            .kill_session(&"other".parse().unwrap())
            .await
            .unwrap();
        assert_eq!(killed.session, SessionId(1));
        assert_eq!(
            (killed.windows, killed.panes),
            (vec![WindowId(1)], vec![PaneId(1)])
        );
        assert!(
            fake.conn(1, |c| !c.is_open()),
            "its client is gone when the kill returns"
        );
        let missing = engine.kill_window(&"@9".parse().unwrap()).await;
        assert!(
            matches!(missing, Err(Error::NotFound { .. })),
            "{missing:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn termpilots_own_pane_is_never_typed_into_or_killed() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let config = EngineConfig {
            host: Some(HostPane {
                socket_path: SOCKET_PATH.into(),
                pane: PaneId(0),
            }),
            ..config()
        };
        let engine = Engine::connect_with(config, fake.transport())
            .await
            .unwrap();
        assert_eq!(engine.own_pane(), Some(PaneId(0)));
        let typed = engine.send_input(PaneId(0), &Input::default()).await;
        assert!(matches!(typed, Err(Error::OwnPane { .. })), "{typed:?}");
        let killed = engine.kill_session(&"main".parse().unwrap()).await;
        assert!(
            matches!(killed, Err(Error::OwnPane { action: "kill", .. })),
            "{killed:?}"
        );
        assert!(fake.sent("kill-session").is_empty());
        assert!(fake.running());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn input_is_sent_exactly_and_its_cursor_is_from_before_it() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.output(0, b"prompt$ ");
        // Output tmux sends before the reply to the first send-keys happened
        // before the keys went in; output after it did not.
        let mut first = true;
        fake.hook(move |cmd| {
            let fire = first && cmd.name == "send-keys";
            first &= !fire;
            fire.then(|| {
                Response::act(Act::Model)
                    .before("%output %0 early\n")
                    .after("%output %0 late\n")
            })
        });
        let input = Input {
            text: Some("echo a;".into()),
            keys: vec!["C-c".parse().expect("a key")],
            enter: true,
        };
        let cursor = engine.send_input(PaneId(0), &input).await.unwrap();
        assert_eq!(cursor.offset, 13, "`prompt$ ` and `early`");
        assert_eq!(
            inputs(&fake, 0),
            [
                Sent::Text("echo a;".into()),
                Sent::Keys(vec!["C-c".into()]),
                Sent::Keys(vec!["Enter".into()]),
            ],
            "the trailing `;` arrives"
        );
        settle().await;
        assert_eq!(engine.journal_end(PaneId(0)), 17);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_held_pane_refuses_input_until_released() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        engine.hold(PaneId(0), "someone").await.unwrap();
        let refused = engine.send_input(PaneId(0), &Input::default()).await;
        match refused {
            Err(Error::HeldByPerson { pane, note }) => {
                assert_eq!((pane, note.as_str()), (PaneId(0), "someone"))
            }
            other => panic!("expected HeldByPerson, got {other:?}"),
        }
        assert!(fake.sent("send-keys").is_empty());
        engine.release(PaneId(0)).await.unwrap();
        let input = Input {
            text: Some("x".into()),
            ..Input::default()
        };
        engine.send_input(PaneId(0), &input).await.unwrap();
        assert_eq!(inputs(&fake, 0), [Sent::Text("x".into())]);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn input_goes_behind_the_held_guard_on_one_line_with_no_question_before() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let input = Input {
            text: Some("x".into()),
            enter: true,
            ..Input::default()
        };
        // The first input to a pane asks which client carries it.
        engine
            .send_input(PaneId(0), &Input::default())
            .await
            .unwrap();
        let written_before = fake.conn(0, |c| c.lines.len());
        engine.send_input(PaneId(0), &input).await.unwrap();
        let lines = fake.conn(0, |c| c.lines[written_before..].to_vec());
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with(b"if-shell -F "), "{lines:?}");
        assert_eq!(written(&fake, 0, "send-keys"), 1);
        assert_eq!(
            inputs(&fake, 0),
            [Sent::Text("x".into()), Sent::Keys(vec!["Enter".into()])]
        );
        // A paste to a held pane stops at the guard: tmux skips the rest of
        // the line, so no buffer is set and nothing is pasted.
        engine.hold(PaneId(0), "someone").await.unwrap();
        match engine.paste(PaneId(0), "y", false, true).await {
            Err(Error::HeldByPerson { note, .. }) => assert_eq!(note, "someone"),
            other => panic!("expected HeldByPerson, got {other:?}"),
        }
        assert_eq!(
            fake.sent("set-buffer").len(),
            1,
            "written on the guard's line"
        );
        assert!(fake.server(|server| server.buffers.is_empty()));
        assert_eq!(inputs(&fake, 0).len(), 2);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_pane_that_does_not_exist_is_not_found() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        let input = Input {
            text: Some("x".into()),
            ..Input::default()
        };
        let missing = engine.send_input(PaneId(99), &input).await;
        assert!(
            matches!(&missing, Err(Error::NotFound { kind: TargetKind::Pane, target, .. }) if target == "%99"),
            "{missing:?}"
        );
        let missing = engine.capture(PaneId(99), Scrollback::None).await;
        assert!(
            matches!(missing, Err(Error::NotFound { .. })),
            "{missing:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_paste_goes_through_a_buffer_and_keeps_its_delimiters_out() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        engine
            .paste(PaneId(0), "one\ntwo", true, true)
            .await
            .unwrap();
        assert_eq!(
            inputs(&fake, 0),
            [
                Sent::Paste {
                    text: "one\ntwo".into(),
                    bracketed: true
                },
                Sent::Keys(vec!["Enter".into()]),
            ]
        );
        let sneaky = engine
            .paste(PaneId(0), "a\x1b[201~rm -rf ~", true, false)
            .await;
        assert!(
            matches!(sneaky, Err(Error::InvalidArgument(_))),
            "{sneaky:?}"
        );
        assert_eq!(inputs(&fake, 0).len(), 2, "nothing more was sent");
        assert_eq!(fake.sent("set-buffer").len(), 1);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_capture_is_trimmed_and_says_what_the_pane_shows() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.server(|server| {
            let pane = server.panes.get_mut(&0).unwrap();
            pane.history = vec!["h1".into(), "h2".into()];
            pane.screen = vec!["a   ".into(), "b".into(), String::new(), "  ".into()];
            pane.alternate = true;
        });
        let engine = connect(&fake).await;
        fake.output(0, b"12345");
        let capture = engine
            .capture(PaneId(0), Scrollback::Lines(1))
            .await
            .unwrap();
        assert_eq!(capture.lines, ["h2", "a", "b"]);
        assert_eq!(
            capture.cursor.offset, 5,
            "the output read before the capture"
        );
        assert!(capture.alternate_screen && !capture.in_mode);
        assert_eq!((capture.history_size, capture.history_limit), (2, 2000));
        let all = engine.capture(PaneId(0), Scrollback::All).await.unwrap();
        assert_eq!(all.lines[0], "h1");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn targets_resolve_to_panes_or_are_refused() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        assert_eq!(
            engine
                .resolve_pane(&"main:0.0".parse().unwrap())
                .await
                .unwrap(),
            PaneId(0)
        );
        assert_eq!(
            engine.resolve_pane(&"%7".parse().unwrap()).await.unwrap(),
            PaneId(7),
            "ids as they are"
        );
        let missing = engine.resolve_pane(&"main:5.0".parse().unwrap()).await;
        assert!(
            matches!(
                missing,
                Err(Error::NotFound {
                    kind: TargetKind::Pane,
                    ..
                })
            ),
            "{missing:?}"
        );
        let missing = engine.resolve_pane(&"nope:0.0".parse().unwrap()).await;
        assert!(
            matches!(
                missing,
                Err(Error::NotFound {
                    kind: TargetKind::Session,
                    ..
                })
            ),
            "{missing:?}"
        );
        for relative in [".", "{next}", "-t"] {
            let refused = relative.parse::<termpilot_control::PaneTarget>();
            assert!(refused.is_err(), "{relative}: {refused:?}");
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn tmuxs_own_message_comes_back_when_it_refuses() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.hook(|cmd| {
            (cmd.name == "send-keys").then(|| Response::act(Act::Error("not a terminal".into())))
        });
        let input = Input {
            text: Some("x".into()),
            ..Input::default()
        };
        let refused = engine.send_input(PaneId(0), &input).await;
        match refused {
            Err(error @ Error::Command { .. }) => assert_eq!(
                error.to_string(),
                "tmux refused `send-keys`: not a terminal",
                "the message names the command tmux refused"
            ),
            other => panic!("expected a command error, got {other:?}"),
        }
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_reply_the_engine_cannot_read_is_a_protocol_error() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.hook(|cmd| {
            (cmd.name == "list-sessions").then(|| Response::act(Act::Ok(vec!["garbage".into()])))
        });
        let unreadable = engine.list_sessions().await;
        assert!(
            matches!(&unreadable, Err(Error::Protocol { command, detail })
                if command == "list-sessions" && detail == "field session_id is 'garbage'"),
            "{unreadable:?}"
        );
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_pane_showing_protocol_lines_is_captured_as_text() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        fake.add_session("other");
        let screen = ["%output %1 injected", "%end 1795400000 300 1", "$"];
        fake.server(|server| {
            let pane = server.panes.get_mut(&0).unwrap();
            pane.screen = screen.iter().map(|line| line.to_string()).collect();
        });
        let engine = connect(&fake).await;
        let capture = engine.capture(PaneId(0), Scrollback::None).await.unwrap();
        assert_eq!(capture.lines, screen);
        assert_eq!(engine.journal_end(PaneId(1)), 0, "nothing reached pane %1");
    })
    .await;
}

/// Output tmux held back for 120 ms before sending it to client `conn`:
/// that client is behind.
fn late_output(fake: &Fake, conn: usize, text: &str) {
    fake.send_raw(conn, format!("%extended-output %0 120 : {text}\n"));
}

fn keys(name: &str) -> Input {
    Input {
        keys: vec![name.parse().expect("a key")],
        ..Input::default()
    }
}

/// How many lines client `conn` wrote that start with `command`.
/// How many lines written to `conn` run `command` (first, or after a `;`:
/// input follows the guard that refuses a held pane on its line).
fn written(fake: &Fake, conn: usize, command: &str) -> usize {
    let after = format!(" ; {command}");
    fake.conn(conn, |c| {
        (c.lines.iter())
            .filter(|line| {
                line.starts_with(command.as_bytes())
                    || line.windows(after.len()).any(|w| w == after.as_bytes())
            })
            .count()
    })
}

#[tokio::test(start_paused = true)]
async fn commands_to_a_pane_whose_client_is_behind_go_through_the_quiet_client() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.output(0, b"prompt$ ");
        late_output(&fake, 0, "yyyy");
        settle().await;
        assert_eq!(engine.journal_end(PaneId(0)), 12);
        let cursor = engine.send_input(PaneId(0), &keys("C-c")).await.unwrap();
        assert_eq!(cursor.offset, 12, "the end of the output read before");
        assert_eq!(inputs(&fake, 0), [Sent::Keys(vec!["C-c".into()])]);
        assert_eq!(fake.opened(), 2, "a quiet client joined");
        let args = fake.conn(1, |c| c.args.clone());
        assert_eq!(
            args,
            ["attach-session", "-f", "ignore-size,no-output", "-t", "$0"]
        );
        assert!(fake.conn(1, |c| c.no_output));
        let capture = engine.capture(PaneId(0), Scrollback::None).await.unwrap();
        assert_eq!(capture.cursor.offset, 12);
        assert_eq!(
            [
                written(&fake, 0, "send-keys"),
                written(&fake, 0, "capture-pane")
            ],
            [0, 0],
            "nothing waits behind the late output"
        );
        assert_eq!(
            [
                written(&fake, 1, "send-keys"),
                written(&fake, 1, "capture-pane")
            ],
            [1, 1]
        );
        // Output still reaches the journal through the session's client
        // alone; output the quiet client should never get is not journaled.
        fake.send_raw(1, "%output %0 stray\n");
        fake.output(0, b"^C\r\n");
        settle().await;
        assert_eq!(engine.journal_end(PaneId(0)), 16);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn input_whose_reply_is_late_takes_the_cursor_from_before_it() {
    bounded(async {
        let fake = Fake::local().with_session("main");
        let engine = connect(&fake).await;
        fake.output(0, b"prompt$ ");
        settle().await;
        // tmux ran the keys, but their reply waits behind queued output.
        fake.hook(|cmd| (cmd.name == "send-keys").then(|| Response::act(Act::Hang)));
        let cursor = engine.send_input(PaneId(0), &keys("C-c")).await.unwrap();
        assert_eq!(cursor.offset, 8);
        // The reply still missing, the client counts as behind: whether the
        // pane was held is asked of the quiet client, and so is a capture.
        assert_eq!(fake.opened(), 2);
        assert_eq!(written(&fake, 1, "display-message"), 1);
        let capture = engine.capture(PaneId(0), Scrollback::None).await.unwrap();
        assert_eq!(capture.cursor.offset, 8);
        assert_eq!(fake.opened(), 2);
        assert_eq!(written(&fake, 1, "capture-pane"), 1);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_quiet_client_whose_session_ended_is_replaced() {
    bounded(async {
        let fake = Fake::local().with_session("a");
        let b = fake.add_session("b");
        let engine = connect(&fake).await;
        late_output(&fake, 0, "y");
        settle().await;
        engine.send_input(PaneId(0), &keys("C-c")).await.unwrap();
        assert_eq!(fake.conn(2, |c| c.args.last().cloned()), Some("$0".into()));
        fake.kill_session(0);
        settle().await;
        assert!(fake.conn(2, |c| !c.is_open()), "it left with its session");
        let pane = fake.server(|server| server.sessions[&b].windows[0]);
        let pane = fake.server(|server| server.windows[&pane].panes[0]);
        fake.send_raw(1, format!("%extended-output %{pane} 120 : y\n"));
        settle().await;
        engine.send_input(PaneId(pane), &keys("C-c")).await.unwrap();
        assert_eq!(fake.opened(), 4);
        assert_eq!(
            fake.conn(3, |c| c.args.last().cloned()),
            Some(format!("${b}"))
        );
        assert_eq!(written(&fake, 3, "send-keys"), 1);
    })
    .await;
}
