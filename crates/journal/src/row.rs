//! A person's view of one line: text written over itself by carriage returns,
//! backspaces and erases, collapsed to what a terminal would show.

use crate::clean::{Erase, Event};

/// Width at which a line is soft-wrapped, in characters. A terminal wraps long lines at
/// its width; this is a (much wider) stand-in that keeps every per-line cost bounded: a
/// carriage return goes back to the start of the current row, and a row is what the
/// scanner matches patterns against. Lines up to this width behave exactly as if there
/// were no wrapping.
pub(crate) const ROW_CHARS: usize = 16 * 1024;

/// One row of cells with a cursor, like a terminal row. Each character takes one cell
/// (there is no width table, so wide characters are not special).
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    cells: Vec<char>,
    cursor: usize,
    /// Whether the visible text changed since the consumer last looked at it; lets the
    /// scanner skip matching the same text twice.
    pub(crate) changed: bool,
}

impl Row {
    pub(crate) fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// Appends the visible text of the cells in `range` to `out`.
    pub(crate) fn push_text(&self, range: std::ops::RangeFrom<usize>, out: &mut String) {
        out.extend(&self.cells[range]);
    }

    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        self.cells.iter().collect()
    }

    fn is_full(&self) -> bool {
        self.cursor == ROW_CHARS
    }

    fn write(&mut self, c: char) {
        match self.cells.get_mut(self.cursor) {
            Some(cell) => *cell = c,
            None => self.cells.push(c),
        }
        self.cursor += 1;
        self.changed = true;
    }

    fn erase(&mut self, erase: Erase) {
        // Erased cells become blanks; blanks at the end of a row are not text.
        match erase {
            Erase::ToEnd => self.cells.truncate(self.cursor),
            Erase::ToStart => {
                let upto = (self.cursor + 1).min(self.cells.len());
                self.cells[..upto].fill(' ');
                self.trim_trailing_blanks();
            }
            Erase::All => self.cells.clear(),
        }
        if self.cells.len() < self.cursor {
            self.cells.resize(self.cursor, ' ');
        }
        self.changed = true;
    }

    fn trim_trailing_blanks(&mut self) {
        let keep = self
            .cells
            .iter()
            .rposition(|&c| c != ' ')
            .map_or(0, |last| last + 1);
        self.cells.truncate(keep.max(self.cursor));
    }

    fn clear(&mut self) {
        self.cells.clear();
        self.cursor = 0;
        self.changed = true;
    }
}

/// Receives the rows of a line at the moments where their text is complete or about to
/// be overwritten.
pub(crate) trait RowSink {
    /// A carriage return is about to move the cursor to the start of `row`.
    fn carriage_return(&mut self, row: &mut Row);
    /// `row` is full and the line continues on a new row.
    fn wrap(&mut self, row: &mut Row);
    /// The line ended (`end` is the offset after its line end, or of the gap that ended
    /// it); `row` is its last row.
    fn line_end(&mut self, row: &mut Row, end: u64);
}

/// Applies cleaner [`Event`]s to a [`Row`] and tells a [`RowSink`] about its states.
#[derive(Debug, Clone, Default)]
pub(crate) struct Collapser {
    row: Row,
}

impl Collapser {
    pub(crate) fn apply(&mut self, event: Event<'_>, sink: &mut impl RowSink) {
        match event {
            Event::Text(text) => self.write(text, sink),
            Event::LineEnd { end } => self.end_line(end, sink),
            Event::CarriageReturn => {
                sink.carriage_return(&mut self.row);
                self.row.cursor = 0;
            }
            Event::Backspace => self.row.cursor = self.row.cursor.saturating_sub(1),
            Event::EraseLine(erase) => self.row.erase(erase),
        }
    }

    /// Ends the current line without a line end in the text (a gap, lost data).
    pub(crate) fn end_line(&mut self, end: u64, sink: &mut impl RowSink) {
        sink.line_end(&mut self.row, end);
        self.row.clear();
    }

    /// The row being written (the unfinished end of the current line).
    pub(crate) fn row_mut(&mut self) -> &mut Row {
        &mut self.row
    }

    fn write(&mut self, text: &str, sink: &mut impl RowSink) {
        for c in text.chars() {
            if self.row.is_full() {
                sink.wrap(&mut self.row);
                self.row.clear();
            }
            self.row.write(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records every state the sink is shown, as text.
    #[derive(Default)]
    struct States(Vec<String>);

    impl RowSink for States {
        fn carriage_return(&mut self, row: &mut Row) {
            self.0.push(format!("cr:{}", row.text()));
        }
        fn wrap(&mut self, row: &mut Row) {
            self.0.push(format!("wrap:{}", row.len()));
        }
        fn line_end(&mut self, row: &mut Row, end: u64) {
            self.0.push(format!("end@{end}:{}", row.text()));
        }
    }

    fn run(events: &[Event<'_>]) -> Vec<String> {
        let mut collapser = Collapser::default();
        let mut states = States::default();
        for &event in events {
            collapser.apply(event, &mut states);
        }
        states.0.push(format!("now:{}", collapser.row.text()));
        states.0
    }

    #[test]
    fn carriage_return_overwrites_from_column_zero() {
        let states = run(&[
            Event::Text("abcdef"),
            Event::CarriageReturn,
            Event::Text("XY"),
        ]);
        assert_eq!(states, ["cr:abcdef", "now:XYcdef"]);
    }

    #[test]
    fn backspace_moves_left_without_erasing() {
        let states = run(&[Event::Text("ab"), Event::Backspace, Event::Text("c")]);
        assert_eq!(states, ["now:ac"]);
    }

    #[test]
    fn erase_variants() {
        let to_end = [
            Event::Text("abcdef"),
            Event::CarriageReturn,
            Event::Text("XY"),
        ];
        let mut events = to_end.to_vec();
        events.push(Event::EraseLine(Erase::ToEnd));
        assert_eq!(run(&events).last().unwrap(), "now:XY");
        let mut events = to_end.to_vec();
        events.push(Event::EraseLine(Erase::ToStart));
        assert_eq!(run(&events).last().unwrap(), "now:   def");
        let mut events = to_end.to_vec();
        events.extend([Event::EraseLine(Erase::All), Event::Text("Z")]);
        assert_eq!(run(&events).last().unwrap(), "now:  Z");
    }

    #[test]
    fn long_text_wraps_into_rows() {
        let long = "x".repeat(ROW_CHARS + 5);
        let states = run(&[Event::Text(&long), Event::LineEnd { end: 9 }]);
        assert_eq!(
            states,
            [
                format!("wrap:{ROW_CHARS}"),
                "end@9:xxxxx".into(),
                "now:".into()
            ]
        );
    }
}
