use super::*;
use proptest::prelude::*;

/// Events with adjacent text merged, so that results can be compared across splits.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owned {
    Text(String),
    LineEnd(u64),
    CarriageReturn,
    Backspace,
    Erase(Erase),
}

fn events(pieces: &[&[u8]]) -> Vec<Owned> {
    let mut out: Vec<Owned> = Vec::new();
    let mut push = |event: Event<'_>| {
        let owned = match event {
            Event::Text(text) => {
                if let Some(Owned::Text(last)) = out.last_mut() {
                    return last.push_str(text);
                }
                Owned::Text(text.to_owned())
            }
            Event::LineEnd { end } => Owned::LineEnd(end),
            Event::CarriageReturn => Owned::CarriageReturn,
            Event::Backspace => Owned::Backspace,
            Event::EraseLine(erase) => Owned::Erase(erase),
        };
        out.push(owned);
    };
    let mut cleaner = Cleaner::new();
    for piece in pieces {
        cleaner.feed(piece, &mut push);
    }
    cleaner.finish(&mut push);
    out
}

fn text(s: &str) -> Owned {
    Owned::Text(s.to_owned())
}

#[test]
fn colored_compiler_output() {
    let raw = b"\x1b[0m\x1b[1m\x1b[38;5;9merror[E0308]\x1b[0m\x1b[0m\x1b[1m: mismatched types\x1b[0m\r\n\
                \x1b[0m  \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m--> \x1b[0m\x1b[0msrc/main.rs:2:18\x1b[0m\r\n";
    assert_eq!(
        clean_text(raw),
        "error[E0308]: mismatched types\n  --> src/main.rs:2:18\n"
    );
}

#[test]
fn progress_bar_collapses_to_final_state() {
    let raw = b"Downloading [          ]   0%\rDownloading [#####     ]  50%\r\
                Downloading [##########] 100%\r\ndone\r\n";
    assert_eq!(clean_text(raw), "Downloading [##########] 100%\ndone\n");
}

#[test]
fn shorter_redraw_keeps_tail_unless_erased() {
    assert_eq!(clean_text(b"abcdef\rXY"), "XYcdef");
    assert_eq!(clean_text(b"abcdef\r\x1b[KXY"), "XY");
    assert_eq!(clean_text(b"abcdef\x1b[1G\x1b[2KXY"), "XY");
    assert_eq!(clean_text(b"abcdef\x1b[GXY"), "XYcdef");
}

#[test]
fn backspace_overstrike_reads_as_plain_text() {
    assert_eq!(clean_text(b"B\x08Bo\x08ol\x08ld\x08d"), "Bold");
    assert_eq!(clean_text(b"\x08\x08x"), "x");
}

#[test]
fn osc_title_split_across_feeds() {
    let raw: &[u8] = b"a\x1b]0;my title\x07b\x1b]2;other\x1b\\c";
    for cut in 0..=raw.len() {
        assert_eq!(
            events(&[&raw[..cut], &raw[cut..]]),
            [text("abc")],
            "cut at {cut}"
        );
    }
}

#[test]
fn emoji_split_across_feeds() {
    let raw = "ok 🦀 ✅\n".as_bytes();
    for cut in 0..=raw.len() {
        assert_eq!(
            events(&[&raw[..cut], &raw[cut..]]),
            [text("ok 🦀 ✅"), Owned::LineEnd(raw.len() as u64)],
            "cut at {cut}"
        );
    }
}

#[test]
fn invalid_utf8_becomes_replacement() {
    assert_eq!(clean_text(b"a\xffb\xe2\x82"), "a\u{FFFD}b\u{FFFD}");
    assert_eq!(clean_text(b"\xe2\x82\x1b[0m!"), "\u{FFFD}!");
}

#[test]
fn crlf_split_across_feeds_is_one_line_end() {
    assert_eq!(
        events(&[b"a\r", b"\nb"]),
        [text("a"), Owned::LineEnd(3), text("b")]
    );
    assert_eq!(
        events(&[b"a\r", b"\r\n"]),
        [text("a"), Owned::CarriageReturn, Owned::LineEnd(4)]
    );
    assert_eq!(events(&[b"a\r"]), [text("a"), Owned::CarriageReturn]);
}

#[test]
fn line_end_offsets_count_from_the_start() {
    let mut cleaner = Cleaner::starting_at(100);
    let mut ends = Vec::new();
    cleaner.feed(b"ab\ncd\r\n", |event| {
        if let Event::LineEnd { end } = event {
            ends.push(end);
        }
    });
    assert_eq!((ends, cleaner.offset()), (vec![103, 107], 107));
}

#[test]
fn strips_every_kind_of_sequence() {
    let cases: &[(&[u8], &str)] = &[
        (b"\x1b[?25l\x1b[?1049hA\x1b[>4;1mB\x1b[ q", "AB"),
        (b"\x1bPq#0;2;0;0;0~-\x1b\\A", "A"),
        (
            b"\x1b_Gf=24;AAAA\x1b\\A\x1b^pm\x1b\\B\x1bXsos\x1b\\C",
            "ABC",
        ),
        (b"\x1bktmux title\x1b\\A", "A"),
        (b"\x1b(B\x1b)0\x1b#8\x1b%GA\x1b7\x1b8\x1b=\x1b>B", "AB"),
        (b"A\x07\x00\x01\x0b\x0c\x0e\x0f\x7fB", "AB"),
        ("A\u{9b}\u{85}B".as_bytes(), "AB"),
        (b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        (b"tab\there", "tab\there"),
    ];
    for (raw, expected) in cases {
        assert_eq!(clean_text(raw), *expected, "{raw:?}");
    }
}

#[test]
fn sequences_abort_like_a_terminal() {
    // CAN aborts a CSI; ESC inside an OSC ends it and starts a new sequence.
    assert_eq!(clean_text(b"\x1b[31\x18A"), "A");
    assert_eq!(clean_text(b"\x1b]0;title\x1b[1mA"), "A");
    // A byte that cannot be part of the sequence ends it and is kept as text.
    assert_eq!(clean_text("\x1b[3é".as_bytes()), "é");
    // C0 controls inside a CSI still take effect.
    assert_eq!(clean_text(b"a\x1b[3\n1mb"), "a\nb");
}

#[test]
fn unterminated_string_swallows_the_rest() {
    assert_eq!(clean_text(b"A\x1b]0;title\nB"), "A");
}

/// Byte strings rich in the characters that matter to the cleaner.
pub(crate) fn terminal_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        4 => proptest::sample::select(&b"ab Xyz09%#;[]()?~\\k"[..]).prop_map(|b| vec![b]),
        2 => proptest::sample::select(&b"\r\n\t\x08\x07\x1b\x18\x7f"[..]).prop_map(|b| vec![b]),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\x1b[".to_vec()),
        1 => Just(b"\x1b]0;".to_vec()),
        1 => Just(b"\x1b\\".to_vec()),
        1 => Just(b"\x1b[K".to_vec()),
        1 => Just(b"\x1b[1G".to_vec()),
        1 => Just("é🦀".as_bytes().to_vec()),
        1 => Just("\u{85}".as_bytes().to_vec()),
        1 => proptest::sample::select(&b"\x80\xc3\xe2\xf0\xff"[..]).prop_map(|b| vec![b]),
    ];
    proptest::collection::vec(token, 0..60).prop_map(|tokens| tokens.concat())
}

/// Split points for a byte string of any length (sorted, deduplicated, within bounds).
pub(crate) fn split(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut pieces = Vec::new();
    let mut at = 0;
    for cut in cuts.into_iter().chain([bytes.len()]) {
        pieces.push(bytes[at..cut].to_vec());
        at = cut;
    }
    pieces
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn events_do_not_depend_on_the_split(
        bytes in terminal_bytes(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let pieces = split(&bytes, &cuts);
        let refs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
        prop_assert_eq!(events(&refs), events(&[&bytes]));
    }

    #[test]
    fn clean_text_is_controls_free_and_idempotent(bytes in terminal_bytes()) {
        let cleaned = clean_text(&bytes);
        prop_assert!(!cleaned.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
        prop_assert_eq!(clean_text(cleaned.as_bytes()), cleaned.clone());
    }
}
