//! A pane's output from its journal, as output events with their times.

use std::time::{Duration, Instant};

use termpilot_journal::Journal;

use crate::write::Event;

/// The output `journal` holds from offset `from` to `to`, as `o` events
/// timed from `start` (output before it counts as at the start).
pub fn output_events(
    journal: &Journal,
    from: u64,
    to: u64,
    start: Instant,
) -> Vec<(Duration, Event)> {
    journal
        .timed_output(from, to)
        .into_iter()
        .map(|(at, bytes)| (at.saturating_duration_since(start), Event::Output(bytes)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, Writer, parse};
    use termpilot_journal::Limits;
    use termpilot_screen::Screen;

    /// A program's output recorded from the journal and replayed through a
    /// terminal emulator ends on the screen the output itself draws.
    #[test]
    fn a_recording_replays_to_the_same_screen() {
        let start = Instant::now();
        let mut journal = Journal::new(Limits::default());
        let chunks: [&[u8]; 4] = [
            b"$ ls\r\n\x1b[1;34msrc\x1b[0m  notes.txt\r\n$ ",
            "vim ✔\r\n".as_bytes(),
            b"\x1b[?1049h\x1b[H\x1b[2Jfull screen\x1b[7m status \x1b[0m",
            b"\x1b[?1049l$ done\r\n$ ",
        ];
        let mut everything = Vec::new();
        for (n, chunk) in chunks.iter().enumerate() {
            journal.append_at(chunk, start + Duration::from_millis(100 * n as u64));
            everything.extend_from_slice(chunk);
        }
        let mut writer = Writer::new(&Header::new(40, 6));
        for (at, event) in output_events(&journal, 0, journal.end(), start) {
            writer.push(at, &event);
        }
        let cast = parse(&writer.finish()).unwrap();
        assert_eq!(cast.events.len(), 4);
        assert_eq!(cast.events[3].0, Duration::from_millis(300));
        let (cols, rows) = cast.final_size();
        let replayed = Screen::from_output(&cast.output(), cols, rows).unwrap();
        let direct = Screen::from_output(&everything, 40, 6).unwrap();
        assert_eq!(replayed, direct);
        assert_eq!(replayed.row_text(3), "$ done");
    }
}
