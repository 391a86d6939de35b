//! The line view: cleaned, collapsed lines with the offsets where they end.

use crate::gap::Gap;
use crate::journal::Journal;
use crate::replay::Replay;
use crate::row::{Row, RowSink};

/// One completed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The cleaned text in its final visible state, without the line end.
    pub text: String,
    /// The raw offset just after the line's `\n` (or of the gap that ended it).
    pub end: u64,
}

/// What [`Journal::lines`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineView {
    /// Offsets that are missing: evicted, plus one per gap (see
    /// [`Read::lost`](crate::Read::lost)).
    pub lost: u64,
    /// The gaps in the range, oldest first. A gap ends the line before it.
    pub gaps: Vec<Gap>,
    /// The completed lines, oldest first.
    pub lines: Vec<Line>,
    /// The unfinished last line, if it shows any text (e.g. a prompt).
    pub partial: Option<String>,
    /// The journal's end: where to continue next time.
    pub next: u64,
}

impl Journal {
    /// The cleaned lines after `from`; the line containing `from` counts only from there.
    /// Lines are collapsed exactly like [`clean_text`](crate::clean_text) does.
    pub fn lines(&self, from: u64) -> LineView {
        let mut replay = Replay::new(from);
        let mut collector = LineCollector::default();
        replay.advance(self, &mut collector, |_| false);
        let mut partial = std::mem::take(&mut collector.current);
        replay.row_mut().push_text(0.., &mut partial);
        LineView {
            lost: replay.lost,
            gaps: replay.gaps,
            lines: collector.lines,
            partial: (!partial.is_empty()).then_some(partial),
            next: self.end(),
        }
    }
}

#[derive(Debug, Default)]
struct LineCollector {
    /// The rows of the current line that were already wrapped.
    current: String,
    lines: Vec<Line>,
}

impl RowSink for LineCollector {
    fn carriage_return(&mut self, _row: &mut Row) {}

    fn wrap(&mut self, row: &mut Row) {
        row.push_text(0.., &mut self.current);
    }

    fn line_end(&mut self, row: &mut Row, end: u64) {
        row.push_text(0.., &mut self.current);
        let text = std::mem::take(&mut self.current);
        self.lines.push(Line { text, end });
    }
}

#[cfg(test)]
mod tests {
    use crate::{GapReason, Journal, Limits};

    fn texts(journal: &Journal, from: u64) -> (Vec<(String, u64)>, Option<String>) {
        let view = journal.lines(from);
        let lines = view.lines.into_iter().map(|l| (l.text, l.end)).collect();
        (lines, view.partial)
    }

    #[test]
    fn lines_end_offsets_and_partial() {
        let mut j = Journal::new(Limits::default());
        j.append(b"\x1b[32mone\x1b[0m\r\ntw");
        j.append(b"o\n 50%\r100%\r\n$ ");
        let (lines, partial) = texts(&j, 0);
        assert_eq!(
            lines,
            [("one".into(), 14), ("two".into(), 18), ("100%".into(), 29)]
        );
        assert_eq!(partial.as_deref(), Some("$ "));
    }

    #[test]
    fn starting_mid_line_counts_from_there() {
        let mut j = Journal::new(Limits::default());
        j.append(b"$ ");
        let cursor = j.end();
        j.append(b"ls\r\nfile\r\n");
        let (lines, partial) = texts(&j, cursor);
        assert_eq!(lines, [("ls".into(), 6), ("file".into(), 12)]);
        assert_eq!(partial, None);
    }

    #[test]
    fn gap_ends_a_line_and_is_reported() {
        let mut j = Journal::new(Limits::default());
        j.append(b"abc");
        j.record_gap(GapReason::Paused);
        j.append(b"def\n");
        let view = j.lines(0);
        assert_eq!((view.lost, view.gaps.len()), (1, 1));
        let lines: Vec<_> = view
            .lines
            .iter()
            .map(|l| (l.text.as_str(), l.end))
            .collect();
        assert_eq!(lines, [("abc", 3), ("def", 8)]);
    }

    #[test]
    fn evicted_start_is_reported() {
        let mut j = Journal::new(Limits { max_bytes: 32 });
        for i in 0..20 {
            j.append(format!("line {i}\n").as_bytes());
        }
        let view = j.lines(0);
        assert_eq!(view.lost, j.start());
        assert!(view.lost > 0);
        assert_eq!(view.lines.last().map(|l| l.text.as_str()), Some("line 19"));
    }
}
