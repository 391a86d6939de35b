//! A command that ended while the connection to its host was down.
//!
//! tmux sends a control client only the output printed while it is
//! attached: a command that finishes during the outage takes its end marker
//! with it, and the journal never shows its shell's prompt again either.
//! After the reconnect, such a command is told apart from one still running
//! by the screen and the processes on the pane's host: the line under the
//! cursor is the very prompt the shell showed before the command, and the
//! shell has the terminal, idle, ready for input.

use std::time::Duration;

use termpilot_control::{Command, PaneId};
use tokio::time::Instant;

use super::{Running, proc, ready_for_input};
use crate::engine::Engine;
use crate::error::Result;
use crate::format::{lines, tmux_format};

/// How often a command that lived through an outage is looked at again:
/// each look asks tmux for the screen's cursor line (and, when that shows
/// the prompt, reads the host's processes), so not at every byte of a
/// flood.
const UNSEEN_RECHECK: Duration = Duration::from_millis(250);

tmux_format! {
    /// Where the pane's cursor is, and whether it is on the normal screen.
    struct CursorRow {
        y: u32 = "cursor_y",
        alternate_screen: bool = "alternate_on",
        in_mode: bool = "pane_in_mode",
    }
}

impl Engine {
    /// Whether a control client lost its connection to the host since the
    /// command was typed, and the engine is connected again: the command's
    /// end marker may have been printed while nothing read the pane.
    pub(super) fn lived_through_outage(&self, running: &Running) -> bool {
        self.shared.outages() != running.outages && !self.connection_lost()
    }

    /// Whether the command ended unseen (see the module docs), looked at
    /// no more often than [`UNSEEN_RECHECK`]: `last` is when it was last
    /// looked at.
    pub(super) async fn ended_unseen(&self, running: &Running, last: &mut Option<Instant>) -> bool {
        if !self.lived_through_outage(running)
            || last.is_some_and(|at| at.elapsed() < UNSEEN_RECHECK)
        {
            return false;
        }
        *last = Some(Instant::now());
        self.back_at_prompt_unseen(running).await
    }

    /// Whether the command's shell is idle under the prompt it showed
    /// before the command, as the screen and the host's processes show it
    /// now. The screen is asked first: it is one tmux command, and a
    /// command still running rarely leaves the cursor on that prompt.
    pub(super) async fn back_at_prompt_unseen(&self, running: &Running) -> bool {
        let (Some(shell), Some(prompt)) = (running.shell_pid, &running.prompt) else {
            return false;
        };
        match self.cursor_line(running.pane).await {
            Ok(Some(line)) if line == *prompt => {}
            Ok(_) => return false,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the cursor line");
                return false;
            }
        }
        let fs = self.shell_procfs(running).await;
        proc::in_charge(fs.as_ref(), shell) && ready_for_input(fs.as_ref(), shell, running.tty())
    }

    /// The text of the screen line the pane's cursor is on, trailing
    /// spaces removed; `None` while the pane shows another screen (a
    /// full-screen program, copy mode).
    async fn cursor_line(&self, pane: PaneId) -> Result<Option<String>> {
        let target = pane.to_string();
        let at = Command::new("display-message")
            .flag("-p")
            .opt("-t", &target)
            .arg(CursorRow::FORMAT);
        let at = CursorRow::parse_first("display-message", &self.command(at).await?)?;
        if at.alternate_screen || at.in_mode {
            return Ok(None);
        }
        let row = at.y.to_string();
        let capture = Command::new("capture-pane")
            .flag("-p")
            .opt("-t", &target)
            .opt("-S", &row)
            .opt("-E", &row);
        let captured = self.command(capture).await?;
        let line = lines(&captured).next().unwrap_or_default();
        Ok(Some(line.trim_end().to_owned()))
    }
}
