use super::*;
use crate::clean::tests::{split, terminal_bytes};
use crate::{GapReason, Limits};
use proptest::prelude::*;

fn journal_of(pieces: &[&[u8]]) -> Journal {
    let mut journal = Journal::new(Limits::default());
    for piece in pieces {
        journal.append(piece);
    }
    journal
}

fn literal(text: &str) -> Pattern {
    Pattern::literals([text], true).unwrap()
}

fn found(scan: &Scan) -> Option<(usize, &str, &str, u64, bool)> {
    let m = scan.found.as_ref()?;
    Some((
        m.pattern,
        m.text.as_str(),
        m.line.as_str(),
        m.line_end,
        m.line_complete,
    ))
}

#[test]
fn finds_text_in_colored_output_and_reports_the_line() {
    let j = journal_of(&[
        b"\x1b[1mCompiling\x1b[0m foo\r\n\x1b[31merror\x1b[0m: bad thing\r\nmore\r\n",
    ]);
    let scan = j.find(0, &Pattern::regexes([r"error: \w+"], true).unwrap());
    assert_eq!(
        found(&scan),
        Some((0, "error: bad", "error: bad thing", 50, true))
    );
    assert_eq!(scan.lost, 0);
}

#[test]
fn progress_state_that_was_overwritten_still_matches() {
    let j = journal_of(&[b"[##  ] 40%\r[#### ] 80%\r[#####] done\r\n"]);
    let scan = j.find(0, &literal("80%"));
    assert_eq!(found(&scan), Some((0, "80%", "[#### ] 80%", 37, true)));
    assert!(j.find(0, &literal("40%]")).found.is_none());
}

#[test]
fn prompt_split_across_appends_matches_in_the_unfinished_line() {
    let mut j = journal_of(&[b"login ok\r\nPass"]);
    let mut scanner = Scanner::new(literal("Password:"), 0);
    assert_eq!(scanner.scan(&j).found, None);
    j.append(b"word: ");
    let scan = scanner.scan(&j);
    assert_eq!(
        found(&scan),
        Some((0, "Password:", "Password: ", 20, false))
    );
}

#[test]
fn osc_title_and_emoji_split_across_appends() {
    let raw = "\x1b]0;build: ✅ title\x07✅ all 12 tests passed\r\n".as_bytes();
    let pattern = Pattern::regexes([r"✅ all \d+ tests"], true).unwrap();
    for cut in 0..=raw.len() {
        let j = journal_of(&[&raw[..cut], &raw[cut..]]);
        let m = j.find(0, &pattern).found.expect("match");
        assert_eq!(
            (m.text.as_str(), m.line.as_str()),
            ("✅ all 12 tests", "✅ all 12 tests passed")
        );
        assert!(j.find(0, &literal("title")).found.is_none(), "cut at {cut}");
    }
}

#[test]
fn never_matches_across_lines() {
    let j = journal_of(&[b"hello\r\nworld\r\n"]);
    assert!(
        j.find(
            0,
            &Pattern::regexes(["hello.*world", "o\\s+w"], true).unwrap()
        )
        .found
        .is_none()
    );
}

#[test]
fn from_mid_line_ignores_text_before_it() {
    let mut j = journal_of(&[b"$ "]);
    let cursor = j.end();
    j.append(b"echo hi\r\nhi\r\n$ ");
    let scan = j.find(cursor, &Pattern::regexes([r"^\$ "], true).unwrap());
    assert_eq!(found(&scan), Some((0, "$ ", "$ ", 17, false)));
    // The prompt before the cursor is not seen again, and a match's line end lets the
    // next wait begin after the matched line.
    let echo = j.find(cursor, &literal("hi")).found.unwrap();
    assert_eq!((echo.line.as_str(), echo.line_end), ("echo hi", 11));
    let next = j.find(echo.line_end, &literal("hi")).found.unwrap();
    assert_eq!((next.line.as_str(), next.line_end), ("hi", 15));
}

#[test]
fn cursor_inside_an_escape_sequence_does_not_leak_its_tail() {
    let mut j = journal_of(&[b"\x1b]0;ti"]);
    let cursor = j.end();
    j.append(b"tle\x07ok\r\n");
    assert!(j.find(cursor, &literal("tle")).found.is_none());
    assert!(j.find(cursor, &literal("ok")).found.is_some());
}

#[test]
fn first_needle_in_stream_order_wins() {
    let j = journal_of(&[b"warning: x\r\nerror: y\r\n"]);
    let scan = j.find(0, &Pattern::literals(["error", "warning"], true).unwrap());
    assert_eq!(found(&scan).map(|f| (f.0, f.1)), Some((1, "warning")));
}

#[test]
fn scanner_is_done_after_a_match() {
    let mut j = journal_of(&[b"ready\r\n"]);
    let mut scanner = Scanner::new(literal("ready"), 0);
    let first = scanner.scan(&j);
    j.append(b"ready again\r\n");
    assert_eq!(scanner.scan(&j), first);
}

#[test]
fn gap_is_reported_and_ends_the_line() {
    let mut j = journal_of(&[b"abc"]);
    j.record_gap(GapReason::Paused);
    j.append(b"def\r\n");
    assert!(j.find(0, &literal("abcdef")).found.is_none());
    let scan = j.find(0, &literal("def"));
    assert_eq!((scan.lost, scan.gaps.len()), (1, 1));
    assert_eq!(found(&scan).map(|f| f.3), Some(9));
    // A match in the line the gap ended does not count the gap as crossed.
    let before = j.find(0, &literal("abc"));
    assert_eq!(
        (before.lost, found(&before).map(|f| (f.3, f.4))),
        (0, Some((3, true)))
    );
}

#[test]
fn eviction_is_reported_not_skipped() {
    let mut j = Journal::new(Limits { max_bytes: 64 });
    let mut scanner = Scanner::new(literal("needle"), 0);
    for i in 0..100 {
        j.append(format!("line {i}\r\n").as_bytes());
    }
    let scan = scanner.scan(&j);
    assert_eq!((scan.found, scan.lost), (None, j.start()));
    assert!(scan.lost > 0);
    // Eviction that overtakes a scanner between scans is counted too.
    for i in 0..100 {
        j.append(format!("more {i}\r\n").as_bytes());
    }
    let again = scanner.scan(&j);
    assert!(j.start() > scan.scanned_to);
    assert_eq!(again.lost, scan.lost + (j.start() - scan.scanned_to));
}

#[test]
fn long_line_in_small_appends_stays_linear() {
    let mut j = Journal::new(Limits { max_bytes: 8 << 20 });
    let mut scanner = Scanner::new(Pattern::literals(["NEEDLE"], true).unwrap(), 0);
    let piece = [b'x'; 4096];
    let started = std::time::Instant::now();
    for _ in 0..(5 << 20) / 4096 {
        j.append(&piece);
        assert!(scanner.scan(&j).found.is_none());
    }
    j.append(b"xxNEEDLEyy");
    let scan = scanner.scan(&j);
    let m = scan.found.expect("needle at the end of a 5 MB line");
    assert_eq!(
        (m.text.as_str(), m.line_end, m.line_complete),
        ("NEEDLE", j.end(), false)
    );
    assert!(m.line.len() <= super::CONTEXT_CHARS + 1 + crate::row::ROW_CHARS);
    // Debug builds are slow; quadratic behaviour would take minutes, not seconds.
    assert!(
        started.elapsed().as_secs() < 20,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn match_across_a_soft_wrap_is_found() {
    let row = crate::row::ROW_CHARS;
    let mut line = "y".repeat(row - 3).into_bytes();
    line.extend_from_slice(b"NEEDLE\r\n");
    let j = journal_of(&[&line]);
    let m = j.find(0, &literal("NEEDLE")).found.unwrap();
    assert_eq!((m.text.as_str(), m.line_end), ("NEEDLE", line.len() as u64));
    assert_eq!(&m.line[m.start..m.end], "NEEDLE");
}

#[test]
fn caret_does_not_match_at_a_soft_wrap() {
    let row = crate::row::ROW_CHARS;
    let line = format!("{}abc\r\n", "y".repeat(row));
    let j = journal_of(&[line.as_bytes()]);
    assert!(
        j.find(0, &Pattern::regexes(["^abc"], true).unwrap())
            .found
            .is_none()
    );
    assert!(
        j.find(0, &Pattern::regexes(["abc$"], true).unwrap())
            .found
            .is_some()
    );
}

/// Patterns that exercise literal text, carriage-return states and anchors.
fn pattern() -> impl Strategy<Value = Pattern> {
    let needle = prop_oneof![
        proptest::sample::select(vec!["ab", "b X", "yz", "0", "%", "é🦀", "\t", "~\\"])
            .prop_map(|s| crate::Needle::Literal(s.to_owned())),
        proptest::sample::select(vec!["^a", "z$", r"\d+%", "X.*y", r"^\s+$|q", "(?i)AB"])
            .prop_map(|s| crate::Needle::Regex(s.to_owned())),
    ];
    let needles = proptest::collection::vec(needle, 1..3);
    (needles, any::<bool>()).prop_filter_map("matches empty", |(needles, case)| {
        Pattern::new(needles, case).ok()
    })
}

fn journal_from(pieces: &[Vec<u8>], limits: Limits, gap_after: Option<usize>) -> Journal {
    let mut journal = Journal::new(limits);
    for (index, piece) in pieces.iter().enumerate() {
        journal.append(piece);
        if gap_after == Some(index) {
            journal.record_gap(GapReason::Paused);
        }
    }
    journal
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn find_and_lines_do_not_depend_on_the_split(
        bytes in terminal_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        from in any::<usize>(),
        pattern in pattern(),
    ) {
        let from = (from % (bytes.len() + 1)) as u64;
        let limits = Limits::default();
        let whole = journal_from(std::slice::from_ref(&bytes), limits, None);
        let split_journal = journal_from(&split(&bytes, &cuts), limits, None);
        prop_assert_eq!(split_journal.find(from, &pattern), whole.find(from, &pattern));
        prop_assert_eq!(split_journal.lines(from), whole.lines(from));
        prop_assert_eq!(split_journal.read_from(from), whole.read_from(from));
    }

    #[test]
    fn line_view_agrees_with_clean_text(mut bytes in terminal_bytes()) {
        // A final line end leaves nothing held back (a `\r`, part of a character) that
        // clean_text would flush but the line view would not show yet.
        bytes.push(b'\n');
        let journal = journal_from(&[bytes.clone()], Limits::default(), None);
        let view = journal.lines(0);
        let mut text: String = view.lines.iter().map(|l| format!("{}\n", l.text)).collect();
        // Inside an unterminated string sequence the final line end is swallowed.
        text.push_str(view.partial.as_deref().unwrap_or(""));
        prop_assert_eq!(text, crate::clean_text(&bytes));
    }

    #[test]
    fn incremental_scanner_equals_a_fresh_find(
        bytes in terminal_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        gap_after in proptest::option::of(0usize..8),
        pattern in pattern(),
    ) {
        let mut journal = Journal::new(Limits::default());
        let mut scanner = Scanner::new(pattern.clone(), 0);
        for (index, piece) in split(&bytes, &cuts).iter().enumerate() {
            journal.append(piece);
            if gap_after == Some(index) {
                journal.record_gap(GapReason::Paused);
            }
            let incremental = scanner.scan(&journal);
            let fresh = journal.find(0, &pattern);
            prop_assert_eq!(&incremental.found, &fresh.found);
            prop_assert_eq!((incremental.lost, &incremental.gaps), (fresh.lost, &fresh.gaps));
            if incremental.found.is_some() {
                break;
            }
        }
    }

    #[test]
    fn snapshots_answer_like_the_journal(
        bytes in terminal_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        gap_after in proptest::option::of(0usize..8),
        max_bytes in 1usize..256,
        from in any::<usize>(),
        pattern in pattern(),
    ) {
        let journal = journal_from(&split(&bytes, &cuts), Limits { max_bytes }, gap_after);
        let from = from as u64 % (journal.end() + 1);
        let snapshot = journal.snapshot_from(from);
        prop_assert_eq!(snapshot.find(from, &pattern), journal.find(from, &pattern));
        prop_assert_eq!(snapshot.lines(from), journal.lines(from));
        prop_assert_eq!(snapshot.read_from(from), journal.read_from(from));
    }

    #[test]
    fn scanner_fed_snapshots_from_its_position_equals_a_fresh_find(
        bytes in terminal_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        gap_after in proptest::option::of(0usize..8),
        max_bytes in prop_oneof![Just(1usize << 20), 16usize..128],
        pattern in pattern(),
    ) {
        // What a wait does: after each append, scan a snapshot taken from where the
        // scanner got to, never the journal itself. It must see exactly what a scanner
        // of the journal sees, eviction and gaps included.
        let mut journal = Journal::new(Limits { max_bytes });
        let mut direct = Scanner::new(pattern.clone(), 0);
        let mut scanner = Scanner::new(pattern, 0);
        let mut position = 0;
        for (index, piece) in split(&bytes, &cuts).iter().enumerate() {
            journal.append(piece);
            if gap_after == Some(index) {
                journal.record_gap(GapReason::Paused);
            }
            let expected = direct.scan(&journal);
            let incremental = scanner.scan(&journal.snapshot_from(position));
            position = incremental.scanned_to;
            prop_assert_eq!(&incremental, &expected);
            if incremental.found.is_some() {
                break;
            }
        }
    }

    #[test]
    fn eviction_is_never_silent(
        bytes in terminal_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        max_bytes in 0usize..64,
        from in any::<usize>(),
    ) {
        let journal = journal_from(&split(&bytes, &cuts), Limits { max_bytes }, None);
        let from = (from % (bytes.len() + 1)) as u64;
        prop_assert!(journal.end() - journal.start() <= max_bytes as u64);
        let read = journal.read_from(from);
        prop_assert_eq!(read.lost, journal.start().saturating_sub(from));
        prop_assert_eq!(&*read.bytes, &bytes[(from.max(journal.start())) as usize..]);
        let scan = journal.find(from, &literal("\u{1}never"));
        prop_assert_eq!(scan.lost, read.lost);
        prop_assert_eq!(journal.lines(from).lost, read.lost);
    }
}

#[test]
fn tells_a_redrawn_line() {
    let redrawn = |bytes: &[u8]| {
        let journal = journal_of(&[bytes]);
        journal.find(0, &literal("MARK")).found.map(|m| m.redrawn)
    };
    // zsh wrapping a long command line: the rest is redrawn from column 0.
    assert_eq!(redrawn(b"$ echo yyy \r\x1b[Ky\ryyy MARK\r\n"), Some(true));
    // A carriage return before any text (after an escape sequence) redraws nothing.
    assert_eq!(redrawn(b"\x1b[?2004l\ryyy MARK\r\n"), Some(false));
    assert_eq!(redrawn(b"yyy MARK\r\n"), Some(false));
    // A redraw in an earlier line does not count for the next one.
    assert_eq!(redrawn(b"50%\r100%\r\nMARK\r\n"), Some(false));
}

fn hiding(value: &'static str) -> crate::Redaction {
    let redactor = crate::Redactor::default();
    redactor.set_values(move || vec![("pw".to_owned(), value.to_owned())]);
    redactor.now()
}

fn regex(source: &str) -> Pattern {
    Pattern::regexes([source], true).unwrap()
}

#[test]
fn a_redacting_scan_never_matches_secret_characters() {
    let j = journal_of(&[b"got:hunter22\r\n"]);
    let scan = Scanner::new(regex("got:.{8}"), 0)
        .redacting(hiding("hunter22"))
        .scan(&j);
    assert_eq!(
        found(&scan),
        Some((0, "got:[secret ", "got:[secret pw]", 14, true))
    );
    for guess in ["got:h", "got:hunter22", "unter"] {
        let mut scanner = Scanner::new(literal(guess), 0).redacting(hiding("hunter22"));
        assert_eq!(scanner.scan(&j).found, None, "{guess}");
    }
}

#[test]
fn a_secret_cut_between_appends_shows_no_first_characters() {
    let mut j = journal_of(&[b"got:hun"]);
    let mut guess = Scanner::new(regex("got:h"), 0).redacting(hiding("hunter22"));
    let mut prefix = Scanner::new(regex("got:.*"), 0).redacting(hiding("hunter22"));
    assert_eq!(guess.scan(&j).found, None);
    let early = prefix.scan(&j);
    assert_eq!(found(&early).map(|f| f.2), Some("got:"));
    j.append(b"ter22\r\n");
    assert_eq!(guess.scan(&j).found, None);
}

#[test]
fn held_back_text_that_was_no_secret_matches_when_the_line_ends() {
    let mut j = journal_of(&[b"tests: hu"]);
    let mut scanner = Scanner::new(literal("tests: hu"), 0).redacting(hiding("hunter22"));
    assert_eq!(scanner.scan(&j).found, None);
    j.append(b"\r\n");
    assert_eq!(
        found(&scanner.scan(&j)),
        Some((0, "tests: hu", "tests: hu", 11, true))
    );
}

#[test]
fn a_secret_across_a_soft_wrap_is_hidden_on_both_sides() {
    let mut line = "x".repeat(16 * 1024 - 4);
    line.push_str("hunter22 tail\r\n");
    let j = journal_of(&[line.as_bytes()]);
    let mut scanner =
        Scanner::new(regex("[a-z]{4} tail|hunt|er22"), 0).redacting(hiding("hunter22"));
    let scan = scanner.scan(&j);
    assert!(scan.found.is_none(), "{:?}", scan.found);
}
