//! Signals the session reacts to, turned into wake-ups of its `poll` loop.
//!
//! Each watched signal sets its own flag and then writes a byte to a socket pair (the
//! self-pipe trick): the loop polls the read end, so a signal that arrives just before
//! `poll` still wakes it, and the flags say which signals came.

use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::SigId;
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
use signal_hook::low_level::{pipe, unregister};

/// Signals that end the session: the user's terminal went away or someone asked
/// termpilot to stop.
const SHUTDOWN: [i32; 4] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT];

/// What arrived since the last [`SignalWatch::take`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Caught {
    /// The user's terminal changed size.
    pub(crate) resize: bool,
    /// Some child changed state (maybe ours).
    pub(crate) child: bool,
    /// A shutdown signal, the first one if several came.
    pub(crate) shutdown: Option<i32>,
}

/// Watches SIGWINCH, SIGCHLD and (optionally) the shutdown signals while alive.
pub(crate) struct SignalWatch {
    wake: UnixStream,
    resize: Arc<AtomicBool>,
    child: Arc<AtomicBool>,
    shutdown: Vec<(i32, Arc<AtomicBool>)>,
    ids: Vec<SigId>,
    /// Whether this watch counts as an active session for the shutdown default.
    counts: bool,
}

impl SignalWatch {
    /// Installs the handlers. Install before spawning, so an early SIGCHLD is not lost.
    pub(crate) fn install(shutdown_signals: bool) -> io::Result<SignalWatch> {
        let (wake, wake_writer) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        wake_writer.set_nonblocking(true)?;
        let mut watch = SignalWatch {
            wake,
            resize: Arc::default(),
            child: Arc::default(),
            shutdown: Vec::new(),
            ids: Vec::new(),
            counts: shutdown_signals,
        };
        watch.watch(SIGWINCH, watch.resize.clone(), &wake_writer)?;
        watch.watch(SIGCHLD, watch.child.clone(), &wake_writer)?;
        if shutdown_signals {
            enter_session()?;
            for signal in SHUTDOWN {
                let flag = Arc::new(AtomicBool::new(false));
                watch.shutdown.push((signal, flag.clone()));
                watch.watch(signal, flag, &wake_writer)?;
            }
        }
        Ok(watch)
    }

    /// The descriptor to poll for readability.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// Clears the wake-up bytes and returns which signals came.
    pub(crate) fn take(&self) -> Caught {
        let mut sink = [0u8; 64];
        while matches!((&self.wake).read(&mut sink), Ok(n) if n > 0) {}
        Caught {
            resize: self.resize.swap(false, Ordering::SeqCst),
            child: self.child.swap(false, Ordering::SeqCst),
            shutdown: self
                .shutdown
                .iter()
                .find(|(_, flag)| flag.swap(false, Ordering::SeqCst))
                .map(|(signal, _)| *signal),
        }
    }

    fn watch(
        &mut self,
        signal: i32,
        flag: Arc<AtomicBool>,
        wake_writer: &UnixStream,
    ) -> io::Result<()> {
        // The flag first: actions run in registration order, so it is set by the time
        // the wake-up byte can be read.
        self.ids.push(signal_hook::flag::register(signal, flag)?);
        self.ids
            .push(pipe::register(signal, wake_writer.try_clone()?)?);
        Ok(())
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            unregister(id);
        }
        if self.counts {
            leave_session();
        }
    }
}

/// Sessions currently handling the shutdown signals.
static ACTIVE_SESSIONS: AtomicUsize = AtomicUsize::new(0);

/// True while no session handles the shutdown signals. signal-hook cannot uninstall its
/// handler, so once a session has caught SIGTERM a standing action gives these signals
/// back their default effect (ending the process) whenever no session is running.
fn idle_flag() -> &'static Arc<AtomicBool> {
    static IDLE: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    IDLE.get_or_init(|| Arc::new(AtomicBool::new(true)))
}

fn enter_session() -> io::Result<()> {
    static DEFAULTS: OnceLock<io::Result<()>> = OnceLock::new();
    let installed = DEFAULTS.get_or_init(|| {
        for signal in SHUTDOWN {
            signal_hook::flag::register_conditional_default(signal, idle_flag().clone())?;
        }
        Ok(())
    });
    if let Err(error) = installed {
        return Err(io::Error::new(error.kind(), error.to_string()));
    }
    ACTIVE_SESSIONS.fetch_add(1, Ordering::SeqCst);
    idle_flag().store(false, Ordering::SeqCst);
    Ok(())
}

fn leave_session() {
    if ACTIVE_SESSIONS.fetch_sub(1, Ordering::SeqCst) == 1 {
        idle_flag().store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_signal_wakes_the_watch_and_is_reported_once() {
        let watch = SignalWatch::install(false).unwrap();
        signal_hook::low_level::raise(SIGWINCH).unwrap();
        let caught = watch.take();
        assert!(caught.resize);
        assert_eq!(caught.shutdown, None);
        assert!(!watch.take().resize);
    }
}
