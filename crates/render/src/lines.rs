//! Finding lines in a large text without walking all of it: from the front, from the
//! back, and counting them with `memchr`.
//!
//! A text here holds lines separated by `\n`; the last line has no `\n` after it.

use std::ops::Range;

/// Drops trailing blank lines (empty or only spaces and tabs), and the line break
/// before them: the empty rows at the bottom of a terminal screen say nothing.
pub(crate) fn trim_trailing_blank_lines(text: &str) -> &str {
    let bytes = text.as_bytes();
    let mut end = bytes.len();
    loop {
        let start = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |nl| nl + 1);
        if !is_blank(&bytes[start..end]) {
            return &text[..end];
        }
        if start == 0 {
            return "";
        }
        end = start - 1;
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| b == b' ' || b == b'\t')
}

/// Whether a line holds only spaces and tabs.
pub(crate) fn is_blank_line(line: &str) -> bool {
    is_blank(line.as_bytes())
}

/// The number of lines in `text`: an empty text has none.
pub(crate) fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}

/// The line that starts at `start`, as a byte range without its line break.
pub(crate) fn line_from(text: &str, start: usize) -> Range<usize> {
    let end = memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
    start..end
}

/// The line that ends at `end` (at a line break or the end of the text), not starting
/// before `floor`.
pub(crate) fn line_before(text: &str, floor: usize, end: usize) -> Range<usize> {
    let start =
        memchr::memrchr(b'\n', &text.as_bytes()[floor..end]).map_or(floor, |i| floor + i + 1);
    start..end
}

/// Whether the same bytes as `line` sit at `at`, as a whole line ending at `limit` or
/// at a line break before it.
pub(crate) fn same_line_at(text: &str, line: &Range<usize>, at: usize, limit: usize) -> bool {
    let bytes = text.as_bytes();
    let end = at + line.len();
    end <= limit && (end == limit || bytes[end] == b'\n') && bytes[at..end] == bytes[line.clone()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_blank_lines_and_the_final_break_are_dropped() {
        assert_eq!(trim_trailing_blank_lines("a\nb\n  \n\t\n\n"), "a\nb");
        assert_eq!(trim_trailing_blank_lines("a\n"), "a");
        assert_eq!(trim_trailing_blank_lines("   \n\n"), "");
        assert_eq!(trim_trailing_blank_lines("\n\nx"), "\n\nx");
        assert_eq!(trim_trailing_blank_lines(""), "");
    }

    #[test]
    fn lines_are_counted_with_the_last_one_unterminated() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n\nb"), 3);
    }

    #[test]
    fn lines_are_found_from_both_ends() {
        let text = "ab\ncd\n\nef";
        assert_eq!(line_from(text, 0), 0..2);
        assert_eq!(line_from(text, 6), 6..6);
        assert_eq!(line_before(text, 0, text.len()), 7..9);
        assert_eq!(line_before(text, 0, 6), 6..6);
        assert_eq!(line_before(text, 3, 5), 3..5);
    }

    #[test]
    fn a_repeated_line_is_recognised_only_whole() {
        let text = "ab\nab\nabc";
        assert!(same_line_at(text, &(0..2), 3, text.len()));
        assert!(!same_line_at(text, &(0..2), 6, text.len()));
        assert!(!same_line_at(text, &(0..2), 3, 4));
    }
}
