use super::*;
use proptest::prelude::*;

fn key(name: &str) -> Key {
    parse_key(name).unwrap_or_else(|e| panic!("{name:?} should parse: {e}"))
}

fn bytes(name: &str) -> Vec<u8> {
    key(name).bytes()
}

#[test]
fn single_characters_are_keys() {
    assert_eq!(key("a").code(), KeyCode::Char('a'));
    assert_eq!(key("é").code(), KeyCode::Char('é'));
    assert_eq!(key(";").code(), KeyCode::Char(';'));
    assert_eq!(key("^").code(), KeyCode::Char('^'));
    assert_eq!(key("-").code(), KeyCode::Char('-'));
    assert_eq!(key(" ").code(), KeyCode::Char(' '));
    assert_eq!(key("😀").bytes(), "😀".as_bytes());
}

#[test]
fn table_names_ignore_case_and_accept_every_spelling() {
    for (name, code) in [
        ("enter", KeyCode::Char('\r')),
        ("ESCAPE", KeyCode::Char('\x1b')),
        ("tab", KeyCode::Char('\t')),
        ("space", KeyCode::Char(' ')),
        ("PgUp", KeyCode::Named(NamedKey::PageUp)),
        ("PPage", KeyCode::Named(NamedKey::PageUp)),
        ("pagedown", KeyCode::Named(NamedKey::PageDown)),
        ("npage", KeyCode::Named(NamedKey::PageDown)),
        ("IC", KeyCode::Named(NamedKey::Insert)),
        ("dc", KeyCode::Named(NamedKey::Delete)),
        ("f12", KeyCode::Named(NamedKey::F12)),
        ("kpenter", KeyCode::Named(NamedKey::KpEnter)),
        ("KP/", KeyCode::Named(NamedKey::KpSlash)),
        ("KP-", KeyCode::Named(NamedKey::KpMinus)),
        ("BTab", KeyCode::Named(NamedKey::BTab)),
        ("bspace", KeyCode::Named(NamedKey::BSpace)),
    ] {
        assert_eq!(key(name).code(), code, "{name}");
        assert!(key(name).modifiers().is_empty(), "{name}");
    }
}

#[test]
fn modifiers_combine_in_any_order_and_case() {
    let up = key("s-m-C-Up");
    assert_eq!(up.code(), KeyCode::Named(NamedKey::Up));
    assert_eq!(
        up.modifiers(),
        Modifiers::CTRL | Modifiers::META | Modifiers::SHIFT
    );
    assert_eq!(up.tmux_name(), "C-M-S-Up");
    assert_eq!(key("M-x").modifiers(), Modifiers::META);
    assert_eq!(key("C--").modifiers(), Modifiers::CTRL);
    assert_eq!(key("C--").code(), KeyCode::Char('-'));
}

#[test]
fn ctrl_letters_become_control_characters() {
    assert_eq!(key("C-c"), key("C-C"));
    assert_eq!(key("C-c"), key("^c"));
    assert_eq!(key("C-c").code(), KeyCode::Char('\x03'));
    assert!(key("C-c").modifiers().is_empty());
    assert_eq!(key("C-["), key("Escape"));
    assert_eq!(key("C-i"), key("Tab"));
    assert_eq!(key("C-Space").code(), KeyCode::Char('\0'));
    assert_eq!(key("C-@"), key("C-Space"));
    assert_eq!(key("C-?").code(), KeyCode::Char('\x7f'));
    assert_eq!(key("C-M-a").modifiers(), Modifiers::META);
}

#[test]
fn ctrl_stays_a_modifier_where_tmux_keeps_it() {
    for name in ["C-2", "C-6", "C--", "C-/", "C-é", "C-M-é"] {
        assert!(key(name).modifiers().contains(Modifiers::CTRL), "{name}");
    }
}

#[test]
fn hex_codes_are_characters() {
    assert_eq!(key("0x03"), key("C-c"));
    assert_eq!(key("0x41").code(), KeyCode::Char('A'));
    assert_eq!(key("0xe9").code(), KeyCode::Char('é'));
    assert_eq!(key("0x1b"), key("Escape"));
    for bad in ["0x", "0xZZ", "0x41zz", "0xd800", "0x110000", "0x1ffffffff"] {
        assert!(
            matches!(parse_key(bad), Err(KeyError::Unknown { .. })),
            "{bad}"
        );
    }
}

#[test]
fn rejects_unknown_names_with_suggestions() {
    assert_eq!(
        parse_key("Entr"),
        Err(KeyError::Unknown {
            name: "Entr".into(),
            suggestion: Some("Enter".into())
        })
    );
    for bad in [
        "hello", "C-", "C-M-", "--", "x-y", "F13", "éa", "a b", "\x01",
    ] {
        assert!(
            matches!(parse_key(bad), Err(KeyError::Unknown { .. })),
            "{bad:?}"
        );
    }
    assert_eq!(parse_key(""), Err(KeyError::Empty));
}

#[test]
fn rejects_keys_tmux_accepts_but_cannot_send() {
    for name in [
        "Any",
        "none",
        "MouseDown1Pane",
        "C-WheelUpPane",
        "User0",
        "DoubleClick1Status",
    ] {
        assert!(
            matches!(parse_key(name), Err(KeyError::Unsupported { .. })),
            "{name}"
        );
    }
    for name in ["C-{", "C-$", "C-~", "C-|"] {
        assert!(
            matches!(parse_key(name), Err(KeyError::Unsupported { .. })),
            "{name}"
        );
    }
}

#[test]
fn error_messages_name_the_key_and_the_fix() {
    let err = parse_key("Esc").unwrap_err().to_string();
    assert!(
        err.starts_with("unknown key name 'Esc' (did you mean 'Escape'?)"),
        "{err}"
    );
    let err = parse_key("hello").unwrap_err().to_string();
    assert!(
        err.starts_with("unknown key name 'hello'; names are"),
        "{err}"
    );
    let err = parse_key("Any").unwrap_err().to_string();
    assert!(err.contains("not supported"), "{err}");
}

#[test]
fn sequences_split_on_whitespace() {
    let keys = parse_sequence("  Escape c\tC-x  C-c ").unwrap();
    let names: Vec<String> = keys.iter().map(Key::tmux_name).collect();
    assert_eq!(names, ["Escape", "c", "C-x", "C-c"]);
    assert_eq!(parse_sequence("   "), Err(KeyError::Empty));
    assert!(matches!(
        parse_sequence("Enter Entr"),
        Err(KeyError::Unknown { .. })
    ));
}

#[test]
fn canonical_names() {
    for (input, name) in [
        ("^c", "C-c"),
        ("c-A", "C-a"),
        ("m-up", "M-Up"),
        ("enter", "Enter"),
        ("C-[", "Escape"),
        ("PgUp", "PageUp"),
        ("IC", "Insert"),
        ("0x00", "C-Space"),
        ("M-C-Space", "C-M-Space"),
        ("C-\\", "C-\\"),
        ("C-_", "C-_"),
        ("0x7f", "C-?"),
        ("0x0a", "C-j"),
        ("s-up", "S-Up"),
        ("M-\x7f", "C-M-?"),
        ("KP.", "KP."),
        (" ", "Space"),
    ] {
        assert_eq!(key(input).tmux_name(), name, "{input}");
        assert_eq!(key(input).to_string(), name, "{input}");
    }
}

#[test]
fn bytes_of_characters_and_control_keys() {
    assert_eq!(bytes("a"), b"a");
    assert_eq!(bytes("Enter"), b"\r");
    assert_eq!(bytes("Tab"), b"\t");
    assert_eq!(bytes("Escape"), b"\x1b");
    assert_eq!(bytes("Space"), b" ");
    assert_eq!(bytes("BSpace"), b"\x7f");
    assert_eq!(bytes("C-c"), b"\x03");
    assert_eq!(bytes("C-Space"), b"\0");
    assert_eq!(bytes("M-x"), b"\x1bx");
    assert_eq!(bytes("M-C-c"), b"\x1b\x03");
    assert_eq!(bytes("M-Enter"), b"\x1b\r");
    assert_eq!(bytes("M-BSpace"), b"\x1b\x7f");
    assert_eq!(bytes("M-é"), "\x1bé".as_bytes());
    assert_eq!(bytes("C-é"), "é".as_bytes());
}

#[test]
fn bytes_of_ctrl_digits_follow_the_vt220_convention() {
    assert_eq!(bytes("C-2"), b"\0");
    assert_eq!(bytes("C-6"), b"\x1e");
    assert_eq!(bytes("C--"), b"\x1f");
    assert_eq!(bytes("C-/"), b"\x1f");
}

#[test]
fn bytes_of_cursor_and_editing_keys_in_normal_mode() {
    assert_eq!(bytes("Up"), b"\x1b[A");
    assert_eq!(bytes("Down"), b"\x1b[B");
    assert_eq!(bytes("Right"), b"\x1b[C");
    assert_eq!(bytes("Left"), b"\x1b[D");
    assert_eq!(bytes("Home"), b"\x1b[1~");
    assert_eq!(bytes("End"), b"\x1b[4~");
    assert_eq!(bytes("Insert"), b"\x1b[2~");
    assert_eq!(bytes("Delete"), b"\x1b[3~");
    assert_eq!(bytes("PageUp"), b"\x1b[5~");
    assert_eq!(bytes("PageDown"), b"\x1b[6~");
    assert_eq!(bytes("BTab"), b"\x1b[Z");
    assert_eq!(bytes("M-BTab"), b"\x1b\x1b[Z");
}

#[test]
fn bytes_of_function_keys() {
    let expected: [&[u8]; 12] = [
        b"\x1bOP",
        b"\x1bOQ",
        b"\x1bOR",
        b"\x1bOS",
        b"\x1b[15~",
        b"\x1b[17~",
        b"\x1b[18~",
        b"\x1b[19~",
        b"\x1b[20~",
        b"\x1b[21~",
        b"\x1b[23~",
        b"\x1b[24~",
    ];
    for (n, want) in (1..=12).zip(expected) {
        assert_eq!(bytes(&format!("F{n}")), want, "F{n}");
    }
}

#[test]
fn bytes_of_modified_keys_carry_the_xterm_parameter() {
    assert_eq!(bytes("S-Up"), b"\x1b[1;2A");
    assert_eq!(bytes("M-Up"), b"\x1b[1;3A");
    assert_eq!(bytes("S-M-Up"), b"\x1b[1;4A");
    assert_eq!(bytes("C-Left"), b"\x1b[1;5D");
    assert_eq!(bytes("C-S-Right"), b"\x1b[1;6C");
    assert_eq!(bytes("C-M-Down"), b"\x1b[1;7B");
    assert_eq!(bytes("C-M-S-Up"), b"\x1b[1;8A");
    assert_eq!(bytes("S-Home"), b"\x1b[1;2H");
    assert_eq!(bytes("C-End"), b"\x1b[1;5F");
    assert_eq!(bytes("S-F1"), b"\x1b[1;2P");
    assert_eq!(bytes("M-F5"), b"\x1b[15;3~");
    assert_eq!(bytes("C-F12"), b"\x1b[24;5~");
    assert_eq!(bytes("C-PageUp"), b"\x1b[5;5~");
    assert_eq!(bytes("S-Delete"), b"\x1b[3;2~");
}

#[test]
fn bytes_of_keypad_keys_are_plain_characters() {
    assert_eq!(bytes("KP5"), b"5");
    assert_eq!(bytes("KP*"), b"*");
    assert_eq!(bytes("KPEnter"), b"\n");
    assert_eq!(bytes("M-KP0"), b"\x1b0");
}

#[test]
fn rejects_keys_that_send_nothing_in_normal_mode() {
    for name in [
        "S-a",
        "C-S-a",
        "C-Tab",
        "S-Tab",
        "C-Enter",
        "S-Space",
        "S-BTab",
        "C-BTab",
        "C-KP5",
        "C-1",
        "C-;",
        "C-M-2",
        "C-BSpace",
        "C-Escape",
        "M-S-Enter",
        "C-\x7f",
    ] {
        assert!(
            matches!(parse_key(name), Err(KeyError::Unsendable { .. })),
            "{name}"
        );
    }
    let err = parse_key("S-Tab").unwrap_err().to_string();
    assert_eq!(
        err,
        "key 'S-Tab' cannot be sent: a terminal in its default mode has no bytes for it (did you mean 'BTab'?)"
    );
}

#[test]
fn write_bytes_appends() {
    let mut out = b"x".to_vec();
    key("Up").write_bytes(&mut out);
    key("C-c").write_bytes(&mut out);
    assert_eq!(out, b"x\x1b[A\x03");
}

fn any_key_name() -> impl Strategy<Value = String> {
    let base = prop_oneof![
        any::<char>()
            .prop_filter("printable", |c| *c >= ' ')
            .prop_map(String::from),
        proptest::sample::select(table::NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>())
            .prop_map(str::to_owned),
        (0u32..0x20).prop_map(|v| format!("0x{v:02x}")),
    ];
    let prefix = proptest::collection::vec(
        proptest::sample::select(vec!["C-", "M-", "S-", "c-", "m-", "s-"]),
        0..4,
    );
    // DEL and a leading caret are rare under `any::<char>()` but have special cases.
    let base = prop_oneof![4 => base, 1 => Just("\x7f".to_owned())];
    let caret = proptest::sample::select(vec!["", "", "^"]);
    (caret, prefix, base).prop_map(|(caret, p, b)| {
        if b.starts_with("0x") {
            b
        } else {
            format!("{caret}{}{b}", p.concat())
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn canonical_names_parse_back_to_the_same_key(name in any_key_name()) {
        if let Ok(key) = parse_key(&name) {
            prop_assert!(!key.bytes().is_empty());
            let canonical = key.tmux_name();
            prop_assert_eq!(parse_key(&canonical), Ok(key), "{} -> {}", name, canonical);
            prop_assert_eq!(key.tmux_name(), parse_key(&canonical).unwrap().tmux_name());
        }
    }

    #[test]
    fn parsing_never_panics(name in ".{0,12}") {
        let _ = parse_key(&name);
        let _ = parse_sequence(&name);
    }

    #[test]
    fn sequences_of_canonical_names_round_trip(names in proptest::collection::vec(any_key_name(), 1..6)) {
        let keys: Vec<Key> = names.iter().filter_map(|n| parse_key(n).ok()).collect();
        prop_assume!(!keys.is_empty());
        let spec = keys.iter().map(Key::tmux_name).collect::<Vec<_>>().join(" ");
        prop_assert_eq!(parse_sequence(&spec), Ok(keys));
    }
}
