//! Raw mode for the user's terminal, undone on every way out.
//!
//! The guard restores the saved modes when dropped, which covers returning, errors and
//! unwinding panics. A panic hook covers what unwinding does not: a panic on another
//! thread (a callback's helper, say) while the session thread is blocked in `poll`, and
//! builds with `panic = "abort"`. Shutdown signals end the session loop normally, so
//! the guard handles them too.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Mutex, Once};

use rustix::termios::{OptionalActions, Termios, tcgetattr, tcsetattr};

/// Terminals currently in raw mode, for the panic hook: their descriptors and the modes
/// to put back, keyed by a guard's id. A std `Mutex` is fine: it is held only to push,
/// remove or restore, never across blocking calls.
static SAVED: Mutex<Vec<Saved>> = Mutex::new(Vec::new());
static NEXT_ID: Mutex<u64> = Mutex::new(0);
static HOOK: Once = Once::new();

struct Saved {
    id: u64,
    fd: OwnedFd,
    modes: Termios,
}

/// Holds a terminal in raw mode; dropping it restores the modes it found.
pub(crate) struct RawMode {
    id: u64,
    fd: OwnedFd,
    modes: Termios,
}

impl RawMode {
    /// Switches `fd` to raw mode, or returns `None` if it is not a terminal.
    pub(crate) fn enter(fd: BorrowedFd<'_>) -> io::Result<Option<RawMode>> {
        let Ok(modes) = tcgetattr(fd) else {
            return Ok(None);
        };
        install_panic_hook();
        let guard = RawMode {
            id: next_id(),
            fd: fd.try_clone_to_owned()?,
            modes: modes.clone(),
        };
        remember(&guard)?;
        let mut raw = modes;
        raw.make_raw();
        tcsetattr(fd, OptionalActions::Now, &raw)?;
        Ok(Some(guard))
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // Nothing sensible is left to do if the terminal refuses its own old modes.
        let _ = tcsetattr(&self.fd, OptionalActions::Now, &self.modes);
        if let Ok(mut saved) = SAVED.lock() {
            saved.retain(|entry| entry.id != self.id);
        }
    }
}

fn next_id() -> u64 {
    let mut next = NEXT_ID
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *next += 1;
    *next
}

fn remember(guard: &RawMode) -> io::Result<()> {
    let entry = Saved {
        id: guard.id,
        fd: guard.fd.as_fd().try_clone_to_owned()?,
        modes: guard.modes.clone(),
    };
    SAVED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(entry);
    Ok(())
}

/// Chains a hook in front of the current one that restores every terminal still in raw
/// mode, so the panic message is printed on a sane terminal.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_all();
            previous(info);
        }));
    });
}

fn restore_all() {
    // try_lock: the panic may have happened while this thread held the lock.
    if let Ok(saved) = SAVED.try_lock() {
        for entry in saved.iter() {
            let _ = tcsetattr(&entry.fd, OptionalActions::Now, &entry.modes);
        }
    }
}
