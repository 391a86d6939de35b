//! Running a command line in a pane's own shell and collecting exactly its
//! output and exit code.
//!
//! The command is typed into the shell (so `cd` and `export` persist) inside
//! a small wrapper:
//!
//! ```text
//! { printf '\033]7770;NONCE;start\007'; COMMAND
//! }; printf '\033]7770;NONCE;%s\007' "$?"
//! ```
//!
//! (bash keeps `$?` in a variable while it fixes its history, prints the end
//! marker last and unsets the variable.)
//!
//! The braces and the newline let any command line through, including one
//! that ends in `&` or a `# comment`. Right before the command runs, and
//! when it finishes, the shell prints an invisible OSC sequence carrying a
//! per-call random nonce (and at the end the exit code); the output is what
//! lies between the two, so prompts and the echoed command line never get
//! into it, even when the shell was still starting up when the line was
//! typed.
//! The terminal's echo of the wrapper shows the nonce too, but only as the
//! text `\033]7770;`, never with a real ESC byte before it, so neither the echo
//! nor a program's output (which cannot know the nonce) can fake completion.
//!
//! History: in bash the wrapper replaces its own history entry with the
//! command line alone (`history -s`). zsh gets the wrapper with a leading
//! space, which keeps it out of history when `hist_ignore_space` is set (it
//! is in most configurations); fish (whose wrapper is a `begin`/`end` block)
//! likewise, and it never keeps such lines; POSIX sh keeps no history.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;

use termpilot_control::PaneId;
use tokio::time::Instant;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::Input;

mod awaiting;
mod foreground;
mod proc;
mod wrapper;
pub use awaiting::DEFAULT_INPUT_SETTLE;
use proc::{command_string, foreground_child, foreground_leader};
pub use wrapper::{hide_wrappers, wrapper};

/// How long a shell that is not (yet) at its prompt gets to get there.
const PROMPT_GRACE: Duration = Duration::from_millis(1500);

/// Whether a pane's shell can take a command now.
enum Prompt {
    /// At its prompt; with the shell's pid when `/proc` tells it.
    Ready(Shell, Option<u32>),
    /// Not now, maybe in a moment.
    Busy(String),
    /// Not without the caller doing something.
    Never(String),
}

/// The OSC number of the completion marker.
const MARKER_PREFIX: &[u8] = b"\x1b]7770;";

/// Which shell a pane runs, for the parts of the wrapper that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// GNU bash.
    Bash,
    /// zsh.
    Zsh,
    /// A POSIX shell without history (sh, dash, ash, ksh, mksh).
    Posix,
    /// fish.
    Fish,
}

impl Shell {
    /// Recognises a shell from tmux's `pane_current_command`.
    pub fn from_command(command: &str) -> Option<Shell> {
        match command.trim_start_matches('-') {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            "sh" | "dash" | "ash" | "ksh" | "mksh" | "busybox" => Some(Shell::Posix),
            _ => None,
        }
    }
}

/// What a finished (or still running) command produced so far.
#[derive(Debug, Clone)]
pub struct CommandReport {
    /// Identifies the command for `wait_for_command`.
    pub id: String,
    /// The pane it runs in.
    pub pane: PaneId,
    /// The exit code, once finished.
    pub exit_code: Option<i32>,
    /// The command's own output so far (terminal control sequences removed).
    pub output: String,
    /// Time since the command was typed.
    pub elapsed: Duration,
    /// Journal position just after the command's output (or of what was read).
    pub cursor: u64,
    /// Journal position before the command was typed.
    pub start_cursor: u64,
    /// Bytes of its output lost to eviction.
    pub lost_bytes: u64,
    /// The command ended without its exit code (a C-c makes the shell drop
    /// the rest of the wrapper's line): its shell is idle under its prompt
    /// again, or took the next `run_command`. `exit_code` is then `None`.
    pub interrupted: bool,
    /// The command waits for input (it still runs; `id` picks it up).
    pub input: Option<crate::input_state::AwaitingInput>,
}

/// A command typed into a pane, until its completion marker is seen.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    pane: PaneId,
    nonce: String,
    cursor: u64,
    started: Instant,
    /// Where the next command typed into the pane began, once there is one:
    /// this command's output can go no further.
    cut: Option<u64>,
    /// The shell that took the command, and its prompt as shown before it
    /// (when known): the same shell idle in the foreground under the same
    /// prompt means the command ended without its end marker.
    shell_pid: Option<u32>,
    prompt: Option<String>,
}

/// Commands that timed out and may be picked up later, by id.
#[derive(Debug, Default)]
pub(crate) struct RunningCommands {
    by_id: HashMap<String, Running>,
    /// One turn at a time per pane: a second `run_command` typed while the
    /// first is still being followed would reach the first command's input.
    turns: HashMap<PaneId, Arc<tokio::sync::Mutex<()>>>,
}

/// What the journal shows of a command so far.
struct Progress {
    exit_code: Option<i32>,
    interrupted: bool,
    /// The start marker was seen: the shell began the command.
    started: bool,
    output: String,
    cursor: u64,
    lost: u64,
}

impl Engine {
    /// Types `command` into the shell in `pane` and waits up to `timeout` for
    /// it to finish. On timeout the command keeps running; the report's id
    /// picks it up with [`Engine::wait_for_command`].
    pub async fn run_command(
        &self,
        pane: PaneId,
        command: &str,
        timeout: Duration,
    ) -> Result<CommandReport> {
        self.run_command_or_input(pane, command, timeout, Duration::ZERO)
            .await
    }

    /// [`Engine::run_command`], returning early (the command still running,
    /// `input` set) when the command waits for input after printing nothing
    /// for `settle`; a zero `settle` never returns early.
    pub async fn run_command_or_input(
        &self,
        pane: PaneId,
        command: &str,
        timeout: Duration,
        settle: Duration,
    ) -> Result<CommandReport> {
        let asked = Instant::now();
        let turn = self.commands(|commands| commands.turns.entry(pane).or_default().clone());
        let Ok(_turn) = tokio::time::timeout(timeout, turn.lock()).await else {
            return Err(Error::NotAtPrompt {
                pane,
                why: "another run_command in this pane is still running its command; wait for it \
                      or use another pane"
                    .into(),
            });
        };
        let (shell, shell_pid) = self.shell_at_prompt(pane).await?;
        self.refuse_awaiting_input(pane).await?;
        // Taken before typing: the echo goes on the prompt's line.
        let prompt = self.read_journal(pane, shown_prompt);
        let nonce = nonce();
        let input = Input {
            text: Some(wrapper(shell, command, &nonce)),
            keys: Vec::new(),
            enter: true,
        };
        let started = Instant::now();
        let cursor = self.send_input(pane, &input).await?;
        let running = Running {
            pane,
            nonce: nonce.clone(),
            cursor,
            started,
            cut: None,
            shell_pid,
            prompt,
        };
        self.commands(|commands| {
            // The shell was at its prompt, so an earlier command in this pane
            // that never printed its end marker is over.
            for earlier in commands.by_id.values_mut() {
                if earlier.pane == pane && earlier.cut.is_none() {
                    earlier.cut = Some(cursor);
                }
            }
            commands.by_id.insert(nonce.clone(), running.clone());
        });
        let left = timeout.saturating_sub(asked.elapsed());
        self.follow_or_input(&running, left, settle).await
    }

    /// Waits up to `timeout` more for a command that `run_command` left
    /// running.
    pub async fn wait_for_command(&self, id: &str, timeout: Duration) -> Result<CommandReport> {
        self.wait_for_command_or_input(id, timeout, Duration::ZERO)
            .await
    }

    /// [`Engine::wait_for_command`], returning early as
    /// [`Engine::run_command_or_input`] does.
    pub async fn wait_for_command_or_input(
        &self,
        id: &str,
        timeout: Duration,
        settle: Duration,
    ) -> Result<CommandReport> {
        let running = self
            .commands(|commands| commands.by_id.get(id).cloned())
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "no running command with id {id:?}; ids come from a run_command that timed out \
                     and are forgotten once the command's result has been returned"
                ))
            })?;
        self.follow_or_input(&running, timeout, settle).await
    }

    async fn follow(&self, running: &Running, timeout: Duration) -> Result<CommandReport> {
        let deadline = Instant::now() + timeout;
        let mut journal_rx = self.subscribe(running.pane);
        let mut panes_rx = self.panes_changed();
        let mut cancels = self.shared.panes.cancels(running.pane);
        let started_at = crate::person::unix_nanos();
        loop {
            // Only the markers on each wake-up: the output is cleaned once, at the end.
            let seen = self.progress(running, false);
            let back = seen.exit_code.is_none()
                && !seen.interrupted
                && seen.started
                && self.prompt_back(running);
            if seen.exit_code.is_some() || seen.interrupted || back {
                return Ok(self.final_report(running, back));
            }
            tokio::select! {
                changed = journal_rx.changed() => {
                    if changed.is_err() {
                        return Err(self.gone(running));
                    }
                }
                _ = panes_rx.changed() => {
                    if self.sync_pane(running.pane).await.is_err() {
                        return Err(self.gone(running));
                    }
                }
                changed = cancels.changed() => {
                    if changed.is_ok() && *cancels.borrow_and_update() >= started_at {
                        return Err(Error::CancelledByUser {
                            pane: running.pane,
                            command_id: running.nonce.clone(),
                        });
                    }
                }
                () = tokio::time::sleep_until(deadline) => return Ok(self.final_report(running, false)),
            }
        }
    }

    /// What the journal shows of the command now; `with_output` also cleans
    /// its output, which only the final report needs.
    fn progress(&self, running: &Running, with_output: bool) -> Progress {
        let cut = self.commands(|commands| commands.by_id.get(&running.nonce)?.cut);
        self.read_journal(running.pane, |journal| {
            progress(journal, running, cut, with_output)
        })
    }

    /// The report as the command stands, interrupted if its shell is `back`
    /// (see [`Engine::prompt_back`]); a command that ended leaves the table.
    fn final_report(&self, running: &Running, back: bool) -> CommandReport {
        let mut progress = self.progress(running, true);
        if back && progress.exit_code.is_none() {
            progress.interrupted = true;
            if let Some(prompt) = running.prompt.as_deref()
                && let Some(output) = progress.output.trim_end().strip_suffix(prompt)
            {
                progress.output = output.trim_end_matches('\n').to_owned();
            }
        }
        if progress.exit_code.is_some() || progress.interrupted {
            self.commands(|commands| commands.by_id.remove(&running.nonce));
        }
        report(running, progress)
    }

    /// Whether the command's shell is back: idle in the foreground (no
    /// child) under the very prompt it showed before the command. A C-c
    /// ends a command that way, with no end marker. A command busy in a
    /// builtin (`read`) is not under that prompt, and a nested shell is
    /// another process.
    fn prompt_back(&self, running: &Running) -> bool {
        let (Some(shell), Some(prompt)) = (running.shell_pid, &running.prompt) else {
            return false;
        };
        let shown = self.read_journal(running.pane, shown_prompt);
        shown.as_ref() == Some(prompt) && proc::idle_in_foreground(shell)
    }

    /// Runs `f` on the table of commands left running. A std `Mutex`: `f`
    /// is a map lookup or update.
    fn commands<R>(&self, f: impl FnOnce(&mut RunningCommands) -> R) -> R {
        f(&mut self
            .shared
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner()))
    }

    fn gone(&self, running: &Running) -> Error {
        self.commands(|commands| commands.by_id.remove(&running.nonce));
        Error::NotFound {
            kind: "pane",
            target: running.pane.to_string(),
            hint: "the pane closed while the command ran; call list_panes",
        }
    }

    /// The pane's shell, if the pane shows a shell waiting at its prompt.
    async fn shell_at_prompt(&self, pane: PaneId) -> Result<(Shell, Option<u32>)> {
        // A shell that just finished a command may still be drawing its
        // prompt (a PROMPT_COMMAND, a git-aware prompt): give it a moment
        // before calling it busy.
        let deadline = Instant::now() + PROMPT_GRACE;
        loop {
            match self.prompt_state(pane).await? {
                Prompt::Ready(shell, pid) => return Ok((shell, pid)),
                Prompt::Never(why) => return Err(Error::NotAtPrompt { pane, why }),
                Prompt::Busy(why) if Instant::now() >= deadline => {
                    return Err(Error::NotAtPrompt { pane, why });
                }
                Prompt::Busy(_) => tokio::time::sleep(Duration::from_millis(25)).await,
            }
        }
    }

    async fn prompt_state(&self, pane: PaneId) -> Result<Prompt> {
        let facts = self.pane_facts(pane).await?;
        if !facts.exists {
            return Err(Error::NotFound {
                kind: "pane",
                target: pane.to_string(),
                hint: "call list_panes to see the panes",
            });
        }
        let program = facts.current_command.as_str();
        if facts.dead {
            return Ok(Prompt::Never("its program has exited".into()));
        }
        if facts.in_mode {
            let why = "it is in copy mode; send the key q (or Escape) to leave it";
            return Ok(Prompt::Never(why.into()));
        }
        if facts.alternate_screen {
            return Ok(Prompt::Never(format!(
                "a full-screen program ({program}) is running"
            )));
        }
        let leader = facts.pid.and_then(foreground_leader);
        if let Some(child) = leader.and_then(foreground_child) {
            return Ok(Prompt::Busy(format!(
                "its shell is busy running {child:?}; wait for it (wait_for_idle, or \
                 wait_for_command for an earlier run_command) or interrupt it with keys [\"C-c\"]"
            )));
        }
        if let Some(script) = leader.and_then(command_string) {
            // `sh -c 'cat'` before it has exec'd cat: tmux names it a shell,
            // but what is typed goes to the command, never to a prompt.
            return Ok(Prompt::Busy(format!(
                "its foreground process runs a command ({script:?}), not an interactive \
                 shell at its prompt; use send_keys and wait_for_text to talk to it"
            )));
        }
        Ok(match Shell::from_command(program) {
            Some(shell) => Prompt::Ready(shell, leader),
            None => Prompt::Busy(format!(
                "{program:?} is running in the foreground, not a shell at its prompt (a running \
                 command, a REPL or another program); wait for it, or use send_keys and \
                 wait_for_text to talk to it"
            )),
        })
    }
}

fn report(running: &Running, progress: Progress) -> CommandReport {
    CommandReport {
        id: running.nonce.clone(),
        pane: running.pane,
        exit_code: progress.exit_code,
        output: progress.output,
        elapsed: running.started.elapsed(),
        cursor: progress.cursor,
        start_cursor: running.cursor,
        lost_bytes: progress.lost,
        interrupted: progress.interrupted,
        input: None,
    }
}

/// Reads the journal after the command was typed: output between the start
/// and end markers, and the exit code in the end marker. Without an end
/// marker before `cut` (where the next command began), the command was
/// interrupted.
fn progress(
    journal: &termpilot_journal::Journal,
    running: &Running,
    cut: Option<u64>,
    with_output: bool,
) -> Progress {
    let clean = |body: &[u8]| {
        if with_output {
            clean_output(body)
        } else {
            String::new()
        }
    };
    let read = journal.read_from(running.cursor);
    let first = running.cursor + read.lost;
    let cut_at = cut.map(|cut| (cut.saturating_sub(first) as usize).min(read.bytes.len()));
    let bytes: &[u8] = &read.bytes[..cut_at.unwrap_or(read.bytes.len())];
    let mut marker = MARKER_PREFIX.to_vec();
    marker.extend_from_slice(running.nonce.as_bytes());
    marker.push(b';');
    let finder = memchr::memmem::Finder::new(&marker);
    let mut body_start = None;
    let mut from = 0;
    while let Some(found) = finder.find(&bytes[from..]) {
        let at = from + found;
        let payload = &bytes[at + marker.len()..];
        let Some(bell) = memchr::memchr(0x07, payload) else {
            break;
        };
        let value = &payload[..bell];
        let after = at + marker.len() + bell + 1;
        if value == b"start" {
            body_start = Some(after);
        } else if let Some(start) = body_start {
            let code = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse().ok());
            return finished(running, read.lost, clean(&bytes[start..at]), code, after);
        }
        from = after;
    }
    let body = body_start.map_or(&bytes[..0], |start| &bytes[start..]);
    Progress {
        exit_code: None,
        interrupted: cut.is_some(),
        started: body_start.is_some(),
        output: clean(body),
        cursor: cut.unwrap_or_else(|| journal.end()),
        lost: read.lost,
    }
}

fn finished(
    running: &Running,
    lost: u64,
    output: String,
    exit_code: Option<i32>,
    after: usize,
) -> Progress {
    Progress {
        exit_code: exit_code.or(Some(-1)),
        interrupted: false,
        started: true,
        output,
        cursor: running.cursor + lost + after as u64,
        lost,
    }
}

fn clean_output(body: &[u8]) -> String {
    termpilot_journal::clean_text(body)
        .trim_end_matches('\n')
        .to_owned()
}

/// The text of the journal's unfinished last line, as cleaned: a shell's
/// prompt while it waits. `None` when there is none.
fn shown_prompt(journal: &termpilot_journal::Journal) -> Option<String> {
    let view = journal.lines(journal.end().saturating_sub(PROMPT_BYTES));
    view.partial
        .map(|line| line.trim_end().to_owned())
        .filter(|line| !line.is_empty())
}

/// How far back [`shown_prompt`] reads: more than any prompt line.
const PROMPT_BYTES: u64 = 4096;

/// A random 64-bit hex nonce, from the standard library's per-process random
/// hasher keys mixed with the time.
fn nonce() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    hasher.write_u128(now.as_nanos());
    format!("tp{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_shells() {
        assert_eq!(Shell::from_command("-bash"), Some(Shell::Bash));
        assert_eq!(Shell::from_command("zsh"), Some(Shell::Zsh));
        assert_eq!(Shell::from_command("dash"), Some(Shell::Posix));
        assert_eq!(Shell::from_command("fish"), Some(Shell::Fish));
        assert_eq!(Shell::from_command("python3"), None);
    }

    #[test]
    fn output_lies_between_the_echo_and_the_marker() {
        let nonce = "tp0123";
        let typed = format!(
            "$ {{ printf '\\033]7770;{nonce};start\\007'; ls\r\n> }}; printf '\\033]7770;{nonce};%s\\007' \"$?\"\r\n"
        );
        let mut journal = termpilot_journal::Journal::new(termpilot_journal::Limits::default());
        journal.append(b"old stuff\r\n");
        let running = Running {
            pane: PaneId(1),
            nonce: nonce.into(),
            cursor: journal.end(),
            started: Instant::now(),
            cut: None,
            shell_pid: None,
            prompt: None,
        };
        journal.append(typed.as_bytes());
        journal.append(format!("\x1b]7770;{nonce};start\x07").as_bytes());
        journal.append(b"a.txt\r\nb.txt\r\n");
        let pending = progress(&journal, &running, None, true);
        assert_eq!(pending.exit_code, None);
        assert_eq!(pending.output, "a.txt\nb.txt");
        journal.append(format!("\x1b]7770;{nonce};3\x07$ ").as_bytes());
        let done = progress(&journal, &running, None, true);
        assert_eq!(done.exit_code, Some(3));
        assert_eq!(done.output, "a.txt\nb.txt");
        assert_eq!(done.cursor, journal.end() - 2);
    }

    #[test]
    fn a_command_cut_off_by_the_next_one_was_interrupted() {
        let nonce = "tp0123";
        let mut journal = termpilot_journal::Journal::new(termpilot_journal::Limits::default());
        let running = Running {
            pane: PaneId(1),
            nonce: nonce.into(),
            cursor: 0,
            started: Instant::now(),
            cut: None,
            shell_pid: None,
            prompt: None,
        };
        journal.append(format!("\x1b]7770;{nonce};start\x07partial\r\n^C\r\n$ ").as_bytes());
        let next = journal.end();
        journal.append(b"{ printf next-command-echo\r\n");
        let running_on = progress(&journal, &running, None, true);
        assert!(!running_on.interrupted);
        let cut = progress(&journal, &running, Some(next), true);
        assert!(cut.interrupted);
        assert_eq!(cut.exit_code, None);
        assert_eq!(cut.output, "partial\n^C\n$ ");
        assert_eq!(cut.cursor, next);
    }

    #[test]
    fn a_forged_marker_without_the_nonce_does_not_finish() {
        let mut journal = termpilot_journal::Journal::new(termpilot_journal::Limits::default());
        let running = Running {
            pane: PaneId(1),
            nonce: "tpreal".into(),
            cursor: 0,
            started: Instant::now(),
            cut: None,
            shell_pid: None,
            prompt: None,
        };
        journal.append(b"\x1b]7770;tpreal;start\x07echo\r\n\x1b]7770;tpfake;0\x07 \\033]7770;tpreal;0\\007\r\n");
        assert_eq!(progress(&journal, &running, None, true).exit_code, None);
    }
}
