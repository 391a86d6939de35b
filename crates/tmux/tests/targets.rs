//! Targets, names and directories against a real tmux, one private server per
//! test: nothing relative or special reaches tmux as a target, and no name or
//! directory is expanded as a tmux format.

mod support;

use std::time::Duration;

use support::{LIMIT, TestTmux, eventually, temp_path};
use termpilot_control::TargetError;
use termpilot_tmux::{
    Engine, Error, NewSession, NewWindow, PaneId, PaneScope, PaneTarget, SessionTarget, Split,
    SplitDirection, Target, TargetKind, WindowTarget,
};

async fn connect(tmux: &TestTmux) -> Engine {
    tokio::time::timeout(LIMIT, Engine::connect(tmux.config()))
        .await
        .expect("connect in time")
        .expect("connect")
}

async fn session_names(engine: &Engine) -> Vec<String> {
    let mut names: Vec<String> = engine
        .list_sessions()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    names.sort();
    names
}

async fn all_panes(engine: &Engine) -> Vec<PaneId> {
    let mut panes: Vec<PaneId> = engine
        .list_panes(&PaneScope::All)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    panes.sort();
    panes
}

fn named(name: &str) -> NewSession {
    NewSession {
        name: Some(name.into()),
        ..NewSession::default()
    }
}

fn assert_refused(result: Result<impl std::fmt::Debug, Error>, what: &str) -> String {
    match result {
        Err(Error::InvalidArgument(message)) => message,
        other => panic!("{what}: expected a refusal, got {other:?}"),
    }
}

/// The message a target string is refused with, where targets are parsed.
fn refused<T: std::str::FromStr<Err = TargetError>>(target: &str) -> String {
    match target.parse::<Target<T>>() {
        Err(error) => error.to_string(),
        Ok(_) => panic!("{target:?}: expected a refusal"),
    }
}

/// Strings tmux reads relative to the current client, session, window or
/// pane, or as special tokens.
const AMBIGUOUS: &[&str] = &[
    ".",
    ":",
    "-t",
    "-a",
    "+",
    "-",
    "{next}",
    "main:^",
    "",
    "~",
    "!",
    "=",
    "{last}",
    "{mouse}",
    "{marked}",
    "=main",
    "main:",
    "main:$",
    "main:!",
    "main:+",
    "main:-1",
    "main:{end}",
    "main:0.+",
    "main:0.{right-of}",
    "main:0.",
    ":0.0",
    "main.0",
    "+1",
    "-1",
    "{previous}",
];

#[tokio::test]
async fn relative_and_special_targets_are_refused_and_kill_nothing() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    for name in ["one", "two"] {
        let created = engine.create_session(&named(name)).await.unwrap();
        engine
            .split_pane(&Split {
                target: created.pane.to_string().parse().unwrap(),
                direction: SplitDirection::Right,
                size: None,
                command: None,
                cwd: None,
                env: Vec::new(),
            })
            .await
            .unwrap();
    }
    let sessions = session_names(&engine).await;
    let panes = all_panes(&engine).await;
    assert_eq!(sessions, ["main", "one", "two"]);
    for &target in AMBIGUOUS {
        // Targets are parsed where they enter; the engine takes them parsed.
        let message = refused::<SessionTarget>(target);
        assert!(message.contains("refused"), "{target:?}: {message}");
        assert!(message.contains("list_sessions"), "{target:?}: {message}");
        assert!(
            refused::<WindowTarget>(target).contains("\"@2\""),
            "{target:?}"
        );
        assert!(
            refused::<PaneTarget>(target).contains("\"%3\""),
            "{target:?}"
        );
        // Every tool that types into a pane (send_keys, paste_text, the
        // batches, run_command) resolves its pane here first.
        let message = refused::<PaneTarget>(target);
        assert!(message.contains("work:1.0"), "{target:?}: {message}");
    }
    assert_eq!(
        session_names(&engine).await,
        sessions,
        "no session was killed"
    );
    assert_eq!(all_panes(&engine).await, panes, "no pane was killed");
}

#[tokio::test]
async fn spelled_out_targets_reach_what_they_name() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let work = engine.create_session(&named("work")).await.unwrap();
    let editor = engine
        .create_window(
            &"work".parse().unwrap(),
            &NewWindow {
                name: Some("editor".into()),
                ..NewWindow::default()
            },
        )
        .await
        .unwrap();
    let fifth = engine
        .create_window(
            &format!("{}:5", work.session).parse().unwrap(),
            &NewWindow {
                ..NewWindow::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(fifth.window_index, 5);
    assert_eq!(
        engine
            .resolve_pane(&"work:0.0".parse().unwrap())
            .await
            .unwrap(),
        work.pane
    );
    assert_eq!(
        engine
            .resolve_pane(&"work:editor.0".parse().unwrap())
            .await
            .unwrap(),
        editor.pane
    );
    let by_ids = format!("{}:{}.0", work.session, editor.window);
    assert_eq!(
        engine.resolve_pane(&by_ids.parse().unwrap()).await.unwrap(),
        editor.pane
    );
    let listed = engine
        .list_panes(&PaneScope::Window("work:editor".parse().unwrap()))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, editor.pane);
    let killed = engine
        .kill_window(&"work:5".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(killed.windows, [fifth.window]);
    let killed = engine
        .kill_window(&"work:editor".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(killed.windows, [editor.window]);
    let err = engine
        .resolve_pane(&"work:editor.0".parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    engine
        .kill_session(&work.session.to_string().parse().unwrap())
        .await
        .unwrap();
    assert_eq!(session_names(&engine).await, ["main"]);
}

#[tokio::test]
async fn formats_in_names_and_directories_run_nothing() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let marker = temp_path("format-ran");
    let payload = format!("#(touch {})", marker.display());
    let created = engine.create_session(&named(&payload)).await.unwrap();
    assert_eq!(created.session_name, payload, "the name is kept as given");
    engine
        .create_session(&NewSession {
            cwd: Some(payload.clone()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    engine
        .create_window(
            &"main".parse().unwrap(),
            &NewWindow {
                name: Some(payload.clone()),
                cwd: Some(payload.clone()),
                ..NewWindow::default()
            },
        )
        .await
        .unwrap();
    engine
        .split_pane(&Split {
            target: "main:0.0".parse().unwrap(),
            direction: SplitDirection::Below,
            size: None,
            command: None,
            cwd: Some(payload.clone()),
            env: Vec::new(),
        })
        .await
        .unwrap();
    // tmux runs #() jobs in the background: give one time to show.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !marker.exists(),
        "a #() in a name or directory ran a command"
    );
    let _ = std::fs::remove_file(marker);
}

#[tokio::test]
async fn names_and_directories_with_hashes_are_kept_exactly() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let created = engine.create_session(&named("#h")).await.unwrap();
    assert_eq!(created.session_name, "#h");
    assert!(session_names(&engine).await.contains(&"#h".to_owned()));
    let dir = temp_path("dir#h#{session_id}");
    std::fs::create_dir(&dir).unwrap();
    let window = engine
        .create_window(
            &"#h".parse().unwrap(),
            &NewWindow {
                name: Some("w#{session_id}".into()),
                cwd: Some(dir.display().to_string()),
                ..NewWindow::default()
            },
        )
        .await
        .unwrap();
    let pane = eventually(LIMIT, async || {
        let panes = engine
            .list_panes(&PaneScope::Session("#h".parse().unwrap()))
            .await
            .ok()?;
        let pane = panes.into_iter().find(|p| p.id == window.pane)?;
        (pane.cwd == dir.display().to_string()).then_some(pane)
    })
    .await
    .unwrap_or_else(|| panic!("the new pane never showed the directory {}", dir.display()));
    assert_eq!(pane.window_name, "w#{session_id}");
    assert_eq!(pane.session_name, "#h");
    let _ = std::fs::remove_dir(dir);
}

#[tokio::test]
async fn names_tmux_would_change_are_refused() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    for (name, says) in [
        ("a:b", "':'"),
        ("a.b", "'.'"),
        ("a$x", "'$'"),
        ("a\\b", "'\\'"),
        ("a\tb", "U+0009"),
        ("-t", "'-'"),
        ("{next}", "'{'"),
    ] {
        let message = assert_refused(engine.create_session(&named(name)).await, name);
        assert!(message.contains("session name"), "{name:?}: {message}");
        assert!(message.contains(says), "{name:?}: {message}");
        let window = NewWindow {
            name: Some(name.into()),
            ..NewWindow::default()
        };
        let message = assert_refused(
            engine
                .create_window(&"main".parse().unwrap(), &window)
                .await,
            name,
        );
        assert!(message.contains("window name"), "{name:?}: {message}");
    }
    // tmux reads " 5" as index 5 even in an exact-name target.
    for name in ["12", " 5"] {
        let window = NewWindow {
            name: Some(name.into()),
            ..NewWindow::default()
        };
        let message = assert_refused(
            engine
                .create_window(&"main".parse().unwrap(), &window)
                .await,
            name,
        );
        assert!(message.contains("window index"), "{name:?}: {message}");
    }
    assert_eq!(
        session_names(&engine).await,
        ["main"],
        "nothing was created"
    );
    assert_eq!(all_panes(&engine).await.len(), 1, "no window was created");
}

#[tokio::test]
async fn nul_in_an_argument_is_a_clear_error() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let message = assert_refused(engine.create_session(&named("a\0b")).await, "name");
    assert!(message.contains("session name"), "{message}");
    assert!(message.contains("NUL"), "{message}");
    let fields = [
        NewSession {
            cwd: Some("/tmp\0x".into()),
            ..NewSession::default()
        },
        NewSession {
            command: Some("echo a\0b".into()),
            ..NewSession::default()
        },
        NewSession {
            env: vec![("A".into(), "x\0y".into())],
            ..NewSession::default()
        },
    ];
    for (options, field) in fields.iter().zip(["cwd", "command", "env"]) {
        let message = assert_refused(engine.create_session(options).await, field);
        assert!(message.contains(field), "{field}: {message}");
        assert!(message.contains("NUL"), "{field}: {message}");
    }
    let window = NewWindow {
        cwd: Some("/tmp\0x".into()),
        ..NewWindow::default()
    };
    let message = assert_refused(
        engine
            .create_window(&"main".parse().unwrap(), &window)
            .await,
        "window cwd",
    );
    assert!(message.contains("cwd"), "{message}");
    assert_eq!(
        session_names(&engine).await,
        ["main"],
        "nothing was created"
    );
}

/// A person's tmux client attached to `session` through a terminal of its
/// own (`script` gives it one), ended by its pid when dropped.
struct AttachedClient(std::process::Child);

impl AttachedClient {
    fn start(tmux: &TestTmux, session: &str) -> Option<AttachedClient> {
        let attach = format!(
            "tmux -L {} -f {} attach -t ={session}",
            tmux.name,
            support::config_file().display()
        );
        let child = std::process::Command::new("script")
            .args(["-qfc", &attach, "/dev/null"])
            .env("TERM", "xterm")
            .env_remove("TMUX")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        match child {
            Ok(child) => Some(AttachedClient(child)),
            Err(e) => {
                eprintln!("script(1) cannot run here ({e}): the client test checks less");
                None
            }
        }
    }
}

impl Drop for AttachedClient {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_session_name_never_finds_a_clients_session() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    engine.create_session(&named("person")).await.unwrap();
    let Some(_client) = AttachedClient::start(&tmux, "person") else {
        return;
    };
    // tmux alone takes a name no session has for the name of a client's
    // terminal, and finds that client's session.
    let tty = eventually(LIMIT, async || {
        let out = tmux.tmux(&["list-clients", "-F", "#{client_tty}"]);
        let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        text.strip_prefix("/dev/").map(str::to_owned)
    })
    .await
    .expect("the person's client attaches");
    let err = engine
        .kill_session(&tty.parse().unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotFound {
                kind: TargetKind::Session,
                ..
            }
        ),
        "{tty}: {err}"
    );
    let err = engine
        .resolve_pane(&format!("{tty}:0.0").parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{tty}: {err}");
    let err = engine
        .list_panes(&PaneScope::Session(tty.parse().unwrap()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{tty}: {err}");
    let err = engine
        .kill_window(&format!("{tty}:0").parse().unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{tty}: {err}");
    assert_eq!(session_names(&engine).await, ["main", "person"]);
}

#[tokio::test]
async fn a_name_tmux_stores_otherwise_is_refused_and_removed() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    // U+0378 is unassigned: the C library gives it no width, so tmux writes
    // it as octal escapes. The name rules let it through; the check after
    // creation catches it.
    let name = "a\u{378}b";
    match engine.create_session(&named(name)).await {
        Ok(created) => assert_eq!(created.session_name, name),
        Err(Error::InvalidArgument(message)) => {
            assert!(message.contains("would store it as"), "{message}")
        }
        Err(other) => panic!("{other}"),
    }
    let names = session_names(&engine).await;
    assert!(
        names == ["main"] || names == ["a\u{378}b", "main"],
        "a session under another name was left: {names:?}"
    );
}
