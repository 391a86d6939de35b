//! Waits that end because the pane's program waits for input, against a
//! real tmux server; and programs that must not look like they do.

mod support;

use std::time::Duration;

use support::{LIMIT, TestTmux, shell_installed, shell_pane, temp_path, wait_for_journal};
use termpilot_tmux::{
    CommandEnd, Cursor, Engine, Input, Needle, Outcome, PaneId, TextWait, WaitReport,
};

const SETTLE: Duration = Duration::from_millis(300);

/// How long a program that does not wait for input is watched.
const WATCH: Duration = Duration::from_millis(2500);

async fn connect(tmux: &TestTmux) -> Engine {
    Engine::connect(tmux.config()).await.expect("connect")
}

fn never(timeout: Duration) -> TextWait {
    TextWait {
        patterns: vec![Needle::Literal("tp-never-printed".into())],
        stop: Vec::new(),
        match_case: true,
        since: None,
        include_screen: false,
        timeout,
    }
}

async fn type_line(engine: &Engine, pane: PaneId, text: &str) -> Cursor {
    let input = Input {
        text: Some(text.to_owned()),
        enter: true,
        ..Input::default()
    };
    engine.send_input(pane, &input).await.expect("typed")
}

/// A bash pane that runs `command`, then the wait's report.
async fn wait_after(command: &str, timeout: Duration) -> WaitReport {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    type_line(&engine, pane, command).await;
    engine
        .wait_for_text_or_input(pane, &never(timeout), SETTLE)
        .await
        .expect("wait")
}

async fn awaiting(command: &str) -> termpilot_tmux::AwaitingInput {
    let report = wait_after(command, LIMIT).await;
    assert_eq!(
        report.outcome,
        Outcome::AwaitingInput,
        "{command}: {report:?}"
    );
    report.input.expect("what the program waits for")
}

async fn not_awaiting(command: &str) {
    let report = wait_after(command, WATCH).await;
    assert_eq!(report.outcome, Outcome::Timeout, "{command}: {report:?}");
    assert!(report.input.is_none());
}

fn installed(program: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        eprintln!("{program} is not installed: its test is skipped");
    }
    found
}

#[tokio::test]
async fn read_with_a_prompt() {
    let input = awaiting("read -p 'Your name: ' name").await;
    assert!(input.line_mode && !input.secret, "{input:?}");
    assert_eq!(input.program, "bash");
    assert_eq!(input.prompt, "Your name: ");
}

#[tokio::test]
async fn read_without_echo_is_secret() {
    let input = awaiting("read -s -p 'Password: ' pw").await;
    assert!(input.secret && input.line_mode, "{input:?}");
    assert_eq!(input.prompt, "Password: ");
}

#[tokio::test]
async fn getpass_is_secret() {
    if !installed("python3") {
        return;
    }
    let input = awaiting("python3 -c 'import getpass; getpass.getpass(\"Token: \")'").await;
    assert!(input.secret, "{input:?}");
    assert!(input.program.starts_with("python"), "{input:?}");
    assert_eq!(input.prompt, "Token: ");
}

#[tokio::test]
async fn python_repl() {
    if !installed("python3") {
        return;
    }
    let input = awaiting("python3 -q").await;
    assert!(!input.secret && !input.line_mode, "{input:?}");
    assert!(input.prompt.starts_with(">>>"), "{input:?}");
}

#[tokio::test]
async fn node_repl() {
    if !installed("node") {
        return;
    }
    let input = awaiting("node").await;
    assert_eq!(input.program, "node");
    assert!(input.prompt.starts_with('>'), "{input:?}");
}

#[tokio::test]
async fn cat_reading_the_terminal() {
    let input = awaiting("cat").await;
    assert_eq!(input.program, "cat");
    assert!(input.line_mode && !input.secret && !input.alternate_screen);
}

#[tokio::test]
async fn less_on_the_alternate_screen() {
    if !installed("less") {
        return;
    }
    let file = temp_path("less");
    std::fs::write(&file, "first line of the file\n").unwrap();
    let input = awaiting(&format!("less '{}'", file.display())).await;
    let _ = std::fs::remove_file(&file);
    assert_eq!(input.program, "less");
    assert!(input.alternate_screen && !input.secret, "{input:?}");
}

#[tokio::test]
async fn git_commit_opens_an_editor() {
    if !installed("git") || !installed("vi") {
        return;
    }
    let repo = temp_path("git");
    std::fs::create_dir_all(&repo).unwrap();
    let command = format!(
        "cd '{}' && git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty \
         -c core.editor=vi 2>/dev/null; git -c user.name=t -c user.email=t@t -c core.editor=vi \
         commit --allow-empty",
        repo.display()
    );
    let input = awaiting(&command).await;
    let _ = std::fs::remove_dir_all(&repo);
    assert!(input.program.starts_with("vi"), "{input:?}");
    assert!(input.alternate_screen, "{input:?}");
}

#[tokio::test]
async fn sleep_does_not_wait_for_input() {
    not_awaiting("sleep 5").await;
}

#[tokio::test]
async fn a_busy_loop_does_not_wait_for_input() {
    not_awaiting("while :; do :; done").await;
}

#[tokio::test]
async fn yes_does_not_wait_for_input() {
    not_awaiting("yes > /dev/null").await;
}

#[tokio::test]
async fn tail_follow_does_not_wait_for_input() {
    let file = temp_path("tail");
    std::fs::write(&file, "a line\n").unwrap();
    not_awaiting(&format!("tail -f '{}'", file.display())).await;
    let _ = std::fs::remove_file(&file);
}

#[tokio::test]
async fn a_pipe_reader_does_not_wait_for_input() {
    not_awaiting("sleep 4 | cat").await;
}

#[tokio::test]
async fn slow_output_does_not_wait_for_input() {
    not_awaiting("for i in 1 2 3 4; do echo tick $i; sleep 1; done").await;
}

#[tokio::test]
async fn the_shell_prompt_after_a_command_is_not_input() {
    not_awaiting("echo finished").await;
}

#[tokio::test]
async fn a_plain_sh_prompt_is_not_input() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "sh", None).await;
    type_line(&engine, pane, "echo finished").await;
    let report = engine
        .wait_for_text_or_input(pane, &never(WATCH), SETTLE)
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::Timeout, "{report:?}");
}

#[tokio::test]
async fn a_plain_sh_script_reading_a_line() {
    let script = temp_path("script");
    std::fs::write(&script, "printf 'Proceed? '\nread answer\n").unwrap();
    let input = awaiting(&format!("sh '{}'", script.display())).await;
    let _ = std::fs::remove_file(&script);
    assert!(input.line_mode && !input.secret, "{input:?}");
    assert_eq!(input.prompt, "Proceed? ");
}

#[tokio::test]
async fn zero_settle_turns_detection_off() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    type_line(&engine, pane, "cat").await;
    let report = engine
        .wait_for_text_or_input(pane, &never(Duration::from_secs(1)), Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::Timeout);
}

#[tokio::test]
async fn wait_for_idle_ends_when_input_is_awaited() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    type_line(&engine, pane, "read -p 'Continue? [Y/n] ' answer").await;
    let quiet = Duration::from_secs(5);
    let report = engine
        .wait_for_idle_or_input(pane, quiet, LIMIT, SETTLE)
        .await
        .unwrap();
    assert_eq!(report.outcome, Outcome::AwaitingInput);
    assert_eq!(report.input.unwrap().prompt, "Continue? [Y/n] ");
}

#[tokio::test]
async fn run_command_returns_when_its_command_asks() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let command = "read -s -p 'Password: ' pw; echo; echo got-${#pw}";
    let asked = engine
        .run_command_or_input(pane, command, LIMIT, SETTLE)
        .await
        .unwrap();
    eprintln!(
        "run_command returned {:.0} ms after it typed a read -s (settle {} ms)",
        asked.elapsed.as_secs_f64() * 1000.0,
        SETTLE.as_millis()
    );
    let input = asked
        .input()
        .cloned()
        .expect("the command waits for a password");
    assert!(input.secret);
    assert_eq!(asked.exit_code(), None);
    type_line(&engine, pane, "hunter2").await;
    let done = engine
        .wait_for_command_or_input(&asked.id, LIMIT, SETTLE)
        .await
        .unwrap();
    assert_eq!(done.exit_code(), Some(0));
    assert!(done.output.contains("got-7"), "{done:?}");
    assert!(done.input().is_none());
}

#[tokio::test]
async fn run_command_is_not_typed_into_a_waiting_read() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let asked = engine
        .run_command_or_input(pane, "read -p 'Q? ' a; echo got-$a", LIMIT, SETTLE)
        .await
        .unwrap();
    assert!(asked.input().is_some());
    let refused = engine
        .run_command(pane, "echo second", Duration::from_secs(3))
        .await;
    let error = refused.expect_err("typed into the read").to_string();
    assert!(error.contains("waits for input at 'Q? '"), "{error}");
    type_line(&engine, pane, "yes").await;
    let done = engine.wait_for_command(&asked.id, LIMIT).await.unwrap();
    assert_eq!(done.output, "Q? yes\ngot-yes");
}

#[tokio::test]
async fn run_command_of_a_quiet_command_still_completes() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let done = engine
        .run_command_or_input(pane, "sleep 1; echo slept", LIMIT, SETTLE)
        .await
        .unwrap();
    assert_eq!(done.exit_code(), Some(0));
    assert_eq!(done.output, "slept");
    assert!(done.input().is_none());
}

#[tokio::test]
async fn run_command_read_in_plain_sh() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "sh", None).await;
    let asked = engine
        .run_command_or_input(pane, "printf 'Answer: '; read answer", LIMIT, SETTLE)
        .await
        .unwrap();
    let input = asked.input().cloned().expect("sh's read waits");
    assert!(input.line_mode && !input.secret);
    type_line(&engine, pane, "yes").await;
    let done = engine.wait_for_command(&asked.id, LIMIT).await.unwrap();
    assert_eq!(done.exit_code(), Some(0));
}

/// run_command of a `read` that edits its line itself (raw mode, as the
/// shell's own prompt): it waits for input, and completes once answered.
async fn run_command_edited_read(shell: &str, command: &str) -> termpilot_tmux::AwaitingInput {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, shell, None).await;
    let asked = engine
        .run_command_or_input(pane, command, LIMIT, SETTLE)
        .await
        .unwrap();
    let input = asked.input().cloned().expect("the read waits");
    assert!(!input.line_mode && !input.secret, "{shell}: {input:?}");
    assert_eq!(input.program, shell);
    assert_eq!(asked.exit_code(), None);
    type_line(&engine, pane, "ada").await;
    let done = engine
        .wait_for_command_or_input(&asked.id, LIMIT, SETTLE)
        .await
        .unwrap();
    assert_eq!(done.exit_code(), Some(0), "{shell}: {done:?}");
    assert!(done.output.ends_with("got-ada"), "{shell}: {done:?}");
    assert!(done.input().is_none());
    input
}

#[tokio::test]
async fn run_command_read_with_readline_in_bash() {
    let command = "read -e -p 'name: ' x; echo got-$x";
    let input = run_command_edited_read("bash", command).await;
    assert_eq!(input.prompt, "name: ");
}

#[tokio::test]
async fn run_command_read_in_fish() {
    if shell_installed("fish") {
        run_command_edited_read("fish", "read x; echo got-$x").await;
    }
}

#[tokio::test]
async fn a_command_interrupted_while_followed_is_not_input() {
    // After a C-c, bash reads at its prompt in raw mode as `read -e` does,
    // with the command's start marker seen and no end marker.
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    let short = Duration::from_millis(500);
    let started = engine
        .run_command_or_input(pane, "echo before; sleep 30", short, SETTLE)
        .await
        .unwrap();
    assert_eq!(started.end, CommandEnd::Running);
    let follower = {
        let (engine, id) = (engine.clone(), started.id.clone());
        tokio::spawn(async move { engine.wait_for_command_or_input(&id, LIMIT, SETTLE).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let interrupt = Input {
        keys: vec!["C-c".parse().unwrap()],
        ..Input::default()
    };
    engine.send_input(pane, &interrupt).await.unwrap();
    let ended = follower.await.unwrap().unwrap();
    assert_eq!(ended.end, CommandEnd::Interrupted, "{ended:?}");
}

#[tokio::test]
async fn the_check_at_call_time() {
    let tmux = TestTmux::new();
    let engine = connect(&tmux).await;
    let pane = shell_pane(&engine, "bash", None).await;
    assert_eq!(engine.awaiting_input(pane).await.unwrap(), None);
    let cursor = type_line(&engine, pane, "read -s -p 'PIN: ' pin").await;
    wait_for_journal(&engine, pane, cursor, "PIN: ").await;
    let found = support::eventually(LIMIT, async || engine.awaiting_input(pane).await.unwrap())
        .await
        .expect("awaiting input");
    assert!(found.secret);
}
