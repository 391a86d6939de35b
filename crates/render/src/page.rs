//! Pages of a kept output: a range of its lines, or the lines that match a pattern,
//! with the facts a reader needs to ask for the next page.

use regex::Regex;

use crate::{OutputId, lines, marker};

/// One page of a kept output, as `read_output` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// The output the page is from.
    pub id: OutputId,
    /// The lines shown, with their numbers.
    pub lines: Vec<PageLine>,
    /// The number (from 1) of the first line shown; 0 if none is.
    pub first_line: usize,
    /// Lines in the whole output.
    pub total_lines: usize,
    /// Without a pattern: lines after the last one shown. With a pattern: matching
    /// lines after the last one shown.
    pub remaining_lines: usize,
    /// The offset that continues where this page stopped, if anything remains.
    pub next_offset: Option<usize>,
    /// With a pattern: how many lines match, from the page's offset to the end.
    pub matching_lines: Option<usize>,
}

/// One line of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageLine {
    /// Its number in the output, counting from 1 (its offset plus one).
    pub number: usize,
    /// The line, without its line break.
    pub text: String,
}

impl Page {
    /// The lines joined by `\n`; prefixed with `NUMBER:` when the page was filtered by a
    /// pattern, since the numbers are not consecutive then.
    pub fn text(&self) -> String {
        let numbered = self.matching_lines.is_some();
        let lines: Vec<String> = self
            .lines
            .iter()
            .map(|line| {
                if numbered {
                    format!("{}:{}", line.number, line.text)
                } else {
                    line.text.clone()
                }
            })
            .collect();
        lines.join("\n")
    }

    /// One line of facts for the reader, e.g.
    /// `o7: lines 101-300 of 19,700; 19,400 more lines (next offset=300)`.
    pub fn header(&self) -> String {
        let shown = match (self.lines.first(), self.lines.last()) {
            (Some(first), Some(last)) if self.matching_lines.is_none() => {
                format!(
                    "lines {}-{}",
                    marker::thousands(first.number),
                    marker::thousands(last.number)
                )
            }
            (Some(_), Some(_)) => format!(
                "{} matching lines shown",
                marker::thousands(self.lines.len())
            ),
            _ => "no lines shown".to_owned(),
        };
        let matching = self.matching_lines.map_or(String::new(), |n| {
            format!(", {} matching", marker::thousands(n))
        });
        let more = match self.next_offset {
            Some(next) => format!(
                "; {} more (next offset={next})",
                marker::thousands(self.remaining_lines)
            ),
            None => "; nothing more".to_owned(),
        };
        format!(
            "{}: {shown} of {} lines{matching}{more}",
            self.id,
            marker::thousands(self.total_lines)
        )
    }
}

/// The page of `text` (a kept output) starting `offset` lines in (from the end if
/// negative), with at most `limit` lines, or only lines matching `grep`.
pub(crate) fn page_of(
    id: OutputId,
    text: &str,
    offset: i64,
    limit: usize,
    grep: Option<&Regex>,
) -> Page {
    let total_lines = lines::count_lines(text);
    let start = start_index(offset, total_lines);
    let all_after = lines_from(text, start)
        .enumerate()
        .map(|(i, line)| (start + i, line));
    let mut page = Page {
        id,
        lines: Vec::new(),
        first_line: 0,
        total_lines,
        remaining_lines: 0,
        next_offset: None,
        matching_lines: None,
    };
    match grep {
        None => {
            page.lines = all_after.take(limit).map(numbered).collect();
            let end = start + page.lines.len();
            page.remaining_lines = total_lines - end;
            page.next_offset = (page.remaining_lines > 0).then_some(end);
        }
        Some(pattern) => {
            let mut matching = all_after.filter(|(_, line)| pattern.is_match(line));
            page.lines = matching.by_ref().take(limit).map(numbered).collect();
            page.remaining_lines = matching.count();
            page.matching_lines = Some(page.lines.len() + page.remaining_lines);
            page.next_offset = page
                .lines
                .last()
                .filter(|_| page.remaining_lines > 0)
                .map(|line| line.number);
        }
    }
    page.first_line = page.lines.first().map_or(0, |line| line.number);
    page
}

fn numbered((index, line): (usize, &str)) -> PageLine {
    PageLine {
        number: index + 1,
        text: line.to_owned(),
    }
}

/// The index of the first line of a page: `offset` lines in, or `-offset` lines before
/// the end; past the end gives an empty page.
fn start_index(offset: i64, total_lines: usize) -> usize {
    match usize::try_from(offset) {
        Ok(skip) => skip.min(total_lines),
        Err(_) => {
            total_lines.saturating_sub(usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX))
        }
    }
}

/// The lines of `text` from index `start` on, found with `memchr`.
fn lines_from(text: &str, start: usize) -> impl Iterator<Item = &str> {
    let first_byte = match start {
        0 => Some(0),
        _ => memchr::memchr_iter(b'\n', text.as_bytes())
            .nth(start - 1)
            .map(|nl| nl + 1),
    };
    let mut next = first_byte.filter(|_| !text.is_empty());
    std::iter::from_fn(move || {
        let range = lines::line_from(text, next?);
        next = (range.end < text.len()).then_some(range.end + 1);
        Some(&text[range])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "one\ntwo\nthree\nfour\nfive";

    fn id() -> OutputId {
        OutputId::new(7)
    }

    fn texts(page: &Page) -> Vec<&str> {
        page.lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn a_page_starts_at_its_offset_and_says_what_remains() {
        let page = page_of(id(), TEXT, 1, 2, None);
        assert_eq!(texts(&page), ["two", "three"]);
        assert_eq!(
            (page.first_line, page.total_lines, page.remaining_lines),
            (2, 5, 2)
        );
        assert_eq!(page.next_offset, Some(3));
        assert_eq!(
            page.header(),
            "o7: lines 2-3 of 5 lines; 2 more (next offset=3)"
        );
    }

    #[test]
    fn a_negative_offset_counts_from_the_end() {
        let page = page_of(id(), TEXT, -2, 10, None);
        assert_eq!(texts(&page), ["four", "five"]);
        assert_eq!((page.first_line, page.next_offset), (4, None));
        assert_eq!(texts(&page_of(id(), TEXT, -99, 1, None)), ["one"]);
    }

    #[test]
    fn an_offset_past_the_end_gives_an_empty_page() {
        let page = page_of(id(), TEXT, 99, 10, None);
        assert!(page.lines.is_empty());
        assert_eq!(
            (page.first_line, page.remaining_lines, page.next_offset),
            (0, 0, None)
        );
        assert_eq!(page.header(), "o7: no lines shown of 5 lines; nothing more");
    }

    #[test]
    fn grep_returns_matching_lines_with_their_numbers() {
        let pattern = Regex::new("^t").unwrap();
        let page = page_of(id(), TEXT, 0, 1, Some(&pattern));
        assert_eq!(page.text(), "2:two");
        assert_eq!(
            (page.matching_lines, page.remaining_lines, page.next_offset),
            (Some(2), 1, Some(2))
        );
        let rest = page_of(id(), TEXT, 2, 10, Some(&pattern));
        assert_eq!(rest.text(), "3:three");
        assert_eq!(rest.next_offset, None);
    }

    #[test]
    fn an_empty_output_has_no_lines() {
        let page = page_of(id(), "", 0, 10, None);
        assert_eq!((page.total_lines, page.lines.len()), (0, 0));
    }

    #[test]
    fn empty_lines_are_lines() {
        let page = page_of(id(), "a\n\nb", 0, 10, None);
        assert_eq!(texts(&page), ["a", "", "b"]);
    }
}
