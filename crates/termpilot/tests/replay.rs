//! `termpilot replay` plays a recording's output, in order, pauses capped.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn replay_writes_the_output_and_caps_pauses() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("session.cast");
    let recording = concat!(
        "{\"version\":3,\"term\":{\"cols\":80,\"rows\":24}}\n",
        "[0.1,\"m\",\"run_command command=\\\"ls\\\" (call 3)\"]\n",
        "[0.0,\"i\",\"ls\\r\"]\n",
        "[0.2,\"o\",\"a.txt\\r\\n\"]\n",
        "[30.0,\"o\",\"\\u001b[32mdone\\u001b[0m\\r\\n\"]\n",
        "[0.0,\"x\",\"0\"]\n",
    );
    std::fs::write(&file, recording).expect("the recording is written");
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_termpilot"))
        .args(["replay", "--idle-limit", "0.5"])
        .arg(&file)
        .output()
        .expect("termpilot runs");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(output.stdout, b"a.txt\r\n\x1b[32mdone\x1b[0m\r\n");
    // The 30 s pause is cut to half a second (generous bound: loaded machines).
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn replay_refuses_what_is_not_v3() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("old.cast");
    std::fs::write(&file, "{\"version\":2,\"width\":80,\"height\":24}\n").expect("written");
    let output = Command::new(env!("CARGO_BIN_EXE_termpilot"))
        .arg("replay")
        .arg(&file)
        .output()
        .expect("termpilot runs");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not an asciicast v3"),
        "{output:?}"
    );
}
