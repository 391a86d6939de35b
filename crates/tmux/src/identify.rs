//! When a new control client may identify itself to a tmux server.
//!
//! tmux 3.3a crashes when it writes to a control client that is still
//! identifying itself (between its first identify message and the last):
//! `%client-detached` of another client of ours that tmux is detaching, or
//! any notification, such as the `%sessions-changed` of another client's
//! `new-session`. So a new client waits until no client of the transport's
//! pipes is departing ([`Departures`]) and, on this machine, holds a lock
//! ([`ConnectTurn`]) until tmux has answered it. The transports use these
//! (see `Transport::turn_to_connect`).

use std::sync::Arc;
use std::time::Duration;

use crate::transport::{BoxFuture, Pipe, PipeProcess};

/// The longest a new control client waits for departing ones.
pub(crate) const SETTLE: Duration = Duration::from_secs(2);

/// Control clients that tmux told to exit (`%exit`) and whose process has
/// not ended yet. tmux 3.3a writes `%client-detached` to every control
/// client, even one still identifying itself, which crashes the server; a
/// client of ours being detached (its session ended) is the likely source,
/// so a new client waits (at most [`SETTLE`]) until those departures are
/// over. Cheap to clone; every clone counts the same clients.
#[derive(Debug, Clone, Default)]
pub struct Departures(Arc<tokio::sync::watch::Sender<usize>>);

impl Departures {
    /// How many clients are departing now.
    pub fn count(&self) -> usize {
        *self.0.borrow()
    }

    /// Waits, at most `limit`, until no client is departing.
    pub async fn settled(&self, limit: Duration) {
        let mut count = self.0.subscribe();
        let _ = tokio::time::timeout(limit, count.wait_for(|&n| n == 0)).await;
    }

    /// `pipe`, its process counted as departing from the moment tmux says
    /// `%exit` to it until the process has ended.
    pub fn track(&self, pipe: Pipe) -> Pipe {
        let Pipe {
            reader,
            writer,
            process,
        } = pipe;
        let process = Box::new(Tracked {
            inner: process,
            departures: self.clone(),
            departing: false,
        });
        Pipe {
            reader,
            writer,
            process,
        }
    }
}

/// A process counted in [`Departures`] while it departs.
struct Tracked {
    inner: Box<dyn PipeProcess>,
    departures: Departures,
    departing: bool,
}

impl Tracked {
    fn departed(&mut self) {
        if std::mem::take(&mut self.departing) {
            (self.departures.0).send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

impl PipeProcess for Tracked {
    fn diagnostics(&mut self) -> BoxFuture<'_, String> {
        self.inner.diagnostics()
    }

    fn close(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.inner.close().await;
            self.departed();
        })
    }

    fn exiting(&mut self) {
        if !std::mem::replace(&mut self.departing, true) {
            self.departures.0.send_modify(|n| *n += 1);
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.departed();
    }
}

/// A control client's turn to identify itself to the server, held until
/// it has: tmux 3.3a also crashes when it writes any notification to a
/// control client still identifying itself (between its first identify
/// message and the last, which may come in several reads), and another
/// client's `new-session` (`%sessions-changed`) is enough. On this machine
/// the turn is an exclusive lock (`flock`) on the socket's directory, so
/// engines connecting at once, in this process or others, take turns, and
/// servers in one directory too, which costs little, as identifying takes
/// milliseconds. Best effort: when the directory cannot be opened or the
/// lock is not granted in [`START_LOCK_WAIT`], the client connects without
/// it.
#[derive(Debug, Default)]
pub struct ConnectTurn {
    /// Closing the file releases the lock.
    _lock: Option<std::fs::File>,
}

/// The longest a connecting client waits for its turn.
const START_LOCK_WAIT: Duration = Duration::from_secs(10);

impl ConnectTurn {
    /// Takes the lock on `dir`, waiting for it at most [`START_LOCK_WAIT`].
    pub(crate) async fn lock(dir: &std::path::Path) -> ConnectTurn {
        let Ok(file) = std::fs::File::open(dir) else {
            return ConnectTurn::default();
        };
        let deadline = tokio::time::Instant::now() + START_LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return ConnectTurn { _lock: Some(file) },
                Err(std::fs::TryLockError::WouldBlock)
                    if tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Err(_) => return ConnectTurn::default(),
            }
        }
    }
}
