//! The shell integration on recorded transcripts: what bash, zsh, fish and
//! sh printed while running wrapped commands (`tests/fixtures/SHELL.out`,
//! byte for byte) and the pane's text afterwards (`SHELL.screen`), recorded
//! by `examples/record_transcripts.rs` from the commands in `tests/cases`.

mod cases;

use cases::{Case, SHELLS, nonce};
use proptest::prelude::*;
use termpilot_journal::{Journal, Limits, Pattern, Redaction};
use termpilot_shell::echo::{Echo, Seen, Typed, echo_kind};
use termpilot_shell::{
    EchoScan, EndMarker, Output, Scanned, Shell, Tracker, hide_wrappers, wrapper,
};

/// A recorded shell session.
struct Transcript {
    shell: Shell,
    stem: &'static str,
    bytes: &'static [u8],
    screen: &'static str,
}

const TRANSCRIPTS: [Transcript; 4] = [
    Transcript {
        shell: Shell::Bash,
        stem: "bash",
        bytes: include_bytes!("fixtures/bash.out"),
        screen: include_str!("fixtures/bash.screen"),
    },
    Transcript {
        shell: Shell::Zsh,
        stem: "zsh",
        bytes: include_bytes!("fixtures/zsh.out"),
        screen: include_str!("fixtures/zsh.screen"),
    },
    Transcript {
        shell: Shell::Fish,
        stem: "fish",
        bytes: include_bytes!("fixtures/fish.out"),
        screen: include_str!("fixtures/fish.screen"),
    },
    Transcript {
        shell: Shell::Posix,
        stem: "sh",
        bytes: include_bytes!("fixtures/sh.out"),
        screen: include_str!("fixtures/sh.screen"),
    },
];

/// What a tracker reports for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Report {
    started: bool,
    end: Option<EndMarker>,
    output: Output,
}

impl Transcript {
    fn cases(&self) -> Vec<Case> {
        cases::cases(self.shell)
    }

    /// Where each command was typed: the start of the transcript, then just
    /// after the end marker of the command before.
    fn typed_at(&self) -> Vec<u64> {
        let journal = journal_of(&[self.bytes], usize::MAX);
        let mut at = 0;
        let mut typed = Vec::new();
        for index in 0..self.cases().len() {
            typed.push(at);
            let mut tracker = Tracker::new(&nonce(index), at, JOURNAL);
            tracker.advance(&journal);
            at = tracker.last_end().map_or(at, |end| end.after);
        }
        typed
    }

    /// Every command's report, with the transcript appended to a journal of
    /// `journal_max` bytes in pieces of the given sizes (repeated), each
    /// tracker looking at what arrived after every piece.
    fn follow(&self, sizes: &[usize], journal_max: usize) -> Vec<Report> {
        let mut trackers: Vec<Tracker> = (self.typed_at().into_iter().enumerate())
            .map(|(index, at)| Tracker::new(&nonce(index), at, journal_max))
            .collect();
        let mut journal = Journal::new(Limits {
            max_bytes: journal_max,
        });
        for piece in pieces(self.bytes, sizes) {
            journal.append(piece);
            for tracker in &mut trackers {
                tracker.advance(&journal);
            }
        }
        trackers
            .iter()
            .map(|tracker| {
                let end = tracker.last_end();
                let to = end.map_or(journal.end(), |end| end.at);
                Report {
                    started: tracker.started(),
                    end,
                    output: tracker.output(&journal, to),
                }
            })
            .collect()
    }
}

/// A journal large enough for every transcript.
const JOURNAL: usize = 1 << 20;

fn journal_of(pieces: &[&[u8]], max_bytes: usize) -> Journal {
    let mut journal = Journal::new(Limits { max_bytes });
    for piece in pieces {
        journal.append(piece);
    }
    journal
}

/// `bytes` cut into pieces of `sizes` (repeated; a zero counts as one).
fn pieces<'a>(bytes: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::new();
    let mut rest = bytes;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, after) = rest.split_at(size.clamp(1, rest.len()));
        pieces.push(piece);
        rest = after;
    }
    pieces
}

#[test]
fn every_command_has_its_exit_code_and_exactly_its_output() {
    for transcript in &TRANSCRIPTS {
        let reports = transcript.follow(&[usize::MAX], JOURNAL);
        for (case, report) in transcript.cases().iter().zip(reports) {
            let what = format!("{}: {:?}", transcript.stem, case.command);
            let end = report
                .end
                .unwrap_or_else(|| panic!("{what}: no end marker"));
            assert!(report.started, "{what}");
            assert_eq!(end.code, case.code, "{what}");
            assert_eq!(report.output.lost, 0, "{what}");
            assert_eq!(report.output.text(), case.output, "{what}");
        }
    }
}

#[test]
fn byte_by_byte_arrival_changes_nothing() {
    for transcript in &TRANSCRIPTS {
        assert_eq!(
            transcript.follow(&[1], JOURNAL),
            transcript.follow(&[usize::MAX], JOURNAL),
            "{}",
            transcript.stem
        );
    }
}

#[test]
fn a_journal_smaller_than_an_output_keeps_its_exit_code_head_and_tail() {
    // `seq 1 300` prints 1,092 bytes; the journal keeps 512 and the head a
    // quarter of that.
    for transcript in &TRANSCRIPTS {
        let reports = transcript.follow(&[64], 512);
        let (case, report) = (transcript.cases().pop().unwrap(), reports.last().unwrap());
        let end = report.end.expect("the end marker");
        assert_eq!(end.code, case.code, "{}", transcript.stem);
        let output = &report.output;
        assert!(output.lost > 0, "{}", transcript.stem);
        assert_eq!(output.head.len(), 128, "{}", transcript.stem);
        let kept = output.head.len() + output.tail.len();
        // Every byte between the start marker and the end marker is kept or
        // counted as lost.
        let whole = &transcript.follow(&[usize::MAX], JOURNAL)[reports.len() - 1].output;
        let total = whole.head.len() + whole.tail.len();
        assert_eq!(
            kept as u64 + output.lost,
            total as u64,
            "{}",
            transcript.stem
        );
        let text = output.text();
        assert!(text.starts_with("1\n2\n3\n"), "{}: {text}", transcript.stem);
        assert!(text.ends_with("\n299\n300"), "{}: {text}", transcript.stem);
        assert!(
            text.contains("bytes of output lost"),
            "{}: {text}",
            transcript.stem
        );
    }
}

proptest! {
    #[test]
    fn however_the_output_is_split_the_reports_are_the_same(
        index in 0..TRANSCRIPTS.len(),
        sizes in proptest::collection::vec(1usize..300, 1..40),
    ) {
        let transcript = &TRANSCRIPTS[index];
        prop_assert_eq!(
            transcript.follow(&sizes, JOURNAL),
            transcript.follow(&[usize::MAX], JOURNAL)
        );
    }
}

/// Pieces of a wrapper's echo that must never be shown.
const WRAPPER_PIECES: [&str; 3] = ["__termpilot", ";start\\007'", ";%s\\007'"];

fn assert_no_wrapper_left(text: &str, what: &str) {
    for piece in WRAPPER_PIECES {
        assert!(!text.contains(piece), "{what}: {piece:?} left in\n{text}");
    }
}

/// Checks that every line of every command shows in `text`, in order, the
/// first one after the prompt. Line breaks are ignored: zsh breaks a long
/// command line itself, where tmux would have joined a wrapped row.
fn assert_commands_shown(text: &str, cases: &[Case], what: &str) {
    let squashed = text.replace('\n', "");
    let mut from = 0;
    for case in cases {
        for (number, line) in case.command.lines().enumerate() {
            let shown = match number {
                0 => format!("$ {line}"),
                _ => line.to_owned(),
            };
            let found = squashed[from..].find(&shown);
            let at = found.unwrap_or_else(|| panic!("{what}: {shown:?} not shown in\n{text}"));
            from += at + shown.len();
        }
    }
}

#[test]
fn screens_show_each_command_as_typed() {
    for transcript in &TRANSCRIPTS {
        let what = format!("{}.screen", transcript.stem);
        assert!(
            transcript.screen.contains("7770;tp"),
            "{what}: no wrapper echoed"
        );
        let shown = hide_wrappers(transcript.screen);
        assert_no_wrapper_left(&shown, &what);
        assert_commands_shown(&shown, &transcript.cases(), &what);
    }
}

#[test]
fn cleaned_output_of_sh_and_zsh_shows_no_wrapper() {
    // The journal's line view knows no terminal width: bash's readline and
    // fish redraw a command line longer than the pane with carriage returns
    // and cursor moves that the view collapses into other text, so their
    // wrappers' echo is not recognised there (their screens above are).
    for transcript in TRANSCRIPTS
        .iter()
        .filter(|t| matches!(t.stem, "sh" | "zsh"))
    {
        let what = format!("{}.out, cleaned", transcript.stem);
        let text = termpilot_journal::clean_text(transcript.bytes);
        assert!(text.contains("7770;tp"), "{what}: no wrapper echoed");
        assert_no_wrapper_left(&hide_wrappers(&text), &what);
    }
}

/// The kinds of echo `echo_kind` finds for the lines holding `needle` after
/// the command at `index` was typed, up to its end marker.
fn echo_kinds(transcript: &Transcript, index: usize, needle: &str) -> Vec<Option<Echo>> {
    let case = &transcript.cases()[index];
    let (typed_at, end) = {
        let at = transcript.typed_at()[index];
        let reports = transcript.follow(&[usize::MAX], JOURNAL);
        (at, reports[index].end.expect("the end marker").after)
    };
    let typed = Typed {
        offset: typed_at,
        text: wrapper(transcript.shell, &case.command, &nonce(index)),
    };
    let journal = journal_of(&[transcript.bytes], JOURNAL);
    let view = journal.lines(typed_at);
    view.lines
        .iter()
        .filter(|line| line.end <= end)
        .filter_map(|line| {
            let start = line.text.find(needle)?;
            let seen = Seen {
                line: &line.text,
                start,
                end: start + needle.len(),
                redrawn: false,
            };
            Some(
                typed
                    .lines()
                    .find_map(|candidate| echo_kind(seen, candidate)),
            )
        })
        .collect()
}

#[test]
fn the_echo_of_a_command_is_echo_and_its_output_is_not() {
    // fish redraws its command line with cursor moves the line view cannot
    // follow (see above), so only bash, zsh and sh are judged here.
    for transcript in TRANSCRIPTS.iter().filter(|t| t.stem != "fish") {
        let what = transcript.stem;
        // `echo hello`: the command line, then `hello`.
        assert_eq!(
            echo_kinds(transcript, 0, "hello"),
            [Some(Echo::Prompted), None],
            "{what}"
        );
        // `echo one` NEWLINE `echo two`: the continuation line comes after
        // a PS2 in bash and zsh; dash echoes it before printing its PS2.
        let continued = match transcript.shell {
            Shell::Posix => Echo::Bare,
            _ => Echo::Prompted,
        };
        assert_eq!(
            echo_kinds(transcript, 2, "two"),
            [Some(continued), None],
            "{what}"
        );
    }
}

/// What a wait for `needle`, started where the command at `index` was
/// typed, finds as the transcript arrives in pieces of `size` bytes: the
/// line of its first match that is not echo, and the match's place in it.
fn first_wait_match(
    transcript: &Transcript,
    index: usize,
    needle: &str,
    size: usize,
) -> Option<(String, usize)> {
    let case = &transcript.cases()[index];
    let typed_at = transcript.typed_at()[index];
    let typed = [Typed {
        offset: typed_at,
        text: wrapper(transcript.shell, &case.command, &nonce(index)),
    }];
    let pattern = Pattern::literals([needle], true).expect("a pattern");
    let mut scan = EchoScan::new(pattern, typed_at, Vec::new(), Redaction::default());
    let mut journal = journal_of(&[], JOURNAL);
    for piece in pieces(transcript.bytes, &[size]) {
        journal.append(piece);
        match scan.step(&journal, &typed) {
            Scanned::Found(found) => return Some((found.line, found.start)),
            Scanned::Lost(lost) => panic!("{}: {lost} bytes lost", transcript.stem),
            Scanned::Pending => {}
        }
    }
    None
}

#[test]
fn a_wait_skips_the_echo_of_the_wrapper_and_finds_the_output() {
    // fish redraws its command line with cursor moves the line view cannot
    // follow (see above), so only bash, zsh and sh are judged here. bash
    // wraps the wrapper's long second line with a carriage return and draws
    // the rest over its start: while that redraw arrives in pieces, the
    // line's state mixes new text and old, which the echo rules do not take
    // for echo yet (a known gap), so bash is judged on whole arrival only.
    for transcript in TRANSCRIPTS.iter().filter(|t| t.stem != "fish") {
        let sizes: &[usize] = match transcript.shell {
            Shell::Bash => &[usize::MAX],
            _ => &[usize::MAX, 7, 1],
        };
        for &size in sizes {
            let what = format!("{}, pieces of {size}", transcript.stem);
            // `echo hello`: the command line shows `hello`, then the output.
            let found = first_wait_match(transcript, 0, "hello", size);
            assert_eq!(found, Some(("hello".to_owned(), 0)), "{what}");
            // `echo one` NEWLINE `echo two`: both lines are echoed, each
            // once, before the output.
            let found = first_wait_match(transcript, 2, "two", size);
            assert_eq!(found, Some(("two".to_owned(), 0)), "{what}");
        }
    }
}

#[test]
fn the_cases_are_those_recorded() {
    for (shell, stem) in SHELLS {
        let transcript = TRANSCRIPTS.iter().find(|t| t.stem == stem).unwrap();
        assert_eq!(transcript.shell, shell);
        let bytes = transcript.bytes;
        for index in 0..cases::cases(shell).len() {
            let start = format!("\x1b]7770;{};start\x07", nonce(index));
            let found = bytes.windows(start.len()).any(|w| w == start.as_bytes());
            assert!(found, "{stem}: command {index} never started");
        }
    }
}
