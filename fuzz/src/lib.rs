//! The checks behind termpilot's fuzz targets, kept in a library so that the same
//! checks run as ordinary tests on a stable toolchain (`tests/smoke.rs`) and under
//! libFuzzer through `cargo fuzz` on nightly (`fuzz_targets/`).
#![deny(missing_docs)]

use termpilot_control::{CommandError, Parser, quote, unquote};

/// Feeds `data` to a control-mode parser whole and in chunks whose sizes are derived
/// from the data itself, and checks that the parser never panics, that chunking does
/// not change the events, and that no line yields more than one event.
pub fn check_control_parser(data: &[u8]) {
    let whole = Parser::parse_in_chunks(data, &[usize::MAX]);
    let sizes = chunk_sizes(data);
    let chunked = Parser::parse_in_chunks(data, &sizes);
    assert_eq!(whole, chunked, "chunk sizes {sizes:?} changed the events");
    let lines = data.iter().filter(|&&byte| byte == b'\n').count();
    assert!(
        whole.len() <= lines,
        "{} events from {lines} lines",
        whole.len()
    );
}

/// Checks that quoting refuses NUL and that every other byte string survives
/// [`quote`] followed by [`unquote`] unchanged.
pub fn check_quote_roundtrip(data: &[u8]) {
    match quote(data) {
        Err(CommandError::Nul) => assert!(data.contains(&0), "NUL reported without one"),
        Err(other) => panic!("unexpected error {other}"),
        Ok(quoted) => assert_eq!(unquote(&quoted).as_deref(), Ok(data)),
    }
}

/// Parses `data` (as UTF-8, lossily) as a key name and as a key sequence:
/// never a panic, and every key that parses writes at least one byte and
/// parses again from its canonical name to the same key.
pub fn check_key_names(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(key) = termpilot_keys::parse_key(&text) {
        assert!(!key.bytes().is_empty(), "{text:?} parsed to a key with no bytes");
        let again = termpilot_keys::parse_key(&key.tmux_name());
        assert_eq!(again.ok(), Some(key), "{text:?}: canonical name {:?}", key.tmux_name());
    }
    let _ = termpilot_keys::parse_sequence(&text);
}

/// Feeds `data` to the terminal-text cleaner and to a journal, whole and in
/// data-derived chunks: never a panic, the same line view either way, and no
/// control characters but tab left in the cleaned text.
pub fn check_terminal_cleaner(data: &[u8]) {
    let whole = termpilot_journal::clean_text(data);
    assert!(
        whole.chars().all(|c| c == '\n' || c == '\t' || !c.is_control()),
        "control characters left in {whole:?}"
    );
    let view = |sizes: &[usize]| {
        let mut journal = termpilot_journal::Journal::new(termpilot_journal::Limits::default());
        let mut rest = data;
        for &size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (chunk, after) = rest.split_at(size.min(rest.len()));
            journal.append(chunk);
            rest = after;
        }
        let view = journal.lines(0);
        assert_eq!(view.lost, 0);
        let mut shown: Vec<String> = view.lines.into_iter().map(|line| line.text).collect();
        shown.extend(view.partial);
        shown
    };
    let sizes = chunk_sizes(data);
    assert_eq!(view(&[usize::MAX]), view(&sizes), "chunk sizes {sizes:?} changed the line view");
}

/// Chunk sizes from 1 to 16, taken from the data's first bytes so that the fuzzer
/// explores different splits of the same stream.
fn chunk_sizes(data: &[u8]) -> Vec<usize> {
    let sizes: Vec<usize> = data
        .iter()
        .take(8)
        .map(|&byte| usize::from(byte % 16) + 1)
        .collect();
    if sizes.is_empty() { vec![1] } else { sizes }
}
