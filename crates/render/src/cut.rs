//! Cutting one line that alone is larger than the budget: keep its beginning and its
//! end, at character boundaries, with a marker between that names the bytes left out.

use std::ops::Range;

use crate::budget::{Cost, Limits};
use crate::fold::Row;
use crate::tokens::{self, MAX_BYTES_PER_QUARTER, MAX_FREE_BYTES};
use crate::{OutputId, marker};

/// Below this many quarters for the kept parts a cut shows too little to be worth it.
const MIN_KEPT_QUARTERS: usize = 8;

/// A row whose line is shown with its middle cut out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cut {
    pub row: Row,
    /// The bytes kept at the start of the line.
    pub keep_start: Range<usize>,
    /// The bytes kept at the end of the line.
    pub keep_end: Range<usize>,
}

impl Cut {
    /// Bytes of the line (of each copy, for a folded row) not shown.
    pub fn omitted_bytes(&self) -> usize {
        self.keep_end.start - self.keep_start.end
    }

    pub fn display(&self, text: &str, id: Option<&OutputId>) -> String {
        self.display_with(text, &marker::cut_marker(self.omitted_bytes(), id))
    }

    /// The cost with the widest marker it can get, so that naming the real id and
    /// byte count later cannot make it cost more.
    pub fn worst_cost(&self, text: &str) -> Cost {
        // A cut never leaves out more than the whole line.
        let widest = marker::cut_marker(self.row.line.len(), Some(&OutputId::WIDEST));
        Cost::of_line(&self.display_with(text, &widest))
    }

    fn display_with(&self, text: &str, marker: &str) -> String {
        let mut shown = format!(
            "{}{marker}{}",
            &text[self.keep_start.clone()],
            &text[self.keep_end.clone()]
        );
        if self.row.count > 1 {
            shown.push_str(&marker::fold_suffix(self.row.count));
        }
        shown
    }
}

/// Cuts `row` so that it fits in `room`, whatever id the marker will name, or `None`
/// if the room is too small to show a useful part of it.
pub(crate) fn cut_row(text: &str, row: &Row, room: Limits) -> Option<Cut> {
    if room.lines == 0 {
        return None;
    }
    let empty = Cut {
        row: row.clone(),
        keep_start: row.line.start..row.line.start,
        keep_end: row.line.end..row.line.end,
    };
    let overhead = empty.worst_cost(text);
    let mut kept_room = room.minus(overhead);
    // Joining the parts can cost slightly more than the parts alone (spaces before the
    // marker); shrink and retry the few times that happens.
    for _ in 0..4 {
        if kept_room.quarters < MIN_KEPT_QUARTERS {
            return None;
        }
        let cut = cut_within(text, row, kept_room)?;
        let cost = cut.worst_cost(text);
        if room.fits(cost) {
            return Some(cut);
        }
        let excess = Cost {
            quarters: cost.quarters.saturating_sub(room.quarters).max(1),
            lines: 0,
            bytes: cost.bytes.saturating_sub(room.bytes),
        };
        kept_room = kept_room.minus(excess);
    }
    None
}

/// Half the room for the start of the line, the rest for its end.
fn cut_within(text: &str, row: &Row, kept_room: Limits) -> Option<Cut> {
    let line = &text[row.line.clone()];
    let start_room = kept_room.share(0.5);
    let start_len = longest_prefix(line, start_room);
    let prefix = &line[..start_len];
    let end_room = kept_room.minus(Cost {
        quarters: tokens::quarters(prefix),
        lines: 0,
        bytes: prefix.len(),
    });
    let end_len = longest_suffix(&line[start_len..], end_room);
    if start_len + end_len >= line.len() {
        return None;
    }
    let base = row.line.start;
    Some(Cut {
        row: row.clone(),
        keep_start: base..base + start_len,
        keep_end: row.line.end - end_len..row.line.end,
    })
}

/// The length of the longest start of `line`, ending at a character boundary, that fits.
fn longest_prefix(line: &str, room: Limits) -> usize {
    let fits = |n: usize| {
        let n = floor_char_boundary(line, n);
        n <= room.bytes && tokens::quarters(&line[..n]) <= room.quarters
    };
    floor_char_boundary(line, largest_fitting(search_cap(line, room), fits))
}

/// The length of the longest end of `line`, starting at a character boundary, that fits.
fn longest_suffix(line: &str, room: Limits) -> usize {
    let start_of = |n: usize| ceil_char_boundary(line, line.len() - n);
    let fits = |n: usize| {
        let start = start_of(n);
        line.len() - start <= room.bytes && tokens::quarters(&line[start..]) <= room.quarters
    };
    line.len() - start_of(largest_fitting(search_cap(line, room), fits))
}

/// No text longer than this fits in `room`, so the search need not look further.
fn search_cap(line: &str, room: Limits) -> usize {
    let by_tokens = room
        .quarters
        .saturating_mul(MAX_BYTES_PER_QUARTER)
        .saturating_add(MAX_FREE_BYTES);
    line.len().min(room.bytes).min(by_tokens)
}

/// The largest `n` in `0..=cap` for which `fits(n)` holds, assuming it holds up to some
/// point and not after (which the estimate nearly always does); `fits(0)` must hold.
/// Gallops up from small lengths first: the answer is usually far below `cap`, which
/// assumes the cheapest possible text, and every probe costs its length.
fn largest_fitting(cap: usize, fits: impl Fn(usize) -> bool) -> usize {
    let mut lo = 0;
    let mut hi = cap.min(64);
    while hi < cap && fits(hi) {
        lo = hi;
        hi = hi.saturating_mul(2).min(cap);
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_of(text: &str) -> Row {
        Row {
            line: 0..text.len(),
            first: 0,
            count: 1,
            span: 0..text.len(),
        }
    }

    fn room(quarters: usize) -> Limits {
        Limits {
            quarters,
            lines: 1,
            bytes: usize::MAX,
        }
    }

    #[test]
    fn a_long_line_keeps_its_start_and_end_within_the_room() {
        let text = "start ".to_owned() + &"0123456789abcdef".repeat(10_000) + " end";
        let cut = cut_row(&text, &row_of(&text), room(400)).expect("a cut");
        let shown = cut.display(&text, None);
        assert!(shown.starts_with("start "), "{shown}");
        assert!(shown.ends_with(" end"), "{shown}");
        assert!(
            shown.contains("bytes (159.8 KB) of this line omitted"),
            "{shown}"
        );
        assert!(Cost::of_line(&shown).quarters <= 400);
        assert_eq!(
            cut.keep_start.len() + cut.omitted_bytes() + cut.keep_end.len(),
            text.len()
        );
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let text = "é🚀中".repeat(50_000);
        let cut = cut_row(&text, &row_of(&text), room(300)).expect("a cut");
        assert!(text.is_char_boundary(cut.keep_start.end));
        assert!(text.is_char_boundary(cut.keep_end.start));
        assert!(!cut.keep_start.is_empty() && !cut.keep_end.is_empty());
    }

    #[test]
    fn a_room_smaller_than_the_marker_gives_no_cut() {
        let text = "x".repeat(100_000);
        assert_eq!(cut_row(&text, &row_of(&text), room(20)), None);
    }

    #[test]
    fn a_byte_limit_is_respected_too() {
        let text = "word ".repeat(100_000);
        let limits = Limits {
            quarters: usize::MAX,
            lines: 1,
            bytes: 300,
        };
        let cut = cut_row(&text, &row_of(&text), limits).expect("a cut");
        assert!(cut.display(&text, Some(&OutputId::WIDEST)).len() < 300);
    }
}
