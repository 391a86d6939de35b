//! Rows: the lines of a text as they are shown, with runs of identical lines folded
//! into one row that states the count, read from the front or from the back.
//!
//! A row stands for `count` lines of the original text. A run of [`MIN_FOLD_RUN`] or
//! more identical lines becomes one row shown as `<line>  [×N identical lines]`, or
//! `[×N blank lines]` when the line holds only spaces and tabs. Shorter runs stay as
//! they are: folding two lines saves nothing.

use std::borrow::Cow;
use std::ops::Range;

use crate::lines;
use crate::marker;

/// The shortest run of identical lines that is folded into one row.
pub(crate) const MIN_FOLD_RUN: usize = 3;

/// One shown line standing for one or more lines of the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    /// One copy of the line, without its line break.
    pub line: Range<usize>,
    /// The index (from 0) of the first line it stands for.
    pub first: usize,
    /// How many lines it stands for: 1, or at least [`MIN_FOLD_RUN`].
    pub count: usize,
    /// All the bytes it stands for, without the final line break.
    pub span: Range<usize>,
}

impl Row {
    /// The row as shown.
    pub fn display<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let line = &text[self.line.clone()];
        if self.count == 1 {
            Cow::Borrowed(line)
        } else if lines::is_blank_line(line) {
            Cow::Owned(marker::blank_run(self.count))
        } else {
            Cow::Owned(format!("{line}{}", marker::fold_suffix(self.count)))
        }
    }

    /// The byte offset where the line after this row starts (past the end of the text
    /// for the last row).
    pub fn next_start(&self) -> usize {
        self.span.end + 1
    }
}

/// Rows from the front of a text.
pub(crate) struct Forward<'t> {
    text: &'t str,
    /// Start of the next line, or `None` once the last line was read.
    next: Option<usize>,
    index: usize,
}

impl<'t> Forward<'t> {
    pub fn new(text: &'t str) -> Self {
        Forward {
            text,
            next: (!text.is_empty()).then_some(0),
            index: 0,
        }
    }
}

impl Iterator for Forward<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        let start = self.next?;
        let line = lines::line_from(self.text, start);
        let mut count = 1;
        let mut end = line.end;
        while end < self.text.len()
            && lines::same_line_at(self.text, &line, end + 1, self.text.len())
        {
            count += 1;
            end += 1 + line.len();
        }
        if count < MIN_FOLD_RUN {
            count = 1;
            end = line.end;
        }
        self.next = (end < self.text.len()).then_some(end + 1);
        let row = Row {
            line: line.clone(),
            first: self.index,
            count,
            span: line.start..end,
        };
        self.index += count;
        Some(row)
    }
}

/// Rows from the back of a text, not reaching before a floor (a line start).
pub(crate) struct Backward<'t> {
    text: &'t str,
    floor: usize,
    /// End of the next line to read (backwards), or `None` once the floor was reached.
    end: Option<usize>,
    /// Index of the line after the next row to read.
    index_after: usize,
}

impl<'t> Backward<'t> {
    /// Rows of the lines at or after `floor`; the text holds `total_lines` lines.
    pub fn new(text: &'t str, floor: usize, total_lines: usize) -> Self {
        let end = (floor < text.len()).then_some(text.len());
        Backward {
            text,
            floor,
            end,
            index_after: total_lines,
        }
    }
}

impl Iterator for Backward<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        let end = self.end?;
        let line = lines::line_before(self.text, self.floor, end);
        let bytes = self.text.as_bytes();
        let mut count = 1;
        let mut start = line.start;
        while let Some(candidate) = start.checked_sub(1 + line.len()) {
            let is_line_start = candidate == self.floor
                || (candidate > self.floor && bytes[candidate - 1] == b'\n');
            if !is_line_start || !lines::same_line_at(self.text, &line, candidate, start - 1) {
                break;
            }
            count += 1;
            start = candidate;
        }
        if count < MIN_FOLD_RUN {
            count = 1;
            start = line.start;
        }
        self.end = (start > self.floor).then(|| start - 1);
        self.index_after -= count;
        Some(Row {
            line,
            first: self.index_after,
            count,
            span: start..end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str, rows: impl Iterator<Item = Row>) -> Vec<(String, usize, usize)> {
        rows.map(|row| (row.display(text).into_owned(), row.first, row.count))
            .collect()
    }

    const TEXT: &str = "a\nx\nx\nx\nb\nb\n\n\n\nc";

    #[test]
    fn forward_rows_fold_runs_of_three_or_more() {
        let rows = shown(TEXT, Forward::new(TEXT));
        let expected = [
            ("a", 0, 1),
            ("x  [×3 identical lines]", 1, 3),
            ("b", 4, 1),
            ("b", 5, 1),
            ("[×3 blank lines]", 6, 3),
            ("c", 9, 1),
        ];
        let expected: Vec<_> = expected
            .iter()
            .map(|&(s, f, c)| (s.to_owned(), f, c))
            .collect();
        assert_eq!(rows, expected);
    }

    #[test]
    fn backward_rows_are_the_forward_rows_reversed() {
        let mut backward = shown(TEXT, Backward::new(TEXT, 0, 10));
        backward.reverse();
        assert_eq!(backward, shown(TEXT, Forward::new(TEXT)));
    }

    #[test]
    fn backward_rows_stop_at_the_floor() {
        let text = "x\nx\nx\nx";
        let rows: Vec<Row> = Backward::new(text, 4, 4).collect();
        let expected = vec![
            Row {
                line: 6..7,
                first: 3,
                count: 1,
                span: 6..7,
            },
            Row {
                line: 4..5,
                first: 2,
                count: 1,
                span: 4..5,
            },
        ];
        assert_eq!(rows, expected);
    }

    #[test]
    fn spans_cover_the_text_exactly() {
        let rows: Vec<Row> = Forward::new(TEXT).collect();
        assert_eq!(rows.first().map(|r| r.span.start), Some(0));
        assert_eq!(rows.last().map(|r| r.span.end), Some(TEXT.len()));
        for pair in rows.windows(2) {
            assert_eq!(pair[0].next_start(), pair[1].span.start);
            assert_eq!(pair[0].first + pair[0].count, pair[1].first);
        }
    }

    #[test]
    fn an_empty_text_has_no_rows() {
        assert_eq!(Forward::new("").count(), 0);
        assert_eq!(Backward::new("", 0, 0).count(), 0);
    }
}
