//! Runs the fuzz checks on a stable toolchain: on the recorded transcripts, on every
//! prefix of them, and on pseudo-random inputs built from control-mode fragments.

use termpilot_fuzz::{
    check_cast_parse, check_control_parser, check_key_names, check_quote_roundtrip, check_redactor,
    check_screen_capture, check_shell_markers, check_targets, check_terminal_cleaner,
    check_wrapper_hiding,
};

const FIXTURES: [&[u8]; 2] = [
    include_bytes!("../../crates/control/tests/fixtures/session.txt"),
    include_bytes!("../../crates/control/tests/fixtures/pause.txt"),
];

const FRAGMENTS: [&[u8]; 16] = [
    b"%begin 1 2 1\n",
    b"%end 1 2 1\n",
    b"%error 1 2 1\n",
    b"%end 1 3 1\n",
    b"%output %1 ",
    b"\\012",
    b"\\",
    b"\\37",
    b"\n",
    b"\r\n",
    b"%pause %1\n",
    b"%extended-output %2 7 : x",
    b"%exit",
    b"%layout-change @1 a b *",
    b"\xff\x00",
    b" : ",
];

/// A small deterministic generator (xorshift), so the test needs no extra crates.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn random_stream(seed: u64) -> Vec<u8> {
    let mut state = seed.max(1);
    let mut stream = Vec::new();
    for _ in 0..(next(&mut state) % 64) {
        let pick = next(&mut state) as usize;
        match pick % 4 {
            0 => stream.push(pick as u8),
            _ => stream.extend_from_slice(FRAGMENTS[pick % FRAGMENTS.len()]),
        }
    }
    stream
}

#[test]
fn fixtures_and_their_prefixes_pass_the_parser_check() {
    for fixture in FIXTURES {
        for end in (0..=fixture.len()).step_by(37) {
            check_control_parser(&fixture[..end]);
        }
        check_control_parser(fixture);
    }
}

#[test]
fn random_streams_pass_the_parser_check() {
    for seed in 1..2000 {
        check_control_parser(&random_stream(seed));
    }
}

#[test]
fn random_strings_pass_the_quote_check() {
    for seed in 1..2000 {
        check_quote_roundtrip(&random_stream(seed));
    }
    check_quote_roundtrip(&(0..=255).collect::<Vec<u8>>());
    check_quote_roundtrip(b"");
}

#[test]
fn key_names_pass_the_key_check() {
    for name in [
        "C-c",
        "M-x",
        "F5",
        "Up",
        "C-]",
        "^A",
        "Entr",
        "S-Tab",
        "é",
        "",
        " ",
        "C-",
        "M-C-S-Left",
    ] {
        check_key_names(name.as_bytes());
    }
    for seed in 1..200 {
        check_key_names(&random_stream(seed));
    }
}

#[test]
fn terminal_streams_pass_the_cleaner_check() {
    let samples: [&[u8]; 4] = [
        b"\x1b[1;31merror\x1b[0m: boom\r\n",
        b"progress 10%\rprogress 100%\n",
        b"\x1b]0;title\x07text\xf0\x9f\xa6\x80\n",
        b"tab\there\x08\x08x\n",
    ];
    for sample in samples {
        check_terminal_cleaner(sample);
    }
    for seed in 1..200 {
        check_terminal_cleaner(&random_stream(seed));
    }
}

#[test]
fn targets_and_names_pass_the_target_check() {
    for text in [
        "%3",
        "@2",
        "$1",
        "work",
        "work:1.0",
        "$1:@2.3",
        "work:editor.0",
        "work:5",
        "#h",
        "#(touch x)",
        "",
        ".",
        ":",
        "-t",
        "-a",
        "+",
        "-",
        "{next}",
        "main:^",
        "main:$",
        "=main",
        "~",
        "!",
        "main:0.+",
        "a:b",
        "a.b",
        "a$b",
        "a\\b",
        "a\tb",
        "12",
        "main:2147483648.0",
        "pts/3",
        "é:日本.1",
        "w#{session_id}",
        "##",
        "#",
    ] {
        check_targets(text.as_bytes());
    }
    for seed in 1..2000 {
        check_targets(&random_stream(seed));
    }
    let mut state = 7u64;
    for _ in 0..2000 {
        let text: String = (0..(next(&mut state) % 12))
            .map(|_| TARGET_CHARS[next(&mut state) as usize % TARGET_CHARS.len()])
            .collect();
        check_targets(text.as_bytes());
    }
}

/// Characters with a meaning in targets, names or formats, and a few without.
const TARGET_CHARS: [char; 24] = [
    '%', '@', '$', ':', '.', '=', '+', '-', '{', '}', '^', '!', '~', '#', '(', ')', '\\', '0', '7',
    'a', 'w', ' ', '\t', 'é',
];

/// The recorded shell transcripts of `crates/shell/tests/fixtures`.
const SHELL_OUTPUTS: [&[u8]; 4] = [
    include_bytes!("../../crates/shell/tests/fixtures/bash.out"),
    include_bytes!("../../crates/shell/tests/fixtures/zsh.out"),
    include_bytes!("../../crates/shell/tests/fixtures/fish.out"),
    include_bytes!("../../crates/shell/tests/fixtures/sh.out"),
];

/// A stream of the bytes `check_shell_markers` reads as markers and gaps
/// (0xf0-0xf5), escape and control bytes, and text.
fn marker_stream(seed: u64) -> Vec<u8> {
    const PIECES: [&[u8]; 10] = [
        b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4", b"\xf5", b"out\r\n", b"\x07", b"\x1b]", b"42",
    ];
    let mut state = seed.max(1);
    (0..(next(&mut state) % 48))
        .flat_map(|_| {
            PIECES[next(&mut state) as usize % PIECES.len()]
                .iter()
                .copied()
        })
        .collect()
}

#[test]
fn shell_output_passes_the_marker_check() {
    for output in SHELL_OUTPUTS {
        for end in (0..=output.len()).step_by(211) {
            check_shell_markers(&output[..end]);
        }
    }
    for seed in 1..2000 {
        check_shell_markers(&marker_stream(seed));
    }
}

#[test]
fn screens_and_commands_pass_the_hiding_check() {
    let screens: [&[u8]; 4] = [
        include_bytes!("../../crates/shell/tests/fixtures/bash.screen"),
        include_bytes!("../../crates/shell/tests/fixtures/zsh.screen"),
        include_bytes!("../../crates/shell/tests/fixtures/fish.screen"),
        include_bytes!("../../crates/shell/tests/fixtures/sh.screen"),
    ];
    for screen in screens {
        check_wrapper_hiding(screen);
    }
    for command in [
        "make test",
        "echo 'a''b' # c\nls",
        "",
        "x\n}; y",
        "é\0echo é",
    ] {
        check_wrapper_hiding(command.as_bytes());
    }
    for seed in 1..2000 {
        check_wrapper_hiding(&random_stream(seed));
        check_wrapper_hiding(&marker_stream(seed));
    }
}

#[test]
fn texts_with_secrets_pass_the_redactor_check() {
    let samples: [&[u8]; 8] = [
        b"\x07\x00\x08\x01\x03\x02\x84password: hunter22\r\n",
        b"\x05\x02\x06token=\"abc\\\\def\" then abc\\def",
        b"\x06\x10\x07\x00\x00\x01\x05secret k0] [secret k0]",
        "\x01\x00\x07é日本語\nのテキスト\r\n".as_bytes(),
        b"\x04\x00\x07\x00\x00typed value typed\nvalue",
        b"\x03\x01\x03\x01\x03ab\nab\r\nab",
        b"",
        b"\x07",
    ];
    for sample in samples {
        check_redactor(sample);
    }
    for seed in 1..2000 {
        check_redactor(&random_stream(seed));
        check_redactor(&secret_text(seed));
    }
}

/// Text made of a few short words, line breaks and escapes, so that the
/// secrets taken from it show up in it again and across lines.
fn secret_text(seed: u64) -> Vec<u8> {
    const PIECES: [&[u8]; 10] = [
        b"pw",
        b"hunter",
        b"22",
        b"\n",
        b"\r\n",
        b"\"",
        b"\\",
        b"\t",
        b"[secret ",
        b"]",
    ];
    let mut state = seed.max(1);
    let mut text: Vec<u8> = (0..5).map(|_| next(&mut state) as u8).collect();
    for _ in 0..(next(&mut state) % 24) {
        text.extend_from_slice(PIECES[next(&mut state) as usize % PIECES.len()]);
    }
    text
}

#[test]
fn captures_pass_the_screen_check() {
    let samples: [&[u8]; 5] = [
        b"\x14\x04\x01\x02\x00\x00\x1b[41m RED \x1b[0m ok\nnext line\n",
        b"\x03\x02\x09\x09\x01\x01# dropped\nkept\n# dropped\n",
        "\x05\x03\x00\x04\x00\x02日本語abの\x1b[1;38;2;1;2;3mtext\nab\n".as_bytes(),
        b"\x00\x00\x00\x00\x00\x00nothing to draw",
        b"\xff\xff\xff\xff\xff\xff\x1b[38;5;300;48;5m\x1b[\x1b[999999999999m\n\n\n",
    ];
    for sample in samples {
        check_screen_capture(sample);
    }
    for seed in 1..300 {
        check_screen_capture(&random_stream(seed));
        check_screen_capture(&capture_text(seed));
    }
}

/// A capture made of text, SGR sequences (some broken), wide characters
/// and line breaks, after six bytes of size, cursor and rewrite.
fn capture_text(seed: u64) -> Vec<u8> {
    const PIECES: [&[u8]; 12] = [
        b"\x1b[1;31m",
        b"\x1b[0m",
        b"\x1b[38;2;9;9",
        b"\x1b[48;5;17m",
        b"\x1b[",
        b"ab",
        b"#",
        b"\n",
        "日本".as_bytes(),
        "\u{2502}\u{2588}".as_bytes(),
        b"word ",
        b"\t",
    ];
    let mut state = seed.max(1);
    let mut text: Vec<u8> = (0..6).map(|_| next(&mut state) as u8).collect();
    for _ in 0..(next(&mut state) % 40) {
        text.extend_from_slice(PIECES[next(&mut state) as usize % PIECES.len()]);
    }
    text
}

#[test]
fn recordings_pass_the_cast_check() {
    let header = r#"{"version":3,"term":{"cols":80,"rows":24}}"#;
    let texts = [
        format!("{header}\n[0.5,\"o\",\"a\"]\n# note\n[1,\"r\",\"100x40\"]\n"),
        format!("{header}\n[0.1,\"x\",\"-1\"]\n[0.1,\"m\",\"\\u0000\"]\n"),
        format!("{header}\n[0.1,\"o\"]\n"),
        // Found by this check: an interval past `Duration`'s range, and
        // times adding up past it, panicked instead of being refused.
        format!("{header}\n[1e20,\"o\",\"a\"]\n"),
        format!("{header}\n[1e19,\"o\",\"a\"]\n[1e19,\"o\",\"a\"]\n"),
        "not json".to_owned(),
        String::new(),
    ];
    for text in texts {
        check_cast_parse(text.as_bytes());
    }
    check_cast_parse(b"\x05\x18\x00\x07\x22ok \xe2\x41\x9c\x94!");
    check_cast_parse(b"\x01\x02\x03\x04\x42\xe2\x9c\x22\x94ok\x8b\x41\x42\x43\x44");
    for seed in 1..2000 {
        check_cast_parse(&random_stream(seed));
    }
}
