//! Running a command line in a pane's own shell and collecting exactly its
//! output and exit code.
//!
//! The command is typed into the shell (so `cd` and `export` persist) inside
//! a small wrapper:
//!
//! ```text
//! { COMMAND
//! }; printf '\033]7770;NONCE;%s\007' "$?"
//! ```
//!
//! The braces and the newline let any command line through, including one
//! that ends in `&` or a `# comment`. When it finishes, the shell prints an
//! invisible OSC sequence carrying a per-call random nonce and the exit code.
//! The terminal's echo of the wrapper shows the nonce too, but only as the
//! text `\033]7770;`, never with a real ESC byte before it, so neither the echo
//! nor a program's output (which cannot know the nonce) can fake completion.
//!
//! History: in bash the wrapper removes its own history entry and adds the
//! command line alone (`history -s`). zsh gets the wrapper with a leading
//! space, which keeps it out of history when `hist_ignore_space` is set (it
//! is in most configurations); POSIX sh keeps no history.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use termpilot_control::{Command, PaneId};
use tokio::time::Instant;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::format::{Record, fields};
use crate::ops::Input;

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
}

impl Shell {
    /// Recognises a shell from tmux's `pane_current_command`.
    pub fn from_command(command: &str) -> Option<Shell> {
        match command.trim_start_matches('-') {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "sh" | "dash" | "ash" | "ksh" | "mksh" | "busybox" => Some(Shell::Posix),
            _ => None,
        }
    }
}

/// The text typed into the shell for `command` with `nonce`.
pub fn wrapper(shell: Shell, command: &str, nonce: &str) -> String {
    let marker = format!("}}; printf '\\033]7770;{nonce};%s\\007' \"$?\"");
    match shell {
        Shell::Bash => format!(
            "{{ {command}\n{marker}; case \"$(HISTTIMEFORMAT= history 1)\" in *{nonce}*) \
             history -d -1; history -s -- {quoted};; esac",
            quoted = single_quoted(command)
        ),
        Shell::Zsh => format!(" {{ {command}\n{marker}"),
        Shell::Posix => format!("{{ {command}\n{marker}"),
    }
}

/// `text` as one single-quoted shell word.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
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
}

/// A command typed into a pane, until its completion marker is seen.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    pane: PaneId,
    nonce: String,
    cursor: u64,
    started: Instant,
}

/// Commands that timed out and may be picked up later, by id.
#[derive(Debug, Default)]
pub(crate) struct RunningCommands {
    by_id: HashMap<String, Running>,
}

/// What the journal shows of a command so far.
struct Progress {
    exit_code: Option<i32>,
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
        let shell = self.shell_at_prompt(pane).await?;
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
        };
        self.shared
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_id
            .insert(nonce.clone(), running.clone());
        self.follow(&running, timeout).await
    }

    /// Waits up to `timeout` more for a command that `run_command` left
    /// running.
    pub async fn wait_for_command(&self, id: &str, timeout: Duration) -> Result<CommandReport> {
        let running = self
            .shared
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_id
            .get(id)
            .cloned()
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "no running command with id {id:?}; ids come from a run_command that timed out \
                     and are forgotten once the command's result has been returned"
                ))
            })?;
        self.follow(&running, timeout).await
    }

    async fn follow(&self, running: &Running, timeout: Duration) -> Result<CommandReport> {
        let deadline = Instant::now() + timeout;
        let mut journal_rx = self.subscribe(running.pane);
        let mut panes_rx = self.panes_changed();
        loop {
            let progress = self.read_journal(running.pane, |journal| progress(journal, running));
            if progress.exit_code.is_some() {
                self.shared
                    .running
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .by_id
                    .remove(&running.nonce);
                return Ok(report(running, progress));
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
                () = tokio::time::sleep_until(deadline) => return Ok(report(running, progress)),
            }
        }
    }

    fn gone(&self, running: &Running) -> Error {
        self.shared
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_id
            .remove(&running.nonce);
        Error::NotFound {
            kind: "pane",
            target: running.pane.to_string(),
            hint: "the pane closed while the command ran; call list_panes",
        }
    }

    /// The pane's shell, if the pane shows a shell waiting at its prompt.
    async fn shell_at_prompt(&self, pane: PaneId) -> Result<Shell> {
        let query = Command::new("display-message")
            .flag("-p")
            .opt("-t", pane.to_string())
            .arg(fields(&[
                "pane_id",
                "pane_current_command",
                "alternate_on",
                "pane_in_mode",
                "pane_dead",
            ]));
        let reply = self.command(query).await?;
        let text = reply.text();
        let record = Record::new("display-message", &text);
        if record.str(0) != pane.to_string() {
            return Err(Error::NotFound {
                kind: "pane",
                target: pane.to_string(),
                hint: "call list_panes to see the panes",
            });
        }
        let program = record.str(1);
        let refuse = |why: String| Err(Error::NotAtPrompt { pane, why });
        if record.flag(4) {
            return refuse("its program has exited".into());
        }
        if record.flag(3) {
            return refuse("it is in copy mode; send the key q (or Escape) to leave it".into());
        }
        if record.flag(2) {
            return refuse(format!("a full-screen program ({program}) is running"));
        }
        match Shell::from_command(program) {
            Some(shell) => Ok(shell),
            None => refuse(format!(
                "it is running {program:?}, not a shell at its prompt (a REPL or a running \
                 command); use send_keys and wait_for_text instead"
            )),
        }
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
    }
}

/// Reads the journal after the command was typed: output between the end of
/// the echoed wrapper and the marker, and the exit code in the marker.
fn progress(journal: &termpilot_journal::Journal, running: &Running) -> Progress {
    let read = journal.read_from(running.cursor);
    let bytes: &[u8] = &read.bytes;
    let mut marker = MARKER_PREFIX.to_vec();
    marker.extend_from_slice(running.nonce.as_bytes());
    marker.push(b';');
    let finder = memchr::memmem::Finder::new(&marker);
    let (body_end, exit_code, cursor) = match finder.find(bytes) {
        Some(at) => {
            let rest = &bytes[at + marker.len()..];
            match rest.iter().position(|&b| b == 0x07) {
                Some(bell) => {
                    let code = std::str::from_utf8(&rest[..bell])
                        .ok()
                        .and_then(|s| s.trim().parse().ok());
                    let after = running.cursor + read.lost + (at + marker.len() + bell + 1) as u64;
                    (at, code, after)
                }
                None => (at, None, journal.end()),
            }
        }
        None => (bytes.len(), None, journal.end()),
    };
    let body_start = echo_end(bytes, running.nonce.as_bytes()).min(body_end);
    let output = termpilot_journal::clean_text(&bytes[body_start..body_end]);
    Progress {
        exit_code,
        output: output.trim_end_matches('\n').to_owned(),
        cursor,
        lost: read.lost,
    }
}

/// Where the command's output starts: after the line of the echoed wrapper
/// that carries the nonce as plain text.
fn echo_end(bytes: &[u8], nonce: &[u8]) -> usize {
    let mut from = 0;
    while let Some(found) = memchr::memmem::find(&bytes[from..], nonce) {
        let at = from + found;
        let is_marker = bytes[..at].ends_with(MARKER_PREFIX);
        if !is_marker {
            return match memchr::memchr(b'\n', &bytes[at..]) {
                Some(newline) => at + newline + 1,
                None => bytes.len(),
            };
        }
        from = at + nonce.len();
    }
    bytes.len()
}

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
        assert_eq!(Shell::from_command("python3"), None);
    }

    #[test]
    fn wrapper_quotes_the_command_for_history() {
        let text = wrapper(Shell::Bash, "echo 'it''s' # note", "tpabc");
        assert!(
            text.starts_with("{ echo 'it''s' # note\n}; printf"),
            "{text}"
        );
        assert!(
            text.contains("history -s -- 'echo '\\''it'\\'''\\''s'\\'' # note'"),
            "{text}"
        );
        assert!(wrapper(Shell::Zsh, "ls", "n").starts_with(" { ls\n}"));
    }

    #[test]
    fn output_lies_between_the_echo_and_the_marker() {
        let nonce = "tp0123";
        let typed = format!("$ {{ ls\r\n> }}; printf '\\033]7770;{nonce};%s\\007' \"$?\"\r\n");
        let mut journal = termpilot_journal::Journal::new(termpilot_journal::Limits::default());
        journal.append(b"old stuff\r\n");
        let running = Running {
            pane: PaneId(1),
            nonce: nonce.into(),
            cursor: journal.end(),
            started: Instant::now(),
        };
        journal.append(typed.as_bytes());
        journal.append(b"a.txt\r\nb.txt\r\n");
        let pending = progress(&journal, &running);
        assert_eq!(pending.exit_code, None);
        assert_eq!(pending.output, "a.txt\nb.txt");
        journal.append(format!("\x1b]7770;{nonce};3\x07$ ").as_bytes());
        let done = progress(&journal, &running);
        assert_eq!(done.exit_code, Some(3));
        assert_eq!(done.output, "a.txt\nb.txt");
        assert_eq!(done.cursor, journal.end() - 2);
    }

    #[test]
    fn a_forged_marker_without_the_nonce_does_not_finish() {
        let mut journal = termpilot_journal::Journal::new(termpilot_journal::Limits::default());
        let running = Running {
            pane: PaneId(1),
            nonce: "tpreal".into(),
            cursor: 0,
            started: Instant::now(),
        };
        journal.append(b"echo\r\n\x1b]7770;tpfake;0\x07 \\033]7770;tpreal;0\\007\r\n");
        assert_eq!(progress(&journal, &running).exit_code, None);
    }
}
