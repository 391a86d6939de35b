//! run_command in bash, zsh and POSIX sh panes, and channels, against a real
//! tmux server.

mod support;

use std::time::Duration;

use support::{LIMIT, TestTmux, shell_installed, shell_pane};
use termpilot_tmux::{ChannelOutcome, Engine, Error, Input, NewSession};

async fn connect(tmux: &TestTmux) -> Engine {
    Engine::connect(tmux.config()).await.expect("connect")
}

async fn check_shell(shell: &str) {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, shell, None).await;
    let run = |command: &'static str| {
        let engine = engine.clone();
        async move { engine.run_command(pane, command, LIMIT).await.unwrap() }
    };
    let cd = run("cd /tmp").await;
    assert_eq!(cd.exit_code, Some(0), "{shell}: {cd:?}");
    let pwd = run("pwd").await;
    assert_eq!(pwd.output, "/tmp", "{shell}: cd persists");
    let failed = run("echo before-failing; sh -c 'exit 3'").await;
    assert_eq!(failed.exit_code, Some(3), "{shell}");
    assert_eq!(
        failed.output, "before-failing",
        "{shell}: only the command's own output"
    );
    let exported = run("export TP_VALUE=kept").await;
    assert_eq!(exported.exit_code, Some(0));
    assert_eq!(
        run("echo $TP_VALUE").await.output,
        "kept",
        "{shell}: export persists"
    );
}

#[tokio::test]
async fn run_command_in_bash() {
    check_shell("bash").await;
}

#[tokio::test]
async fn run_command_in_posix_sh() {
    check_shell("sh").await;
}

#[tokio::test]
async fn run_command_in_zsh() {
    if shell_installed("zsh") {
        check_shell("zsh").await;
    }
}

#[tokio::test]
async fn run_command_in_fish() {
    if shell_installed("fish") {
        check_shell("fish").await;
    }
}

#[tokio::test]
async fn a_signalled_channel_is_told_apart_from_a_dead_server() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let signaller = engine.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        signaller.signal_channel("tp-done").await.unwrap();
    });
    let signalled = engine.wait_for_channel("tp-done", LIMIT).await.unwrap();
    assert_eq!(signalled, ChannelOutcome::Signalled);
    let quiet = engine
        .wait_for_channel("tp-quiet", Duration::from_millis(300))
        .await
        .unwrap();
    assert_eq!(quiet, ChannelOutcome::Timeout);
    let name = tmux.name.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = std::process::Command::new("tmux")
            .args(["-L", &name, "kill-server"])
            .status();
    });
    let ended = engine.wait_for_channel("tp-never", LIMIT).await.unwrap();
    assert_eq!(ended, ChannelOutcome::ServerExited);
}

/// Starts a session running `command` and checks that run_command refuses
/// it, naming `named`.
async fn refuses_run_command_in(command: &str, named: &str) {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let created = engine
        .create_session(&NewSession {
            command: Some(command.into()),
            ..NewSession::default()
        })
        .await
        .unwrap();
    let err = engine
        .run_command(created.pane, "echo hi", Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotAtPrompt { .. }), "{err}");
    assert!(err.to_string().contains(named), "{err}");
}

#[tokio::test]
async fn run_command_refuses_a_repl() {
    refuses_run_command_in("cat", "cat").await;
}

#[tokio::test]
async fn run_command_refuses_a_shell_running_a_command_string() {
    // `sh -c 'read line; cat'` waits in its `read` builtin with no child:
    // tmux calls the pane's program `sh`, yet nothing typed reaches a prompt.
    refuses_run_command_in("read line; cat", "read line; cat").await;
}

#[tokio::test]
async fn run_commands_in_one_pane_take_turns() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let first = {
        let engine = engine.clone();
        // A builtin that reads its input: the shell has no child, so it
        // looks as if it were at its prompt.
        let first = "read -t 1 line; echo A:$line";
        tokio::spawn(async move { engine.run_command(pane, first, LIMIT).await })
    };
    // Typed while the first runs, the second would be read by the first and
    // cut it short; it waits for its turn instead.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = engine.run_command(pane, "echo B", LIMIT).await.unwrap();
    let first = first.await.unwrap().unwrap();
    assert_eq!((first.exit_code, first.output.as_str()), (Some(0), "A:"));
    assert!(!first.interrupted);
    assert_eq!((second.exit_code, second.output.as_str()), (Some(0), "B"));
}

#[tokio::test]
async fn a_command_waiting_in_a_builtin_is_not_taken_for_interrupted() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let short = Duration::from_millis(300);
    let started = engine
        .run_command(pane, "read line; echo got:$line", short)
        .await
        .unwrap();
    assert_eq!((started.exit_code, started.interrupted), (None, false));
    // The shell is idle in the foreground, but not under its prompt.
    let waiting = engine.wait_for_command(&started.id, short).await.unwrap();
    assert_eq!((waiting.exit_code, waiting.interrupted), (None, false));
    let input = Input {
        text: Some("typed".into()),
        enter: true,
        ..Input::default()
    };
    engine.send_input(pane, &input).await.unwrap();
    let done = engine.wait_for_command(&started.id, LIMIT).await.unwrap();
    assert_eq!(
        (done.exit_code, done.output.as_str()),
        (Some(0), "typed\ngot:typed")
    );
}

#[tokio::test]
async fn a_long_output_is_whole_and_the_command_finished() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let report = engine
        .run_command(pane, "seq 1 200000", LIMIT)
        .await
        .unwrap();
    // The prompt comes right after the end marker: it must not make the
    // command look interrupted.
    assert_eq!((report.exit_code, report.interrupted), (Some(0), false));
    let lines: Vec<&str> = report.output.lines().collect();
    assert_eq!(lines.len(), 200_000);
    assert_eq!((lines[0], lines[199_999]), ("1", "200000"));
}
