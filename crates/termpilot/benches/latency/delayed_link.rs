//! A TCP relay on loopback that holds every byte for a set time in each
//! direction: a network link with that one-way latency, for part 11.
//!
//! Each direction of a connection is two threads: one reads and stamps
//! each chunk with the moment it may go on, the other sleeps until then and
//! writes it. Order is kept and nothing is merged or split, so only time is
//! added. The threads end with their connection; the listener's thread
//! with the process.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;

/// A listening relay to one address.
pub struct DelayedLink {
    /// Where it listens, on 127.0.0.1.
    pub port: u16,
}

impl DelayedLink {
    /// Listens on a free port of 127.0.0.1 and relays every connection to
    /// `target`, each direction `delay` late.
    pub fn start(target: SocketAddr, delay: Duration) -> anyhow::Result<DelayedLink> {
        let listener = TcpListener::bind("127.0.0.1:0").context("cannot listen on loopback")?;
        let port = listener.local_addr()?.port();
        std::thread::spawn(move || {
            for incoming in listener.incoming().flatten() {
                if let Ok(outgoing) = TcpStream::connect(target) {
                    relay(incoming, outgoing, delay);
                }
            }
        });
        Ok(DelayedLink { port })
    }
}

/// Relays both directions between `a` and `b`.
fn relay(a: TcpStream, b: TcpStream, delay: Duration) {
    for (from, to) in [(&a, &b), (&b, &a)] {
        if let (Ok(from), Ok(to)) = (from.try_clone(), to.try_clone()) {
            let _ = from.set_nodelay(true);
            let _ = to.set_nodelay(true);
            one_way(from, to, delay);
        }
    }
}

/// Copies `from` to `to`, each chunk `delay` after it was read; closes
/// `to`'s sending side after `from` ends.
fn one_way(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buffer).unwrap_or(0);
            // An empty chunk stands for the end.
            if tx
                .send((Instant::now() + delay, buffer[..n].to_vec()))
                .is_err()
                || n == 0
            {
                return;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, chunk) in rx {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if chunk.is_empty() || to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// The round-trip time of the link to an echo server behind it: median of
/// `runs` one-byte exchanges.
pub fn measured_rtt(delay: Duration, runs: usize) -> anyhow::Result<Duration> {
    let echo = TcpListener::bind("127.0.0.1:0")?;
    let address = echo.local_addr()?;
    std::thread::spawn(move || {
        if let Some(Ok(mut stream)) = echo.incoming().next() {
            let _ = stream.set_nodelay(true);
            let mut byte = [0u8; 1];
            while stream.read_exact(&mut byte).is_ok() && stream.write_all(&byte).is_ok() {}
        }
    });
    let link = DelayedLink::start(address, delay)?;
    let mut stream = TcpStream::connect(("127.0.0.1", link.port))?;
    stream.set_nodelay(true)?;
    let mut samples = Vec::with_capacity(runs);
    let mut byte = [0u8; 1];
    for _ in 0..runs {
        let start = Instant::now();
        stream.write_all(b"x")?;
        stream.read_exact(&mut byte)?;
        samples.push(start.elapsed());
    }
    samples.sort_unstable();
    Ok(samples[samples.len() / 2])
}
