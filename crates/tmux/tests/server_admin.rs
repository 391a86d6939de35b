//! A server as `termpilot status`, `stop` and `run --detachable` see it
//! ([`ServerAdmin`]), against real tmux servers on private sockets: servers
//! termpilot did not start, none at all, one the engine started with
//! people attached, and sessions created detached.

mod support;

use std::process::{Child, Command, Stdio};

use support::{LIMIT, TestTmux, eventually};
use termpilot_tmux::{
    DetachedSession, Engine, Error, ServerAdmin, SessionSummary, StopCheck, Stopped,
};

fn printed(output: std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn running(tmux: &TestTmux) -> bool {
    tmux.tmux(&["list-sessions"]).status.success()
}

/// A person's tmux client attached to `session`: `tmux attach` under
/// script(1), which gives it a terminal. Killed (only it) when dropped.
struct PersonClient(Child);

impl PersonClient {
    async fn attach(tmux: &TestTmux, session: &str) -> PersonClient {
        let attach = format!(
            "tmux -L {} -f {} attach -t {session}",
            tmux.name,
            support::config_file().display()
        );
        let child = Command::new("script")
            .args(["-qec", &attach, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("script(1) runs");
        let person = PersonClient(child);
        let attached = eventually(LIMIT, async || {
            let modes = printed(tmux.tmux(&["list-clients", "-F", "#{client_control_mode}"]));
            modes.lines().any(|mode| mode == "0").then_some(())
        });
        attached.await.expect("the person's client attaches");
        person
    }
}

impl Drop for PersonClient {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_server_termpilot_did_not_start_is_surveyed_and_not_ended_unasked() {
    let tmux = TestTmux::new();
    let created = tmux.tmux(&["new-session", "-d", "-s", "mine", "-x", "80", "-y", "24"]);
    assert!(created.status.success());
    assert!(tmux.tmux(&["new-window", "-t", "mine"]).status.success());
    let admin = ServerAdmin::new(tmux.config());

    let survey = admin.survey().await.unwrap().expect("a server runs");
    assert!(!survey.started_by_termpilot);
    let pid = printed(tmux.tmux(&["display-message", "-p", "#{pid}"]));
    assert_eq!(survey.pid.to_string(), pid);
    assert_eq!(survey.socket_path, support::socket_path(&tmux.name));
    let [
        SessionSummary {
            name,
            windows,
            people,
            ..
        },
    ] = &survey.sessions[..]
    else {
        panic!("one session: {survey:?}");
    };
    assert_eq!((name.as_str(), *windows, *people), ("mine", 2, 0));
    // Surveying attached nothing that stays.
    assert_eq!(printed(tmux.tmux(&["list-clients"])), "");
    // `stop` without --force refuses it on this answer.
    assert_eq!(survey.stop_check(), StopCheck::NotStartedByTermpilot);

    assert_eq!(admin.kill_server().await.unwrap(), Stopped::Ended);
    assert!(!running(&tmux), "kill-server left the server running");
    assert_eq!(admin.survey().await.unwrap(), None);
}

#[tokio::test]
async fn no_server_is_an_answer_and_asking_starts_none() {
    let tmux = TestTmux::new();
    let admin = ServerAdmin::new(tmux.config());
    assert_eq!(admin.describe(), format!("-L {}", tmux.name));
    let version = admin.tmux_version().await.unwrap();
    assert!(version.starts_with("tmux "), "{version:?}");

    assert_eq!(admin.survey().await.unwrap(), None);
    assert_eq!(admin.kill_server().await.unwrap(), Stopped::WasNotRunning);
    let detached = admin.detach_client("/dev/pts/nothing").await;
    assert!(
        matches!(&detached, Err(Error::Connect { .. })),
        "{detached:?}"
    );
    assert!(!running(&tmux), "asking started a server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_are_counted_apart_from_control_clients_and_detached() {
    let tmux = TestTmux::new();
    let engine = tokio::time::timeout(LIMIT, Engine::connect(tmux.config()))
        .await
        .expect("connect in time")
        .expect("connect");
    let admin = ServerAdmin::new(tmux.config());

    let survey = admin.survey().await.unwrap().expect("the engine's server");
    assert!(survey.started_by_termpilot, "{survey:?}");
    let controls = printed(tmux.tmux(&["list-clients", "-F", "#{client_control_mode}"]));
    assert!(controls.lines().any(|mode| mode == "1"), "{controls:?}");
    assert_eq!(survey.people(), 0, "control clients counted: {survey:?}");
    assert_eq!(survey.stop_check(), StopCheck::Clear);

    let first = &survey.sessions[0].name;
    let _person = PersonClient::attach(&tmux, first).await;
    let survey = admin.survey().await.unwrap().expect("still running");
    assert_eq!(survey.people(), 1, "{survey:?}");
    assert_eq!(survey.sessions[0].people, 1);
    assert_eq!(survey.stop_check(), StopCheck::PeopleAttached(1));

    let ttys = printed(tmux.tmux(&["list-clients", "-F", "#{client_control_mode} #{client_tty}"]));
    let tty = (ttys.lines())
        .find_map(|line| line.strip_prefix("0 "))
        .expect("the person's terminal")
        .to_owned();
    admin.detach_client(&tty).await.unwrap();
    let gone = eventually(LIMIT, async || {
        let survey = admin.survey().await.ok()??;
        (survey.people() == 0).then_some(())
    });
    assert!(
        gone.await.is_some(),
        "the person's client is still attached"
    );
    drop(engine);
}

#[tokio::test]
async fn a_detached_session_runs_its_command_where_it_is_told() {
    let tmux = TestTmux::new();
    let admin = ServerAdmin::new(tmux.config());
    let directory = tempfile::tempdir().expect("a temporary directory");
    let command = "pwd > out; printf %s \"$TP_ADMIN\" >> out; exec sleep 30";
    let session = DetachedSession {
        name: "run-admin".into(),
        size: (90, 20),
        directory: directory.path().to_owned(),
        environment: vec!["TP_ADMIN=hello there".into()],
        command: ["sh", "-c", command].map(Into::into).to_vec(),
    };
    let pane = admin.create_detached(&session).await.unwrap();

    let listed = printed(tmux.tmux(&[
        "list-panes",
        "-a",
        "-F",
        "#{session_name} #{session_id} #{pane_id} #{pane_pid} #{window_width}x#{window_height}",
    ]));
    let expected = format!(
        "run-admin {} {} {} 90x20",
        pane.session, pane.pane, pane.pid
    );
    assert_eq!(listed, expected);
    let out = directory.path().join("out");
    let written = eventually(LIMIT, async || {
        let text = std::fs::read_to_string(&out).ok()?;
        text.ends_with("hello there").then_some(text)
    });
    let expected = format!("{}\nhello there", directory.path().display());
    assert_eq!(written.await.as_deref(), Some(expected.as_str()));

    // The server it started is termpilot's, set up as the engine sets one up.
    let survey = admin.survey().await.unwrap().expect("a server runs");
    assert!(survey.started_by_termpilot, "{survey:?}");
    let limit = printed(tmux.tmux(&["show-options", "-gv", "history-limit"]));
    assert_eq!(limit, tmux.config().history_limit.to_string());

    let again = admin.create_detached(&session).await;
    assert!(
        matches!(&again, Err(Error::Command { command, message })
            if command == "new-session" && message.contains("duplicate session")),
        "{again:?}"
    );
}

#[tokio::test]
async fn a_detached_session_on_someone_elses_server_leaves_it_theirs() {
    let tmux = TestTmux::new();
    assert!(
        tmux.tmux(&["new-session", "-d", "-s", "mine"])
            .status
            .success()
    );
    let admin = ServerAdmin::new(tmux.config());
    let session = DetachedSession {
        name: "run-theirs".into(),
        size: (80, 24),
        directory: std::env::temp_dir(),
        environment: Vec::new(),
        command: ["sleep", "30"].map(Into::into).to_vec(),
    };
    admin.create_detached(&session).await.unwrap();
    let survey = admin.survey().await.unwrap().expect("a server runs");
    let names: Vec<&str> = survey.sessions.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["mine", "run-theirs"]);
    assert!(!survey.started_by_termpilot, "{survey:?}");
    assert_eq!(survey.stop_check(), StopCheck::NotStartedByTermpilot);
}
