//! The log on stderr, every line of it passed through the server's one
//! redactor: a tracing call at any level, in any crate (termpilot's, tmux
//! errors quoting pane text, the MCP SDK's), never prints a secret.

use std::io::Write;

use termpilot_tmux::Redactor;
use tracing_subscriber::fmt::MakeWriter;

/// Makes one [`EventWriter`] per log event.
pub struct RedactedStderr {
    redactor: Redactor,
}

impl RedactedStderr {
    /// Stderr, through `redactor`.
    pub fn new(redactor: Redactor) -> Self {
        RedactedStderr { redactor }
    }
}

impl<'a> MakeWriter<'a> for RedactedStderr {
    type Writer = EventWriter;

    fn make_writer(&'a self) -> EventWriter {
        EventWriter {
            redactor: self.redactor.clone(),
            event: Vec::new(),
        }
    }
}

/// Collects one event's text, and writes it redacted, whole, when dropped:
/// a secret is hidden even when the formatter writes it in pieces.
pub struct EventWriter {
    redactor: Redactor,
    event: Vec<u8>,
}

impl Write for EventWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.event.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventWriter {
    fn drop(&mut self) {
        if self.event.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.event);
        let redacted = self.redactor.now().redact(&text).into_owned();
        // A log line that cannot be written is dropped, as stderr would drop it.
        let _ = std::io::stderr().lock().write_all(redacted.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_written_in_pieces_is_redacted_whole() {
        let redactor = Redactor::default();
        redactor.set_values(|| vec![("pw".into(), "hunter22".into())]);
        let logs = RedactedStderr::new(redactor.clone());
        let mut writer = logs.make_writer();
        writer.write_all(b"prompt: hun").unwrap();
        writer.write_all(b"ter22\n").unwrap();
        let redacted = redactor
            .now()
            .redact(&String::from_utf8_lossy(&writer.event))
            .into_owned();
        assert_eq!(redacted, "prompt: [secret pw]\n");
        writer.event.clear();
    }
}
