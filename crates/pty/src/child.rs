//! The child process: spawned as the leader of a new session on the PTY, and signalled
//! by process group.

use std::io;
use std::os::fd::AsFd;
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use pty_process::blocking::{Command as PtyCommand, Pty, open};
use rustix::process::{Pid, Signal, kill_process_group};
use rustix::termios::{Winsize, tcgetpgrp, tcsetwinsize};

use crate::Error;

/// A child running on a PTY of its own.
pub(crate) struct PtyChild {
    process: Child,
    /// The child's process group: it is a session leader, so its own pid.
    group: Pid,
    /// For a relay child (`tmux attach`), the process whose terminal's foreground group
    /// interrupt and terminate reach instead of the PTY's.
    signal_process: Option<Pid>,
}

/// Opens a PTY of `size` and starts `command` on it as a session leader.
pub(crate) fn spawn(command: Command, size: Winsize) -> Result<(Pty, PtyChild), Error> {
    let program = command.get_program().to_string_lossy().into_owned();
    let spawn_error = |source| Error::Spawn {
        program: program.clone(),
        source,
    };
    let (pty, pts) = open().map_err(spawn_error)?;
    tcsetwinsize(&pty, size).map_err(|e| Error::io("cannot size the pseudo-terminal")(e.into()))?;
    let process = PtyCommand::from(command).spawn(pts).map_err(spawn_error)?;
    let group = Pid::from_child(&process);
    let child = PtyChild {
        process,
        group,
        signal_process: None,
    };
    Ok((pty, child))
}

impl PtyChild {
    /// Makes interrupt and terminate reach `pid`'s terminal's foreground group.
    pub(crate) fn set_signal_process(&mut self, pid: u32) {
        self.signal_process = i32::try_from(pid).ok().and_then(Pid::from_raw);
    }

    /// The child's process id.
    pub(crate) fn id(&self) -> u32 {
        self.process.id()
    }

    /// The child's status if it has ended.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.process.try_wait()
    }

    /// SIGINT to the foreground group of the child's terminal.
    pub(crate) fn interrupt(&self, pty: &Pty) -> io::Result<()> {
        let group = self.foreground_group(pty);
        kill_process_group(group, Signal::INT).map_err(io::Error::from)
    }

    /// `signal` to every group a terminal's hang-up or a kill should reach: the target's
    /// own group and its terminal's foreground group. SIGCONT follows, so a stopped job
    /// can act on it.
    pub(crate) fn signal_all(&self, pty: &Pty, signal: Signal) -> io::Result<()> {
        let own = self.signal_process.unwrap_or(self.group);
        let foreground = self.foreground_group(pty);
        let mut result = kill_process_group(own, signal);
        if foreground != own {
            result = result.and(kill_process_group(foreground, signal));
        }
        if signal != Signal::KILL {
            let _ = kill_process_group(own, Signal::CONT);
        }
        result.map_err(io::Error::from)
    }

    /// Hangs up the child as a closing terminal would (SIGHUP to its own groups, not to a
    /// relay's target), waits up to `grace`, then kills it. Returns its status.
    pub(crate) fn hang_up(&mut self, pty: &Pty, grace: Duration) -> io::Result<ExitStatus> {
        let groups = [self.group, self.pty_foreground(pty).unwrap_or(self.group)];
        for group in groups {
            let _ = kill_process_group(group, Signal::HUP);
            let _ = kill_process_group(group, Signal::CONT);
        }
        if let Some(status) = self.wait_for(grace)? {
            return Ok(status);
        }
        let _ = kill_process_group(self.group, Signal::KILL);
        self.process.wait()
    }

    /// Waits up to `limit` for the child to end.
    pub(crate) fn wait_for(&mut self, limit: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.process.try_wait()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn foreground_group(&self, pty: &Pty) -> Pid {
        match self.signal_process {
            Some(pid) => terminal_foreground_of(pid).unwrap_or(pid),
            None => self.pty_foreground(pty).unwrap_or(self.group),
        }
    }

    /// The PTY's foreground group (Linux answers TIOCGPGRP on the master side).
    fn pty_foreground(&self, pty: &Pty) -> Option<Pid> {
        tcgetpgrp(pty.as_fd()).ok()
    }
}

/// The foreground process group of `pid`'s controlling terminal: field 8 (`tpgid`) of
/// `/proc/PID/stat`. A process may not ask a terminal that is not its own, so this is
/// the only way to learn it for a pane's process.
fn terminal_foreground_of(pid: Pid) -> Option<Pid> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let tpgid: i32 = after_name.split_whitespace().nth(5)?.parse().ok()?;
    // -1 means no controlling terminal.
    Pid::from_raw(tpgid.max(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_foreground_group_of_a_process_terminal() {
        // Our own tpgid is whatever our terminal has (or -1 without one): only check
        // that a parse succeeds or fails cleanly, then check a spawned PTY child.
        let _ = terminal_foreground_of(Pid::from_raw(std::process::id() as i32).unwrap());
        let size = Winsize {
            ws_row: 10,
            ws_col: 40,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let mut sleep = Command::new("sleep");
        sleep.arg("5");
        let (pty, mut child) = spawn(sleep, size).unwrap();
        let pid = Pid::from_raw(child.id() as i32).unwrap();
        // The child is a session leader in the foreground of its new terminal.
        assert_eq!(terminal_foreground_of(pid), Some(pid));
        assert_eq!(child.pty_foreground(&pty), Some(pid));
        let status = child.hang_up(&pty, Duration::from_secs(2)).unwrap();
        assert!(!status.success());
    }
}
