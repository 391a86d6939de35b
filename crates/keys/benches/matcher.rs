//! Throughput of `KeySequenceMatcher` on 64 MB of input, fed in 64 KiB reads.
//!
//! Run with `cargo bench -p termpilot-keys --bench matcher`. Bindings: C-c, M-c, Escape.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use termpilot_keys::{DEFAULT_ESCAPE_TIMEOUT, KeySequenceMatcher, MatchSink, parse_sequence};

const TOTAL: usize = 64 << 20;
const READ: usize = 64 << 10;
const ROUNDS: usize = 5;

/// Counts what it receives, so that the work cannot be optimised away.
#[derive(Default)]
struct Counter {
    forwarded: usize,
    forward_calls: usize,
    actions: usize,
}

impl MatchSink<u8> for Counter {
    fn forward(&mut self, bytes: &[u8]) {
        self.forwarded += black_box(bytes).len();
        self.forward_calls += 1;
    }

    fn action(&mut self, action: &u8, sequence: &[u8]) {
        black_box((action, sequence));
        self.actions += 1;
    }
}

fn matcher() -> KeySequenceMatcher<u8> {
    let bindings = ["C-c", "M-c", "Escape"]
        .iter()
        .zip(0..)
        .map(|(spec, id)| (parse_sequence(spec).unwrap(), id))
        .collect();
    KeySequenceMatcher::from_key_bindings(bindings, DEFAULT_ESCAPE_TIMEOUT).unwrap()
}

/// Printable text with newlines, no byte that can start a binding.
fn plain_input() -> Vec<u8> {
    let line = b"The quick brown fox jumps over the lazy dog; 0123456789 {}[]()<>!?\n";
    line.iter().copied().cycle().take(TOTAL).collect()
}

/// Text where about every fourth byte is ESC: Alt+c, lone escapes, CSI arrow keys.
fn escape_dense_input() -> Vec<u8> {
    let pattern = b"\x1bcab\x1b[Ax\x1bxyz\x1b\x1bcd\x03e";
    pattern.iter().copied().cycle().take(TOTAL).collect()
}

fn run(name: &str, input: &[u8]) {
    let mut best = Duration::MAX;
    let mut counter = Counter::default();
    for _ in 0..ROUNDS {
        let mut m = matcher();
        counter = Counter::default();
        let start = Instant::now();
        for read in input.chunks(READ) {
            m.feed(read, start, &mut counter);
        }
        m.flush(&mut counter);
        best = best.min(start.elapsed());
    }
    let mb_per_s = input.len() as f64 / best.as_secs_f64() / 1e6;
    println!(
        "{name:>13}: {mb_per_s:8.0} MB/s  (best of {ROUNDS}, {:.1} ms for {} MB; \
         {} forwarded in {} slices, {} actions)",
        best.as_secs_f64() * 1e3,
        input.len() >> 20,
        counter.forwarded,
        counter.forward_calls,
        counter.actions,
    );
}

fn main() {
    run("plain text", &plain_input());
    run("ESC-dense", &escape_dense_input());
}
