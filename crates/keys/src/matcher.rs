//! Intercepting configured key sequences in a raw input stream.
//!
//! [`KeySequenceMatcher`] sits between a user's terminal (in raw mode) and a child
//! program. Bytes that are not part of a bound sequence are passed on untouched, as
//! slices of the input; a bound sequence fires its action instead of reaching the child.
//!
//! The longest bound sequence wins. When the bytes seen so far are a prefix of a longer
//! binding, they are held until the longer one completes, a byte arrives that cannot
//! continue it, or the timeout passes. Then the longest complete binding at the front of
//! the held bytes fires (or, if there is none, the first byte is forwarded) and the rest
//! is scanned again. This is how terminals tell a lone Escape from Alt+key (`ESC c`):
//! the bytes of Alt+key arrive together, a human's next key press does not.
//!
//! The matcher does no I/O and reads no clock: the caller passes the current time and
//! arranges to call [`KeySequenceMatcher::poll`] at [`KeySequenceMatcher::deadline`].

mod trie;

use std::time::{Duration, Instant};

use crate::name::Key;
use trie::{BindingId, Trie};

/// How long a prefix of a longer binding (typically a lone ESC) is held waiting for the
/// rest. Terminals send a key's bytes in one write, so 50 ms separates them from a human's
/// next key press; tmux's own `escape-time` defaults to 500 ms, vim's `ttimeoutlen` to 100.
pub const DEFAULT_ESCAPE_TIMEOUT: Duration = Duration::from_millis(50);

/// Receives what the matcher decides, in input order.
pub trait MatchSink<A> {
    /// Bytes to pass on to the child unchanged.
    fn forward(&mut self, bytes: &[u8]);
    /// A bound sequence was typed; `sequence` is its bytes, which are not forwarded.
    fn action(&mut self, action: &A, sequence: &[u8]);
}

/// Why a set of bindings was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindingError {
    /// A binding has no bytes (or no keys), so it could never be typed.
    #[error("binding {index} has an empty key sequence")]
    Empty {
        /// Position of the binding in the list.
        index: usize,
    },
    /// Two bindings have the same bytes, so which action fires would be ambiguous.
    #[error(
        "bindings {first} and {second} have the same key sequence \"{}\"",
        .sequence.escape_ascii()
    )]
    Duplicate {
        /// The shared bytes.
        sequence: Vec<u8>,
        /// Position of the first binding with these bytes.
        first: usize,
        /// Position of the second one.
        second: usize,
    },
}

/// Splits a byte stream into bytes to forward and bound sequences that fire actions.
#[derive(Clone, Debug)]
pub struct KeySequenceMatcher<A> {
    bindings: Vec<(Vec<u8>, A)>,
    trie: Trie,
    /// Bytes that can start a binding; every other byte is forwarded without a trie walk.
    starts: [bool; 256],
    /// Held bytes: always a proper prefix of some binding between calls. Allocated once
    /// at the longest binding's length, which it never exceeds.
    pending: Vec<u8>,
    deadline: Option<Instant>,
    timeout: Duration,
}

impl<A> KeySequenceMatcher<A> {
    /// Builds a matcher from byte sequences and their actions.
    ///
    /// `timeout` is how long a prefix of a longer binding is held. A zero timeout holds
    /// bytes only until the next call; one too large to add to an [`Instant`] means no
    /// deadline at all (held bytes wait for the next byte or [`flush`](Self::flush)).
    pub fn new(bindings: Vec<(Vec<u8>, A)>, timeout: Duration) -> Result<Self, BindingError> {
        let mut trie = Trie::new();
        let mut starts = [false; 256];
        for (index, (sequence, _)) in bindings.iter().enumerate() {
            let Some(&first) = sequence.first() else {
                return Err(BindingError::Empty { index });
            };
            starts[usize::from(first)] = true;
            trie.insert(sequence, index as BindingId)
                .map_err(|first| BindingError::Duplicate {
                    sequence: sequence.clone(),
                    first: first as usize,
                    second: index,
                })?;
        }
        let longest = bindings.iter().map(|(s, _)| s.len()).max().unwrap_or(0);
        Ok(KeySequenceMatcher {
            bindings,
            trie,
            starts,
            pending: Vec::with_capacity(longest),
            deadline: None,
            timeout,
        })
    }

    /// Builds a matcher from key sequences (as [`crate::parse_sequence`] returns them),
    /// each bound to the bytes its keys send.
    pub fn from_key_bindings(
        bindings: Vec<(Vec<Key>, A)>,
        timeout: Duration,
    ) -> Result<Self, BindingError> {
        let bindings = bindings
            .into_iter()
            .map(|(keys, action)| (sequence_bytes(&keys), action))
            .collect();
        Self::new(bindings, timeout)
    }

    /// Processes input bytes that arrived at `now`.
    ///
    /// Held bytes whose deadline has passed are resolved first, as if
    /// [`poll`](Self::poll) had been called in time.
    pub fn feed(&mut self, input: &[u8], now: Instant, sink: &mut impl MatchSink<A>) {
        self.poll(now, sink);
        let rest = self.extend_pending(input, now, sink);
        if self.pending.is_empty() {
            self.scan(rest, now, sink);
        }
    }

    /// Resolves held bytes if their deadline has passed: the longest complete binding
    /// among them fires, the rest is forwarded or matched again.
    pub fn poll(&mut self, now: Instant, sink: &mut impl MatchSink<A>) {
        if self.deadline.is_some_and(|deadline| now >= deadline) {
            self.resolve_pending(true, sink);
        }
    }

    /// When the caller must call [`poll`](Self::poll); `None` while nothing is held.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Resolves held bytes now, for the end of input.
    pub fn flush(&mut self, sink: &mut impl MatchSink<A>) {
        self.resolve_pending(true, sink);
    }

    /// Adds input to held bytes one byte at a time until they resolve; returns the input
    /// left once nothing is held (empty if everything went into the held bytes).
    fn extend_pending<'i>(
        &mut self,
        input: &'i [u8],
        now: Instant,
        sink: &mut impl MatchSink<A>,
    ) -> &'i [u8] {
        if self.pending.is_empty() {
            return input;
        }
        for (at, &byte) in input.iter().enumerate() {
            // Held bytes are a proper prefix of a binding, so one more byte still fits.
            self.pending.push(byte);
            self.resolve_pending(false, sink);
            if self.pending.is_empty() {
                return &input[at + 1..];
            }
        }
        if !input.is_empty() {
            // The held sequence grew: the user's terminal is still sending it.
            self.deadline = now.checked_add(self.timeout);
        }
        &[]
    }

    /// Fires or forwards held bytes from the front until the rest could still grow into
    /// a binding (unless `finish`, which resolves everything).
    fn resolve_pending(&mut self, finish: bool, sink: &mut impl MatchSink<A>) {
        let (mut at, mut run) = (0, 0);
        while at < self.pending.len() {
            let walk = self.trie.walk(&self.pending[at..]);
            if walk.open && !finish {
                break;
            }
            match walk.longest {
                Some((len, id)) => {
                    forward_nonempty(sink, &self.pending[run..at]);
                    self.fire(id, sink);
                    at += len;
                    run = at;
                }
                None => at += 1,
            }
        }
        forward_nonempty(sink, &self.pending[run..at]);
        self.pending.drain(..at);
        if self.pending.is_empty() {
            self.deadline = None;
        }
    }

    /// The hot path, with nothing held: skips bytes that cannot start a binding in one
    /// scan and forwards each unmatched run as one slice of `input`.
    fn scan(&mut self, input: &[u8], now: Instant, sink: &mut impl MatchSink<A>) {
        let (mut at, mut run) = (0, 0);
        while let Some(offset) = input[at..]
            .iter()
            .position(|&b| self.starts[usize::from(b)])
        {
            at += offset;
            let walk = self.trie.walk(&input[at..]);
            if walk.open {
                // The input ends inside a possible binding: hold the tail.
                forward_nonempty(sink, &input[run..at]);
                self.pending.extend_from_slice(&input[at..]);
                self.deadline = now.checked_add(self.timeout);
                return;
            }
            match walk.longest {
                Some((len, id)) => {
                    forward_nonempty(sink, &input[run..at]);
                    self.fire(id, sink);
                    at += len;
                    run = at;
                }
                None => at += 1,
            }
        }
        forward_nonempty(sink, &input[run..]);
    }

    fn fire(&self, id: BindingId, sink: &mut impl MatchSink<A>) {
        let (sequence, action) = &self.bindings[id as usize];
        sink.action(action, sequence);
    }
}

fn forward_nonempty<A>(sink: &mut impl MatchSink<A>, bytes: &[u8]) {
    if !bytes.is_empty() {
        sink.forward(bytes);
    }
}

/// The bytes a binding's keys send (every parsed key sends at least one byte).
fn sequence_bytes(keys: &[Key]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(keys.len() * 4);
    for key in keys {
        key.write_bytes(&mut bytes);
    }
    bytes
}

#[cfg(test)]
mod tests;
