//! Plays the user's terminal: a PTY whose slave side is the program under test's
//! terminal, written to with controlled delays and read back. Every wait is bounded.

#![allow(dead_code)] // shared with the latency bench, which uses only part of it

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use pty_process::blocking::{Pty, open};
use rustix::termios::{Winsize, tcsetwinsize};

/// How long any wait in a test may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Output read from the terminal so far, with a condition variable to wait on.
type Screen = Arc<(Mutex<Vec<u8>>, Condvar)>;

/// A terminal with a program running on it.
pub struct OuterTerminal {
    pty: Arc<Pty>,
    slave: PathBuf,
    process: Child,
    screen: Screen,
    /// The modes before the program started, as [`OuterTerminal::modes`] gives them.
    pub modes_at_start: String,
}

impl OuterTerminal {
    /// Starts `command` as the session leader of a new 24x80 terminal.
    pub fn start(command: Command) -> OuterTerminal {
        let (pty, pts) = open().expect("open a pty");
        set_size(&pty, 24, 80);
        let slave = rustix::pty::ptsname(pty.as_fd(), Vec::new()).expect("ptsname");
        let slave = PathBuf::from(slave.to_string_lossy().into_owned());
        let modes_at_start = modes_of(&slave);
        let process = pty_process::blocking::Command::from(command)
            .spawn(pts)
            .expect("spawn on the pty");
        let pty = Arc::new(pty);
        let screen = Screen::default();
        spawn_reader(pty.clone(), screen.clone());
        OuterTerminal {
            pty,
            slave,
            process,
            screen,
            modes_at_start,
        }
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// Types `bytes` in one write, as a terminal sends one key or a paste.
    pub fn write(&self, bytes: &[u8]) {
        (&*self.pty).write_all(bytes).expect("write to the pty");
    }

    /// Types each chunk with `gap` between them.
    pub fn type_slowly(&self, chunks: &[&[u8]], gap: Duration) {
        for chunk in chunks {
            self.write(chunk);
            thread::sleep(gap);
        }
    }

    /// Everything the program wrote so far.
    pub fn output(&self) -> Vec<u8> {
        self.screen.0.lock().unwrap().clone()
    }

    /// Waits until the output contains `needle`; panics with the output otherwise.
    pub fn wait_for_output(&self, needle: &str) {
        let (lock, changed) = &*self.screen;
        let deadline = Instant::now() + PATIENCE;
        let mut output = lock.lock().unwrap();
        while !contains(&output, needle.as_bytes()) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no {needle:?} in the output: {:?}",
                String::from_utf8_lossy(&output)
            );
            output = changed.wait_timeout(output, left).unwrap().0;
        }
    }

    /// Types one byte and waits until the output has grown by one byte (an echo):
    /// returns the round trip's duration.
    pub fn round_trip(&self, byte: u8) -> Duration {
        let (lock, changed) = &*self.screen;
        let mut output = lock.lock().unwrap();
        let before = output.len();
        let sent = Instant::now();
        self.write(&[byte]);
        while output.len() <= before {
            let left = (sent + PATIENCE).saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no echo of {byte:#x}");
            output = changed.wait_timeout(output, left).unwrap().0;
        }
        sent.elapsed()
    }

    /// The terminal's modes as `stty -g` prints them.
    pub fn modes(&self) -> String {
        modes_of(&self.slave)
    }

    /// Changes the terminal's size (the program gets SIGWINCH).
    pub fn resize(&self, rows: u16, cols: u16) {
        set_size(&self.pty, rows, cols);
    }

    /// Waits for the program to end; kills it (our own child) and fails if it does not.
    pub fn wait(&mut self) -> ExitStatus {
        match wait_bounded(&mut self.process) {
            Some(status) => status,
            None => panic!(
                "the program did not end; output: {:?}",
                String::from_utf8_lossy(&self.output())
            ),
        }
    }

    /// Sends `signal` to the program (our own child).
    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_child(&self.process);
        rustix::process::kill_process(pid, signal).expect("signal the program");
    }
}

impl Drop for OuterTerminal {
    fn drop(&mut self) {
        if self.process.try_wait().ok().flatten().is_none() {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

/// `stty -g` of the terminal whose slave device is `path`.
fn modes_of(path: &Path) -> String {
    let slave = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOCTTY.bits() as i32)
        .open(path)
        .expect("open the pty slave");
    let out = Command::new("stty")
        .arg("-g")
        .stdin(slave)
        .output()
        .expect("run stty");
    assert!(out.status.success(), "stty -g failed: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn set_size(pty: &Pty, rows: u16, cols: u16) {
    let size = Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    tcsetwinsize(pty, size).expect("set the pty size");
}

/// Copies the terminal's output into `screen` until the terminal closes. The thread is
/// left to end by itself: it holds only the master side and a buffer.
fn spawn_reader(pty: Arc<Pty>, screen: Screen) {
    thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = (&*pty).read(&mut buffer) {
            let (lock, changed) = &*screen;
            lock.lock().unwrap().extend_from_slice(&buffer[..n]);
            changed.notify_all();
        }
    });
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// Waits up to [`PATIENCE`] for `child` to end; kills it (it is ours) if it does not.
pub fn wait_bounded(child: &mut Child) -> Option<ExitStatus> {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Waits until the file at `path` holds exactly `expected`, then checks it stays so for
/// a moment (nothing extra arrives); returns what it holds at the end.
pub fn wait_for_file(path: &Path, expected: &[u8]) -> Vec<u8> {
    let deadline = Instant::now() + PATIENCE;
    let read = || std::fs::read(path).unwrap_or_default();
    while read() != expected && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    thread::sleep(Duration::from_millis(100));
    read()
}

/// Whether process `pid` still exists (a zombie counts as gone once reaped elsewhere).
pub fn process_exists(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    rustix::process::test_kill_process(pid).is_ok()
}

/// A command with piped standard streams, for runs without a terminal.
pub fn piped(mut command: Command) -> Command {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    command
}
