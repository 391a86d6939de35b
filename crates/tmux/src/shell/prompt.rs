//! Whether a pane's shell is at its prompt and can take a command: read
//! from tmux's facts about the pane and the processes on its host.

use std::time::Duration;

use termpilot_control::PaneId;
use tokio::time::Instant;

use super::proc::{command_string, foreground_child, foreground_leader};
use super::{PROMPT_GRACE, PaneProcs, Shell, proc};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// How long the terminal's foreground process must stay the same before a
/// process other than the pane's first is taken for its shell.
const LEADER_SETTLE: Duration = Duration::from_millis(25);

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

impl Engine {
    /// The pane's shell, if the pane shows a shell waiting at its prompt.
    pub(super) async fn shell_at_prompt(
        &self,
        pane: PaneId,
    ) -> Result<(Shell, Option<(u32, PaneProcs)>)> {
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
        // Which shell it is comes from the same reading that found it at its
        // prompt: tmux names a process by its first argument, read a moment
        // earlier (`sh` for a `sh -c 'fish'` that has just become fish, or
        // for a shell started as `exec -a sh fish`).
        // A leader `/proc` names is a shell here (`not_a_shell` above).
        let shell = leader.and_then(|pid| proc::shell_kind(fs, pid));
        Ok(match shell.or_else(|| Shell::from_command(program)) {
            Some(shell) => Prompt::Ready(shell, leader.zip(procs)),
            None => Prompt::Busy(format!(
                "'{program}' is running in the foreground, not a shell at its prompt (a running \
                 command, a REPL or another program); wait for it, or use send_keys and \
                 wait_for_text to talk to it"
            )),
        })
    }
}
