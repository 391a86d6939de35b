//! The bytes tmux 3.3a's `input_key` writes to a pane for a key, in the pane's default
//! modes (normal cursor and keypad mode, extended keys off, `backspace` option DEL).

use super::{Key, KeyCode, Modifiers, NamedKey};

const ESC: u8 = 0x1b;

/// Appends the bytes for `key` to `out`; appends nothing for keys tmux cannot send.
pub(super) fn write_bytes(key: Key, out: &mut Vec<u8>) {
    match key.code {
        KeyCode::Char(c) => write_char(c, key.modifiers, out),
        // tmux replaces BSpace with the `backspace` option's key (DEL) before encoding.
        KeyCode::Named(NamedKey::BSpace) => write_char('\x7f', key.modifiers, out),
        KeyCode::Named(named) => match modifiable_sequence(named) {
            Some(seq) => write_modifiable(seq, key.modifiers, out),
            None => write_unmodifiable(plain_sequence(named), key.modifiers, out),
        },
    }
}

fn write_char(c: char, modifiers: Modifiers, out: &mut Vec<u8>) {
    let meta = modifiers.contains(Modifiers::META);
    let rest = modifiers.without(Modifiers::META);
    // A non-ASCII character ignores C- and S-: tmux sends it as UTF-8 either way.
    if rest.is_empty() || !c.is_ascii() {
        if meta {
            out.push(ESC);
        }
        let mut utf8 = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
    } else if rest == Modifiers::CTRL && !meta {
        // Without extended keys, tmux still maps a few Ctrl+character keys that parsing
        // left alone to control characters; letters were already converted by the parser.
        if let Some(control) = ctrl_fallback(c) {
            out.push(control);
        }
    }
}

/// The control character tmux sends for Ctrl plus a character the parser kept as is.
fn ctrl_fallback(c: char) -> Option<u8> {
    match c {
        ' ' | '2' => Some(0),
        '6' => Some(0x1e),
        '-' | '/' => Some(0x1f),
        _ => None,
    }
}

/// A key whose sequence takes an xterm modifier parameter: `prefix` then `;m` then `last`.
#[derive(Clone, Copy)]
struct ModifiableSequence {
    /// The bytes sent without modifiers.
    plain: &'static [u8],
    /// The parameter before `;m` (`1` for the keys whose plain form has none).
    param: &'static [u8],
    /// The final byte of the modified form.
    last: u8,
}

const fn seq(plain: &'static [u8], param: &'static [u8], last: u8) -> Option<ModifiableSequence> {
    Some(ModifiableSequence { plain, param, last })
}

fn modifiable_sequence(key: NamedKey) -> Option<ModifiableSequence> {
    match key {
        NamedKey::F1 => seq(b"\x1bOP", b"1", b'P'),
        NamedKey::F2 => seq(b"\x1bOQ", b"1", b'Q'),
        NamedKey::F3 => seq(b"\x1bOR", b"1", b'R'),
        NamedKey::F4 => seq(b"\x1bOS", b"1", b'S'),
        NamedKey::F5 => seq(b"\x1b[15~", b"15", b'~'),
        NamedKey::F6 => seq(b"\x1b[17~", b"17", b'~'),
        NamedKey::F7 => seq(b"\x1b[18~", b"18", b'~'),
        NamedKey::F8 => seq(b"\x1b[19~", b"19", b'~'),
        NamedKey::F9 => seq(b"\x1b[20~", b"20", b'~'),
        NamedKey::F10 => seq(b"\x1b[21~", b"21", b'~'),
        NamedKey::F11 => seq(b"\x1b[23~", b"23", b'~'),
        NamedKey::F12 => seq(b"\x1b[24~", b"24", b'~'),
        NamedKey::Insert => seq(b"\x1b[2~", b"2", b'~'),
        NamedKey::Delete => seq(b"\x1b[3~", b"3", b'~'),
        NamedKey::Home => seq(b"\x1b[1~", b"1", b'H'),
        NamedKey::End => seq(b"\x1b[4~", b"1", b'F'),
        NamedKey::PageUp => seq(b"\x1b[5~", b"5", b'~'),
        NamedKey::PageDown => seq(b"\x1b[6~", b"6", b'~'),
        NamedKey::Up => seq(b"\x1b[A", b"1", b'A'),
        NamedKey::Down => seq(b"\x1b[B", b"1", b'B'),
        NamedKey::Right => seq(b"\x1b[C", b"1", b'C'),
        NamedKey::Left => seq(b"\x1b[D", b"1", b'D'),
        _ => None,
    }
}

/// Writes `ESC [ param ; m last`, where m is 1 + Shift + 2·Meta + 4·Ctrl (xterm).
fn write_modifiable(seq: ModifiableSequence, modifiers: Modifiers, out: &mut Vec<u8>) {
    if modifiers.is_empty() {
        out.extend_from_slice(seq.plain);
        return;
    }
    let weight = |m: Modifiers, w: u8| if modifiers.contains(m) { w } else { 0 };
    let m =
        1 + weight(Modifiers::SHIFT, 1) + weight(Modifiers::META, 2) + weight(Modifiers::CTRL, 4);
    out.extend_from_slice(b"\x1b[");
    out.extend_from_slice(seq.param);
    out.extend_from_slice(&[b';', b'0' + m, seq.last]);
}

/// The sequence of a key that takes no modifier parameter (back-tab and the keypad).
fn plain_sequence(key: NamedKey) -> &'static [u8] {
    match key {
        NamedKey::BTab => b"\x1b[Z",
        NamedKey::KpSlash => b"/",
        NamedKey::KpStar => b"*",
        NamedKey::KpMinus => b"-",
        NamedKey::KpPlus => b"+",
        NamedKey::KpPeriod => b".",
        NamedKey::KpEnter => b"\n",
        NamedKey::Kp0 => b"0",
        NamedKey::Kp1 => b"1",
        NamedKey::Kp2 => b"2",
        NamedKey::Kp3 => b"3",
        NamedKey::Kp4 => b"4",
        NamedKey::Kp5 => b"5",
        NamedKey::Kp6 => b"6",
        NamedKey::Kp7 => b"7",
        NamedKey::Kp8 => b"8",
        NamedKey::Kp9 => b"9",
        // Covered by `modifiable_sequence` and `write_bytes`; never reached.
        _ => b"",
    }
}

/// Only Meta (as an ESC prefix) combines with these keys; tmux drops C- and S- forms.
fn write_unmodifiable(plain: &[u8], modifiers: Modifiers, out: &mut Vec<u8>) {
    if !modifiers.without(Modifiers::META).is_empty() {
        return;
    }
    if modifiers.contains(Modifiers::META) {
        out.push(ESC);
    }
    out.extend_from_slice(plain);
}
