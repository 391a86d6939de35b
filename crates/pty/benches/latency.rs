//! Added keystroke latency of a session: the round trip of one byte through a child
//! that echoes it (`cat` on a raw terminal), run directly on a PTY and then behind a
//! session (with bindings, so every byte goes through the matcher), both from a harness
//! that plays the user's terminal. The difference is what the session adds.
//!
//! `cargo bench -p termpilot-pty --bench latency`
#![allow(clippy::print_stdout)]

#[path = "../tests/pty/harness.rs"]
mod harness;
#[path = "../tests/pty/runner.rs"]
mod runner;

use std::process::Command;
use std::time::Duration;

use harness::OuterTerminal;
use runner::RunnerSpec;

const ECHO: &str = "stty raw -echo; printf READY; exec cat";
const ROUND_TRIPS: usize = 2_000;

fn main() {
    // Re-run by itself as the program under test.
    if let Some(code) = runner::run_from_env() {
        std::process::exit(code);
    }
    let mut direct = Command::new("sh");
    direct.args(["-c", ECHO]);
    let direct = measure(OuterTerminal::start(direct));
    let session = RunnerSpec::new(ECHO)
        .bind("C-c=interrupt")
        .bind("M-c=terminate")
        .command("runner");
    let session = measure(OuterTerminal::start(session));
    report("direct on a PTY", &direct);
    report("through a session", &session);
    let added = |q: f64| quantile(&session, q).saturating_sub(quantile(&direct, q));
    println!(
        "added latency: median {:?}, p99 {:?}",
        added(0.5),
        added(0.99)
    );
}

/// Round trips of printable bytes once the child is ready; the terminal is dropped
/// (its program killed) afterwards.
fn measure(terminal: OuterTerminal) -> Vec<Duration> {
    terminal.wait_for_output("READY");
    let mut times: Vec<Duration> = (0..ROUND_TRIPS)
        .map(|i| terminal.round_trip(b'a' + (i % 26) as u8))
        .collect();
    times.sort();
    times
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn report(name: &str, sorted: &[Duration]) {
    println!(
        "{name:>18}: median {:?}, p90 {:?}, p99 {:?} over {} round trips",
        quantile(sorted, 0.5),
        quantile(sorted, 0.9),
        quantile(sorted, 0.99),
        sorted.len()
    );
}
