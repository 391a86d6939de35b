//! Records the transcripts in `tests/fixtures` from real shells:
//!
//! ```sh
//! cargo run -p termpilot-shell --example record_transcripts
//! ```
//!
//! For each of bash, zsh, fish and sh that is installed, it starts the shell
//! without start-up files in a private tmux server (its own socket, killed at
//! the end), types every command of `tests/cases` in its wrapper as the
//! engine does (`send-keys -l`, then Enter), and waits for its end marker.
//! It writes what the shell printed, byte for byte (`pipe-pane`), to
//! `SHELL.out` and the pane's text with its history (`capture-pane -pJ`) to
//! `SHELL.screen`. The tests never run it: they read the files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use termpilot_shell::{Shell, wrapper};

#[path = "../tests/cases/mod.rs"]
mod cases;

/// How long a command may take before recording gives up.
const COMMAND_LIMIT: Duration = Duration::from_secs(10);
/// How long the pane must stay quiet after an end marker (the prompt).
const SETTLE: Duration = Duration::from_millis(300);

fn main() -> Result<(), String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (shell, stem) in cases::SHELLS {
        let program = stem_program(stem);
        if !installed(program) {
            eprintln!("{program} is not installed: {stem}.out not recorded");
            continue;
        }
        let home = empty_home(stem)?;
        let recorded = Recorder::start(stem, &home).and_then(|recorder| {
            let result = recorder.record(shell, stem, &fixtures);
            recorder.stop();
            result
        });
        let _ = std::fs::remove_dir_all(&home);
        recorded?;
        eprintln!("recorded {stem}.out and {stem}.screen");
    }
    Ok(())
}

fn stem_program(stem: &str) -> &str {
    match stem {
        "sh" => "dash",
        other => other,
    }
}

fn installed(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// An empty home directory for the shell, so no start-up file or history of
/// the machine's user is read or written.
fn empty_home(stem: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("tp-shell-rec-{stem}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// A private tmux server running one shell in one pane.
struct Recorder {
    socket: String,
    out: PathBuf,
}

impl Recorder {
    fn start(stem: &str, home: &Path) -> Result<Recorder, String> {
        let socket = format!("tp-shell-rec-{stem}-{}", std::process::id());
        let out = home.join("pane.out");
        let recorder = Recorder { socket, out };
        let home_var = format!("HOME={}", home.display());
        let mut shell: Vec<&str> = vec![
            "env",
            "-i",
            &home_var,
            "TERM=tmux-256color",
            "PATH=/usr/bin:/bin",
            "PS1=$ ",
            "HISTFILE=/dev/null",
        ];
        shell.extend(match stem {
            "bash" => vec!["bash", "--norc", "--noprofile"],
            "zsh" => vec!["zsh", "-f"],
            "fish" => vec![
                "fish",
                "--no-config",
                "--private",
                "-C",
                "function fish_prompt; printf '$ '; end; function fish_title; end; \
                 set -g fish_greeting ''",
            ],
            _ => vec!["dash"],
        });
        let (w, h) = (cases::WIDTH.to_string(), cases::HEIGHT.to_string());
        let home_dir = home.display().to_string();
        let mut args = vec![
            "start-server",
            ";",
            "set",
            "-g",
            "history-limit",
            "10000",
            ";",
            "new-session",
            "-d",
            "-x",
            &w,
            "-y",
            &h,
            "-c",
            &home_dir,
            "sh",
            "-c",
            // Time to start pipe-pane before the shell prints anything.
            "sleep 0.5; exec \"$@\"",
            "sh",
        ];
        args.extend(shell);
        recorder.tmux(&args)?;
        let pipe = format!("cat > '{}'", recorder.out.display());
        recorder.tmux(&["pipe-pane", "-o", "-t", "%0", &pipe])?;
        Ok(recorder)
    }

    fn tmux(&self, args: &[&str]) -> Result<String, String> {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run tmux: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!("tmux {args:?}: {}", stderr.trim()));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn record(&self, shell: Shell, stem: &str, fixtures: &Path) -> Result<(), String> {
        self.wait_for_prompt()?;
        for (index, case) in cases::cases(shell).iter().enumerate() {
            let nonce = cases::nonce(index);
            let typed = wrapper(shell, &case.command, &nonce);
            self.tmux(&["send-keys", "-l", "-t", "%0", "--", &typed])?;
            self.tmux(&["send-keys", "-t", "%0", "Enter"])?;
            self.wait_for_end(&nonce, case.code)?;
        }
        let bytes = std::fs::read(&self.out).map_err(|e| e.to_string())?;
        let screen = self.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "%0"])?;
        let write = |name: String, data: &[u8]| {
            let path = fixtures.join(name);
            std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))
        };
        write(format!("{stem}.out"), &bytes)?;
        write(format!("{stem}.screen"), screen.as_bytes())
    }

    /// Waits until the shell printed the command's own end marker (the
    /// last one with the nonce) and then nothing for [`SETTLE`].
    fn wait_for_end(&self, nonce: &str, code: i32) -> Result<(), String> {
        let end = format!("\x1b]7770;{nonce};{code}\x07");
        let deadline = Instant::now() + COMMAND_LIMIT;
        while !self.output().contains(end.as_bytes()) {
            if Instant::now() >= deadline {
                return Err(format!("no end marker {end:?} within {COMMAND_LIMIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.wait_quiet(deadline)
    }

    /// Waits until the shell printed its first prompt, and then nothing.
    fn wait_for_prompt(&self) -> Result<(), String> {
        let deadline = Instant::now() + COMMAND_LIMIT;
        while !self.output().contains(b"$ ") {
            if Instant::now() >= deadline {
                return Err(format!("no prompt within {COMMAND_LIMIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.wait_quiet(deadline)
    }

    /// Waits until the pane printed nothing for [`SETTLE`].
    fn wait_quiet(&self, deadline: Instant) -> Result<(), String> {
        let mut seen = self.output().0.len();
        let mut since = Instant::now();
        while since.elapsed() < SETTLE {
            if Instant::now() >= deadline {
                return Err("the pane never went quiet".into());
            }
            std::thread::sleep(Duration::from_millis(20));
            let now = self.output().0.len();
            if now != seen {
                (seen, since) = (now, Instant::now());
            }
        }
        Ok(())
    }

    fn output(&self) -> Recorded {
        Recorded(std::fs::read(&self.out).unwrap_or_default())
    }

    fn stop(&self) {
        let socket = self.tmux(&["display-message", "-p", "#{socket_path}"]);
        let _ = self.tmux(&["kill-server"]);
        if let Ok(path) = socket {
            let _ = std::fs::remove_file(path.trim());
        }
    }
}

/// What the pane printed so far.
struct Recorded(Vec<u8>);

impl Recorded {
    /// Whether `marker` was printed.
    fn contains(&self, marker: &[u8]) -> bool {
        self.0.windows(marker.len()).any(|window| window == marker)
    }
}
