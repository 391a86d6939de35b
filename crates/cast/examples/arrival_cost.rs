//! What noting when output arrived costs a flood: the output of
//! `seq 1 1000000` appended to a journal line by line (as tmux's control
//! mode delivers it), with each append timed (`append`) and with one time
//! for all (`append_at`, which then keeps a single arrival); and the cost
//! of cutting the held output into timed events for a recording.
//!
//! `cargo run --release -p termpilot-cast --example arrival_cost`

use std::time::Instant;

use termpilot_journal::{Journal, Limits};

fn main() {
    let lines: Vec<Vec<u8>> = (1..=1_000_000)
        .map(|n| format!("{n}\r\n").into_bytes())
        .collect();
    let limits = Limits {
        max_bytes: 64 << 20,
    };
    let mut best = [f64::MAX; 2];
    for _ in 0..5 {
        let started = Instant::now();
        let mut timed = Journal::new(limits);
        for line in &lines {
            timed.append(line);
        }
        best[0] = best[0].min(started.elapsed().as_secs_f64());
        let once = Instant::now();
        let started = Instant::now();
        let mut untimed = Journal::new(limits);
        for line in &lines {
            untimed.append_at(line, once);
        }
        best[1] = best[1].min(started.elapsed().as_secs_f64());
    }
    let mut journal = Journal::new(limits);
    for line in &lines {
        journal.append(line);
    }
    let started = Instant::now();
    let events = termpilot_cast::output_events(&journal, 0, journal.end(), Instant::now());
    let cut = started.elapsed().as_secs_f64();
    eprintln!(
        "seq 1 1000000 ({} bytes, 1,000,000 appends): {:.1} ms timed, {:.1} ms with one time \
         (best of 5); cutting it into {} timed events: {:.1} ms",
        journal.end(),
        best[0] * 1e3,
        best[1] * 1e3,
        events.len(),
        cut * 1e3
    );
}
