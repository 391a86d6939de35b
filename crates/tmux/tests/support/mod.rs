//! A private tmux server per test, killed (only it) when the test ends.
#![allow(dead_code)] // Each test binary uses part of this module.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use termpilot_tmux::{Cursor, Engine, EngineConfig, NewSession, PaneId, Socket};

/// The longest any wait in a test may take.
pub const LIMIT: Duration = Duration::from_secs(10);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A tmux socket name unique to this test run, and the server behind it.
pub struct TestTmux {
    pub name: String,
}

impl TestTmux {
    pub fn new() -> TestTmux {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        TestTmux {
            name: format!("tp-test-{}-{n}", std::process::id()),
        }
    }

    pub fn config(&self) -> EngineConfig {
        EngineConfig {
            socket: Socket::Name(self.name.clone()),
            server_config: Some(config_file()),
            default_size: (100, 30),
            host: None,
            ..EngineConfig::default()
        }
    }

    /// Runs a plain `tmux` command against this server.
    pub fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.name, "-f"])
            .arg(config_file())
            .args(args)
            .output()
            .expect("tmux runs")
    }

    pub fn kill_server(&self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

impl Drop for TestTmux {
    fn drop(&mut self) {
        self.kill_server();
        // tmux leaves its socket file behind, also when the server ended by itself.
        let _ = std::fs::remove_file(socket_path(&self.name));
    }
}

/// Where tmux puts the socket named `name`: `$TMUX_TMPDIR/tmux-UID/name`.
pub fn socket_path(name: &str) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let dir = std::env::var_os("TMUX_TMPDIR").unwrap_or_else(|| "/tmp".into());
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
    PathBuf::from(dir).join(format!("tmux-{uid}")).join(name)
}

/// The tmux configuration of test servers.
pub fn config_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/tmux.conf")
}

/// Polls `check` until it returns `Some`, at most `limit`.
pub async fn eventually<T>(
    limit: Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check().await {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A fresh temporary file path (not created).
pub fn temp_path(tag: &str) -> TempPath {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    TempPath(std::env::temp_dir().join(format!("tp-{tag}-{}-{n}", std::process::id())))
}

/// A path in the temporary directory, removed (file or directory) when
/// dropped, so that tests leave nothing behind.
pub struct TempPath(PathBuf);

impl std::ops::Deref for TempPath {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempPath {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if std::fs::remove_file(&self.0).is_err() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A position in a pane's journal: an offset, or a cursor the engine
/// handed out.
pub trait Offset: Copy {
    /// The journal offset.
    fn offset(self) -> u64;
}

impl Offset for u64 {
    fn offset(self) -> u64 {
        self
    }
}

impl Offset for Cursor {
    fn offset(self) -> u64 {
        self.offset
    }
}

/// Text of the pane's journal from `cursor` on, control sequences removed.
pub fn journal_text(engine: &Engine, pane: PaneId, cursor: impl Offset) -> String {
    engine.read_journal(pane, |journal| {
        termpilot_journal::clean_text(&journal.read_from(cursor.offset()).bytes)
    })
}

pub async fn wait_for_journal(
    engine: &Engine,
    pane: PaneId,
    cursor: impl Offset,
    needle: &str,
) -> String {
    eventually(LIMIT, async || {
        let text = journal_text(engine, pane, cursor);
        text.contains(needle).then_some(text)
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "{needle:?} not in the journal of {pane}: {:?}",
            journal_text(engine, pane, cursor)
        )
    })
}

/// A session whose pane copies exactly `len` raw bytes of input to a file.
pub async fn raw_sink(engine: &Engine, len: usize) -> (PaneId, TempPath) {
    let out = temp_path("sink");
    let command = format!(
        "stty raw -echo; echo sink-ready; head -c {len} > '{}'; sleep 30",
        out.display()
    );
    let created = engine
        .create_session(&NewSession {
            command: Some(command),
            ..NewSession::default()
        })
        .await
        .expect("create sink session");
    // The terminal is raw once the marker is printed.
    wait_for_journal(engine, created.pane, 0, "sink-ready").await;
    (created.pane, out)
}

pub async fn read_sink(path: &std::path::Path, len: usize) -> Vec<u8> {
    eventually(LIMIT, async || {
        let bytes = std::fs::read(path).ok()?;
        (bytes.len() >= len).then_some(bytes)
    })
    .await
    .unwrap_or_else(|| std::fs::read(path).unwrap_or_default())
}

/// The command of a pane running `shell` ("bash", "zsh", "fish" or "sh")
/// with no start-up files and a prompt containing `-ready`.
pub fn shell_command(shell: &str) -> &'static str {
    match shell {
        "zsh" => "exec env PS1='zsh-ready%# ' zsh -f",
        "sh" => "exec env PS1='sh-ready$ ' sh",
        // No history file, no greeting, a known prompt.
        "fish" => {
            "exec fish --no-config -C 'set -g fish_history \"\"; set -g fish_greeting \"\"; \
             function fish_prompt; echo -n \"fish-ready> \"; end'"
        }
        _ => "exec env PS1='bash-ready$ ' bash --norc --noprofile",
    }
}

/// Whether `shell` runs here with the options [`shell_command`] gives it
/// (`-f` for zsh, `--no-config` for fish 3.6+); says so on stderr when it
/// does not, for tests that then check less.
pub fn shell_installed(shell: &str) -> bool {
    let option = match shell {
        "zsh" => "-f",
        "fish" => "--no-config",
        _ => "-e",
    };
    let found = Command::new(shell)
        .args([option, "-c", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        eprintln!(
            "{shell} {option} cannot run here: its tests check less (scripts/test installs {shell})"
        );
    }
    found
}

/// A pane running `shell` (see [`shell_command`]), `width` columns wide if
/// given, once its prompt shows.
pub async fn shell_pane(engine: &Engine, shell: &str, width: Option<u16>) -> PaneId {
    let created = engine
        .create_session(&NewSession {
            command: Some(shell_command(shell).into()),
            width,
            ..NewSession::default()
        })
        .await
        .expect("create a shell session");
    wait_for_journal(engine, created.pane, 0, "-ready").await;
    created.pane
}

/// What tmux says runs in the foreground of `pane`, asked outside the
/// engine through `tmux` (a runner of tmux command lines for the server
/// the pane is on).
pub fn foreground(tmux: impl FnOnce(&[&str]) -> std::process::Output, pane: PaneId) -> String {
    let target = pane.to_string();
    let out = tmux(&[
        "display-message",
        "-p",
        "-t",
        &target,
        "#{pane_current_command}",
    ]);
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
