//! Key bindings through a real terminal: what fires, what reaches the child, and when.

use std::thread;
use std::time::{Duration, Instant};

use crate::fixture::Fixture;
use crate::harness::{PATIENCE, wait_for_file};
use crate::runner::RunnerSpec;

/// What `terminate` makes of `cat`: killed by SIGTERM.
const TERMINATED: i32 = 128 + 15;

#[test]
fn ctrl_c_fires_its_binding_and_never_reaches_the_child() {
    let fixture = Fixture::start(RunnerSpec::new("").bind("C-c=event:ctrl-c"));
    fixture.assert_raw();
    fixture.terminal.write(b"ab\x03cd");
    fixture.assert_recorded(b"abcd");
    assert_eq!(fixture.wait_for_events(1), ["ctrl-c"]);
    assert_eq!(fixture.finish(), TERMINATED);
}

#[test]
fn a_lone_escape_reaches_the_child_after_the_timeout() {
    let mut spec = RunnerSpec::new("").bind("M-c=event:alt-c");
    spec.escape_timeout_ms = Some(50);
    let fixture = Fixture::start(spec);
    let sent = Instant::now();
    fixture.terminal.write(b"\x1b");
    // Held while it may still become Alt+C: nothing can arrive before the timeout.
    thread::sleep(Duration::from_millis(20));
    assert_eq!(std::fs::read(&fixture.recording).unwrap(), b"");
    fixture.assert_recorded(b"\x1b");
    assert!(sent.elapsed() >= Duration::from_millis(50));
    assert!(fixture.event_names().is_empty());
    assert_eq!(fixture.finish(), TERMINATED);
}

#[test]
fn escape_then_c_within_the_timeout_is_alt_c() {
    let mut spec = RunnerSpec::new("").bind("M-c=event:alt-c");
    // Generous, so the pause below stays within it on a busy machine.
    spec.escape_timeout_ms = Some(1_000);
    let fixture = Fixture::start(spec);
    fixture.terminal.write(b"\x1bc");
    fixture
        .terminal
        .type_slowly(&[b"\x1b", b"c"], Duration::from_millis(20));
    fixture.terminal.write(b"x");
    fixture.assert_recorded(b"x");
    assert_eq!(fixture.wait_for_events(2), ["alt-c", "alt-c"]);
    assert_eq!(fixture.finish(), TERMINATED);
}

#[test]
fn the_longest_overlapping_binding_wins() {
    let mut spec = RunnerSpec::new("")
        .bind("C-x=event:short")
        .bind("C-x C-c=event:long");
    spec.escape_timeout_ms = Some(50);
    let fixture = Fixture::start(spec);
    fixture.terminal.write(b"\x18\x03");
    assert_eq!(fixture.wait_for_events(1), ["long"]);
    // Alone, C-x waits out the timeout and then fires the shorter binding.
    fixture.terminal.write(b"\x18");
    assert_eq!(fixture.wait_for_events(2), ["long", "short"]);
    // Followed by a key that cannot continue it, C-x fires at once and the key goes on.
    fixture.terminal.write(b"\x18a");
    fixture.assert_recorded(b"a");
    assert_eq!(fixture.wait_for_events(3), ["long", "short", "short"]);
    assert_eq!(fixture.finish(), TERMINATED);
}

#[test]
fn unbound_keys_pastes_and_utf8_pass_through_unchanged() {
    let fixture = Fixture::start(
        RunnerSpec::new("")
            .bind("C-c=event:ctrl-c")
            .bind("M-c=event:alt-c"),
    );
    let arrows_and_function_keys: &[u8] = b"\x1b[A\x1b[B\x1bOP\x1b[15~\t\x7f\x01\x1bx";
    let utf8 = "h\u{e9}llo \u{4e16}\u{754c} \u{1f389}".as_bytes();
    let mut paste = b"\x1b[200~".to_vec();
    for line in 0..200 {
        paste.extend_from_slice(format!("pasted line {line}: {}\r", "x".repeat(40)).as_bytes());
    }
    paste.extend_from_slice(b"\x1b[201~");
    let mut expected = arrows_and_function_keys.to_vec();
    for bytes in [arrows_and_function_keys, utf8, &paste] {
        fixture.terminal.write(bytes);
    }
    expected.extend_from_slice(utf8);
    expected.extend_from_slice(&paste);
    fixture.assert_recorded(&expected);
    assert!(fixture.event_names().is_empty());
    assert_eq!(fixture.finish(), TERMINATED);
}

#[test]
fn interrupt_sends_sigint_to_a_child_in_raw_mode() {
    let script = r#"stty raw -echo; trap 'printf INT >> "$REC"' INT
        printf READY; while :; do sleep 0.02; done"#;
    let fixture = Fixture::start(RunnerSpec::new(script).bind("C-c=interrupt"));
    fixture.terminal.write(b"\x03");
    // The loop's sleep dies of SIGINT too, and the shell runs its trap.
    fixture.assert_recorded(b"INT");
    assert_eq!(fixture.finish(), 128 + 15);
}

#[test]
fn terminate_kills_a_child_that_ignores_sigterm_after_the_grace_period() {
    let script = r#"trap '' TERM; printf READY; exec sleep 30"#;
    let mut spec = RunnerSpec::new(script);
    spec.terminate_grace_ms = Some(200);
    let fixture = Fixture::start(spec);
    let sent = Instant::now();
    assert_eq!(fixture.finish(), 128 + 9);
    let took = sent.elapsed();
    assert!(
        took >= Duration::from_millis(200) && took < PATIENCE,
        "{took:?}"
    );
}

#[test]
fn the_child_gets_the_terminal_size_and_its_changes() {
    let script = r#"trap 'stty size >> "$REC"' WINCH; stty size > "$REC"; printf READY
        while :; do sleep 0.02; done"#;
    let fixture = Fixture::start(RunnerSpec::new(script));
    assert_eq!(wait_for_file(&fixture.recording, b"24 80\n"), b"24 80\n");
    fixture.terminal.resize(30, 100);
    let expected = b"24 80\n30 100\n";
    assert_eq!(wait_for_file(&fixture.recording, expected), expected);
    assert_eq!(fixture.finish(), TERMINATED);
}
