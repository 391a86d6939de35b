//! Writing a recording.

use std::time::Duration;

use serde_json::{Value, json};

/// What a recording starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Terminal width in cells.
    pub cols: u16,
    /// Terminal height in cells.
    pub rows: u16,
    /// `TERM`, when known.
    pub term_type: Option<String>,
    /// When the recording starts, in seconds since the Unix epoch.
    pub timestamp: Option<u64>,
    /// A title for players to show.
    pub title: Option<String>,
}

impl Header {
    /// A header for a terminal of `cols` × `rows`, nothing else said.
    pub fn new(cols: u16, rows: u16) -> Header {
        Header {
            cols,
            rows,
            term_type: None,
            timestamp: None,
            title: None,
        }
    }

    /// The header line, `version` first as players expect to see it.
    pub(crate) fn line(&self) -> String {
        let mut term = format!("{{\"cols\":{},\"rows\":{}", self.cols, self.rows);
        if let Some(kind) = &self.term_type {
            term.push_str(&format!(",\"type\":{}", json!(kind)));
        }
        let mut line = format!("{{\"version\":3,\"term\":{term}}}");
        if let Some(timestamp) = self.timestamp {
            line.push_str(&format!(",\"timestamp\":{timestamp}"));
        }
        if let Some(title) = &self.title {
            line.push_str(&format!(",\"title\":{}", json!(title)));
        }
        line.push('}');
        line
    }
}

/// One event of a recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `o`: what the pane printed (raw bytes, escape sequences and all).
    Output(Vec<u8>),
    /// `i`: what was typed into it (a secret as `[secret NAME]`, never its
    /// value: the caller writes it so).
    Input(String),
    /// `m`: a marker, e.g. the tool call that touched the pane.
    Marker(String),
    /// `r`: the terminal was resized to columns × rows.
    Resize(u16, u16),
    /// `x`: the pane's program ended with this status.
    Exit(i32),
}

impl Event {
    /// The event's code in the file.
    pub fn code(&self) -> &'static str {
        match self {
            Event::Output(_) => "o",
            Event::Input(_) => "i",
            Event::Marker(_) => "m",
            Event::Resize(..) => "r",
            Event::Exit(_) => "x",
        }
    }
}

/// Writes a recording's text, event by event.
#[derive(Debug)]
pub struct Writer {
    text: String,
    /// When the last event was, since the start.
    last: Duration,
    /// The end of the last output event when it stopped inside a UTF-8
    /// character: written with the next output event.
    carry: Vec<u8>,
}

impl Writer {
    /// A recording that starts with `header`.
    pub fn new(header: &Header) -> Writer {
        Writer {
            text: format!("{}\n", header.line()),
            last: Duration::ZERO,
            carry: Vec::new(),
        }
    }

    /// Adds `event`, which happened `at` after the start (an event earlier
    /// than the last one counts as at the same time).
    pub fn push(&mut self, at: Duration, event: &Event) {
        let data = match event {
            Event::Output(bytes) => match self.output_text(bytes) {
                Some(text) => text,
                None => return,
            },
            Event::Input(text) | Event::Marker(text) => text.clone(),
            Event::Resize(cols, rows) => format!("{cols}x{rows}"),
            Event::Exit(status) => status.to_string(),
        };
        let interval = at.saturating_sub(self.last);
        self.last = self.last.max(at);
        let line = json!([seconds(interval), event.code(), data]);
        self.text.push_str(&line.to_string());
        self.text.push('\n');
    }

    /// The recording's text.
    pub fn finish(self) -> String {
        self.text
    }

    /// The text of output `bytes` after what was carried, keeping back an
    /// unfinished UTF-8 character at their end; `None` when nothing is left
    /// to write. Invalid bytes become U+FFFD.
    fn output_text(&mut self, bytes: &[u8]) -> Option<String> {
        self.carry.extend_from_slice(bytes);
        let keep = unfinished_tail(&self.carry);
        let ready: Vec<u8> = self.carry.drain(..self.carry.len() - keep).collect();
        (!ready.is_empty()).then(|| String::from_utf8_lossy(&ready).into_owned())
    }
}

/// A duration as seconds, to the microsecond.
fn seconds(duration: Duration) -> Value {
    json!(duration.as_micros() as f64 / 1e6)
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is
/// not finished yet.
fn unfinished_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xc0 != 0x80 {
            let needed = match byte {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => 1,
            };
            return if needed > back { back } else { 0 };
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_events_are_one_json_line_each() {
        let header = Header {
            term_type: Some("xterm-256color".into()),
            timestamp: Some(1_700_000_000),
            title: Some("build/%3".into()),
            ..Header::new(100, 30)
        };
        let mut writer = Writer::new(&header);
        writer.push(Duration::from_millis(1500), &Event::Input("ls\r".into()));
        writer.push(Duration::from_millis(1000), &Event::Resize(90, 20));
        writer.push(Duration::from_micros(2_000_250), &Event::Exit(2));
        let text = writer.finish();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                r#"{"version":3,"term":{"cols":100,"rows":30,"type":"xterm-256color"},"timestamp":1700000000,"title":"build/%3"}"#,
                r#"[1.5,"i","ls\r"]"#,
                r#"[0.0,"r","90x20"]"#,
                r#"[0.50025,"x","2"]"#,
            ]
        );
    }

    #[test]
    fn output_cut_inside_a_character_is_carried_over() {
        let mut writer = Writer::new(&Header::new(10, 2));
        let check = "✔".as_bytes();
        writer.push(
            Duration::ZERO,
            &Event::Output([b"ok ", &check[..1]].concat()),
        );
        writer.push(Duration::ZERO, &Event::Output(check[1..2].to_vec()));
        writer.push(Duration::ZERO, &Event::Output([&check[2..], b"!"].concat()));
        let text = writer.finish();
        let events: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(events, [r#"[0.0,"o","ok "]"#, r#"[0.0,"o","✔!"]"#]);
    }
}
