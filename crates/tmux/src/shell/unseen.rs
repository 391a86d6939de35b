//! A command that ended while the connection to its host was down.
//!
//! tmux sends a control client only the output printed while it is
//! attached: a command that finishes during the outage takes its end marker
//! with it, and the journal never shows its shell's prompt again either.
//! After the reconnect, such a command is told apart from one still running
//! by the screen and the processes on the pane's host: the line under the
//! cursor is the prompt the shell showed before the command, drawn again,
//! and the shell has the terminal, idle, ready for input.
//!
//! A prompt drawn again need not be the same text: a clock or a counter in
//! it moves on, a right side (zsh's `RPROMPT`) is spaced out to the edge of
//! the screen, and a prompt wider than the pane wraps, leaving only its
//! tail on the cursor's line (see [`shows_prompt_again`]). The processes
//! decide; the screen only keeps a command that is still running from being
//! looked at through the host's processes every time.

use std::time::Duration;

use termpilot_control::{Command, PaneId};
use tokio::time::Instant;

use super::follow::ready_for_input;
use super::{Running, proc};
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
            Ok(Some(line)) if shows_prompt_again(&line, prompt) => {}
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

/// Whether the screen line `line` under the cursor shows `prompt` (the
/// prompt the shell showed before the command, as the journal had it)
/// drawn again. Both are compared in their [`prompt_shape`]; the line may
/// be the prompt, the prompt followed by a right side the journal's copy
/// lacks, or one screen row of a prompt wider than the pane (the journal
/// keeps the whole prompt, with the line editor's redrawing around it) at
/// least [`ROW_OF_PROMPT`] long.
fn shows_prompt_again(line: &str, prompt: &str) -> bool {
    let (line, prompt) = (prompt_shape(line), prompt_shape(prompt));
    if line.is_empty() || prompt.is_empty() {
        return false;
    }
    let row = prompt.len() > line.len() && line.len() >= ROW_OF_PROMPT;
    line.starts_with(&prompt) || (row && prompt.contains(&line))
}

/// How long a screen row must be to count as a row of a wrapped prompt:
/// long enough not to turn up by chance in the prompt's text.
const ROW_OF_PROMPT: usize = 8;

/// A prompt's text with what changes from one drawing to the next taken
/// out: every run of digits (a clock, a counter, an exit status) is one
/// `0`, and whitespace (the gap before a right side, which the screen pads
/// to the pane's edge) is dropped.
fn prompt_shape(text: &str) -> String {
    let mut shape = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                shape.push('0');
            }
            in_number = true;
            continue;
        }
        in_number = false;
        if !c.is_whitespace() {
            shape.push(c);
        }
    }
    shape
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_prompt_is_itself() {
        assert!(shows_prompt_again("me@box:~$", "me@box:~$"));
        assert!(!shows_prompt_again("", "me@box:~$"));
        assert!(!shows_prompt_again("finished-42", "me@box:~$"));
        assert!(!shows_prompt_again("me@box:~$", ""));
    }

    #[test]
    fn a_clock_or_a_status_moves_on() {
        assert!(shows_prompt_again("[21:07:09] me$", "[9:59:58] me$"));
        assert!(shows_prompt_again("(1) %", "(0) %"));
        assert!(!shows_prompt_again("[21:07:09] you$", "[21:07:09] me$"));
    }

    #[test]
    fn a_right_side_is_spaced_out_to_the_edge() {
        // The journal's copy as the shell drew it, and the screen's row.
        assert!(shows_prompt_again(
            "box%                     ~/src",
            "box% ~/src"
        ));
        assert!(shows_prompt_again(
            "box%                    [21:07]",
            "box%[21:06]"
        ));
        // A journal copy without the right side.
        assert!(shows_prompt_again("box%                     ~/src", "box%"));
    }

    #[test]
    fn a_wrapped_prompt_leaves_a_row_of_it_on_the_cursor_line() {
        let prompt = format!("{}-end$", "x".repeat(100));
        assert!(shows_prompt_again("xxxxxxxxxxxx-end$", &prompt));
        assert!(!shows_prompt_again("xxxxxxxxxxxx-other$", &prompt));
        // The journal's copy with readline's redrawing after it.
        assert!(shows_prompt_again(
            "xxxxxxxxxxxx-end$",
            &format!("{prompt} xxxxxxxx")
        ));
        // A short line is no row of the prompt: `$` is in most prompts.
        assert!(!shows_prompt_again("$", "me@box:~$"));
    }
}
