//! Carries out what the matcher decides: bytes go to the child, bound sequences run
//! their actions, in the order they were typed.

use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pty_process::blocking::Pty;
use rustix::io::Errno;
use rustix::process::Signal;
use termpilot_keys::MatchSink;

use crate::child::PtyChild;
use crate::events::EventWriter;
use crate::{Action, Error};

/// Called by a `detach` binding with the path of the PTY's slave device (the terminal
/// the child sees), e.g. to run `tmux detach-client -t PATH`.
pub(crate) type DetachHook = Box<dyn FnMut(&std::path::Path) -> io::Result<()> + Send>;

/// Everything an action can touch, and the bytes waiting to be written to the child.
pub(crate) struct Controls {
    pub(crate) pty: Pty,
    pub(crate) child: PtyChild,
    pub(crate) actions: Vec<Action>,
    pub(crate) events: Option<EventWriter>,
    pub(crate) detach_hook: Option<DetachHook>,
    pub(crate) terminate_grace: Duration,
    /// Input not yet accepted by the PTY (it is non-blocking, and may be full).
    pub(crate) to_child: Vec<u8>,
    /// When SIGKILL follows a `terminate`.
    pub(crate) kill_at: Option<Instant>,
    /// When a detach that the child did not complete gives up waiting for it.
    pub(crate) detach_at: Option<Instant>,
    /// The last byte passed to the child, to know whether a line is half typed at EOF.
    pub(crate) last_forwarded: Option<u8>,
    /// Actions that failed; the session goes on and reports them at the end.
    pub(crate) failures: Vec<Error>,
}

/// How long a detached child (a relay that should exit by itself) is given to go.
const DETACH_PATIENCE: Duration = Duration::from_secs(2);

impl MatchSink<usize> for Controls {
    fn forward(&mut self, bytes: &[u8]) {
        self.to_child.extend_from_slice(bytes);
        self.last_forwarded = bytes.last().copied();
    }

    fn action(&mut self, action: &usize, _sequence: &[u8]) {
        // Bytes typed before the sequence reach the child before the action acts.
        if let Err(source) = self.write_to_child() {
            self.failures.push(Error::Io {
                doing: "writing to the pseudo-terminal",
                source,
            });
        }
        if let Err(source) = self.run(*action) {
            let action = self.actions[*action].name();
            self.failures.push(Error::Action { action, source });
        }
    }
}

impl Controls {
    /// Writes as much pending input as the PTY takes without blocking.
    pub(crate) fn write_to_child(&mut self) -> io::Result<()> {
        let mut written = 0;
        while written < self.to_child.len() {
            match rustix::io::write(self.pty.as_fd(), &self.to_child[written..]) {
                Ok(n) => written += n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => break,
                // The child closed its terminal: nobody will read this input.
                Err(Errno::IO) => {
                    self.to_child.clear();
                    return Ok(());
                }
                Err(errno) => {
                    self.to_child.clear();
                    return Err(errno.into());
                }
            }
        }
        self.to_child.drain(..written);
        Ok(())
    }

    fn run(&mut self, index: usize) -> io::Result<()> {
        match &mut self.actions[index] {
            Action::Interrupt => self.child.interrupt(&self.pty),
            Action::Terminate => self.terminate(),
            Action::Event(name) => match &mut self.events {
                Some(events) => events.write_event(name),
                None => Ok(()),
            },
            Action::Detach => self.detach(),
            Action::Callback(callback) => {
                callback();
                Ok(())
            }
        }
    }

    fn terminate(&mut self) -> io::Result<()> {
        self.kill_at
            .get_or_insert(Instant::now() + self.terminate_grace);
        self.child.signal_all(&self.pty, Signal::TERM)
    }

    /// Kills the child if a `terminate` grace period has run out.
    pub(crate) fn kill_if_due(&mut self, now: Instant) {
        if self.kill_at.is_some_and(|at| now >= at) {
            self.kill_at = None;
            let _ = self.child.signal_all(&self.pty, Signal::KILL);
        }
    }

    /// Asks the child to go (through the hook) and ends the session once it has; if the
    /// hook fails, nothing changes and the child keeps the terminal.
    fn detach(&mut self) -> io::Result<()> {
        let path = self.pty_path()?;
        if let Some(hook) = &mut self.detach_hook {
            hook(&path)?;
        }
        self.detach_at
            .get_or_insert(Instant::now() + DETACH_PATIENCE);
        Ok(())
    }

    fn pty_path(&self) -> io::Result<PathBuf> {
        let name = rustix::pty::ptsname(self.pty.as_fd(), Vec::new())?;
        Ok(PathBuf::from(name.to_string_lossy().into_owned()))
    }

    /// Whether the session was asked to detach.
    pub(crate) fn detaching(&self) -> bool {
        self.detach_at.is_some()
    }

    /// The next time the loop must wake for a deadline of its own.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match (self.kill_at, self.detach_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
