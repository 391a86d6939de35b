//! The checks of the shell integration (`termpilot-shell`): following a
//! command's markers through a pane's output, and hiding wrappers.

use termpilot_journal::{GapReason, Journal, Limits};
use termpilot_shell::echo::{Seen, echo_kind};
use termpilot_shell::{Shell, Tracker, hide_wrappers, wrapper};

/// The nonce of the command the checks follow.
const NONCE: &str = "tp0f";

/// Turns fuzz data into pane output: some bytes stand for pieces that random
/// bytes would almost never hit (markers of the followed command, of another
/// one, a marker's beginning, a gap where tmux dropped output).
fn pane_output(data: &[u8]) -> Vec<Vec<u8>> {
    let mut segments = vec![Vec::new()];
    for &byte in data {
        let current = segments.last_mut().expect("never empty");
        match byte {
            0xf0 => current.extend_from_slice(b"\x1b]7770;tp0f;start\x07"),
            0xf1 => current.extend_from_slice(b"\x1b]7770;tp0f;"),
            0xf2 => current.extend_from_slice(b"\x1b]7770;tp0f;0\x07"),
            0xf3 => current.extend_from_slice(b"\x1b]7770;tp1f;7\x07"),
            0xf4 => current.extend_from_slice(b"\x1b]7770;"),
            0xf5 => segments.push(Vec::new()),
            other => current.push(other),
        }
    }
    segments
}

/// Follows one command through the pane output `data` stands for, appended
/// whole and in data-derived chunks (tracking after each): never a panic,
/// the same report either way, and nothing lost beyond the gaps.
pub fn check_shell_markers(data: &[u8]) {
    let segments = pane_output(data);
    let whole = follow(&segments, &[usize::MAX]);
    let sizes = crate::chunk_sizes(data);
    let chunked = follow(&segments, &sizes);
    assert_eq!(whole, chunked, "chunk sizes {sizes:?} changed the report");
    let (_, end, output) = &whole;
    let gaps = segments.len() as u64 - 1;
    assert!(output.lost <= gaps, "{} lost with {gaps} gaps", output.lost);
    if let Some(end) = end {
        assert!(end.at < end.after, "{end:?}");
    }
}

type Report = (
    bool,
    Option<termpilot_shell::EndMarker>,
    termpilot_shell::Output,
);

fn follow(segments: &[Vec<u8>], sizes: &[usize]) -> Report {
    let mut journal = Journal::new(Limits::default());
    let mut tracker = Tracker::new(NONCE, 0, 1 << 20);
    for (index, segment) in segments.iter().enumerate() {
        if index > 0 {
            journal.record_gap(GapReason::Paused);
        }
        let mut rest = &segment[..];
        for &size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, after) = rest.split_at(size.clamp(1, rest.len()));
            journal.append(piece);
            tracker.advance(&journal);
            rest = after;
        }
        tracker.advance(&journal);
    }
    let end = tracker.last_end();
    let output = tracker.output(&journal, end.map_or(journal.end(), |end| end.at));
    (tracker.started(), end, output)
}

/// What every marker `printf` in a wrapper's echo starts with.
const MARK: &str = "printf '\\033]7770;";

/// `data` (as UTF-8, lossily) as a screen, as a command line and as a line
/// and typed text for the echo rules: hiding never panics nor adds text; a
/// wrapped command line of printable ASCII, echoed after a prompt, shows as
/// typed; judging echo never panics.
pub fn check_wrapper_hiding(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    assert!(hide_wrappers(&text).len() <= text.len());
    let printable = text.chars().all(|c| c == '\n' || (' '..='~').contains(&c));
    if printable && !text.contains(MARK) && !text.contains("}; __termpilot") {
        for shell in Shell::ALL {
            let typed = wrapper(shell, &text, "tp0123456789abcdef");
            let screen = format!("$ {}\n", typed.replace('\n', "\n> "));
            let expected = format!("$ {}\n", text.replace('\n', "\n> "));
            assert_eq!(hide_wrappers(&screen), expected, "{shell:?}");
        }
    }
    let (line, typed) = text.split_once('\0').unwrap_or((&text, "echo"));
    let bounds: Vec<usize> = (0..=line.len())
        .filter(|&at| line.is_char_boundary(at))
        .collect();
    let pick = |n: usize| bounds[data.get(n).map_or(0, |&b| usize::from(b)) % bounds.len()];
    let (start, end) = (pick(0).min(pick(1)), pick(0).max(pick(1)));
    for redrawn in [false, true] {
        let seen = Seen {
            line,
            start,
            end,
            redrawn,
        };
        let _ = echo_kind(seen, typed);
    }
}
