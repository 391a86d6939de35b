//! Running a command line in a pane's own shell and collecting exactly its
//! output and exit code.
//!
//! The command is typed into the shell (so `cd` and `export` persist) inside
//! a small wrapper that prints an invisible start marker before it and an
//! end marker with its exit code after it, each carrying a per-call random
//! nonce. What is typed, how the markers are found in the pane's output and
//! how the echo is hidden again is sans-IO code in `termpilot_shell`; this
//! module types, follows and decides when a command is over.
//!
//! A program can read the nonce off the screen and print an end marker, so
//! an end marker counts only once the shell itself has the terminal again:
//! its process group is the terminal's foreground group and it runs no child
//! there (see `proc::in_charge`), which no program it runs can bring about
//! while it runs. The processes are read on the pane's own host: `/proc`
//! here, or one dump of the pane's process tree taken there per look.
//! Until then the command is still running, and the newest end marker is
//! the one that counts.
//!
//! The output is read as it streams in ([`termpilot_shell::Tracker`]): where
//! it begins and its first bytes are kept, so an output larger than the
//! pane's journal still gets its exit code, its head and its tail, and says
//! how much is lost.
//!
//! On another host, a command can also end while the connection is down:
//! its end marker is lost with everything printed meanwhile, and it is
//! found ended from the screen instead (see `unseen`).
//!
//! The parts: this file types the command and keeps its table of running
//! commands; `prompt` tells whether the shell can take one; `follow` waits
//! until it is over; `report` says how it ended and what it printed;
//! `awaiting` returns early when it waits for input; `ready` remembers a
//! remote shell seen ready; `unseen` finds a command ended during an
//! outage; `proc` and `foreground` read the processes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use termpilot_control::PaneId;
use tokio::time::Instant;

use crate::cursor::Cursor;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::Input;

mod awaiting;
mod follow;
pub(crate) mod foreground;
mod proc;
mod prompt;
mod ready;
mod report;
mod unseen;
pub use awaiting::DEFAULT_INPUT_SETTLE;
// A pane's processes are read on its own host (see `Engine::procfs`).
use crate::procfs::{LookAhead, Procfs};
use termpilot_shell::{EndMarker, MarkerDoubt, Tracker, new_nonce, shown_prompt};
pub use termpilot_shell::{NotRun, Shell, hide_wrappers, wrapper};

/// How long a shell that is not (yet) at its prompt gets to get there.
const PROMPT_GRACE: Duration = Duration::from_millis(1500);

/// What a finished (or still running) command produced so far.
#[derive(Debug, Clone)]
pub struct CommandReport {
    /// Identifies the command for `wait_for_command`.
    pub id: String,
    /// The pane it runs in.
    pub pane: PaneId,
    /// How the command ended, or why the report came before its end.
    pub end: CommandEnd,
    /// The command's own output so far (terminal control sequences removed),
    /// from the line where the last report on it that awaited input ended
    /// (the caller saw the rest). A full-screen program's drawing is left
    /// out, with a line naming it; while one waits for input, this is its
    /// screen as rendered instead (see `screen`).
    pub output: String,
    /// `output` is the rendered screen of a full-screen program.
    pub screen: bool,
    /// An earlier report on the command, still running, gave its id.
    pub id_given: bool,
    /// Time since the command was typed.
    pub elapsed: Duration,
    /// The position just after the command's output (or of what was read).
    pub cursor: Cursor,
    /// The position before the command was typed.
    pub start_cursor: Cursor,
    /// Bytes of its output that `output` lacks: more than the pane's journal
    /// holds (or dropped by tmux). `output` then keeps the head and the tail,
    /// with a line between them saying how many bytes are lost.
    pub lost_bytes: u64,
}

/// How a command ended, or why its report came before its end. The command
/// is still running (and `id` picks it up with `wait_for_command`) in
/// [`CommandEnd::Running`], [`CommandEnd::AwaitingInput`] and
/// [`CommandEnd::HostLost`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandEnd {
    /// It exited with this code.
    Exited(i32),
    /// It ended without its exit code (a C-c makes the shell drop the rest
    /// of the wrapper's line): its shell is idle under its prompt again, or
    /// took the next `run_command`.
    Interrupted,
    /// The shell did not run the command line at all; `output` holds what
    /// the shell said about it.
    NotRun(NotRun),
    /// Still running when the time was up.
    Running,
    /// Still running, and waiting for input.
    AwaitingInput(crate::input_state::AwaitingInput),
    /// The connection to the pane's host dropped while the command was
    /// followed: it may still run there, and `id` picks it up once the host
    /// is reached again.
    HostLost,
    /// It ended while the connection to the pane's host was down: its shell
    /// is idle under its prompt again, but its end marker went with the
    /// output printed meanwhile, which tmux never sends. Its exit code and
    /// that output are not known.
    EndedUnseen,
}

impl CommandReport {
    /// The exit code, when the command exited and it is known.
    pub fn exit_code(&self) -> Option<i32> {
        match self.end {
            CommandEnd::Exited(code) => Some(code),
            _ => None,
        }
    }

    /// What the command waits for, when it waits for input.
    pub fn input(&self) -> Option<&crate::input_state::AwaitingInput> {
        match &self.end {
            CommandEnd::AwaitingInput(input) => Some(input),
            _ => None,
        }
    }

    /// Whether the command may still run: `id` picks it up.
    pub fn still_running(&self) -> bool {
        matches!(
            self.end,
            CommandEnd::Running | CommandEnd::AwaitingInput(_) | CommandEnd::HostLost
        )
    }
}

/// A command typed into a pane, until its completion marker is seen.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    pane: PaneId,
    nonce: String,
    cursor: u64,
    started: Instant,
    /// Its markers and the head of its output, kept up to date as the
    /// output streams in (see [`Engine::keep_tracking`]). Locked inside the
    /// pane's journal lock, never the other way round.
    tracker: Arc<Mutex<Tracker>>,
    /// The shell that took the command, and its prompt as shown before it
    /// (when known): the same shell idle in the foreground under the same
    /// prompt means the command ended without its end marker.
    shell_pid: Option<u32>,
    /// Where the shell's processes are read (known with `shell_pid`).
    procs: Option<PaneProcs>,
    /// On another host, the look at its processes asked for with the keys
    /// (see [`LookAhead`]): the first end marker's look, when it comes in
    /// time.
    look_ahead: Option<Arc<LookAhead>>,
    /// Which shell it is: one with a line editor is followed until that
    /// editor has the terminal again (see [`Engine::until_ready_for_input`]).
    shell: Shell,
    prompt: Option<String>,
    /// The command line as the agent wrote it.
    command: String,
    /// How many control clients had lost their connection to the host when
    /// the command was typed (see `Shared::outages`): one more since means
    /// its end marker may be lost.
    outages: u64,
    /// What reports on it have shown so far. A std `Mutex`: read or set
    /// while a report is made, never across an `.await`.
    shown: Arc<Mutex<ShownSoFar>>,
}

/// What the reports on a command that awaited input have shown so far.
#[derive(Debug, Clone, Default)]
struct ShownSoFar {
    /// Bytes of its output (head and tail) the last such report held: the
    /// next report starts at the line holding the next byte.
    bytes: usize,
    /// The program last found waiting for input, which names a full-screen
    /// program in its note.
    program: Option<String>,
    /// The rows of the screen the last such report showed, when it showed
    /// one: the next shows what changed.
    screen: Option<Vec<String>>,
    /// A report on the command still running was made (it gave the id).
    id_given: bool,
}

/// A pane's first process and its terminal, on the pane's own host: where
/// its shell's processes are read (`/proc` here, or a dump taken there).
#[derive(Debug, Clone)]
pub(crate) struct PaneProcs {
    pane: PaneId,
    pid: u32,
    tty: String,
}

impl Running {
    /// The pane's terminal, as its host names it (empty when unknown).
    fn tty(&self) -> &str {
        self.procs.as_ref().map_or("", |procs| procs.tty.as_str())
    }
}

/// Commands that timed out and may be picked up later, by id.
#[derive(Debug, Default)]
pub(crate) struct RunningCommands {
    by_id: HashMap<String, Running>,
    /// One turn at a time per pane: a second `run_command` typed while the
    /// first is still being followed would reach the first command's input.
    turns: HashMap<PaneId, Arc<tokio::sync::Mutex<()>>>,
    /// Remote panes whose shell was seen ready for input (see `ready`).
    ready: HashMap<PaneId, ready::Sighting>,
}

/// What a follower saw at its earlier looks.
struct EarlierLooks {
    doubt: MarkerDoubt,
    /// The journal's end when the shell, the command not started, was
    /// found waiting for keys (see [`Engine::waits_unstarted`]), and when it
    /// was first found so with that end.
    unstarted: Option<(u64, Instant)>,
    /// When the command, having lived through an outage, was last checked
    /// for having ended unseen (see [`Engine::ended_unseen`]).
    unseen: Option<Instant>,
    /// The processes as the look that found the shell in charge after its
    /// end marker read them: taken after the marker, they also tell whether
    /// its line editor has the terminal yet (see
    /// [`Engine::until_ready_for_input`]), with no look more.
    in_charge: Option<Arc<dyn Procfs>>,
}

/// How a command's following ends.
#[derive(Debug, Clone, Copy)]
enum Finish {
    /// Its end marker counts: the shell printed it and has the terminal.
    Ended(EndMarker),
    /// It ended without an end marker: cut off by the next command, or its
    /// shell is `back` at its prompt (see [`Engine::prompt_back`]).
    Interrupted { back: bool },
    /// The shell never ran it (why: see [`not_run_verdict`]); `stuck` when
    /// it does not show its prompt again (it waits for the rest of the line).
    NotRun { stuck: bool },
    /// Still running when the time was up.
    Running,
    /// The connection to the pane's host dropped; the command may still run
    /// there.
    HostLost,
    /// It ended while that connection was down: its shell is back at its
    /// prompt and its end marker was never sent (see `unseen`).
    EndedUnseen,
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
        let (shell, found) = match self.ready_sighting(pane) {
            Some(ready) => ready,
            None => {
                let found = self.shell_at_prompt(pane).await?;
                self.refuse_awaiting_input(pane).await?;
                found
            }
        };
        let (shell_pid, procs) =
            found.map_or((None, None), |(pid, procs)| (Some(pid), Some(procs)));
        // Taken before typing: the echo goes on the prompt's line.
        let prompt = match self.read_journal(pane, shown_prompt) {
            Some(prompt) => Some(prompt),
            // A prompt drawn before termpilot read the pane is on the
            // screen only.
            None => self.screen_prompt(pane).await,
        };
        let nonce = new_nonce();
        let input = Input {
            text: Some(wrapper(shell, command, &nonce)),
            keys: Vec::new(),
            enter: true,
        };
        let ahead_line = (procs.as_ref().zip(shell_pid))
            .and_then(|(procs, shell)| self.look_ahead_line(pane, shell, procs.pid, &procs.tty));
        let started = Instant::now();
        let outages = self.shared.outages();
        let (cursor, ahead) = self.send_input_then(pane, &input, ahead_line).await?;
        let cursor = cursor.offset;
        let look_ahead = (ahead.zip(procs.as_ref()))
            .map(|(replies, procs)| Arc::new(self.look_ahead(replies, procs.tty.clone())));
        let journal_max = self.shared.config.journal_bytes;
        let running = Running {
            pane,
            nonce: nonce.clone(),
            cursor,
            started,
            tracker: Arc::new(Mutex::new(Tracker::new(&nonce, cursor, journal_max))),
            shell_pid,
            procs,
            look_ahead,
            shell,
            prompt,
            command: command.to_owned(),
            outages,
            shown: Arc::default(),
        };
        self.commands(|commands| {
            // The shell was at its prompt, so an earlier command in this pane
            // that never printed its end marker is over.
            for earlier in commands.by_id.values() {
                if earlier.pane == pane {
                    lock(&earlier.tracker).cut_at(cursor);
                }
            }
            commands.by_id.insert(nonce.clone(), running.clone());
        });
        self.keep_tracking(&running);
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
                    "no running command with id '{id}'; ids come from a run_command that timed out \
                     and are forgotten once the command's result has been returned"
                ))
            })?;
        if self.shared.host_lost() {
            // The connection to the host dropped under an earlier call: the
            // command's output arrives only once a client is attached again.
            self.primary().await?;
        }
        self.follow_or_input(&running, timeout, settle).await
    }

    /// The id of the newest command `run_command` typed into `pane` that
    /// has not been reported ended yet.
    pub fn command_in(&self, pane: PaneId) -> Option<String> {
        self.commands(|commands| {
            (commands.by_id.values())
                .filter(|running| running.pane == pane)
                .max_by_key(|running| running.started)
                .map(|running| running.nonce.clone())
        })
    }

    /// Reads the command's output as it arrives, whether or not a call
    /// follows it (a command that timed out may print more than the journal
    /// holds before `wait_for_command` picks it up), until its report has
    /// been returned or its pane is gone.
    fn keep_tracking(&self, running: &Running) {
        let shared = Arc::downgrade(&self.shared);
        let tracker = Arc::downgrade(&running.tracker);
        let pane = running.pane;
        let mut journal_rx = self.subscribe(pane);
        tokio::spawn(async move {
            while journal_rx.changed().await.is_ok() {
                let (Some(shared), Some(tracker)) = (shared.upgrade(), tracker.upgrade()) else {
                    return;
                };
                shared
                    .panes
                    .with_journal(pane, |journal| lock(&tracker).advance(journal));
            }
        });
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
}

/// Locks a command's tracker. A std `Mutex`: held only to scan newly
/// arrived bytes or to copy the output out, never across an `.await`.
fn lock(tracker: &Mutex<Tracker>) -> std::sync::MutexGuard<'_, Tracker> {
    tracker.lock().unwrap_or_else(|e| e.into_inner())
}

/// Locks what a command's reports have shown. A std `Mutex`: held only to
/// read or set it.
fn lock_shown(shown: &Mutex<ShownSoFar>) -> std::sync::MutexGuard<'_, ShownSoFar> {
    shown.lock().unwrap_or_else(|e| e.into_inner())
}
