//! The checks of the redactor (`termpilot_journal::redact`): secrets taken
//! from the text itself, configured and typed by a person, hidden wherever
//! the text shows them, whole or split over lines.

use std::borrow::Cow;

use termpilot_journal::Redactor;
use termpilot_journal::redact::SHORTEST_TYPED;

/// The salt of the typed values' fingerprints (random in the server; fixed
/// here so that a failure reproduces).
const SALT: &[u8] = b"fuzz salt";

/// The secrets `data` stands for, each `(name, value, typed)`: up to three
/// configured values and one typed by a person, each a stretch of the text
/// (sometimes with a quote added, so that its escaped forms differ; a typed
/// one without control characters).
fn secrets(data: &[u8], text: &str) -> Vec<(String, String, bool)> {
    let chars: Vec<char> = text.chars().collect();
    let Some(&flags) = data.first() else {
        return Vec::new();
    };
    let configured = usize::from(flags % 4);
    let count = configured + usize::from(flags & 4 != 0);
    let mut secrets = Vec::new();
    for i in 0..count {
        let start = usize::from(data.get(1 + 2 * i).copied().unwrap_or(0));
        let shape = data.get(2 + 2 * i).copied().unwrap_or(0);
        let start = start % chars.len().max(1);
        let end = (start + 1 + usize::from(shape % 8)).min(chars.len());
        let mut value: String = chars.get(start..end).unwrap_or_default().iter().collect();
        if shape & 0x80 != 0 {
            value.push('"');
        }
        let typed = i == configured;
        if typed {
            // The server takes no control characters from a person (the
            // secret page refuses them), and a typed value is fingerprinted
            // as it is: with a line break in it, it is never found.
            value.retain(|c| !c.is_control());
        }
        let name = if typed {
            format!("t{i}")
        } else {
            format!("k{i}")
        };
        secrets.push((name, value, typed));
    }
    secrets
}

/// Redacts `data` (as UTF-8, lossily) with secrets taken from it: never a
/// panic; no secret, in any form, left in the output (line breaks removed
/// before looking), nor when the text is a secret split by a line break;
/// text holding no form of any secret unchanged; redacting twice the same
/// as once whenever no secret could be read inside a placeholder.
pub fn check_redactor(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let secrets = secrets(data, &text);
    let redactor = Redactor::default();
    let configured: Vec<(String, String)> = secrets
        .iter()
        .filter(|(_, _, typed)| !typed)
        .map(|(name, value, _)| (name.clone(), value.clone()))
        .collect();
    redactor.set_values(move || configured.clone());
    for (name, value, _) in secrets.iter().filter(|(_, _, typed)| *typed) {
        let remembered = redactor.remember_typed(name, value, SALT);
        assert_eq!(remembered, value.len() >= SHORTEST_TYPED, "{value:?}");
    }
    let hidden: Vec<(&str, &str)> = secrets
        .iter()
        .filter(|(_, value, typed)| !typed || value.len() >= SHORTEST_TYPED)
        .map(|(name, value, _)| (name.as_str(), value.as_str()))
        .collect();
    let redaction = redactor.now();
    let once = redaction.redact(&text);
    assert_hidden(&once, &hidden);
    for (_, value) in &hidden {
        let split = split_by_line_break(value, data);
        assert_hidden(&redaction.redact(&split), &hidden);
    }
    let forms: Vec<String> = hidden.iter().flat_map(|(_, v)| forms(v)).collect();
    if !forms.iter().any(|form| flat(&text).contains(form.as_str())) {
        assert_eq!(once, text, "no secret in the text, yet it changed");
    }
    let placeholders: Vec<String> = hidden.iter().map(|(n, _)| placeholder(n)).collect();
    let inside = |form: &String| {
        form.contains(['[', ']']) || placeholders.iter().any(|p| p.contains(form.as_str()))
    };
    if !forms.iter().any(inside) {
        assert_eq!(redaction.redact(&once), once, "redacting again changed it");
    }
    check_partial_reads(&redaction, &text, &once, data);
}

/// The ways a wait reads unfinished output: what it shows is a prefix of
/// the whole redaction, lines redact as the whole, and a start moved out
/// of a secret only moves back.
fn check_partial_reads(
    redaction: &termpilot_journal::Redaction,
    text: &str,
    once: &str,
    data: &[u8],
) {
    let unfinished = redaction.redact_unfinished(text);
    assert!(once.starts_with(&unfinished), "{unfinished:?} of {once:?}");
    let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let by_lines = redaction.redact_lines(lines);
    assert_eq!(by_lines.join("\n"), once);
    let at = usize::from(data.last().copied().unwrap_or(0)) % (text.len() + 1);
    assert!(redaction.start_outside(text.as_bytes(), at) <= at);
}

/// Fails when `out`, with its placeholders blanked out and its line breaks
/// removed, still holds any form of any secret.
fn assert_hidden(out: &str, secrets: &[(&str, &str)]) {
    let blank = ('\u{e000}'..)
        .find(|&c| secrets.iter().all(|(_, value)| !value.contains(c)))
        .expect("a character no secret holds");
    let mut masked = out.to_owned();
    for (name, _) in secrets {
        masked = masked.replace(&placeholder(name), &blank.to_string());
    }
    let masked = flat(&masked);
    for (name, value) in secrets {
        for form in forms(value).iter().filter(|form| !form.is_empty()) {
            assert!(
                !masked.contains(form.as_str()),
                "{name} = {value:?} shows as {form:?} in {out:?}"
            );
        }
    }
}

/// `value` with a line break (`\n` or `\r\n`) inserted at a place `data`
/// picks.
fn split_by_line_break(value: &str, data: &[u8]) -> String {
    let bounds: Vec<usize> = (0..=value.len())
        .filter(|&at| value.is_char_boundary(at))
        .collect();
    let pick = usize::from(data.get(1).copied().unwrap_or(0));
    let at = bounds[pick % bounds.len()];
    let line_break = if pick & 1 == 0 { "\n" } else { "\r\n" };
    format!("{}{line_break}{}", &value[..at], &value[at..])
}

/// The forms the redactor looks for a value in, line breaks removed: as
/// printed, JSON-escaped, and as Rust's `{:?}` prints it (no quotes).
fn forms(value: &str) -> Vec<String> {
    let debug = format!("{value:?}");
    let debug = &debug[1..debug.len() - 1];
    [value, &json_escaped(value), debug]
        .into_iter()
        .map(|form| flat(form).into_owned())
        .filter(|form| !form.is_empty())
        .collect()
}

/// The value as it is written inside a JSON string.
fn json_escaped(value: &str) -> String {
    let quoted = serde_json::to_string(value).expect("a string serializes");
    quoted[1..quoted.len() - 1].to_owned()
}

fn flat(text: &str) -> Cow<'_, str> {
    match text.contains(['\n', '\r']) {
        true => Cow::Owned(text.replace(['\n', '\r'], "")),
        false => Cow::Borrowed(text),
    }
}

fn placeholder(name: &str) -> String {
    format!("[secret {name}]")
}
