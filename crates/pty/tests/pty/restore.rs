//! The user's terminal gets its modes back however the session ends.

use std::time::{Duration, Instant};

use rustix::process::Signal;

use crate::fixture::Fixture;
use crate::harness::process_exists;
use crate::runner::RunnerSpec;

/// A child that records its pid, then idles.
const IDLE: &str = r#"echo $$ > "$REC"; printf READY; exec sleep 30"#;

#[test]
fn after_the_child_exits_with_a_code() {
    let mut fixture = Fixture::start(RunnerSpec::new("printf READY; sleep 0.2; exit 7"));
    fixture.assert_raw();
    assert_eq!(fixture.wait_restored(), 7);
    assert!(String::from_utf8_lossy(&fixture.terminal.output()).contains("READY"));
}

#[test]
fn after_the_child_is_killed() {
    let mut fixture = Fixture::start(RunnerSpec::new("printf READY; sleep 0.2; kill -KILL $$"));
    fixture.assert_raw();
    assert_eq!(fixture.wait_restored(), 128 + 9);
}

#[test]
fn after_sigterm_and_the_child_is_hung_up() {
    assert_shutdown_restores(Signal::TERM);
}

#[test]
fn after_sighup_and_the_child_is_hung_up() {
    assert_shutdown_restores(Signal::HUP);
}

fn assert_shutdown_restores(signal: Signal) {
    let mut fixture = Fixture::start(RunnerSpec::new(IDLE));
    fixture.assert_raw();
    let child: i32 = std::fs::read_to_string(&fixture.recording)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    fixture.terminal.signal(signal);
    assert_eq!(fixture.wait_restored(), 128 + signal.as_raw());
    // The runner reaped its child before it returned.
    let deadline = Instant::now() + Duration::from_secs(2);
    while process_exists(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!process_exists(child), "child {child} outlived the session");
}

#[test]
fn after_a_panic_in_a_callback() {
    let mut fixture = Fixture::start(RunnerSpec::new("").bind("C-p=panic"));
    fixture.assert_raw();
    fixture.terminal.write(b"\x10");
    // libtest reports the panicking runner test as failed: exit code 101.
    assert_eq!(fixture.wait_restored(), 101);
    let output = String::from_utf8_lossy(&fixture.terminal.output()).into_owned();
    assert!(output.contains("panicked on purpose"), "{output}");
}
