//! "Did you mean" suggestions for key names tmux would not accept.
//!
//! Agents often write keys the way other tools spell them (`Ctrl+C`, `Esc`, `Return`,
//! `Alt-x`), so those spellings are translated first; otherwise the closest table name
//! by edit distance is offered, keeping the modifiers as given.

use super::{Key, KeyCode, Modifiers, NamedKey, parse_key, table};

/// Spellings from other tools, lowercased, and the tmux name for each.
const ALIASES: &[(&str, &str)] = &[
    ("esc", "Escape"),
    ("return", "Enter"),
    ("ret", "Enter"),
    ("cr", "Enter"),
    ("newline", "Enter"),
    ("backspace", "BSpace"),
    ("bs", "BSpace"),
    ("bksp", "BSpace"),
    ("del", "Delete"),
    ("ins", "Insert"),
    ("pgdown", "PageDown"),
    ("pagedn", "PageDown"),
    ("backtab", "BTab"),
    ("arrowup", "Up"),
    ("arrowdown", "Down"),
    ("arrowleft", "Left"),
    ("arrowright", "Right"),
    ("spacebar", "Space"),
];

/// Modifier words from other tools, lowercased, and the tmux prefix for each.
const MODIFIER_WORDS: &[(&str, &str)] = &[
    ("c", "C-"),
    ("ctrl", "C-"),
    ("ctl", "C-"),
    ("control", "C-"),
    ("m", "M-"),
    ("alt", "M-"),
    ("meta", "M-"),
    ("opt", "M-"),
    ("option", "M-"),
    ("s", "S-"),
    ("shift", "S-"),
];

/// A valid name close to `name`, if there is a convincing one.
pub(super) fn suggestion(name: &str) -> Option<String> {
    if let Some(hint) = control_character_name(name) {
        return Some(hint.to_owned());
    }
    let (prefix, word) = split_loose_modifiers(name);
    let base = canonical_base(word).or_else(|| closest_table_name(word).map(str::to_owned))?;
    let candidate = format!("{prefix}{base}");
    if candidate == name {
        // Already in tmux form; parsing it again would only come back here.
        return None;
    }
    match parse_key(&candidate) {
        Ok(_) => Some(candidate),
        Err(super::KeyError::Unsendable { suggestion, .. }) => suggestion,
        _ => None,
    }
}

/// A key like `key` (which sends no bytes) that can be sent: without Shift (`S-a` is `A`,
/// `S-Tab` is `BTab`), without Ctrl, or without both.
pub(super) fn sendable_alternative(key: Key) -> Option<String> {
    [
        Modifiers::SHIFT,
        Modifiers::CTRL,
        Modifiers::SHIFT | Modifiers::CTRL,
    ]
    .into_iter()
    .filter(|&dropped| key.modifiers.contains(dropped))
    .map(|dropped| without(key, dropped))
    .find(|candidate| !candidate.bytes().is_empty())
    .map(|candidate| candidate.tmux_name())
}

/// `key` with modifiers dropped; dropping Shift shifts the key itself where it can.
fn without(key: Key, dropped: Modifiers) -> Key {
    let code = match key.code {
        KeyCode::Char('\t') if dropped.contains(Modifiers::SHIFT) => KeyCode::Named(NamedKey::BTab),
        KeyCode::Char(c) if dropped.contains(Modifiers::SHIFT) => {
            KeyCode::Char(c.to_ascii_uppercase())
        }
        code => code,
    };
    Key {
        code,
        modifiers: key.modifiers.without(dropped),
    }
}

/// Names for raw control characters given where a key name was expected.
fn control_character_name(name: &str) -> Option<&'static str> {
    match name {
        "\t" => Some("Tab"),
        "\r" | "\n" | "\r\n" => Some("Enter"),
        "\x1b" => Some("Escape"),
        "\x08" => Some("BSpace"),
        _ => None,
    }
}

/// Splits modifier words joined by `-` or `+` (`Ctrl+Shift+x`) into a tmux prefix.
fn split_loose_modifiers(name: &str) -> (String, &str) {
    let mut prefix = String::new();
    let mut rest = name;
    while let Some(at) = rest
        .find(['-', '+'])
        .filter(|&at| at > 0 && at + 1 < rest.len())
    {
        let word = rest[..at].to_ascii_lowercase();
        let Some(&(_, tmux)) = MODIFIER_WORDS.iter().find(|(w, _)| *w == word) else {
            break;
        };
        if !prefix.contains(tmux) {
            prefix.push_str(tmux);
        }
        rest = &rest[at + 1..];
    }
    (prefix, rest)
}

/// The tmux spelling of a key word that is an alias, a table name or one character.
fn canonical_base(word: &str) -> Option<String> {
    let lower = word.to_ascii_lowercase();
    if let Some(&(_, name)) = ALIASES.iter().find(|(alias, _)| *alias == lower) {
        return Some(name.to_owned());
    }
    if let Some(name) = table::lookup(word).and_then(table::canonical_name) {
        return Some(name.to_owned());
    }
    // A lone character that a loose prefix revealed (`Ctrl+c`) is its own base.
    (word.chars().count() == 1).then(|| word.to_owned())
}

/// The table name nearest to `word` by edit distance, ignoring case, when it is close.
fn closest_table_name(word: &str) -> Option<&'static str> {
    let lower = word.to_lowercase();
    let length = lower.chars().count();
    let limit = if length <= 3 { 1 } else { 2 };
    table::NAMES
        .iter()
        .map(|&(name, _)| (edit_distance(&lower, &name.to_ascii_lowercase()), name))
        .filter(|&(distance, _)| distance <= limit && distance < length)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, name)| name)
}

/// Levenshtein distance between two strings, counted in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("entr", "enter"), 1);
        assert_eq!(edit_distance("enter", "entre"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggests_close_table_names() {
        assert_eq!(suggestion("Entr").as_deref(), Some("Enter"));
        assert_eq!(suggestion("Escap").as_deref(), Some("Escape"));
        assert_eq!(suggestion("M-Entr").as_deref(), Some("M-Enter"));
        assert_eq!(
            suggestion("C-Entr").as_deref(),
            Some("Enter"),
            "C-Enter sends nothing"
        );
        assert_eq!(suggestion("PgUpp").as_deref(), Some("PgUp"));
    }

    #[test]
    fn translates_other_tools_spellings() {
        assert_eq!(suggestion("Esc").as_deref(), Some("Escape"));
        assert_eq!(suggestion("Return").as_deref(), Some("Enter"));
        assert_eq!(suggestion("Ctrl+C").as_deref(), Some("C-C"));
        assert_eq!(suggestion("ctrl-c").as_deref(), Some("C-c"));
        assert_eq!(suggestion("Alt+Shift+Up").as_deref(), Some("M-S-Up"));
        assert_eq!(suggestion("Shift+Tab").as_deref(), Some("BTab"));
        assert_eq!(suggestion("\t").as_deref(), Some("Tab"));
    }

    #[test]
    fn suggests_sendable_keys_for_unsendable_ones() {
        let alternative = |name| match parse_key(name) {
            Err(crate::KeyError::Unsendable { suggestion, .. }) => suggestion,
            other => panic!("{name} should be unsendable, got {other:?}"),
        };
        assert_eq!(alternative("S-a").as_deref(), Some("A"));
        assert_eq!(alternative("M-S-a").as_deref(), Some("M-A"));
        assert_eq!(alternative("C-S-a").as_deref(), Some("C-a"));
        assert_eq!(alternative("S-Tab").as_deref(), Some("BTab"));
        assert_eq!(alternative("C-S-Tab").as_deref(), Some("BTab"));
        assert_eq!(alternative("C-Enter").as_deref(), Some("Enter"));
        assert_eq!(alternative("C-M-KP5").as_deref(), Some("M-KP5"));
    }

    #[test]
    fn offers_nothing_for_unrelated_words() {
        assert_eq!(suggestion("hello"), None);
        assert_eq!(suggestion("xyzzy"), None);
        assert_eq!(suggestion("Ctrl+hello"), None);
        assert_eq!(suggestion("Ctrl+\x01"), None);
        assert_eq!(suggestion("C-{"), None);
    }
}
