//! What each tool call did to a pane, noted for its recording: a marker
//! (the tool, its short arguments, the request id) and the input it typed
//! (a secret as `[secret NAME]`, never its value).
//!
//! Notes are taken from a call's arguments and result after it ran, dated
//! when the call began (before anything it typed or caused was printed, so
//! a recording from or up to a cursor holds the calls on its side of it),
//! kept per pane (the pane the result names, else the `pane` argument), at
//! most [`MAX_NOTES`] per pane, the oldest dropped first.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

/// The most notes kept for one pane.
pub(crate) const MAX_NOTES: usize = 2_000;
/// Longest argument value shown in a marker, in characters.
const SHORT: usize = 60;

/// One note: when, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) at: Instant,
    pub(crate) what: Noted,
}

/// What a note says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Noted {
    /// A tool call touched the pane.
    Marker(String),
    /// A tool call typed this.
    Input(String),
}

/// Notes per pane. A std `Mutex`: held to push or copy, never across an
/// `.await`.
#[derive(Debug, Default)]
pub(crate) struct Notes(Mutex<HashMap<String, VecDeque<Note>>>);

impl Notes {
    /// Notes a call of `tool` with `arguments`, request `id`, that began
    /// at `began` and returned `result` (its structured content), if it
    /// names a pane.
    pub(crate) fn record(
        &self,
        tool: &str,
        arguments: &Value,
        id: &str,
        result: Option<&Value>,
        began: Instant,
    ) {
        let pane = result
            .and_then(|r| r.get("pane"))
            .or_else(|| arguments.get("pane"))
            .and_then(Value::as_str);
        let Some(pane) = pane else {
            return;
        };
        let at = began;
        let mut notes = vec![Note {
            at,
            what: Noted::Marker(marker(tool, arguments, id)),
        }];
        if let Some(typed) = typed(tool, arguments) {
            notes.push(Note {
                at,
                what: Noted::Input(typed),
            });
        }
        let mut panes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let kept = panes.entry(pane.to_owned()).or_default();
        for note in notes {
            if kept.len() == MAX_NOTES {
                kept.pop_front();
            }
            kept.push_back(note);
        }
    }

    /// The notes kept for `pane`, oldest first.
    pub(crate) fn of(&self, pane: &str) -> Vec<Note> {
        let panes = self.0.lock().unwrap_or_else(|e| e.into_inner());
        panes
            .get(pane)
            .map(|notes| notes.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// `tool` and its arguments but the pane, each value cut short, and the
/// request id: `send_keys text="ls" enter=true (call 7)`.
fn marker(tool: &str, arguments: &Value, id: &str) -> String {
    let mut shown = String::from(tool);
    if let Some(arguments) = arguments.as_object() {
        for (name, value) in arguments.iter().filter(|(name, _)| *name != "pane") {
            let value = value.to_string();
            let short: String = value.chars().take(SHORT).collect();
            let cut = if short.len() < value.len() { "…" } else { "" };
            shown.push_str(&format!(" {name}={short}{cut}"));
        }
    }
    shown.push_str(&format!(" (call {id})"));
    shown
}

/// What `tool` typed, as a person would have typed it.
fn typed(tool: &str, arguments: &Value) -> Option<String> {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let enter = arguments.get("enter").and_then(Value::as_bool) == Some(true);
    let newline = if enter { "\r" } else { "" };
    match tool {
        "run_command" => Some(format!("{}\r", text("command")?)),
        "send_keys" | "paste_text" => {
            let keys: Vec<&str> = arguments
                .get("keys")
                .and_then(Value::as_array)
                .map(|keys| keys.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let keys = keys.iter().map(|k| format!("<{k}>")).collect::<String>();
            let typed = format!("{}{keys}{newline}", text("text").unwrap_or_default());
            (!typed.is_empty()).then_some(typed)
        }
        "type_secret" => Some(format!("[secret {}]{newline}", text("name")?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn notes_a_marker_and_input_and_never_a_secret_value() {
        let notes = Notes::default();
        let arguments = json!({"pane": "%3", "name": "db", "enter": true});
        let now = Instant::now();
        notes.record(
            "type_secret",
            &arguments,
            "4",
            Some(&json!({"pane": "%3"})),
            now,
        );
        notes.record(
            "send_keys",
            &json!({"pane": "%3", "keys": ["C-c"]}),
            "5",
            None,
            now,
        );
        notes.record(
            "list_panes",
            &json!({}),
            "6",
            Some(&json!({"panes": []})),
            now,
        );
        let kept = notes.of("%3");
        let what: Vec<&Noted> = kept.iter().map(|n| &n.what).collect();
        assert_eq!(
            what,
            [
                &Noted::Marker("type_secret enter=true name=\"db\" (call 4)".into()),
                &Noted::Input("[secret db]\r".into()),
                &Noted::Marker("send_keys keys=[\"C-c\"] (call 5)".into()),
                &Noted::Input("<C-c>".into()),
            ]
        );
    }

    #[test]
    fn long_values_are_cut_and_notes_are_bounded() {
        let notes = Notes::default();
        let long = "x".repeat(500);
        for n in 0..MAX_NOTES {
            notes.record(
                "capture_pane",
                &json!({"pane": "%1", "format": long}),
                &n.to_string(),
                None,
                Instant::now(),
            );
        }
        let kept = notes.of("%1");
        assert_eq!(kept.len(), MAX_NOTES);
        let Noted::Marker(first) = &kept[0].what else {
            panic!("a marker")
        };
        assert!(first.len() < 100 && first.contains('…'), "{first}");
    }
}
