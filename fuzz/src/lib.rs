//! The checks behind termpilot's fuzz targets, kept in a library so that the same
//! checks run as ordinary tests on a stable toolchain (`tests/smoke.rs`) and under
//! libFuzzer through `cargo fuzz` on nightly (`fuzz_targets/`).
#![deny(missing_docs)]

use termpilot_control::{CommandError, Event, Parser, quote, unquote};

/// Feeds `data` to a control-mode parser whole and in chunks whose sizes are derived
/// from the data itself, and checks that the parser never panics, that chunking does
/// not change the events, and that no line yields more than one event.
pub fn check_control_parser(data: &[u8]) {
    let whole = parse_in_chunks(data, &[usize::MAX]);
    let sizes = chunk_sizes(data);
    let chunked = parse_in_chunks(data, &sizes);
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

/// Feeds `input` in pieces of the given sizes (cycling) and drains events after each.
pub fn parse_in_chunks(input: &[u8], sizes: &[usize]) -> Vec<Event> {
    let mut parser = Parser::new();
    let mut events = Vec::new();
    let mut rest = input;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        parser.feed(chunk);
        events.extend(std::iter::from_fn(|| parser.next_event()));
        rest = tail;
    }
    events
}
