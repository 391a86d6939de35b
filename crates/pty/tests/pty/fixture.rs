//! A runner on an outer terminal whose child records its input to a file.

use std::path::PathBuf;

use tempfile::TempDir;

use crate::harness::{OuterTerminal, wait_for_file};
use crate::runner::RunnerSpec;

/// The child: raw mode (so a Ctrl+C byte that got through would be recorded, not turned
/// into a signal), a ready marker, then every input byte into `$REC`.
pub const RECORD: &str = r#"stty raw -echo; printf READY; exec cat > "$REC""#;

/// The key every fixture binds to `terminate`, to end the child.
pub const END_KEY: &[u8] = b"\x1d"; // C-]

/// A runner whose child records its input, on an outer terminal.
pub struct Fixture {
    /// Holds the files below; removed when the fixture goes.
    pub _dir: TempDir,
    pub recording: PathBuf,
    pub events: PathBuf,
    pub terminal: OuterTerminal,
    pub modes_before: String,
}

impl Fixture {
    /// Starts `spec` (its script is replaced by [`RECORD`] when empty) with an events
    /// file and a `C-]=terminate` binding, and waits until the child is ready.
    pub fn start(mut spec: RunnerSpec) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let recording = dir.path().join("input");
        let events = dir.path().join("events");
        if spec.script.is_empty() {
            spec.script = RECORD.to_owned();
        }
        spec.events = Some(events.clone());
        let spec = spec.bind("C-]=terminate").env("REC", &recording);
        let command = spec.command("runner_entry");
        Fixture::on_terminal(dir, recording, events, command)
    }

    fn on_terminal(
        dir: TempDir,
        recording: PathBuf,
        events: PathBuf,
        command: std::process::Command,
    ) -> Fixture {
        let terminal = OuterTerminal::start(command);
        let modes_before = terminal.modes_at_start.clone();
        terminal.wait_for_output("READY");
        Fixture {
            _dir: dir,
            recording,
            events,
            terminal,
            modes_before,
        }
    }

    /// Starts an arbitrary command (e.g. the real binary) that runs [`RECORD`] with
    /// `REC` set; the caller sets the bindings.
    pub fn start_command(mut command: std::process::Command) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let recording = dir.path().join("input");
        let events = dir.path().join("events");
        command.env("REC", &recording).env("EV", &events);
        Fixture::on_terminal(dir, recording, events, command)
    }

    /// Waits until the child has recorded exactly `expected` and nothing more.
    pub fn assert_recorded(&self, expected: &[u8]) {
        let recorded = wait_for_file(&self.recording, expected);
        assert_eq!(
            recorded.escape_ascii().to_string(),
            expected.escape_ascii().to_string()
        );
    }

    /// The names of the events written so far, checking each line's shape.
    pub fn event_names(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.events).unwrap_or_default();
        text.lines().map(event_name).collect()
    }

    /// Waits until `count` events were written and returns their names.
    pub fn wait_for_events(&self, count: usize) -> Vec<String> {
        let deadline = std::time::Instant::now() + crate::harness::PATIENCE;
        while self.event_names().len() < count && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        self.event_names()
    }

    /// Checks that the terminal is in raw mode now (the runner changed it).
    pub fn assert_raw(&self) {
        assert_ne!(
            self.terminal.modes(),
            self.modes_before,
            "raw mode not entered"
        );
    }

    /// Ends the child with the terminate binding; returns the runner's exit code after
    /// checking that the terminal's modes were restored.
    pub fn finish(mut self) -> i32 {
        self.terminal.write(END_KEY);
        self.wait_restored()
    }

    /// Waits for the runner to end, checks the modes were restored, returns its code.
    pub fn wait_restored(&mut self) -> i32 {
        let status = self.terminal.wait();
        assert_eq!(
            self.terminal.modes(),
            self.modes_before,
            "modes not restored"
        );
        status.code().unwrap_or(-1)
    }
}

/// The event name of one JSON line, checking it has a plausible time.
fn event_name(line: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    let time = value["time"].as_f64().expect("a numeric time");
    assert!(time > 1.6e9, "time {time} is not a Unix time");
    value["event"].as_str().expect("an event name").to_owned()
}
