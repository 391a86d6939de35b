//! Key names in tmux 3.3a syntax: parsing, canonical names and the bytes a key sends.
//!
//! # What was verified, and where
//!
//! Parsing follows `key_string_lookup_string` in tmux 3.3a's `key-string.c`:
//!
//! - A name is optional modifiers followed by one key. Modifiers are `C-`, `M-` and `S-`
//!   (either case, any order, repeats allowed); a leading `^` followed by something is
//!   `C-` too (`^c` is `C-c`). A modifier with nothing after it (`C-`) is unknown.
//! - The key is either exactly one character (any Unicode scalar value, but not an ASCII
//!   control character) or a name from tmux's key table, compared without regard to case
//!   (`enter`, `PGUP`, `kp5`). Any other word is unknown.
//! - `C-` on an ASCII character becomes the control character at parse time: `C-a`..`C-z`
//!   and `C-@`..`C-_` (so `C-A` is `C-a`, `C-[` is `Escape`), `C-Space` is NUL and `C-?`
//!   is DEL. On `Tab`, `Enter`, `Escape`, DEL, the digits and the characters
//!   `! # ( ) + , - . : ; < = > ' /` and backtick, `C-` stays a modifier (when sent,
//!   `C-2` is NUL, `C-6` is 0x1e, `C--` and `C-/` are 0x1f; the others send nothing). On
//!   any other ASCII character (`C-{`, `C-$`, `C-~`) tmux reports the name as unknown.
//!   `C-` on a non-ASCII character stays a modifier.
//! - `0x` followed by hex digits is a key code: below 0x20 the raw control character,
//!   otherwise that Unicode character. Modifiers cannot be combined with it.
//!
//! Deliberate differences from tmux: `None`, `Any`, mouse keys and `User0`..`User999` are
//! rejected as [`KeyError::Unsupported`]; a hex code with trailing garbage (`0x41zz`,
//! which tmux's `sscanf` reads as `A`) is rejected. `send-keys` would type an unknown name
//! literally, character by character; here it is an error with a suggestion, which is the
//! point of validating. Canonical names use `Insert`, `Delete`, `PageUp` and `PageDown`
//! where tmux prints `IC`, `DC`, `PPage` and `NPage`; tmux accepts both.
//!
//! The bytes follow `input_key` in tmux 3.3a's `input-keys.c` for a pane in its default
//! modes (no application cursor or keypad mode, no extended keys), with the default
//! `backspace` option (DEL):
//!
//! - A character is its UTF-8 encoding; `M-` puts ESC in front. `C-`/`S-` left on a
//!   non-ASCII character are ignored.
//! - `Up`/`Down`/`Right`/`Left` are `ESC [ A/B/C/D`, `Home`/`End` `ESC [ 1 ~`/`ESC [ 4 ~`,
//!   `Insert`/`Delete`/`PageUp`/`PageDown` `ESC [ 2/3/5/6 ~`, `F1`..`F4` `ESC O P..S`,
//!   `F5`..`F12` `ESC [ 15/17/18/19/20/21/23/24 ~`, `BTab` `ESC [ Z`, `BSpace` DEL.
//!   With modifiers, the arrows, `Home`, `End` and the function and editing keys carry
//!   an xterm modifier parameter (`C-Up` is `ESC [ 1 ; 5 A`, `M-F5` is `ESC [ 15 ; 3 ~`).
//! - Keypad keys send their plain characters (`KPEnter` sends LF, not CR).
//! - Some names tmux parses have no bytes in these modes: `S-`/`C-` combinations such as
//!   `S-a`, `S-Tab`, `C-S-a`, `C-Tab`, `C-Enter`, `S-Space`, `C-KP5`, `C-1`, `C-M-2`. tmux's
//!   `send-keys` then sends nothing, or, where `input_key` reports the key as missing
//!   (`S-a`, `S-Tab`, `C-M-Enter`, ...), types the name itself as text. [`parse_key`]
//!   rejects them as [`KeyError::Unsendable`], suggesting a key that works (`S-Tab`:
//!   `BTab`, `S-a`: `A`), so [`Key::bytes`] is never empty.
//!
//! The bytes are also checked against tmux itself (3.3a here) by `tests/tmux_keys.rs`:
//! `send-keys` of every table name and 26 characters under all eight modifier
//! combinations, into a pane whose program records its raw input, gives exactly
//! [`Key::bytes`] for every key accepted here, and nothing or the name as text for the
//! rejected ones.

mod encode;
mod suggest;
mod table;

use std::fmt;
use std::ops::BitOr;
use std::str::FromStr;

/// A set of key modifiers: Ctrl (`C-`), Meta/Alt (`M-`) and Shift (`S-`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Modifiers(u8);

impl Modifiers {
    /// No modifier.
    pub const NONE: Modifiers = Modifiers(0);
    /// Ctrl, written `C-`.
    pub const CTRL: Modifiers = Modifiers(1);
    /// Meta (Alt), written `M-`.
    pub const META: Modifiers = Modifiers(2);
    /// Shift, written `S-`.
    pub const SHIFT: Modifiers = Modifiers(4);

    /// Whether every modifier in `other` is in `self`.
    pub const fn contains(self, other: Modifiers) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no modifier is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `self` without the modifiers in `other`.
    pub const fn without(self, other: Modifiers) -> Modifiers {
        Modifiers(self.0 & !other.0)
    }
}

impl BitOr for Modifiers {
    type Output = Modifiers;

    fn bitor(self, rhs: Modifiers) -> Modifiers {
        Modifiers(self.0 | rhs.0)
    }
}

/// A key that has a name in tmux's key table and is not a character.
#[allow(missing_docs)] // The variant names are the key names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NamedKey {
    F1,
    F2,
    F3,
    F4,
    F5,
    F6,
    F7,
    F8,
    F9,
    F10,
    F11,
    F12,
    Insert,
    Delete,
    Home,
    End,
    PageUp,
    PageDown,
    /// Back-tab (Shift+Tab as terminals send it).
    BTab,
    /// Backspace; sends DEL.
    BSpace,
    Up,
    Down,
    Left,
    Right,
    KpSlash,
    KpStar,
    KpMinus,
    KpPlus,
    KpPeriod,
    KpEnter,
    Kp0,
    Kp1,
    Kp2,
    Kp3,
    Kp4,
    Kp5,
    Kp6,
    Kp7,
    Kp8,
    Kp9,
}

/// What a key is, without its modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyCode {
    /// A character. `Tab`, `Enter` (CR), `Escape`, `Space` and control keys such as `C-c`
    /// (U+0003) are characters too, as they are in tmux.
    Char(char),
    /// A key from tmux's key table that is not a character.
    Named(NamedKey),
}

/// A key code plus modifiers, as tmux understands a key name.
///
/// Build one with [`parse_key`] or [`str::parse`]; [`Display`](fmt::Display) prints the
/// canonical name, which parses back to the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    code: KeyCode,
    modifiers: Modifiers,
}

/// Why a key name was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The name (or the whole sequence) was empty.
    #[error("empty key name; names are tmux key names such as Enter, C-c, M-x, F5, Up")]
    Empty,
    /// The name is not a key tmux knows.
    #[error(
        "unknown key name '{name}'{}; names are tmux key names such as Enter, C-c, M-x, F5, Up",
        did_you_mean(.suggestion)
    )]
    Unknown {
        /// The name as given.
        name: String,
        /// A close valid name, when there is one.
        suggestion: Option<String>,
    },
    /// tmux parses the name, but a terminal in its default mode has no bytes for the key
    /// (e.g. `S-a`, `C-Tab`); tmux would send nothing or type the name as text.
    #[error(
        "key '{name}' cannot be sent: a terminal in its default mode has no bytes for it{}",
        did_you_mean(.suggestion)
    )]
    Unsendable {
        /// The name as given.
        name: String,
        /// A similar key that can be sent, when there is one.
        suggestion: Option<String>,
    },
    /// tmux knows the name, but it cannot be sent to a pane as a key.
    #[error("key name '{name}' is not supported: {reason}")]
    Unsupported {
        /// The name as given.
        name: String,
        /// Why it cannot be used.
        reason: &'static str,
    },
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!(" (did you mean '{s}'?)"),
        None => String::new(),
    }
}

/// Characters on which tmux keeps `C-` as a modifier instead of making a control character.
const CTRL_KEPT: &str = "!#()+,-.0123456789:;<=>'\r\t\x7f`/\x1b";

/// Parses one tmux key name such as `Enter`, `C-c`, `M-Up`, `F5`, `é` or `0x03`.
pub fn parse_key(name: &str) -> Result<Key, KeyError> {
    if name.is_empty() {
        return Err(KeyError::Empty);
    }
    if let Some(digits) = name.strip_prefix("0x") {
        return parse_hex(name, digits);
    }
    let (modifiers, word) = split_modifiers(name).ok_or_else(|| unknown(name))?;
    let code = key_code(name, word)?;
    let key = apply_ctrl(name, Key { code, modifiers })?;
    if key.bytes().is_empty() {
        return Err(KeyError::Unsendable {
            name: name.to_owned(),
            suggestion: suggest::sendable_alternative(key),
        });
    }
    Ok(key)
}

/// Parses names separated by ASCII whitespace, such as `"Escape c"` or `"C-x C-c"`.
///
/// A sequence with no names at all is [`KeyError::Empty`]. Use `Space` for a space.
pub fn parse_sequence(spec: &str) -> Result<Vec<Key>, KeyError> {
    let keys = spec
        .split_ascii_whitespace()
        .map(parse_key)
        .collect::<Result<Vec<_>, _>>()?;
    if keys.is_empty() {
        return Err(KeyError::Empty);
    }
    Ok(keys)
}

/// Splits `C-`, `M-`, `S-` and a leading `^` off a name; `None` if a prefix is not one of
/// them (tmux reads `x-y` as modifier `x`, which is unknown).
fn split_modifiers(name: &str) -> Option<(Modifiers, &str)> {
    let mut modifiers = Modifiers::NONE;
    let mut rest = name;
    if rest.len() > 1 && rest.starts_with('^') {
        modifiers = Modifiers::CTRL;
        rest = &rest[1..];
    }
    while rest.as_bytes().get(1) == Some(&b'-') {
        modifiers = modifiers
            | match rest.as_bytes()[0] {
                b'C' | b'c' => Modifiers::CTRL,
                b'M' | b'm' => Modifiers::META,
                b'S' | b's' => Modifiers::SHIFT,
                _ => return None,
            };
        rest = &rest[2..];
    }
    Some((modifiers, rest))
}

/// The key a name denotes once its modifiers are gone: one character or a table name.
fn key_code(name: &str, word: &str) -> Result<KeyCode, KeyError> {
    let mut chars = word.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Err(unknown(name)),
        (Some(c), None) if c < ' ' => Err(unknown(name)),
        (Some(c), None) => Ok(KeyCode::Char(c)),
        _ => table::lookup(word).ok_or_else(|| match table::unsupported_reason(word) {
            Some(reason) => KeyError::Unsupported {
                name: name.to_owned(),
                reason,
            },
            None => unknown(name),
        }),
    }
}

/// Turns `C-` plus an ASCII character into the control character, as tmux does.
fn apply_ctrl(name: &str, key: Key) -> Result<Key, KeyError> {
    let KeyCode::Char(c) = key.code else {
        return Ok(key);
    };
    if !key.modifiers.contains(Modifiers::CTRL) || !c.is_ascii() || CTRL_KEPT.contains(c) {
        return Ok(key);
    }
    let control = match c {
        'a'..='z' => c as u8 - 0x60,
        '@'..='_' => c as u8 - 0x40,
        ' ' => 0,
        '?' => 0x7f,
        _ => {
            return Err(KeyError::Unsupported {
                name: name.to_owned(),
                reason: "tmux has no Ctrl form of this character",
            });
        }
    };
    Ok(Key {
        code: KeyCode::Char(char::from(control)),
        modifiers: key.modifiers.without(Modifiers::CTRL),
    })
}

/// Reads `0x..` key codes; stricter than tmux's `sscanf`, which ignores trailing garbage.
fn parse_hex(name: &str, digits: &str) -> Result<Key, KeyError> {
    let value = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u32::from_str_radix(digits, 16).ok())
        .flatten();
    let c = value
        .and_then(char::from_u32)
        .ok_or_else(|| unknown(name))?;
    Ok(Key {
        code: KeyCode::Char(c),
        modifiers: Modifiers::NONE,
    })
}

fn unknown(name: &str) -> KeyError {
    KeyError::Unknown {
        name: name.to_owned(),
        suggestion: suggest::suggestion(name),
    }
}

impl Key {
    /// The key without its modifiers.
    pub fn code(&self) -> KeyCode {
        self.code
    }

    /// The modifiers left after parsing; `C-` on a letter is already part of the code.
    pub fn modifiers(&self) -> Modifiers {
        self.modifiers
    }

    /// The canonical name, which tmux accepts and [`parse_key`] reads back to this key:
    /// modifiers in the order `C-M-S-`, control characters as `C-x`, e.g. `C-c`, `M-Up`,
    /// `Enter`, `C-M-Space`.
    pub fn tmux_name(&self) -> String {
        let (implied_ctrl, base) = base_name(self.code);
        let mut name = String::with_capacity(base.len() + 6);
        if implied_ctrl || self.modifiers.contains(Modifiers::CTRL) {
            name.push_str("C-");
        }
        if self.modifiers.contains(Modifiers::META) {
            name.push_str("M-");
        }
        if self.modifiers.contains(Modifiers::SHIFT) {
            name.push_str("S-");
        }
        name.push_str(&base);
        name
    }

    /// Appends the bytes tmux writes to a pane for this key (default modes; see the
    /// module docs). A parsed key always has at least one byte.
    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        encode::write_bytes(*self, out);
    }

    /// The bytes tmux writes to a pane for this key.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8);
        self.write_bytes(&mut out);
        out
    }
}

/// The base name of a code and whether it implies `C-` (control characters).
fn base_name(code: KeyCode) -> (bool, String) {
    if let Some(name) = table::canonical_name(code) {
        return (false, name.to_owned());
    }
    match code {
        KeyCode::Char('\0') => (true, "Space".to_owned()),
        KeyCode::Char('\x7f') => (true, "?".to_owned()),
        KeyCode::Char(c @ '\x01'..='\x1a') => (true, char::from(c as u8 + 0x60).to_string()),
        KeyCode::Char(c @ '\x1b'..='\x1f') => (true, char::from(c as u8 + 0x40).to_string()),
        KeyCode::Char(c) => (false, c.to_string()),
        // Every named key has a table entry; this arm only satisfies the type checker.
        KeyCode::Named(named) => (false, format!("{named:?}")),
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tmux_name())
    }
}

impl FromStr for Key {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Key, KeyError> {
        parse_key(s)
    }
}

#[cfg(test)]
mod tests;
