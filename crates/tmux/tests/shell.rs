//! run_command in bash, zsh and POSIX sh panes, and channels, against a real
//! tmux server.

mod support;

use std::time::Duration;

use support::{LIMIT, TestTmux, shell_installed, shell_pane};
use termpilot_tmux::{
    ChannelOutcome, CommandEnd, Engine, EngineConfig, Error, Input, NewSession, NotRun,
};

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
    assert_eq!(cd.exit_code(), Some(0), "{shell}: {cd:?}");
    let pwd = run("pwd").await;
    assert_eq!(pwd.output, "/tmp", "{shell}: cd persists");
    let failed = run("echo before-failing; sh -c 'exit 3'").await;
    assert_eq!(failed.exit_code(), Some(3), "{shell}");
    assert_eq!(
        failed.output, "before-failing",
        "{shell}: only the command's own output"
    );
    let exported = run("export TP_VALUE=kept").await;
    assert_eq!(exported.exit_code(), Some(0));
    assert_eq!(
        run("echo $TP_VALUE").await.output,
        "kept",
        "{shell}: export persists"
    );
    // A line the shell cannot parse ends at once, with the shell's message.
    let broken = run("echo )").await;
    assert_eq!(
        broken.end,
        CommandEnd::NotRun(NotRun::SyntaxError),
        "{shell}: {broken:?}"
    );
    assert_eq!(broken.exit_code(), None, "{shell}");
    // fish names the wrapper's unbalanced block rather than the `)`.
    let named = shell == "fish" || broken.output.contains(')');
    assert!(
        named && broken.output.contains(':') && !broken.output.contains("7770"),
        "{shell}: the message, no wrapper: {broken:?}"
    );
    // An unfinished line: the shell is given its prompt back either way
    // (bash sees the wrapper's own quotes close it, and rejects it).
    let unfinished = run("echo 'unclosed").await;
    assert!(
        matches!(unfinished.end, CommandEnd::NotRun(_)),
        "{shell}: {unfinished:?}"
    );
    assert_eq!(
        run("echo after").await.output,
        "after",
        "{shell}: the pane takes the next command"
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

/// tmux names a pane's program by its first argument, which a shell can
/// choose: the wrapper typed must be the one for the shell that runs.
#[tokio::test]
async fn a_shell_that_calls_itself_another_gets_its_own_wrapper() {
    if !shell_installed("fish") {
        return;
    }
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let fish = support::shell_command("fish").replacen("exec fish", "exec -a sh fish", 1);
    let created = engine
        .create_session(&NewSession {
            command: Some(format!(
                "exec bash --norc --noprofile -c {}",
                shell_words(&fish)
            )),
            ..NewSession::default()
        })
        .await
        .unwrap();
    support::wait_for_journal(&engine, created.pane, 0, "-ready").await;
    let named = support::foreground(|args| tmux.tmux(args), created.pane);
    assert_eq!(named, "sh", "tmux names the shell by its first argument");
    let report = engine
        .run_command(created.pane, "echo (math 6 \\* 7)", LIMIT)
        .await
        .unwrap();
    assert_eq!(
        (report.exit_code(), report.output.as_str()),
        (Some(0), "42"),
        "{report:?}"
    );
}

/// `text` as one single-quoted shell word.
fn shell_words(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
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
    assert_eq!((first.exit_code(), first.output.as_str()), (Some(0), "A:"));
    assert_ne!(first.end, CommandEnd::Interrupted);
    assert_eq!((second.exit_code(), second.output.as_str()), (Some(0), "B"));
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
    assert_eq!(started.end, CommandEnd::Running);
    // The shell is idle in the foreground, but not under its prompt.
    let waiting = engine.wait_for_command(&started.id, short).await.unwrap();
    assert_eq!(waiting.end, CommandEnd::Running);
    let input = Input {
        text: Some("typed".into()),
        enter: true,
        ..Input::default()
    };
    engine.send_input(pane, &input).await.unwrap();
    let done = engine.wait_for_command(&started.id, LIMIT).await.unwrap();
    assert_eq!(
        (done.exit_code(), done.output.as_str()),
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
    assert_eq!(report.end, CommandEnd::Exited(0));
    let lines: Vec<&str> = report.output.lines().collect();
    assert_eq!(lines.len(), 200_000);
    assert_eq!((lines[0], lines[199_999]), ("1", "200000"));
}

#[tokio::test]
async fn an_output_larger_than_the_journal_keeps_its_exit_code_head_and_tail() {
    let tmux = TestTmux::new();
    let engine = Engine::connect(EngineConfig {
        journal_bytes: 1 << 20,
        ..tmux.config()
    })
    .await
    .expect("connect");
    let pane = shell_pane(&engine, "bash", None).await;
    // 2.5 MB of output into a 1 MiB journal: its start is evicted long
    // before the command ends.
    let report = engine
        .run_command(pane, "seq 1 400000; sh -c 'exit 7'", LIMIT * 3)
        .await
        .unwrap();
    assert_eq!(report.end, CommandEnd::Exited(7));
    assert!(report.lost_bytes > 0, "{}", report.lost_bytes);
    let lines: Vec<&str> = report.output.lines().collect();
    assert_eq!(lines.first(), Some(&"1"), "the head is kept");
    assert_eq!(lines.last(), Some(&"400000"), "the tail is kept");
    let kept: usize = report.output.len();
    assert!(
        kept as u64 + report.lost_bytes >= 2_400_000,
        "kept {kept} + lost {} accounts for the whole output",
        report.lost_bytes
    );
    // The shell took the next command at once.
    let next = engine.run_command(pane, "echo next", LIMIT).await.unwrap();
    assert_eq!((next.exit_code(), next.output.as_str()), (Some(0), "next"));
}

/// A script that reads the nonce of the running command from the screen,
/// prints a forged end marker claiming success, then goes on running.
fn forger(tmux: &TestTmux) -> support::TempPath {
    let path = support::temp_path("forger");
    let script = format!(
        "for i in 1 2 3 4 5 6 7 8 9 10; do\n\
         n=$(tmux -L {} capture-pane -p -t \"$TMUX_PANE\" | grep -o 'tp[0-9a-f]\\{{16\\}}' | head -n 1)\n\
         [ -n \"$n\" ] && break; sleep 0.1\n\
         done\n\
         [ -n \"$n\" ] && echo forger-found-the-nonce\n\
         printf '\\033]7770;%s;0\\007' \"$n\"\n\
         sleep 2\n\
         exit 42\n",
        tmux.name
    );
    std::fs::write(&path, script).expect("write the forger");
    path
}

#[tokio::test]
async fn a_program_printing_the_end_marker_does_not_finish_the_command() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let script = forger(&tmux);
    let command = format!("sh {}", script.display());
    let report = engine.run_command(pane, &command, LIMIT).await.unwrap();
    let _ = std::fs::remove_file(&script);
    assert!(
        report.output.contains("forger-found-the-nonce"),
        "{report:?}"
    );
    assert_eq!(report.end, CommandEnd::Exited(42));
}

#[tokio::test]
async fn a_forged_end_marker_leaves_the_command_running_until_its_timeout() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let script = forger(&tmux);
    let command = format!("sh {}", script.display());
    let early = engine
        .run_command(pane, &command, Duration::from_millis(1200))
        .await
        .unwrap();
    assert_eq!(early.end, CommandEnd::Running, "{early:?}");
    let done = engine.wait_for_command(&early.id, LIMIT).await.unwrap();
    let _ = std::fs::remove_file(&script);
    assert!(done.output.contains("forger-found-the-nonce"), "{done:?}");
    assert_eq!(done.exit_code(), Some(42));
}

#[tokio::test]
async fn a_bracketed_paste_cannot_end_early() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let cursor = engine.journal_end(pane);
    // bash takes bracketed pastes: without the end-of-paste sequence in the
    // middle, nothing would run before Enter.
    let pasted = engine
        .paste(pane, "echo a\x1b[201~echo INJECTED-$((6*7))\n", true, false)
        .await;
    let err = pasted.expect_err("a paste with an end-of-paste sequence is refused");
    assert!(err.to_string().contains("ESC[201~"), "{err}");
    let started = engine
        .paste(pane, "echo b\x1b[200~echo NESTED-$((6*7))\n", true, false)
        .await;
    assert!(started.is_err(), "a start-of-paste sequence is refused too");
    // Whatever reached the shell would have run by the time this has.
    let after = engine.run_command(pane, "echo after", LIMIT).await.unwrap();
    assert_eq!(after.output, "after");
    let text = support::journal_text(&engine, pane, cursor);
    assert!(!text.contains("INJECTED-42"), "{text:?}");
}
