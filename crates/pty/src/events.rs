//! The JSON lines that `event:` bindings write for a host application.

use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes one JSON object per line and flushes it, so a host reading a pipe or socket
/// gets each event as it happens.
pub(crate) struct EventWriter {
    out: Box<dyn Write + Send>,
}

impl EventWriter {
    pub(crate) fn new(out: Box<dyn Write + Send>) -> Self {
        EventWriter { out }
    }

    /// Writes `{"event":NAME,"time":SECONDS}` with the current Unix time.
    pub(crate) fn write_event(&mut self, name: &str) -> io::Result<()> {
        let line = event_line(name, SystemTime::now());
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }
}

fn event_line(name: &str, at: SystemTime) -> String {
    let time = at
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64());
    let mut line = serde_json::json!({ "event": name, "time": time }).to_string();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn one_json_object_per_line_with_escaped_name() {
        let at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
        let line = event_line("say \"hi\"\n", at);
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["event"], "say \"hi\"\n");
        assert_eq!(value["time"].as_f64(), Some(1_700_000_000.25));
    }
}
