//! The program under test for library tests: this test binary, run again with
//! `RUNNER_ENV` set, runs one [`Session`] on its own standard streams, as `termpilot run`
//! does, and exits with the session's exit code.

#![allow(dead_code)] // shared with the latency bench

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use termpilot_keys::parse_sequence;
use termpilot_pty::{Action, Session, parse_binding};

/// Set (to anything) in the runner's environment.
pub const RUNNER_ENV: &str = "TERMPILOT_PTY_TEST_RUNNER";

/// What a test asks the runner to do.
#[derive(Debug, Default, Clone)]
pub struct RunnerSpec {
    /// The child's shell script (run with `sh -c`).
    pub script: String,
    /// Bindings as `SEQ=ACTION`; the extra action `panic` binds a panicking callback.
    pub bindings: Vec<String>,
    /// The events file, if any.
    pub events: Option<PathBuf>,
    /// The escape timeout in milliseconds (the library default if unset).
    pub escape_timeout_ms: Option<u64>,
    /// The terminate grace in milliseconds (the library default if unset).
    pub terminate_grace_ms: Option<u64>,
    /// A file the detach hook creates (a `detach` binding needs a hook).
    pub detach_marker: Option<PathBuf>,
    /// Extra environment for the child (e.g. where it records its input).
    pub env: Vec<(String, String)>,
}

impl RunnerSpec {
    /// A runner for `script`.
    pub fn new(script: &str) -> RunnerSpec {
        RunnerSpec {
            script: script.to_owned(),
            ..RunnerSpec::default()
        }
    }

    /// Adds a binding.
    pub fn bind(mut self, spec: &str) -> RunnerSpec {
        self.bindings.push(spec.to_owned());
        self
    }

    /// Adds an environment variable for the child.
    pub fn env(mut self, key: &str, value: impl AsRef<Path>) -> RunnerSpec {
        let value = value.as_ref().to_string_lossy().into_owned();
        self.env.push((key.to_owned(), value));
        self
    }

    /// The command that runs this binary as the runner (from `current_exe`).
    pub fn command(&self, entry: &str) -> Command {
        let mut command = Command::new(std::env::current_exe().expect("current_exe"));
        command
            .args([entry, "--exact", "--nocapture", "--test-threads=1", "-q"])
            .env(RUNNER_ENV, "1")
            .env("TP_SCRIPT", &self.script)
            .env("TP_BINDINGS", self.bindings.join("\n"));
        let optional = [
            ("TP_EVENTS", self.events.as_deref().map(path_text)),
            (
                "TP_ESCAPE_MS",
                self.escape_timeout_ms.map(|ms| ms.to_string()),
            ),
            (
                "TP_GRACE_MS",
                self.terminate_grace_ms.map(|ms| ms.to_string()),
            ),
            (
                "TP_DETACH_MARKER",
                self.detach_marker.as_deref().map(path_text),
            ),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// In a runner process, runs the session described by the environment and returns its
/// exit code; `None` in an ordinary test process.
pub fn run_from_env() -> Option<i32> {
    std::env::var_os(RUNNER_ENV)?;
    let var = |key: &str| std::env::var(key).ok();
    let mut child = Command::new("sh");
    child.arg("-c").arg(var("TP_SCRIPT").expect("TP_SCRIPT"));
    let mut builder = Session::builder(child);
    for spec in var("TP_BINDINGS").unwrap_or_default().lines() {
        let (keys, action) = match spec.strip_suffix("=panic") {
            Some(sequence) => (parse_sequence(sequence).unwrap(), panicking_callback()),
            None => parse_binding(spec).expect("a valid binding"),
        };
        builder = builder.bind(keys, action);
    }
    if let Some(path) = var("TP_EVENTS") {
        builder = builder.events(std::fs::File::create(path).expect("create the events file"));
    }
    if let Some(ms) = var("TP_ESCAPE_MS") {
        builder = builder.escape_timeout(Duration::from_millis(ms.parse().unwrap()));
    }
    if let Some(ms) = var("TP_GRACE_MS") {
        builder = builder.terminate_grace(Duration::from_millis(ms.parse().unwrap()));
    }
    if let Some(marker) = var("TP_DETACH_MARKER") {
        builder = builder.detach_hook(move |_pty: &Path| std::fs::write(&marker, b"detach"));
    }
    let report = builder.run().expect("the session runs");
    Some(report.outcome.exit_code().into())
}

fn panicking_callback() -> Action {
    Action::Callback(Box::new(|| panic!("a callback panicked on purpose")))
}
