//! What a followed command's report says: its output as the tracker kept
//! it, how it ended, and a full-screen program shown as its screen.

use termpilot_control::PaneId;

use std::borrow::Cow;

use termpilot_shell::{not_run_verdict, program_of, screen_rows};

use super::{CommandEnd, CommandReport, Finish, Running, lock, lock_shown};
use crate::engine::Engine;

impl Engine {
    /// The report as the command stands; a command that ended leaves the
    /// table.
    pub(super) fn final_report(&self, running: &Running, finish: Finish) -> CommandReport {
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

    /// The last line with text on the pane's screen, trailing spaces
    /// removed: the prompt of a shell at its prompt.
    pub(super) async fn screen_prompt(&self, pane: PaneId) -> Option<String> {
        let screen = self.capture_raw(pane, crate::Scrollback::None).await.ok()?;
        let last = screen
            .lines
            .iter()
            .rev()
            .find(|line| !line.trim().is_empty())?;
        Some(last.trim_end().to_owned())
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
    pub(super) fn full_screen_name(&self, running: &Running) -> String {
        if let Some(program) = lock_shown(&running.shown).program.clone() {
            return program;
        }
        program_of(&running.command).unwrap_or_else(|| "a program".to_owned())
    }
}
