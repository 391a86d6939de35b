//! What the transcripts in `tests/fixtures` hold: the commands typed, each in
//! its wrapper with its own nonce, into each shell, and what they print.
//! Shared by the tests and by `examples/record_transcripts.rs`, which
//! records the transcripts from real shells.
// Each of the two reads only some of it.
#![allow(dead_code)]

use termpilot_shell::Shell;

/// The pane's size while recording.
pub const WIDTH: u16 = 80;
/// The pane's size while recording.
pub const HEIGHT: u16 = 24;

/// One command typed into a shell, and what it does.
#[derive(Debug, Clone)]
pub struct Case {
    /// The command line (its wrapper is typed).
    pub command: String,
    /// Its output, as `Output::text` shows it.
    pub output: String,
    /// Its exit code.
    pub code: i32,
}

/// The shells recorded and the stem of their fixture files.
pub const SHELLS: [(Shell, &str); 4] = [
    (Shell::Bash, "bash"),
    (Shell::Zsh, "zsh"),
    (Shell::Fish, "fish"),
    (Shell::Posix, "sh"),
];

/// The nonce of the command at `index`: fixed, so the transcripts can be
/// checked, and of the form `new_nonce` makes.
pub fn nonce(index: usize) -> String {
    format!("tp{:016x}", 0x7e57_0000 + index)
}

/// The commands typed into `shell`, in order.
pub fn cases(shell: Shell) -> Vec<Case> {
    let case = |command: &str, output: &str, code| Case {
        command: command.to_owned(),
        output: output.to_owned(),
        code,
    };
    let long = format!("echo {}", "x".repeat(100));
    let numbers: Vec<String> = (1..=300).map(|n| n.to_string()).collect();
    // zsh reads `#` as a word, not a comment, unless INTERACTIVE_COMMENTS is set.
    let comment = match shell {
        Shell::Zsh => "its # note",
        _ => "its",
    };
    let mut cases = vec![
        case("echo hello", "hello", 0),
        case("printf 'a\\nb\\n'; false", "a\nb", 1),
        case("echo one\necho two", "one\ntwo", 0),
        case("sh -c 'exit 3'", "", 3),
        case("echo 'it''s' # note", comment, 0),
        case(&long, &"x".repeat(100), 0),
    ];
    // A program printing the real end marker (it read the nonce off the
    // screen) before the shell prints its own: the newest one counts.
    let forged = format!("printf '\\033]7770;{};9\\007forged\\n'", nonce(cases.len()));
    cases.push(case(&forged, "forged", 0));
    // An end marker with another nonce is output like any other.
    cases.push(case(
        "printf '\\033]7770;tpbad;0\\007stranger\\n'",
        "stranger",
        0,
    ));
    // Output without a line end: the next prompt follows it on its line,
    // where readline takes it for the first column (keep the next command
    // line short, or readline wraps it at the wrong column).
    cases.push(case("printf partial", "partial", 0));
    cases.push(case("seq 1 300", &numbers.join("\n"), 0));
    cases
}
