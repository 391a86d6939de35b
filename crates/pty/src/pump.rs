//! The session loop: one thread, one `poll(2)` over the user's input, the PTY and the
//! signal wake-up, so a keystroke costs one wake-up, one read, a match and one write.

use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::io::Errno;
use rustix::termios::{LocalModes, SpecialCodeIndex, tcgetattr, tcsetwinsize};
use termpilot_journal::Journal;
use termpilot_keys::KeySequenceMatcher;

use crate::dispatch::Controls;
use crate::raw_mode::RawMode;
use crate::signals::SignalWatch;
use crate::{Error, Outcome, Terminal};

/// Input beyond this much unwritten to the child stops reading the user's input until
/// the child catches up, so a huge paste cannot grow memory without bound.
const INPUT_BACKLOG: usize = 64 * 1024;
/// How long output may pause before the child's last output counts as drained.
const DRAIN_QUIET: Duration = Duration::from_millis(50);
/// The most time spent draining output after the child ended (a background job may
/// hold the terminal open and keep writing).
const DRAIN_LIMIT: Duration = Duration::from_secs(1);
/// How often to look for the child's exit once its terminal is closed, in case SIGCHLD
/// went to someone else's `waitpid`.
const EXIT_POLL: Duration = Duration::from_millis(50);
/// How long a child hung up by a shutdown signal gets before it is killed.
const HANG_UP_GRACE: Duration = Duration::from_secs(1);

/// Owns everything a running session needs.
pub(crate) struct Pump {
    pub(crate) terminal: Terminal,
    pub(crate) matcher: KeySequenceMatcher<usize>,
    pub(crate) controls: Controls,
    pub(crate) journal: Arc<Mutex<Journal>>,
    pub(crate) signals: SignalWatch,
    pub(crate) input_open: bool,
    pub(crate) output_open: bool,
    pub(crate) buffer: Vec<u8>,
}

/// Which descriptors `poll` found ready.
#[derive(Debug, Default)]
struct Ready {
    signal: bool,
    input: bool,
    output: bool,
    child_accepts_input: bool,
}

impl Pump {
    /// Runs until the child ends, a detach completes or a shutdown signal arrives.
    pub(crate) fn run(mut self) -> Result<(Outcome, Vec<Error>), Error> {
        let _raw = RawMode::enter(self.terminal.input())
            .map_err(Error::io("cannot switch the terminal to raw mode"))?;
        self.resize();
        loop {
            if let Some(outcome) = self.step()? {
                return Ok((outcome, std::mem::take(&mut self.controls.failures)));
            }
        }
    }

    fn step(&mut self) -> Result<Option<Outcome>, Error> {
        let ready = self.wait(self.timeout())?;
        let now = Instant::now();
        if ready.signal
            && let Some(outcome) = self.on_signals()?
        {
            return Ok(Some(outcome));
        }
        if ready.input {
            self.read_input(now)?;
        }
        if ready.output {
            self.read_output()?;
        }
        self.matcher.poll(now, &mut self.controls);
        if ready.child_accepts_input || !self.controls.to_child.is_empty() {
            self.controls
                .write_to_child()
                .map_err(Error::io("cannot write to the pseudo-terminal"))?;
        }
        self.controls.kill_if_due(now);
        self.check_ends(now)
    }

    /// The next deadline of the matcher, a terminate or a detach, as a poll timeout.
    fn timeout(&self) -> Option<Duration> {
        let deadlines = [self.matcher.deadline(), self.controls.deadline()];
        let next = deadlines.into_iter().flatten().min();
        let mut timeout = next.map(|at| at.saturating_duration_since(Instant::now()));
        if !self.output_open {
            timeout = Some(timeout.map_or(EXIT_POLL, |t| t.min(EXIT_POLL)));
        }
        timeout
    }

    /// Waits for input, output, room in the PTY, a signal or the timeout. A descriptor
    /// with nothing wanted from it is left out: poll would still report its hang-up
    /// (a pipe at EOF, a PTY whose child closed it) and the loop would spin.
    fn wait(&self, timeout: Option<Duration>) -> Result<Ready, Error> {
        let timeout = timeout.map(|t| t.try_into().unwrap_or_default());
        let mut pty_events = PollFlags::empty();
        if self.output_open {
            pty_events |= PollFlags::IN;
        }
        if !self.controls.to_child.is_empty() {
            pty_events |= PollFlags::OUT;
        }
        let want_input = self.input_open && self.controls.to_child.len() < INPUT_BACKLOG;
        let mut fds = Vec::with_capacity(3);
        fds.push(PollFd::from_borrowed_fd(self.signals.fd(), PollFlags::IN));
        let input_at = want_input.then(|| {
            fds.push(PollFd::from_borrowed_fd(
                self.terminal.input(),
                PollFlags::IN,
            ));
            fds.len() - 1
        });
        let pty_at = (!pty_events.is_empty()).then(|| {
            fds.push(PollFd::from_borrowed_fd(
                self.controls.pty.as_fd(),
                pty_events,
            ));
            fds.len() - 1
        });
        match poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(errno) => return Err(Error::io("poll failed")(errno.into())),
        }
        let revents = |at: Option<usize>| at.map_or(PollFlags::empty(), |i| fds[i].revents());
        let readable = PollFlags::IN | PollFlags::HUP | PollFlags::ERR;
        Ok(Ready {
            signal: revents(Some(0)).intersects(readable),
            input: revents(input_at).intersects(readable),
            output: self.output_open && revents(pty_at).intersects(readable),
            child_accepts_input: revents(pty_at).intersects(PollFlags::OUT | PollFlags::ERR),
        })
    }

    fn on_signals(&mut self) -> Result<Option<Outcome>, Error> {
        let caught = self.signals.take();
        if caught.resize {
            self.resize();
        }
        if let Some(signal) = caught.shutdown {
            self.controls
                .child
                .hang_up(&self.controls.pty, HANG_UP_GRACE)
                .map_err(Error::io("cannot stop the child"))?;
            return Ok(Some(Outcome::Signalled(signal)));
        }
        Ok(None)
    }

    /// Gives the PTY the user's terminal size; the kernel tells the child (SIGWINCH).
    fn resize(&self) {
        // A failure leaves the old size, which the child can live with.
        let _ = tcsetwinsize(&self.controls.pty, self.terminal.size());
    }

    fn read_input(&mut self, now: Instant) -> Result<(), Error> {
        match rustix::io::read(self.terminal.input(), &mut self.buffer[..]) {
            // EIO: the user's terminal hung up; SIGHUP follows.
            Ok(0) | Err(Errno::IO) => self.end_of_input(),
            Ok(n) => {
                self.matcher
                    .feed(&self.buffer[..n], now, &mut self.controls);
                Ok(())
            }
            Err(Errno::INTR | Errno::AGAIN) => Ok(()),
            Err(errno) => Err(Error::io("cannot read the terminal")(errno.into())),
        }
    }

    /// Input ended (a pipe or file): held keys go out, and a child reading lines gets
    /// end-of-file the way a person would type it, with the terminal's EOF character.
    /// A child that put its terminal in raw mode cannot be told.
    fn end_of_input(&mut self) -> Result<(), Error> {
        self.input_open = false;
        self.matcher.flush(&mut self.controls);
        let Ok(modes) = tcgetattr(&self.controls.pty) else {
            return Ok(());
        };
        if modes.local_modes.contains(LocalModes::ICANON) {
            let eof = modes.special_codes[SpecialCodeIndex::VEOF];
            // A half-typed line needs one EOF to send it and a second to mean end.
            if !matches!(self.controls.last_forwarded, None | Some(b'\n')) {
                self.controls.to_child.push(eof);
            }
            self.controls.to_child.push(eof);
        }
        Ok(())
    }

    fn read_output(&mut self) -> Result<(), Error> {
        match rustix::io::read(&self.controls.pty, &mut self.buffer[..]) {
            // EIO: every descriptor of the child's terminal is closed.
            Ok(0) | Err(Errno::IO) => {
                self.output_open = false;
                Ok(())
            }
            Ok(n) => self.mirror(n),
            Err(Errno::INTR | Errno::AGAIN) => Ok(()),
            Err(errno) => Err(Error::io("cannot read the pseudo-terminal")(errno.into())),
        }
    }

    /// Copies the first `n` bytes of the buffer to the user's terminal and the journal.
    fn mirror(&mut self, n: usize) -> Result<(), Error> {
        let bytes = &self.buffer[..n];
        self.terminal
            .write_output(bytes)
            .map_err(Error::io("cannot write to the terminal"))?;
        self.journal
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .append(bytes);
        Ok(())
    }

    /// Ends the session if the child has ended or a detach has waited long enough.
    fn check_ends(&mut self, now: Instant) -> Result<Option<Outcome>, Error> {
        let status = self
            .controls
            .child
            .try_wait()
            .map_err(Error::io("cannot wait for the child"))?;
        if let Some(status) = status {
            self.drain_output()?;
            return Ok(Some(self.ended(status)));
        }
        if self.controls.detach_at.is_some_and(|at| now >= at) {
            return Ok(Some(Outcome::Detached));
        }
        Ok(None)
    }

    fn ended(&self, status: std::process::ExitStatus) -> Outcome {
        if self.controls.detaching() {
            Outcome::Detached
        } else {
            Outcome::Exited(status)
        }
    }

    /// Mirrors what the child wrote before it ended.
    fn drain_output(&mut self) -> Result<(), Error> {
        let limit = Instant::now() + DRAIN_LIMIT;
        while self.output_open && Instant::now() < limit {
            let mut fds = [PollFd::new(&self.controls.pty, PollFlags::IN)];
            let quiet = DRAIN_QUIET.try_into().unwrap_or_default();
            match poll(&mut fds, Some(&quiet)) {
                Ok(0) => break,
                Ok(_) | Err(Errno::INTR) => self.read_output()?,
                Err(errno) => return Err(Error::io("poll failed")(errno.into())),
            }
        }
        Ok(())
    }
}
