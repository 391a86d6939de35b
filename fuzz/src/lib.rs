//! The checks behind termpilot's fuzz targets, kept in a library so that the same
//! checks run as ordinary tests on a stable toolchain (`tests/smoke.rs`) and under
//! libFuzzer through `cargo fuzz` on nightly (`fuzz_targets/`).
#![deny(missing_docs)]

mod cast;
mod redact;
mod screen;
mod shell;

pub use cast::check_cast_parse;
pub use redact::check_redactor;
pub use screen::check_screen_capture;
pub use shell::{check_shell_markers, check_wrapper_hiding};
use termpilot_control::name::format_literal;
use termpilot_control::{
    CommandError, Name, NameKind, PaneTarget, Parser, SessionTarget, WindowSlot, WindowTarget,
    escape_format, quote, unquote,
};

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
        assert!(
            !key.bytes().is_empty(),
            "{text:?} parsed to a key with no bytes"
        );
        let again = termpilot_keys::parse_key(&key.tmux_name());
        assert_eq!(
            again.ok(),
            Some(key),
            "{text:?}: canonical name {:?}",
            key.tmux_name()
        );
    }
    let _ = termpilot_keys::parse_sequence(&text);
}

/// Feeds `data` to the terminal-text cleaner and to a journal, whole and in
/// data-derived chunks: never a panic, the same line view either way, and no
/// control characters but tab left in the cleaned text.
pub fn check_terminal_cleaner(data: &[u8]) {
    let whole = termpilot_journal::clean_text(data);
    assert!(
        whole
            .chars()
            .all(|c| c == '\n' || c == '\t' || !c.is_control()),
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
    assert_eq!(
        view(&[usize::MAX]),
        view(&sizes),
        "chunk sizes {sizes:?} changed the line view"
    );
}

/// Parses `data` (as UTF-8, lossily) as each kind of target and as a session
/// and a window name: never a panic; an accepted target reads back from its
/// display form and its tmux form is never relative (an id or an `=` name
/// first); a refusal says so; an accepted name holds nothing tmux changes; and
/// the format escape of any text expands to exactly that text.
pub fn check_targets(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    check_target::<PaneTarget>(&text, PaneTarget::tmux, &['%', '$', '=']);
    check_target::<WindowTarget>(&text, WindowTarget::tmux, &['@', '$', '=']);
    check_target::<SessionTarget>(&text, SessionTarget::tmux, &['$', '=']);
    check_target::<WindowSlot>(&text, WindowSlot::tmux, &['$', '=']);
    for kind in [NameKind::Session, NameKind::Window] {
        if let Ok(name) = Name::new(kind, &text) {
            assert!(
                !text.contains([':', '.', '$', '\\']),
                "{kind} name {text:?} accepted"
            );
            assert!(
                !text.chars().any(char::is_control),
                "{kind} name {text:?} accepted"
            );
            assert_eq!(format_literal(&name.to_format()).as_deref(), Some(&*text));
        }
    }
    assert_eq!(
        format_literal(&escape_format(&text)).as_deref(),
        Some(&*text)
    );
}

fn check_target<T>(text: &str, tmux: fn(&T) -> String, starts: &[char])
where
    T: std::str::FromStr<Err = termpilot_control::TargetError>,
    T: std::fmt::Display + std::fmt::Debug + PartialEq,
{
    match text.parse::<T>() {
        Ok(target) => {
            let shown = target.to_string();
            assert_eq!(
                shown.parse::<T>().as_ref(),
                Ok(&target),
                "{text:?} shown as {shown:?}"
            );
            let form = tmux(&target);
            assert!(
                form.starts_with(starts),
                "{text:?} reaches tmux as {form:?}"
            );
        }
        Err(error) => assert!(error.to_string().contains(" is refused: "), "{error}"),
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
