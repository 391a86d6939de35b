use proptest::prelude::*;

use super::*;

fn configured(pairs: &[(&str, &str)]) -> Redaction {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    let redactor = Redactor::default();
    redactor.set_values(move || pairs.clone());
    redactor.now()
}

#[test]
fn values_are_replaced_by_their_names() {
    let now = configured(&[("pw", "hunter22")]);
    assert_eq!(
        now.redact("a hunter22 b hunter22"),
        "a [secret pw] b [secret pw]"
    );
    assert_eq!(now.redact("hunter2"), "hunter2");
    assert!(matches!(now.redact("nothing"), Cow::Borrowed(_)));
    assert!(Redaction::default().is_empty());
}

#[test]
fn a_value_split_by_line_breaks_is_hidden_whole() {
    let now = configured(&[("pw", "hunter22")]);
    assert_eq!(now.redact("got:hun\r\nter22\n"), "got:[secret pw]\n");
    assert_eq!(now.redact("x hunter\n22"), "x [secret pw]");
    let lines = vec![
        "got:hunt".to_owned(),
        "er22 ok".to_owned(),
        "next".to_owned(),
    ];
    assert_eq!(now.redact_lines(lines), vec!["got:[secret pw] ok", "next"]);
}

#[test]
fn escaped_forms_are_hidden() {
    let now = configured(&[("q", "Dq\"5\\X")]);
    assert_eq!(now.redact("raw Dq\"5\\X"), "raw [secret q]");
    // Rust's {:?} and JSON both escape `"` and `\`.
    let debug = format!("{:?}", "Dq\"5\\X");
    assert_eq!(
        now.redact(&format!("error: {debug}")),
        "error: \"[secret q]\""
    );
    let json = serde_like_json("tab\there");
    let now = configured(&[("t", "tab\there")]);
    assert_eq!(now.redact(&json), "\"[secret t]\"");
}

fn serde_like_json(value: &str) -> String {
    format!("\"{}\"", json_escaped(value))
}

#[test]
fn overlapping_values_leave_no_character_of_either() {
    let now = configured(&[("a", "abcdef"), ("b", "defghi")]);
    assert_eq!(now.redact("xabcdefghiy"), "x[secret a]y");
    let nested = configured(&[("short", "hunter"), ("long", "hunter22")]);
    assert_eq!(
        nested.redact("hunter22 hunter"),
        "[secret long] [secret short]"
    );
    let itself = configured(&[("r", "aaaa")]);
    assert_eq!(itself.redact("aaaaa"), "[secret r]");
}

#[test]
fn unicode_values_and_text() {
    let now = configured(&[("u", "pä55wörd")]);
    assert_eq!(now.redact("é pä55wörd é"), "é [secret u] é");
    assert_eq!(now.held_back("got pä"), "pä".len());
    assert_eq!(now.held_back("got p"), 1);
    assert_eq!(now.held_back("got x"), 0);
    // A whole value at the end is not held back: it is redacted.
    assert_eq!(now.held_back("pä55wörd"), 0);
}

#[test]
fn typed_values_are_found_by_fingerprint_only() {
    let redactor = Redactor::default();
    assert!(!redactor.remember_typed("pin", "123", b"salt"));
    assert!(redactor.remember_typed("vault", "s3cr\"t!", b"0123456789abcdef"));
    let now = redactor.now();
    assert_eq!(
        now.redact("you typed: s3cr\"t!, again s3cr\"t!"),
        "you typed: [secret vault], again [secret vault]"
    );
    assert_eq!(now.redact("err \"s3cr\\\"t!\""), "err \"[secret vault]\"");
    assert_eq!(now.redact("s3cr\n\"t!"), "[secret vault]");
    assert_eq!(now.redact("s3cr\"t"), "s3cr\"t");
    let shown = format!(
        "{:?}",
        now.typed
            .iter()
            .map(|f| (f.digest, f.rolled))
            .collect::<Vec<_>>()
    );
    assert!(!shown.contains("s3cr"));
}

#[test]
fn at_most_so_many_typed_values_are_kept() {
    let redactor = Redactor::default();
    redactor.remember_typed("first", "first-value", b"salt");
    for n in 0..TYPED_KEPT {
        redactor.remember_typed("n", &format!("value-{n:04}"), b"salt");
    }
    let now = redactor.now();
    assert_eq!(now.redact("first-value"), "first-value");
    assert_eq!(now.redact("value-0007"), "[secret n]");
}

#[test]
fn debug_shows_no_value() {
    let redactor = Redactor::default();
    redactor.set_values(|| vec![("pw".into(), "hunter22".into())]);
    redactor.remember_typed("t", "typedvalue", b"salt");
    let shown = format!("{redactor:?} {:?}", redactor.now());
    assert!(
        !shown.contains("hunter22") && !shown.contains("typedvalue"),
        "{shown}"
    );
}

proptest! {
    #[test]
    fn no_value_survives_however_the_text_is_cut(
        value in "[a-z0-9\"\\\\é]{4,12}",
        before in "[ -~é\n]{0,20}",
        after in "[ -~é\n]{0,20}",
        breaks in proptest::collection::vec(0usize..12, 0..3),
    ) {
        let mut shown = value.clone();
        for at in breaks.iter().rev() {
            if let Some((at, _)) = shown.char_indices().nth(*at) && at > 0 {
                shown.insert(at, '\n');
            }
        }
        let text = format!("{before}{shown}{after}");
        let now = configured(&[("v", &value)]);
        let out = now.redact(&text).into_owned();
        prop_assert!(out.contains("[secret v]"), "{text:?} -> {out:?}");
        let redactor = Redactor::default();
        redactor.remember_typed("v", &value, b"some salt");
        let typed = redactor.now().redact(&text).into_owned();
        prop_assert!(typed.contains("[secret v]"), "{text:?} -> {typed:?}");
    }

    #[test]
    fn text_without_values_is_unchanged(text in "[ -~é\n]{0,60}") {
        let now = configured(&[("v", "\u{1}never")]);
        prop_assert_eq!(now.redact(&text), text.as_str());
    }

    #[test]
    fn a_held_back_end_never_reveals_a_prefix(value in "[a-z]{4,10}", cut in 1usize..10, before in "[a-z ]{0,10}") {
        let cut = cut.min(value.len() - 1);
        let line = format!("{before}{}", &value[..cut]);
        let now = configured(&[("v", &value)]);
        let kept = line.len() - now.held_back(&line);
        prop_assert!(kept <= before.len());
    }
}

#[test]
fn output_read_up_to_now_holds_back_a_beginning() {
    let now = configured(&[("pw", "hunter22")]);
    assert_eq!(now.redact_unfinished("a\ngot:hunt"), "a\ngot:");
    assert_eq!(now.redact_unfinished("got:hunt\n"), "got:hunt\n");
    assert_eq!(now.redact_unfinished("got:hunter22"), "got:[secret pw]");
}

#[test]
fn a_position_inside_a_secret_moves_to_its_start() {
    let now = configured(&[("pw", "hunter22")]);
    let text = b"got:hunter22 ok";
    assert_eq!(now.start_outside(text, 7), 4);
    assert_eq!(now.start_outside(text, 4), 4);
    assert_eq!(now.start_outside(text, 12), 12);
    assert_eq!(now.start_outside(text, 2), 2);
    // The beginning of one whose rest has not arrived yet.
    assert_eq!(now.start_outside(b"got:hun", 6), 4);
    assert_eq!(now.start_outside(b"got:hux", 6), 6);
    let redactor = Redactor::default();
    redactor.remember_typed("t", "typedvalue", b"salt");
    assert_eq!(redactor.now().start_outside(b"x typedvalue", 5), 2);
    assert_eq!(redactor.now().longest(), "typedvalue".len());
}

#[test]
fn a_journal_read_never_starts_inside_a_secret() {
    let mut journal = crate::Journal::new(crate::Limits::default());
    journal.append(b"$ echo\r\ngot:hunter22\r\n");
    let now = configured(&[("pw", "hunter22")]);
    let inside = 8 + 4 + 3;
    assert_eq!(journal.outside_secrets(inside, &now), 12);
    assert_eq!(journal.outside_secrets(2, &now), 2);
    assert_eq!(
        journal.outside_secrets(inside, &Redaction::default()),
        inside
    );
}
