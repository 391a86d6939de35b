//! Following a typed command until it is over: its end marker counts once
//! its shell has the terminal back, it was cut off, interrupted, not run,
//! or it ended unseen while the host was out of reach.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use termpilot_shell::{EndMarker, MarkerDoubt, shown_prompt};

use super::{
    CommandReport, EarlierLooks, Finish, PROMPT_GRACE, PaneProcs, Running, Shell, foreground, lock,
    proc,
};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::Input;
use crate::procfs::Procfs;

/// How often a shell that finished a command is looked at until its line
/// editor has the terminal.
const READY_RECHECK: Duration = Duration::from_millis(5);

/// How often an end marker that does not count yet (its shell has not got
/// the terminal back) is looked at again.
const RECHECK: Duration = Duration::from_millis(50);

impl Engine {
    pub(super) async fn follow(
        &self,
        running: &Running,
        timeout: Duration,
    ) -> Result<CommandReport> {
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
    pub(super) async fn until_ready_for_input(
        &self,
        running: &Running,
        mut seen: Option<Arc<dyn Procfs>>,
    ) {
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
    pub(super) async fn shell_procfs(&self, running: &Running) -> Arc<dyn Procfs> {
        self.pane_procfs(running.procs.as_ref()).await
    }

    /// The processes of a pane as they are now (see [`PaneProcs`]).
    pub(super) async fn pane_procfs(&self, procs: Option<&PaneProcs>) -> Arc<dyn Procfs> {
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
    pub(super) async fn finish_if_over(
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
                    let ahead = match &running.look_ahead {
                        Some(ahead) => ahead.after(end.after).await,
                        None => None,
                    };
                    let fs = match ahead {
                        Some(fs) => fs,
                        None => self.shell_procfs(running).await,
                    };
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
    pub(super) async fn waits_unstarted(&self, running: &Running) -> Option<u64> {
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
    pub(super) async fn abandon_line(&self, running: &Running) {
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
    pub(super) fn advance(&self, running: &Running) -> (Option<EndMarker>, Option<u64>, bool) {
        self.read_journal(running.pane, |journal| {
            let mut tracker = lock(&running.tracker);
            tracker.advance(journal);
            (tracker.last_end(), tracker.cut(), tracker.started())
        })
    }

    /// Whether the command's shell is back: idle in the foreground (no
    /// child) under the very prompt it showed before the command. A C-c
    /// ends a command that way, with no end marker. A command busy in a
    /// builtin (`read`) is not under that prompt, and a nested shell is
    /// another process.
    pub(super) async fn prompt_back(&self, running: &Running) -> bool {
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

    /// How following ends when the pane cannot be asked about: the
    /// connection to its host dropped (the command keeps its id, for
    /// `wait_for_command` once the host is reached again), or the pane
    /// closed.
    pub(super) fn out_of_reach(&self, running: &Running) -> Result<CommandReport> {
        match self.shared.host_lost() {
            true => Ok(self.final_report(running, Finish::HostLost)),
            false => Err(self.gone(running)),
        }
    }

    pub(super) fn gone(&self, running: &Running) -> Error {
        self.commands(|commands| commands.by_id.remove(&running.nonce));
        Error::PaneClosed { pane: running.pane }
    }
}

/// Whether `shell` has the terminal, idle, and takes input the way it does
/// at its prompt: its line editor holds the terminal in raw mode, or (a
/// shell with line editing off) it sleeps in a read of the terminal, which
/// `/proc/PID/wchan` shows as `wait_woken`. Linux only; elsewhere, or when
/// the terminal's mode cannot be read, there is nothing to wait for.
pub(super) fn ready_for_input(fs: &dyn Procfs, shell: u32, tty: &str) -> bool {
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
