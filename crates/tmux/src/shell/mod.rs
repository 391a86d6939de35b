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

use std::borrow::Cow;
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
pub(crate) mod foreground;
mod proc;
mod ready;
mod unseen;
pub use awaiting::DEFAULT_INPUT_SETTLE;
use proc::{command_string, foreground_child, foreground_leader};
// A pane's processes are read on its own host (see `Engine::procfs`).
use crate::procfs::Procfs;
use termpilot_shell::{
    EndMarker, MarkerDoubt, Tracker, new_nonce, not_run_verdict, program_of, screen_rows,
    shown_prompt,
};
pub use termpilot_shell::{NotRun, Shell, hide_wrappers, wrapper};

/// How long a shell that is not (yet) at its prompt gets to get there.
const PROMPT_GRACE: Duration = Duration::from_millis(1500);

/// How long the terminal's foreground process must stay the same before a
/// process other than the pane's first is taken for its shell.
const LEADER_SETTLE: Duration = Duration::from_millis(25);

/// How often a shell that finished a command is looked at until its line
/// editor has the terminal.
const READY_RECHECK: Duration = Duration::from_millis(5);

/// How often an end marker that does not count yet (its shell has not got
/// the terminal back) is looked at again.
const RECHECK: Duration = Duration::from_millis(50);

/// Whether a pane's shell can take a command now.
enum Prompt {
    /// At its prompt; with the shell's pid when `/proc` (on the pane's
    /// host) tells it, and where that is read.
    Ready(Shell, Option<(u32, PaneProcs)>),
    /// Not now, maybe in a moment.
    Busy(String),
    /// Not without the caller doing something.
    Never(String),
}

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
        let started = Instant::now();
        let outages = self.shared.outages();
        let cursor = self.send_input(pane, &input).await?.offset;
        let journal_max = self.shared.config.journal_bytes;
        let running = Running {
            pane,
            nonce: nonce.clone(),
            cursor,
            started,
            tracker: Arc::new(Mutex::new(Tracker::new(&nonce, cursor, journal_max))),
            shell_pid,
            procs,
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

    async fn follow(&self, running: &Running, timeout: Duration) -> Result<CommandReport> {
        let deadline = Instant::now() + timeout;
        let mut journal_rx = self.subscribe(running.pane);
        let mut panes_rx = self.panes_changed();
        let mut cancels = self.shared.panes.cancels(running.pane);
        let started_at = crate::person::unix_nanos();
        let mut looks = EarlierLooks {
            doubt: MarkerDoubt::Clear,
            unstarted: None,
            unseen: None,
            in_charge: None,
        };
        loop {
            let (finish, pending) = self.finish_if_over(running, &mut looks).await;
            if let Some(finish) = finish {
                let report = self.final_report(running, finish);
                match finish {
                    Finish::Ended(_) => {
                        self.until_ready_for_input(running, looks.in_charge.take())
                            .await;
                    }
                    Finish::NotRun { stuck: true, .. } => self.abandon_line(running).await,
                    _ => {}
                }
                return Ok(report);
            }
            tokio::select! {
                changed = journal_rx.changed() => {
                    if changed.is_err() {
                        return self.out_of_reach(running);
                    }
                }
                _ = panes_rx.changed() => {
                    // With every client gone with the connection, asking
                    // about the pane would only try to connect again.
                    if self.connection_lost() || self.sync_pane(running.pane).await.is_err() {
                        return self.out_of_reach(running);
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
                // The shell taking the terminal back prints nothing: look again.
                () = tokio::time::sleep(RECHECK), if pending => {}
                () = tokio::time::sleep_until(deadline) => {
                    return Ok(self.final_report(running, Finish::Running));
                }
            }
        }
    }

    /// Waits (at most [`PROMPT_GRACE`]) until a shell with a line editor
    /// that printed its end marker is ready for the next input: it still
    /// runs its prompt's commands (`PROMPT_COMMAND`, `precmd`) and draws its
    /// prompt, and keys sent meanwhile would be echoed twice, first by the
    /// terminal and then by the line editor under the prompt. A shell
    /// without a line editor echoes nothing itself: nothing to wait for.
    /// `seen` is a reading of the processes taken after the end marker, for
    /// the first look.
    async fn until_ready_for_input(&self, running: &Running, mut seen: Option<Arc<dyn Procfs>>) {
        let Some(shell) = running.shell_pid else {
            return;
        };
        if running.shell == Shell::Posix {
            return;
        }
        let deadline = Instant::now() + PROMPT_GRACE;
        loop {
            let fs = match seen.take() {
                Some(fs) => fs,
                None => self.shell_procfs(running).await,
            };
            if ready_for_input(fs.as_ref(), shell, running.tty()) {
                // Seen, not merely unknown (no terminal mode read).
                if fs.tty_mode(running.tty()).is_some() {
                    self.saw_ready(running);
                }
                return;
            }
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(READY_RECHECK).await;
        }
    }

    /// The processes of the command's pane as they are now, read on the
    /// pane's host; nothing is known without [`PaneProcs`].
    async fn shell_procfs(&self, running: &Running) -> Arc<dyn Procfs> {
        self.pane_procfs(running.procs.as_ref()).await
    }

    /// The processes of a pane as they are now (see [`PaneProcs`]).
    async fn pane_procfs(&self, procs: Option<&PaneProcs>) -> Arc<dyn Procfs> {
        match procs {
            Some(procs) => self.procfs(procs.pane, procs.pid, &procs.tty).await,
            None => Arc::new(crate::procfs::Snapshot::default()),
        }
    }

    /// Whether the command is over and how; `pending` when an end marker
    /// was seen but does not count yet.
    ///
    /// An end marker counts only once the shell itself has the terminal
    /// again, idle: a program can read the nonce off the screen and print
    /// the marker, but while it runs, the terminal's foreground process
    /// group is its own, not the shell's. The newest marker is the one that
    /// counts, since the shell prints its own after the command is done.
    /// Once a marker has been seen while something else had the terminal,
    /// the shell must be found in charge twice: when a program that printed
    /// a marker exits, the shell takes the terminal back a moment before it
    /// prints its own marker, and the first look may fall in that moment.
    ///
    /// A command line that never started (no start marker) with its shell
    /// waiting for keys again, twice in a row with nothing printed between
    /// the looks, was not run: the shell rejected it or waits for the rest
    /// of it.
    ///
    /// After a connection to the pane's host dropped and came back, what
    /// the command printed meanwhile is lost, end marker and all: one whose
    /// shell is idle under its prompt again ended unseen, and nothing lost
    /// can tell a line not run from one that ran.
    async fn finish_if_over(
        &self,
        running: &Running,
        looks: &mut EarlierLooks,
    ) -> (Option<Finish>, bool) {
        let (end, cut, started) = self.advance(running);
        if let Some(end) = end {
            if cut.is_some() {
                // The next command found the shell at its prompt.
                return (Some(Finish::Ended(end)), false);
            }
            let in_charge = match running.shell_pid {
                Some(pid) => {
                    let fs = self.shell_procfs(running).await;
                    let in_charge = proc::in_charge(fs.as_ref(), pid);
                    looks.in_charge = in_charge.then_some(fs);
                    in_charge
                }
                None => true,
            };
            if !looks.doubt.marker_counts(in_charge) {
                return (None, true);
            }
            // Markers that arrived meanwhile are newer.
            let (end, _, _) = self.advance(running);
            return (end.map(Finish::Ended), false);
        }
        if cut.is_some() {
            return (Some(Finish::Interrupted { back: false }), false);
        }
        if self.ended_unseen(running, &mut looks.unseen).await {
            // An end marker that arrived since the look above counts.
            let (end, _, _) = self.advance(running);
            return (Some(end.map_or(Finish::EndedUnseen, Finish::Ended)), false);
        }
        if started && self.prompt_back(running).await {
            // The prompt was read after the look above: an end marker that
            // came with it counts, since the shell is back and idle.
            let (end, _, _) = self.advance(running);
            return match end {
                Some(end) => (Some(Finish::Ended(end)), false),
                None => (Some(Finish::Interrupted { back: true }), false),
            };
        }
        if !started && !self.lived_through_outage(running) {
            let Some(end) = self.waits_unstarted(running).await else {
                // The shell may go on to wait without printing anything
                // more: look again.
                looks.unstarted = None;
                return (None, running.shell_pid.is_some());
            };
            match looks.unstarted {
                Some((seen, since)) if seen == end => {
                    if since.elapsed() >= UNSTARTED_SETTLE && !self.advance(running).2 {
                        let shown = self.read_journal(running.pane, shown_prompt);
                        let stuck = shown.is_none() || shown != running.prompt;
                        return (Some(Finish::NotRun { stuck }), false);
                    }
                }
                _ => looks.unstarted = Some((end, Instant::now())),
            }
            return (None, true);
        }
        // Nothing prints when a command ended unseen: look again.
        (None, self.lived_through_outage(running))
    }

    /// The journal's end, when the command's shell has echoed the typed
    /// line, has the terminal to itself and sleeps waiting for keys: it
    /// took everything typed and did not start the command. Only for
    /// shells whose pid is known.
    async fn waits_unstarted(&self, running: &Running) -> Option<u64> {
        let shell = running.shell_pid?;
        let (end, echoed) = self.read_journal(running.pane, |journal| {
            let end = journal.end();
            (
                end,
                end > running.cursor && !journal.lines(running.cursor).lines.is_empty(),
            )
        });
        if !echoed || self.more_output_follows(running.pane, end).await {
            return None;
        }
        let fs = self.shell_procfs(running).await;
        if !proc::in_charge(fs.as_ref(), shell) {
            return None;
        }
        let facts = foreground::process(fs.as_ref(), shell, running.tty())?;
        crate::input_state::waits_for_keys(&facts).then_some(end)
    }

    /// Presses C-c in a shell that waits for the rest of an unfinished
    /// command line (the wrapper's tail went into it too), and waits (at
    /// most [`PROMPT_GRACE`]) for its prompt, so the pane takes the next
    /// command as before.
    async fn abandon_line(&self, running: &Running) {
        let interrupt = Input {
            text: None,
            keys: vec!["C-c".parse().expect("C-c names a key")],
            enter: false,
        };
        if let Err(e) = self.send_input(running.pane, &interrupt).await {
            tracing::debug!(error = %e, "cannot interrupt an unfinished command line");
            return;
        }
        let deadline = Instant::now() + PROMPT_GRACE;
        while Instant::now() < deadline {
            let shown = self.read_journal(running.pane, shown_prompt);
            if shown.is_some() && shown == running.prompt {
                return;
            }
            tokio::time::sleep(READY_RECHECK).await;
        }
    }

    /// Reads what arrived since the last look: the newest end marker, the
    /// cut, and whether the command started.
    fn advance(&self, running: &Running) -> (Option<EndMarker>, Option<u64>, bool) {
        self.read_journal(running.pane, |journal| {
            let mut tracker = lock(&running.tracker);
            tracker.advance(journal);
            (tracker.last_end(), tracker.cut(), tracker.started())
        })
    }

    /// The report as the command stands; a command that ended leaves the
    /// table.
    fn final_report(&self, running: &Running, finish: Finish) -> CommandReport {
        let (output, cursor) = self.read_journal(running.pane, |journal| {
            let tracker = lock(&running.tracker);
            let end = match finish {
                Finish::Ended(end) => end.at,
                _ => tracker.cut().unwrap_or_else(|| journal.end()),
            };
            let cursor = match finish {
                Finish::Ended(end) => end.after,
                _ => end,
            };
            (tracker.output(journal, end), cursor)
        });
        let (skip, id_given) = {
            let mut shown = lock_shown(&running.shown);
            let given = shown.id_given;
            shown.id_given |= matches!(finish, Finish::Running | Finish::HostLost);
            (shown.bytes, given)
        };
        let note = format!("[{}: full screen]", self.full_screen_name(running));
        let shown = output.shown_from(skip, &note);
        // A program may quote its source line with the wrapper in it, as
        // fish does in an error.
        let mut text = shown.text;
        if let Cow::Owned(shown) = termpilot_shell::hide_wrappers(&text) {
            text = shown;
        }
        let end = match finish {
            Finish::Ended(end) => CommandEnd::Exited(end.code),
            Finish::Interrupted { .. } => CommandEnd::Interrupted,
            Finish::Running => CommandEnd::Running,
            Finish::HostLost => CommandEnd::HostLost,
            Finish::EndedUnseen => CommandEnd::EndedUnseen,
            Finish::NotRun { .. } => {
                let (why, said) = self.read_journal(running.pane, |journal| {
                    let view = journal.lines(running.cursor);
                    not_run_verdict(&view, running.prompt.as_deref(), &running.command)
                });
                text = said;
                CommandEnd::NotRun(why)
            }
        };
        if let Finish::Interrupted { back: true } = finish
            && let Some(prompt) = running.prompt.as_deref()
            && let Some(before) = text.trim_end().strip_suffix(prompt)
        {
            text = before.trim_end_matches('\n').to_owned();
        }
        if !matches!(finish, Finish::Running | Finish::HostLost) {
            self.commands(|commands| commands.by_id.remove(&running.nonce));
        }
        CommandReport {
            id: running.nonce.clone(),
            pane: running.pane,
            end,
            output: text,
            screen: false,
            id_given,
            elapsed: running.started.elapsed(),
            cursor: self.cursor(running.pane, cursor),
            start_cursor: self.cursor(running.pane, running.cursor),
            lost_bytes: output.lost,
        }
    }

    /// Whether the command's shell is back: idle in the foreground (no
    /// child) under the very prompt it showed before the command. A C-c
    /// ends a command that way, with no end marker. A command busy in a
    /// builtin (`read`) is not under that prompt, and a nested shell is
    /// another process.
    async fn prompt_back(&self, running: &Running) -> bool {
        let (Some(shell), Some(prompt)) = (running.shell_pid, &running.prompt) else {
            return false;
        };
        let shown = self.read_journal(running.pane, shown_prompt);
        if shown.as_ref() != Some(prompt) {
            return false;
        }
        let fs = self.shell_procfs(running).await;
        proc::idle_in_foreground(fs.as_ref(), shell)
    }

    /// The last line with text on the pane's screen, trailing spaces
    /// removed: the prompt of a shell at its prompt.
    async fn screen_prompt(&self, pane: PaneId) -> Option<String> {
        let screen = self.capture_raw(pane, crate::Scrollback::None).await.ok()?;
        let last = screen
            .lines
            .iter()
            .rev()
            .find(|line| !line.trim().is_empty())?;
        Some(last.trim_end().to_owned())
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

    /// Makes `report` (on a command found waiting for input) show a
    /// full-screen program as its screen renders, not as the stream that
    /// drew it, and notes what it showed: the next report on the command
    /// starts where this one ended.
    pub(super) async fn show_screen(
        &self,
        running: &Running,
        report: &mut CommandReport,
        found: &crate::input_state::AwaitingInput,
    ) {
        let skip = lock_shown(&running.shown).bytes;
        let (held, draws) = self.read_journal(running.pane, |journal| {
            let output = lock(&running.tracker).output(journal, journal.end());
            (output.held(), output.shown_from(skip, "").draws)
        });
        let before = {
            let mut shown = lock_shown(&running.shown);
            shown.bytes = held;
            shown.program = Some(found.program.clone());
            shown.screen.take()
        };
        if !(found.alternate_screen || draws) {
            return;
        }
        if let Ok(screen) = self
            .capture_raw(running.pane, crate::Scrollback::None)
            .await
        {
            let rows = screen_rows(&screen.lines);
            report.output = match &before {
                Some(before) => termpilot_shell::changed_rows(before, &rows),
                None => rows.join("\n"),
            };
            report.screen = true;
            lock_shown(&running.shown).screen = Some(rows);
        }
    }

    /// The name a note gives a full-screen program the command ran: the
    /// last one found waiting for input, else the command line's first
    /// program that is not a shell builtin for setting things up.
    fn full_screen_name(&self, running: &Running) -> String {
        if let Some(program) = lock_shown(&running.shown).program.clone() {
            return program;
        }
        program_of(&running.command).unwrap_or_else(|| "a program".to_owned())
    }

    /// How following ends when the pane cannot be asked about: the
    /// connection to its host dropped (the command keeps its id, for
    /// `wait_for_command` once the host is reached again), or the pane
    /// closed.
    fn out_of_reach(&self, running: &Running) -> Result<CommandReport> {
        match self.shared.host_lost() {
            true => Ok(self.final_report(running, Finish::HostLost)),
            false => Err(self.gone(running)),
        }
    }

    fn gone(&self, running: &Running) -> Error {
        self.commands(|commands| commands.by_id.remove(&running.nonce));
        Error::PaneClosed { pane: running.pane }
    }

    /// The pane's shell, if the pane shows a shell waiting at its prompt.
    async fn shell_at_prompt(&self, pane: PaneId) -> Result<(Shell, Option<(u32, PaneProcs)>)> {
        // A shell that just finished a command may still be drawing its
        // prompt (a PROMPT_COMMAND, a git-aware prompt): give it a moment
        // before calling it busy.
        let deadline = Instant::now() + PROMPT_GRACE;
        loop {
            match self.prompt_state(pane).await? {
                Prompt::Ready(shell, found) => return Ok((shell, found)),
                Prompt::Never(why) => return Err(Error::NotAtPrompt { pane, why }),
                Prompt::Busy(why) if Instant::now() >= deadline => {
                    return Err(Error::NotAtPrompt { pane, why });
                }
                Prompt::Busy(_) => tokio::time::sleep(Duration::from_millis(25)).await,
            }
        }
    }

    async fn prompt_state(&self, pane: PaneId) -> Result<Prompt> {
        let (facts, early) = self.facts_and_procs(pane).await;
        let facts = facts?;
        if !facts.exists {
            return Err(Error::pane_not_found(pane.to_string()));
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
        let procs = facts.pid.map(|pid| PaneProcs {
            pane,
            pid,
            tty: facts.tty.clone(),
        });
        // Read where the pane runs: `/proc` here, or one dump on its host.
        let fs = match early {
            Some(fs) => fs,
            None => self.pane_procfs(procs.as_ref()).await,
        };
        let fs = fs.as_ref();
        let leader = facts.pid.and_then(|pid| foreground_leader(fs, pid));
        let readable = facts.pid.is_some_and(|pid| fs.file(pid, "stat").is_some());
        if readable && leader.is_none() {
            // A pane just created: its shell has not taken its terminal yet
            // (or the pane's process is going away). Its end markers could
            // not be checked, so it is not at its prompt yet. (Where `/proc`
            // hides the pane's processes, nothing can be checked, ever.)
            return Ok(Prompt::Busy(
                "its shell is starting and has not taken the terminal yet".into(),
            ));
        }
        if leader.is_some() && leader != facts.pid {
            // A nested shell, or a child the shell just forked (for a
            // PROMPT_COMMAND) that has not exec'd its program yet and still
            // goes by the shell's name. Only the nested shell is still there
            // a moment later.
            tokio::time::sleep(LEADER_SETTLE).await;
            let again = self.pane_procfs(procs.as_ref()).await;
            if facts
                .pid
                .and_then(|pid| foreground_leader(again.as_ref(), pid))
                != leader
            {
                return Ok(Prompt::Busy(
                    "its shell is running its prompt's commands".into(),
                ));
            }
        }
        if let Some(name) = leader.and_then(|pid| proc::not_a_shell(fs, pid)) {
            // tmux's name for the foreground program can lag behind: a
            // prompt's own command (PROMPT_COMMAND) may hold the terminal. The
            // shell's pid must be right, since its end markers count only
            // once it has the terminal back.
            return Ok(Prompt::Busy(format!(
                "'{name}' is running in the foreground, not a shell at its prompt; wait for it, \
                 or use send_keys and wait_for_text to talk to it"
            )));
        }
        if let Some(child) = leader.and_then(|pid| foreground_child(fs, pid)) {
            return Ok(Prompt::Busy(format!(
                "its shell is busy running '{child}'; wait for it (wait_for_idle, or \
                 wait_for_command for an earlier run_command) or interrupt it with keys [\"C-c\"]"
            )));
        }
        if let Some(script) = leader.and_then(|pid| command_string(fs, pid)) {
            // `sh -c 'cat'` before it has exec'd cat: tmux names it a shell,
            // but what is typed goes to the command, never to a prompt.
            return Ok(Prompt::Busy(format!(
                "its foreground process runs a command ('{script}'), not an interactive \
                 shell at its prompt; use send_keys and wait_for_text to talk to it"
            )));
        }
        Ok(match Shell::from_command(program) {
            Some(shell) => Prompt::Ready(shell, leader.zip(procs)),
            None => Prompt::Busy(format!(
                "'{program}' is running in the foreground, not a shell at its prompt (a running \
                 command, a REPL or another program); wait for it, or use send_keys and \
                 wait_for_text to talk to it"
            )),
        })
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

/// Whether `shell` has the terminal, idle, and takes input the way it does
/// at its prompt: its line editor holds the terminal in raw mode, or (a
/// shell with line editing off) it sleeps in a read of the terminal, which
/// `/proc/PID/wchan` shows as `wait_woken`. Linux only; elsewhere, or when
/// the terminal's mode cannot be read, there is nothing to wait for.
fn ready_for_input(fs: &dyn Procfs, shell: u32, tty: &str) -> bool {
    let Some(mode) = fs.tty_mode(tty) else {
        return true;
    };
    let reads_terminal = || {
        fs.text(shell, "wchan")
            .is_some_and(|wchan| wchan == "wait_woken" || wchan.starts_with("n_tty_read"))
    };
    proc::in_charge(fs, shell) && (!mode.canonical || reads_terminal())
}

/// How long a shell that did not start a command must wait for keys, with
/// nothing printed, before the command line counts as not run.
const UNSTARTED_SETTLE: Duration = Duration::from_millis(100);
