//! Without a terminal on standard input: no raw mode, bytes pass both ways, bindings
//! still apply, and end of input reaches a child that reads lines.

use std::io::{Read, Write};
use std::time::Duration;

use crate::harness::{piped, wait_bounded, wait_for_file};
use crate::runner::RunnerSpec;

#[test]
fn pipes_pass_through_with_bindings_and_end_of_input() {
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("input");
    let events = dir.path().join("events");
    // After end of input the child lingers, to check the runner idles meanwhile.
    let mut spec = RunnerSpec::new(r#"cat > "$REC"; sleep 0.6"#)
        .bind("C-c=event:ctrl-c")
        .env("REC", &recording);
    spec.events = Some(events.clone());
    let mut runner = piped(spec.command("runner_entry")).spawn().unwrap();
    let mut stdin = runner.stdin.take().unwrap();
    // Unfinished last line: end of input must still get it to the child.
    stdin.write_all(b"ab\x03cd\nlast").unwrap();
    drop(stdin);
    let mut stdout = runner.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut output = Vec::new();
        let _ = stdout.read_to_end(&mut output);
        output
    });
    assert_eq!(wait_for_file(&recording, b"abcd\nlast"), b"abcd\nlast");
    let cpu_before = cpu_ticks(runner.id());
    std::thread::sleep(Duration::from_millis(300));
    let idle_cost = cpu_ticks(runner.id()) - cpu_before;
    assert!(
        idle_cost < 10,
        "the runner spun after end of input: {idle_cost} ticks"
    );
    let status = wait_bounded(&mut runner).expect("the runner ends after its child");
    assert_eq!(status.code(), Some(0));
    let events = std::fs::read_to_string(&events).unwrap();
    assert_eq!(events.lines().count(), 1, "{events}");
    assert!(events.contains(r#""event":"ctrl-c""#), "{events}");
    // The child's terminal echoes what it was sent; the echo is mirrored to stdout.
    let output = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(output.contains("abcd\r\n"), "{output:?}");
}

/// User plus system CPU time of process `pid`, in clock ticks (fields 14 and 15 of
/// `/proc/PID/stat`, counted after the parenthesised command name).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}
