//! Terminal text cleaning: control sequences stripped, redraws collapsed.
//!
//! [`Cleaner`] is the streaming part: feed it bytes in any split and it reports
//! [`Event`]s. [`clean_text`] is the one-shot convenience that returns what a person
//! would read.

mod cleaner;
mod utf8;

pub use cleaner::Cleaner;
pub(crate) use cleaner::State;

use crate::row::{Collapser, Row, RowSink};

/// What a run of terminal output means for the text of its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// Printable text, never containing control characters except `\t`.
    Text(&'a str),
    /// A line end (`\n` or `\r\n`); `end` is the absolute offset just after the `\n`.
    LineEnd {
        /// Absolute offset after the `\n`.
        end: u64,
    },
    /// The cursor goes back to column 0: text that follows overwrites the line.
    CarriageReturn,
    /// The cursor moves one column left (not past column 0) without erasing.
    Backspace,
    /// Part of the line is erased (`CSI K`).
    EraseLine(Erase),
}

/// Which part of a line an [`Event::EraseLine`] erases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Erase {
    /// From the cursor to the end of the line (`CSI K`, `CSI 0K`).
    ToEnd,
    /// From the start of the line to the cursor, inclusive (`CSI 1K`).
    ToStart,
    /// The whole line; the cursor stays where it is (`CSI 2K`).
    All,
}

/// The text a person would read from `bytes`: control sequences stripped (see
/// [`Cleaner`]), lines ended by `\n`, and each line collapsed to its final visible state.
///
/// Carriage returns overwrite from column 0 (`"abcdef\rXY"` reads `"XYcdef"`),
/// backspace moves one column left, `CSI K` erases. Tabs are kept as `\t`. Lines longer
/// than 16 Ki characters are wrapped internally, so a carriage return there only goes
/// back to the start of the last 16 Ki-character row; the rows are joined again in the
/// output.
///
/// ```
/// use termpilot_journal::clean::clean_text;
///
/// let raw = b"\x1b[1;32mok\x1b[0m\r\n 10%\r 60%\r100%\r\n\x1b]0;title\x07$ ";
/// assert_eq!(clean_text(raw), "ok\n100%\n$ ");
/// ```
pub fn clean_text(bytes: &[u8]) -> String {
    let mut out = TextOut::default();
    let mut collapser = Collapser::default();
    let mut cleaner = Cleaner::new();
    cleaner.feed(bytes, |event| collapser.apply(event, &mut out));
    cleaner.finish(|event| collapser.apply(event, &mut out));
    collapser.row_mut().push_text(0.., &mut out.text);
    out.text
}

/// Collects collapsed rows into one string.
#[derive(Default)]
struct TextOut {
    text: String,
}

impl RowSink for TextOut {
    fn carriage_return(&mut self, _row: &mut Row) {}

    fn wrap(&mut self, row: &mut Row) {
        row.push_text(0.., &mut self.text);
    }

    fn line_end(&mut self, row: &mut Row, _end: u64) {
        row.push_text(0.., &mut self.text);
        self.text.push('\n');
    }
}

#[cfg(test)]
pub(crate) mod tests;
