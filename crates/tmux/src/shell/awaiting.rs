//! Ending a wait early when the pane's program waits for input: a prompt,
//! a REPL, a pager. While the pane is quiet for the settle time, the facts
//! of its terminal (see `foreground`) are read and handed to
//! [`crate::input_state::decide`]; they are read again every
//! [`RECHECK`] while the pane stays quiet, and never while it prints.

use std::time::Duration;

use termpilot_control::PaneId;
use tokio::time::Instant;

use super::foreground::foreground;
use super::{CommandReport, Running};
use crate::engine::Engine;
use crate::error::Result;
use crate::input_state::{self, AwaitingInput, InputFacts};
use crate::wait::{Outcome, PaneFacts, TextWait, WaitReport};

/// How long a pane must print nothing before its program counts as
/// waiting for input, unless the caller says otherwise.
pub const DEFAULT_INPUT_SETTLE: Duration = Duration::from_millis(300);

/// How often a pane that stays quiet is looked at again.
const RECHECK: Duration = Duration::from_millis(200);

/// How far back the journal is read for the prompt's unfinished line.
const PROMPT_BYTES: u64 = 4096;

impl Engine {
    /// Whether the pane's program waits for input now, taking the pane as
    /// settled: what `type_secret` checks before it types.
    pub async fn awaiting_input(&self, pane: PaneId) -> Result<Option<AwaitingInput>> {
        let settled = DEFAULT_INPUT_SETTLE;
        let found = self.input_check(pane, false, settled, settled).await?;
        Ok(found.map(|(found, _)| found))
    }

    /// Refuses to type a command into a shell that is not at its prompt but
    /// in a `read` builtin (it would take the command line as its answer),
    /// e.g. after a `run_command` that returned awaiting input.
    pub(super) async fn refuse_awaiting_input(&self, pane: PaneId) -> Result<()> {
        let Some(input) = self.awaiting_input(pane).await? else {
            return Ok(());
        };
        Err(crate::Error::NotAtPrompt {
            pane,
            why: format!(
                "{} waits for input at '{}'; answer it with send_keys (or type_secret), then \
                 wait_for_command for the earlier run_command",
                input.program, input.prompt
            ),
        })
    }

    /// [`Engine::wait_for_text`], ending early with outcome `AwaitingInput`
    /// (and `input` set) when the pane's program waits for input after
    /// printing nothing for `settle`; a zero `settle` never ends it so.
    pub async fn wait_for_text_or_input(
        &self,
        pane: PaneId,
        spec: &TextWait,
        settle: Duration,
    ) -> Result<WaitReport> {
        if settle.is_zero() {
            return self.wait_for_text(pane, spec).await;
        }
        let started = Instant::now();
        let baseline = self.since_offset(pane, spec.since)?;
        let baseline = baseline.unwrap_or_else(|| self.journal_end(pane));
        tokio::select! {
            biased;
            report = self.wait_for_text(pane, spec) => report,
            found = self.input_awaited(pane, settle, || false) => {
                self.input_report(pane, found, baseline, started).await
            }
        }
    }

    /// [`Engine::wait_for_idle`], ending early as
    /// [`Engine::wait_for_text_or_input`] does.
    pub async fn wait_for_idle_or_input(
        &self,
        pane: PaneId,
        quiet: Duration,
        timeout: Duration,
        settle: Duration,
    ) -> Result<WaitReport> {
        if settle.is_zero() {
            return self.wait_for_idle(pane, quiet, timeout).await;
        }
        let started = Instant::now();
        let baseline = self.journal_end(pane);
        tokio::select! {
            biased;
            report = self.wait_for_idle(pane, quiet, timeout) => report,
            found = self.input_awaited(pane, settle, || false) => {
                self.input_report(pane, found, baseline, started).await
            }
        }
    }

    /// Follows a command as `follow` does, returning early (the command
    /// still running, `input` set) when it waits for input.
    pub(super) async fn follow_or_input(
        &self,
        running: &Running,
        timeout: Duration,
        settle: Duration,
    ) -> Result<CommandReport> {
        if settle.is_zero() {
            return self.follow(running, timeout).await;
        }
        // Between its start marker and its end marker (or the next
        // command's cut): a shell found reading then is in a `read`, not at
        // its prompt, even one whose line editor holds the terminal raw.
        let in_command = || match self.advance(running) {
            (None, None, started) => started,
            _ => false,
        };
        tokio::select! {
            biased;
            report = self.follow(running, timeout) => report,
            (found, _) = self.input_awaited(running.pane, settle, in_command) => {
                // A C-c leaves the shell reading with no end marker, as in
                // a `read`; under the prompt it showed before, it is back.
                if self.prompt_back(running).await {
                    let back = super::Finish::Interrupted { back: true };
                    return Ok(self.final_report(running, back));
                }
                // So is a shell that ended the command while the connection
                // to its host was down, where the journal shows no prompt.
                if self.lived_through_outage(running) && self.back_at_prompt_unseen(running).await {
                    return Ok(self.final_report(running, super::Finish::EndedUnseen));
                }
                let mut report = self.final_report(running, super::Finish::Running);
                self.show_screen(running, &mut report, &found).await;
                report.end = super::CommandEnd::AwaitingInput(found);
                Ok(report)
            }
        }
    }

    /// The wait's report when it ends awaiting input: with the pane's facts
    /// read for the check, not asked for again.
    async fn input_report(
        &self,
        pane: PaneId,
        (found, facts): (AwaitingInput, PaneFacts),
        baseline: u64,
        started: Instant,
    ) -> Result<WaitReport> {
        let end = self.journal_end(pane);
        let outcome = Outcome::AwaitingInput;
        let span = (baseline, end);
        let mut report = self
            .report_with(pane, outcome, None, span, 0, started, Some(facts))
            .await?;
        report.input = Some(found);
        Ok(report)
    }

    /// Resolves once the pane's program waits for input, after the pane
    /// printed nothing for `settle`; stays pending otherwise (the wait it
    /// races ends the race). `in_command` tells whether a `run_command`
    /// wrapper is running its command.
    async fn input_awaited(
        &self,
        pane: PaneId,
        settle: Duration,
        in_command: impl Fn() -> bool,
    ) -> (AwaitingInput, PaneFacts) {
        let mut journal_rx = self.subscribe(pane);
        let mut last_output = Instant::now();
        let mut check_at = last_output + settle;
        loop {
            tokio::select! {
                changed = journal_rx.changed() => {
                    if changed.is_err() {
                        return std::future::pending().await;
                    }
                    last_output = Instant::now();
                    check_at = last_output + settle;
                }
                () = tokio::time::sleep_until(check_at) => {
                    let quiet_for = last_output.elapsed();
                    let found = self.input_check(pane, in_command(), quiet_for, settle).await;
                    // Output that came during the check makes it stale.
                    if let (Ok(Some(found)), Ok(false)) = (found, journal_rx.has_changed()) {
                        return found;
                    }
                    check_at = Instant::now() + RECHECK;
                }
            }
        }
    }

    /// Reads the facts of the pane's terminal and decides; with the pane's
    /// facts as read for it.
    async fn input_check(
        &self,
        pane: PaneId,
        in_command: bool,
        quiet_for: Duration,
        settle: Duration,
    ) -> Result<Option<(AwaitingInput, PaneFacts)>> {
        // On another host every look is a round trip: the pane's facts, a
        // dump of its processes (its first process and terminal as the last
        // dump named them) and its prompt line are asked for at once.
        let guess = match self.panes_are_local() {
            true => None,
            false => self.shared.dumps.last_procs(pane),
        };
        let printed = self.journal_end(pane);
        let (reply, early) = match &guess {
            Some((pid, tty)) => {
                let (reply, fs, prompt) = tokio::join!(
                    self.pane_facts(pane),
                    self.procfs(pane, *pid, tty),
                    self.prompt_line(pane)
                );
                (reply, Some((fs, prompt)))
            }
            None => (self.pane_facts(pane).await, None),
        };
        let row = reply?;
        if !row.exists || row.dead {
            return Ok(None);
        }
        let (Some(pid), tty) = (row.pid, row.tty.as_str()) else {
            return Ok(None);
        };
        let guessed = guess.as_ref().is_some_and(|(p, t)| *p == pid && t == tty);
        let (fs, prompt) = match early {
            // tmux captures the screen before it runs the dump: output that
            // came between them (the echo of a typed line, a `read`'s
            // prompt) is not on the captured screen, which is read again.
            Some((fs, prompt)) if guessed => {
                let still = self.journal_end(pane) == printed;
                (fs, still.then_some(prompt))
            }
            // Read where the pane runs: on another host, one dump of its
            // process tree there.
            _ => (self.procfs(pane, pid, tty).await, None),
        };
        let Some(foreground) = foreground(fs.as_ref(), pid, tty) else {
            return Ok(None);
        };
        let facts = InputFacts {
            group: foreground.group,
            lone_shell: foreground.lone_shell,
            shell_in_command: in_command,
            mode: fs.tty_mode(tty),
            alternate_screen: row.alternate_screen,
            quiet_for,
            settle,
        };
        let Some(mut found) = input_state::decide(&facts) else {
            return Ok(None);
        };
        let prompt = match prompt {
            Some(prompt) => prompt,
            None => self.prompt_line(pane).await,
        };
        let redaction = self.redaction();
        found.prompt = redaction
            .redact(&super::hide_wrappers(&prompt))
            .into_owned();
        found.program = redaction.redact(&found.program).into_owned();
        Ok(Some((found, row)))
    }

    /// The last line with text on the pane's screen; with its trailing
    /// spaces (`Password: `) when the journal's unfinished line is it.
    async fn prompt_line(&self, pane: PaneId) -> String {
        let Ok(screen) = self.capture_raw(pane, crate::Scrollback::None).await else {
            return String::new();
        };
        let Some(last) = screen.lines.iter().rev().find(|l| !l.trim().is_empty()) else {
            return String::new();
        };
        let partial = self.read_journal(pane, |journal| {
            journal
                .lines(journal.end().saturating_sub(PROMPT_BYTES))
                .partial
        });
        match partial {
            Some(line) if line.trim_end() == last.trim_end() => line,
            _ => last.clone(),
        }
    }
}
