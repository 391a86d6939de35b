//! Setting up a session ([`SessionBuilder`]), running it ([`Session`]) and how it ended
//! ([`Report`], [`Outcome`]).

use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use termpilot_journal::{Journal, Limits};
use termpilot_keys::{DEFAULT_ESCAPE_TIMEOUT, Key, KeySequenceMatcher};

use crate::child;
use crate::dispatch::{Controls, DetachHook};
use crate::events::EventWriter;
use crate::pump::Pump;
use crate::signals::SignalWatch;
use crate::{Action, Error, Terminal};

/// How long `terminate` waits after SIGTERM before SIGKILL, unless configured.
pub const DEFAULT_TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// The largest read from either side at once.
const BUFFER_SIZE: usize = 64 * 1024;

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The child ended with this status.
    Exited(ExitStatus),
    /// A `detach` binding ended the session and left the child to go on elsewhere.
    Detached,
    /// This process got the shutdown signal (SIGTERM, SIGHUP, SIGINT or SIGQUIT); the
    /// child was hung up as a closing terminal would, and killed if it did not go.
    Signalled(i32),
}

impl Outcome {
    /// The exit code a shell would report: the child's code, 128 + signal for a child
    /// killed by one or a shutdown signal, 0 after a detach.
    pub fn exit_code(&self) -> u8 {
        let code = match self {
            Outcome::Exited(status) => match (status.code(), status.signal()) {
                (Some(code), _) => code,
                (None, Some(signal)) => 128 + signal,
                (None, None) => 1,
            },
            Outcome::Detached => 0,
            Outcome::Signalled(signal) => 128 + signal,
        };
        u8::try_from(code & 0xff).unwrap_or(1)
    }
}

/// What [`Session::run`] returns.
#[derive(Debug)]
pub struct Report {
    /// How the session ended.
    pub outcome: Outcome,
    /// Actions that failed along the way (the session went on regardless), e.g. an
    /// `event:` whose reader went away.
    pub action_failures: Vec<Error>,
}

/// Collects a session's command, bindings and options. Made by [`Session::builder`].
pub struct SessionBuilder {
    command: Command,
    bindings: Vec<(Vec<Key>, Action)>,
    escape_timeout: Duration,
    terminate_grace: Duration,
    events: Option<Box<dyn Write + Send>>,
    detach_hook: Option<DetachHook>,
    signal_process: Option<u32>,
    journal: Option<Arc<Mutex<Journal>>>,
    terminal: Option<Terminal>,
    shutdown_signals: bool,
}

/// A child running on a PTY behind the user's terminal, ready to [`run`](Session::run).
pub struct Session {
    pump: Pump,
}

impl Session {
    /// Starts describing a session that runs `command` (its arguments, environment and
    /// working directory are kept; its standard streams become the PTY).
    pub fn builder(command: Command) -> SessionBuilder {
        SessionBuilder {
            command,
            bindings: Vec::new(),
            escape_timeout: DEFAULT_ESCAPE_TIMEOUT,
            terminate_grace: DEFAULT_TERMINATE_GRACE,
            events: None,
            detach_hook: None,
            signal_process: None,
            journal: None,
            terminal: None,
            shutdown_signals: true,
        }
    }

    /// The child's process id.
    pub fn child_id(&self) -> u32 {
        self.pump.controls.child.id()
    }

    /// The journal the child's output is appended to.
    pub fn journal(&self) -> Arc<Mutex<Journal>> {
        self.pump.journal.clone()
    }

    /// Puts the user's terminal in raw mode (if it is a terminal) and passes bytes both
    /// ways until the child ends, a detach completes or a shutdown signal arrives. The
    /// terminal's modes are restored before this returns, whatever happened.
    pub fn run(self) -> Result<Report, Error> {
        let (outcome, action_failures) = self.pump.run()?;
        Ok(Report {
            outcome,
            action_failures,
        })
    }
}

impl SessionBuilder {
    /// Binds a key sequence (from [`termpilot_keys::parse_sequence`]) to an action.
    pub fn bind(mut self, keys: Vec<Key>, action: Action) -> Self {
        self.bindings.push((keys, action));
        self
    }

    /// How long a prefix of a longer binding (a lone Escape before Alt+key) is held;
    /// [`DEFAULT_ESCAPE_TIMEOUT`] unless set.
    pub fn escape_timeout(mut self, timeout: Duration) -> Self {
        self.escape_timeout = timeout;
        self
    }

    /// How long `terminate` waits between SIGTERM and SIGKILL.
    pub fn terminate_grace(mut self, grace: Duration) -> Self {
        self.terminate_grace = grace;
        self
    }

    /// Where `event:` bindings write their JSON lines (flushed after each).
    pub fn events(mut self, out: impl Write + Send + 'static) -> Self {
        self.events = Some(Box::new(out));
        self
    }

    /// What a `detach` binding does to make the child let go of the PTY: called with
    /// the path of the PTY's slave device. The session then ends when the child exits
    /// (or after two seconds, hanging the PTY up) and reports [`Outcome::Detached`].
    ///
    /// Only a relay child can usefully detach: a PTY cannot be handed to another
    /// process, so a program must already run elsewhere (say in a tmux pane, with
    /// `tmux attach` as the child, detached by `tmux detach-client -t PATH`).
    pub fn detach_hook(
        mut self,
        hook: impl FnMut(&Path) -> io::Result<()> + Send + 'static,
    ) -> Self {
        self.detach_hook = Some(Box::new(hook));
        self
    }

    /// Makes `interrupt` and `terminate` signal the foreground process group of `pid`'s
    /// terminal instead of the PTY's: for a relay child, `pid` is the real program
    /// (e.g. a tmux pane's process). Linux only (it reads `/proc/PID/stat`).
    pub fn signal_process(mut self, pid: u32) -> Self {
        self.signal_process = Some(pid);
        self
    }

    /// The journal to append output to; a new one with default limits unless set.
    pub fn journal(mut self, journal: Arc<Mutex<Journal>>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The user's side; standard input and output unless set.
    pub fn terminal(mut self, terminal: Terminal) -> Self {
        self.terminal = Some(terminal);
        self
    }

    /// Whether the session handles SIGTERM, SIGHUP, SIGINT and SIGQUIT (default: yes)
    /// by hanging up the child, restoring the terminal and returning
    /// [`Outcome::Signalled`]. Once a session has handled them, they keep their default
    /// effect (ending the process) only while no session runs, through a standing
    /// signal-hook action: an application with its own handlers for these signals
    /// should turn this off and stop the session itself.
    pub fn shutdown_signals(mut self, handle: bool) -> Self {
        self.shutdown_signals = handle;
        self
    }

    /// Starts the child on a new PTY of the terminal's size.
    pub fn spawn(mut self) -> Result<Session, Error> {
        let (actions, matcher) = self.matcher()?;
        let terminal = match self.terminal {
            Some(terminal) => terminal,
            None => Terminal::stdio().map_err(Error::io("cannot use standard input/output"))?,
        };
        let signals = SignalWatch::install(self.shutdown_signals)
            .map_err(Error::io("cannot install signal handlers"))?;
        let (pty, mut child) = child::spawn(self.command, terminal.size())?;
        if let Some(pid) = self.signal_process {
            child.set_signal_process(pid);
        }
        rustix::io::ioctl_fionbio(pty.as_fd(), true)
            .map_err(|e| Error::io("cannot make the pseudo-terminal non-blocking")(e.into()))?;
        let controls = Controls {
            pty,
            child,
            actions,
            events: self.events.map(EventWriter::new),
            detach_hook: self.detach_hook,
            terminate_grace: self.terminate_grace,
            to_child: Vec::new(),
            kill_at: None,
            detach_at: None,
            last_forwarded: None,
            failures: Vec::new(),
        };
        let journal = self
            .journal
            .unwrap_or_else(|| Arc::new(Mutex::new(Journal::new(Limits::default()))));
        let pump = Pump {
            terminal,
            matcher,
            controls,
            journal,
            signals,
            input_open: true,
            output_open: true,
            buffer: vec![0; BUFFER_SIZE],
        };
        Ok(Session { pump })
    }

    /// Spawns and runs the session: [`spawn`](Self::spawn) then [`Session::run`].
    pub fn run(self) -> Result<Report, Error> {
        self.spawn()?.run()
    }

    /// Checks the bindings against the options and builds the matcher; the matcher's
    /// actions are indices into the returned list.
    fn matcher(&mut self) -> Result<(Vec<Action>, KeySequenceMatcher<usize>), Error> {
        let mut actions = Vec::with_capacity(self.bindings.len());
        let mut sequences = Vec::with_capacity(self.bindings.len());
        for (index, (keys, action)) in self.bindings.drain(..).enumerate() {
            match &action {
                Action::Event(name) if self.events.is_none() => {
                    return Err(Error::EventsWithoutWriter { name: name.clone() });
                }
                Action::Detach if self.detach_hook.is_none() => {
                    return Err(Error::DetachWithoutHook);
                }
                _ => {}
            }
            sequences.push((keys, index));
            actions.push(action);
        }
        let matcher = KeySequenceMatcher::from_key_bindings(sequences, self.escape_timeout)?;
        Ok((actions, matcher))
    }
}

#[cfg(test)]
mod tests {
    use termpilot_keys::parse_sequence;

    use super::*;

    fn status(raw: i32) -> ExitStatus {
        ExitStatus::from_raw(raw)
    }

    #[test]
    fn exit_codes_follow_the_shell_convention() {
        assert_eq!(Outcome::Exited(status(3 << 8)).exit_code(), 3);
        assert_eq!(Outcome::Exited(status(15)).exit_code(), 143);
        assert_eq!(Outcome::Detached.exit_code(), 0);
        assert_eq!(Outcome::Signalled(1).exit_code(), 129);
    }

    #[test]
    fn event_and_detach_bindings_need_their_targets() {
        let keys = || parse_sequence("C-c").unwrap();
        let event = Session::builder(Command::new("true"))
            .bind(keys(), Action::Event("x".into()))
            .spawn();
        assert!(matches!(event, Err(Error::EventsWithoutWriter { .. })));
        let detach = Session::builder(Command::new("true"))
            .bind(keys(), Action::Detach)
            .spawn();
        assert!(matches!(detach, Err(Error::DetachWithoutHook)));
    }

    #[test]
    fn duplicate_bindings_are_rejected() {
        let spawned = Session::builder(Command::new("true"))
            .bind(parse_sequence("C-c").unwrap(), Action::Interrupt)
            .bind(parse_sequence("C-c").unwrap(), Action::Terminate)
            .spawn();
        assert!(matches!(spawned, Err(Error::Bindings(_))));
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let spawned = Session::builder(Command::new("/nonexistent/termpilot-test")).spawn();
        let error = spawned.err().expect("spawn must fail");
        assert!(
            error.to_string().contains("/nonexistent/termpilot-test"),
            "{error}"
        );
    }

    #[test]
    fn output_goes_to_the_terminal_and_the_journal() {
        use std::io::Read;
        use std::os::unix::net::UnixStream;

        let (input, user_keys) = UnixStream::pair().unwrap();
        let (output, mut user_screen) = UnixStream::pair().unwrap();
        drop(user_keys); // no input: end of input at once
        let mut printf = Command::new("printf");
        printf.arg("hello");
        let session = Session::builder(printf)
            .terminal(Terminal::from_fds(input.into(), output.into()))
            .shutdown_signals(false)
            .spawn()
            .unwrap();
        let journal = session.journal();
        let report = session.run().unwrap();
        assert_eq!(report.outcome.exit_code(), 0);
        assert!(report.action_failures.is_empty());
        let journal = journal.lock().unwrap();
        assert_eq!(&journal.read_from(0).bytes[..], b"hello");
        user_screen.set_nonblocking(true).unwrap();
        let mut shown = [0; 16];
        let n = user_screen.read(&mut shown).unwrap();
        assert_eq!(&shown[..n], b"hello");
    }

    #[test]
    fn sessions_can_move_to_another_thread() {
        fn assert_send<T: Send>() {}
        assert_send::<Session>();
        assert_send::<SessionBuilder>();
    }
}
