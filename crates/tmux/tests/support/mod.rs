//! A private tmux server per test, killed (only it) when the test ends.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use termpilot_tmux::{EngineConfig, Socket};

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
    }
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
pub fn temp_path(tag: &str) -> PathBuf {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("tp-{tag}-{}-{n}", std::process::id()))
}
