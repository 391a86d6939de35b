//! The key names tmux 3.3a knows, as listed in `key_string_table` (`key-string.c`).

use super::{KeyCode, NamedKey};

/// Every spelling tmux accepts for a key, matched case-insensitively.
///
/// The first spelling listed for a key is the one [`canonical_name`] prints. tmux itself
/// prints the first entry of its own table (`IC`, `DC`, `NPage`, `PPage`); the longer
/// spellings are chosen here because an agent reading them needs no tmux knowledge, and
/// tmux accepts both.
pub(super) const NAMES: &[(&str, KeyCode)] = &[
    ("F1", KeyCode::Named(NamedKey::F1)),
    ("F2", KeyCode::Named(NamedKey::F2)),
    ("F3", KeyCode::Named(NamedKey::F3)),
    ("F4", KeyCode::Named(NamedKey::F4)),
    ("F5", KeyCode::Named(NamedKey::F5)),
    ("F6", KeyCode::Named(NamedKey::F6)),
    ("F7", KeyCode::Named(NamedKey::F7)),
    ("F8", KeyCode::Named(NamedKey::F8)),
    ("F9", KeyCode::Named(NamedKey::F9)),
    ("F10", KeyCode::Named(NamedKey::F10)),
    ("F11", KeyCode::Named(NamedKey::F11)),
    ("F12", KeyCode::Named(NamedKey::F12)),
    ("Insert", KeyCode::Named(NamedKey::Insert)),
    ("IC", KeyCode::Named(NamedKey::Insert)),
    ("Delete", KeyCode::Named(NamedKey::Delete)),
    ("DC", KeyCode::Named(NamedKey::Delete)),
    ("Home", KeyCode::Named(NamedKey::Home)),
    ("End", KeyCode::Named(NamedKey::End)),
    ("PageDown", KeyCode::Named(NamedKey::PageDown)),
    ("NPage", KeyCode::Named(NamedKey::PageDown)),
    ("PgDn", KeyCode::Named(NamedKey::PageDown)),
    ("PageUp", KeyCode::Named(NamedKey::PageUp)),
    ("PPage", KeyCode::Named(NamedKey::PageUp)),
    ("PgUp", KeyCode::Named(NamedKey::PageUp)),
    ("Tab", KeyCode::Char('\t')),
    ("BTab", KeyCode::Named(NamedKey::BTab)),
    ("Space", KeyCode::Char(' ')),
    ("BSpace", KeyCode::Named(NamedKey::BSpace)),
    ("Enter", KeyCode::Char('\r')),
    ("Escape", KeyCode::Char('\x1b')),
    ("Up", KeyCode::Named(NamedKey::Up)),
    ("Down", KeyCode::Named(NamedKey::Down)),
    ("Left", KeyCode::Named(NamedKey::Left)),
    ("Right", KeyCode::Named(NamedKey::Right)),
    ("KP/", KeyCode::Named(NamedKey::KpSlash)),
    ("KP*", KeyCode::Named(NamedKey::KpStar)),
    ("KP-", KeyCode::Named(NamedKey::KpMinus)),
    ("KP7", KeyCode::Named(NamedKey::Kp7)),
    ("KP8", KeyCode::Named(NamedKey::Kp8)),
    ("KP9", KeyCode::Named(NamedKey::Kp9)),
    ("KP+", KeyCode::Named(NamedKey::KpPlus)),
    ("KP4", KeyCode::Named(NamedKey::Kp4)),
    ("KP5", KeyCode::Named(NamedKey::Kp5)),
    ("KP6", KeyCode::Named(NamedKey::Kp6)),
    ("KP1", KeyCode::Named(NamedKey::Kp1)),
    ("KP2", KeyCode::Named(NamedKey::Kp2)),
    ("KP3", KeyCode::Named(NamedKey::Kp3)),
    ("KPEnter", KeyCode::Named(NamedKey::KpEnter)),
    ("KP0", KeyCode::Named(NamedKey::Kp0)),
    ("KP.", KeyCode::Named(NamedKey::KpPeriod)),
];

/// Looks a multi-character key name up the way tmux does (`strcasecmp`).
pub(super) fn lookup(word: &str) -> Option<KeyCode> {
    NAMES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(word))
        .map(|&(_, code)| code)
}

/// The name printed for a named key or one of the four characters that have a table name.
pub(super) fn canonical_name(code: KeyCode) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|&&(_, c)| c == code)
        .map(|&(name, _)| name)
}

/// Key names tmux accepts that make no sense for typing into a pane, with the reason.
///
/// Mouse keys need a mouse event that `send-keys` cannot carry, `Any` and `None` are
/// binding wildcards, and `User0`..`User999` are placeholders for user-defined
/// terminal sequences that only a client's terminal can produce.
pub(super) fn unsupported_reason(word: &str) -> Option<&'static str> {
    const MOUSE_PREFIXES: &[&str] = &[
        "mouse",
        "wheelup",
        "wheeldown",
        "secondclick",
        "doubleclick",
        "tripleclick",
    ];
    let lower = word.to_ascii_lowercase();
    if lower == "any" || lower == "none" {
        Some("it is a key-binding wildcard, not a key that can be sent")
    } else if MOUSE_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        Some("mouse keys cannot be sent as key names")
    } else if is_user_key(&lower) {
        Some("user keys only exist for a client's terminal")
    } else {
        None
    }
}

fn is_user_key(lower: &str) -> bool {
    lower
        .strip_prefix("user")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
