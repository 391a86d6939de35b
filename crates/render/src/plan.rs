//! Deciding what to show of a text within a budget, then writing it out.
//!
//! Planning reads only as much of the text as it shows: rows from the front until the
//! budget is spent, rows from the back for the tail, and a `memchr` count of the lines
//! in between. The middle is never split into lines or copied.

use std::borrow::Cow;

use crate::budget::{Cost, Limits, Meter};
use crate::cut::{Cut, cut_row};
use crate::fold::{Backward, Forward, Row};
use crate::{Budget, OutputId, lines, marker, tokens};

/// What a rendering shows of a text, decided before it is written out, so the caller
/// can keep the full text (and get an id for it) only when something is left out.
///
/// ```
/// use termpilot_render::{Budget, plan};
///
/// let log: String = (1..=10_000).map(|i| format!("step {i}\n")).collect();
/// let plan = plan(&log, &Budget::tokens(200));
/// assert!(plan.is_truncated());
/// let rendered = plan.finish(None);
/// assert!(rendered.text.starts_with("step 1\n"));
/// assert!(rendered.text.ends_with("step 10000"));
/// ```
#[derive(Debug)]
pub struct Plan<'a> {
    /// The text with trailing blank lines removed: what is shown from and what to keep.
    text: Cow<'a, str>,
    total_lines: usize,
    head: Vec<Shown>,
    /// In text order.
    tail: Vec<Shown>,
    /// The lines left out between head and tail, if the text was cut.
    omitted: Option<Omitted>,
}

/// The facts of one rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// What to show: head lines, the elision line if lines were left out, tail lines;
    /// lines joined by `\n`, without a final line break.
    pub text: String,
    /// Whether anything was left out (whole lines, or the middle of a long line).
    pub truncated: bool,
    /// Lines in the full text (after trailing blank lines were dropped).
    pub total_lines: usize,
    /// Bytes in the full text: the length of [`Plan::full_text`].
    pub total_bytes: usize,
    /// Lines left out entirely, replaced by the elision line.
    pub omitted_lines: usize,
    /// Bytes left out: those of the omitted lines (with their line breaks), and those
    /// cut from the middle of long lines.
    pub omitted_bytes: usize,
    /// The token estimate of `text`.
    pub shown_tokens: usize,
    /// Lines of the full text that the head stands for (folded runs count every line),
    /// which is also the `read_output` offset of the first omitted line.
    pub head_lines: usize,
    /// Lines of the full text that the tail stands for.
    pub tail_lines: usize,
}

/// A shown row, whole or with the middle of its line cut out.
#[derive(Clone, Debug)]
enum Shown {
    Whole(Row),
    Cut(Cut),
}

impl Shown {
    fn row(&self) -> &Row {
        match self {
            Shown::Whole(row) => row,
            Shown::Cut(cut) => &cut.row,
        }
    }

    fn display<'t>(&self, text: &'t str, id: Option<&OutputId>) -> Cow<'t, str> {
        match self {
            Shown::Whole(row) => row.display(text),
            Shown::Cut(cut) => Cow::Owned(cut.display(text, id)),
        }
    }

    /// Bytes of the full text this row leaves out.
    fn cut_bytes(&self) -> usize {
        match self {
            Shown::Whole(_) => 0,
            Shown::Cut(cut) => cut.omitted_bytes() * cut.row.count,
        }
    }
}

/// The omitted middle: lines from `first` (counting from 0), and their bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Omitted {
    first: usize,
    lines: usize,
    bytes: usize,
}

/// Plans the rendering of `text`, which must already be clean (no terminal control
/// sequences; see [`plan_terminal`](crate::plan_terminal) for raw terminal bytes).
pub fn plan<'a>(text: &'a str, budget: &Budget) -> Plan<'a> {
    plan_cow(
        Cow::Borrowed(lines::trim_trailing_blank_lines(text)),
        budget,
    )
}

/// Plans the rendering of raw terminal output: control sequences are stripped and
/// carriage-return redraws collapse to their final state first
/// ([`termpilot_journal::clean_text`]).
///
/// ```
/// use termpilot_render::{Budget, plan_terminal};
///
/// let raw = b"\x1b[32mbuilding\x1b[0m\r\n 10%\r 55%\r100%\r\n\r\n";
/// assert_eq!(plan_terminal(raw, &Budget::default()).finish(None).text, "building\n100%");
/// ```
pub fn plan_terminal(bytes: &[u8], budget: &Budget) -> Plan<'static> {
    let mut text = termpilot_journal::clean_text(bytes);
    let kept = lines::trim_trailing_blank_lines(&text).len();
    text.truncate(kept);
    plan_cow(Cow::Owned(text), budget)
}

/// Plans and writes out in one step; for callers that keep no full texts (the elision
/// line then says to raise the budget) or already hold an id.
pub fn render(text: &str, budget: &Budget, output_id: Option<&OutputId>) -> Rendered {
    plan(text, budget).finish(output_id)
}

/// Plans the rendering of a text whose trailing blank lines are already gone.
pub(crate) fn plan_cow<'a>(text: Cow<'a, str>, budget: &Budget) -> Plan<'a> {
    let room = Limits::of(budget);
    let mut meter = Meter::new(room);
    let mut shown = Vec::new();
    let mut rows = Forward::new(&text);
    let overflow = loop {
        let Some(row) = rows.next() else { break None };
        match row_cost(&text, &row, meter.left()) {
            Some(cost) if meter.try_add(cost) => shown.push((row, cost)),
            _ => break Some(row),
        }
    };
    let total_lines = lines::count_lines(&text);
    let Some(overflow) = overflow else {
        let head = shown
            .into_iter()
            .map(|(row, _)| Shown::Whole(row))
            .collect();
        return Plan {
            text,
            total_lines,
            head,
            tail: Vec::new(),
            omitted: None,
        };
    };
    let content = room.minus(elision_reserve(total_lines, text.len()));
    let first_row = shown.first().map_or(overflow, |(row, _)| row.clone());
    let head_room = content.share(budget.head_fraction);
    let (mut head, head_used) = choose_head(&text, shown, first_row, head_room, content);
    let head_end = head.last().map_or(0, |s| s.row().next_start());
    let mut tail = choose_tail(
        &text,
        head_end,
        total_lines,
        content.minus(head_used),
        content,
    );
    if tail.is_empty() && !head.is_empty() {
        // The last line did not fit beside the head, but it matters more than the head.
        head.clear();
        tail = choose_tail(&text, 0, total_lines, content, content);
    }
    let omitted = omitted_between(&text, &head, &tail, total_lines);
    Plan {
        text,
        total_lines,
        head,
        tail,
        omitted,
    }
}

/// What a row costs, or `None` if it certainly does not fit in `room`. Enormous lines
/// are refused by their length alone, without estimating their tokens.
fn row_cost(text: &str, row: &Row, room: Limits) -> Option<Cost> {
    let shown = row.display(text);
    let cannot_fit = shown.len() >= room.bytes
        || room.lines == 0
        || shown.len()
            > room
                .quarters
                .saturating_mul(tokens::MAX_BYTES_PER_QUARTER)
                .saturating_add(tokens::MAX_FREE_BYTES);
    if cannot_fit {
        return None;
    }
    let cost = Cost::of_line(&shown);
    room.fits(cost).then_some(cost)
}

/// The room the elision line may need, whatever it ends up naming: each of its numbers
/// is at most that of the whole text (here all at once, which over-counts a little),
/// the id is the widest there can be, and some slack covers the one smaller number that
/// is wider in text (`999 bytes` against `1.0 KB`).
fn elision_reserve(total_lines: usize, total_bytes: usize) -> Cost {
    let widest = [Some(&OutputId::WIDEST), None].map(|id| {
        Cost::of_line(&marker::elision_line(
            total_lines,
            total_lines.max(2),
            total_bytes,
            id,
        ))
    });
    let slack = Cost {
        quarters: 8,
        lines: 0,
        bytes: 8,
    };
    Cost {
        quarters: widest[0].quarters.max(widest[1].quarters),
        lines: 1,
        bytes: widest[0].bytes.max(widest[1].bytes),
    }
    .plus(slack)
}

/// The first rows that fit in the head's room, from those the first pass measured. If
/// not even the first row fits, is larger than all the room for content, and is not the
/// whole text (which the tail shows), its line is cut.
fn choose_head(
    text: &str,
    measured: Vec<(Row, Cost)>,
    first_row: Row,
    room: Limits,
    content: Limits,
) -> (Vec<Shown>, Cost) {
    let mut meter = Meter::new(room);
    let head: Vec<Shown> = measured
        .into_iter()
        .take_while(|(_, cost)| meter.try_add(*cost))
        .map(|(row, _)| Shown::Whole(row))
        .collect();
    let enormous = row_cost(text, &first_row, content).is_none();
    if !head.is_empty() || first_row.span.end == text.len() || !enormous {
        return (head, meter.used);
    }
    match cut_row(text, &first_row, room) {
        Some(cut) => {
            let cost = cut.worst_cost(text);
            (vec![Shown::Cut(cut)], cost)
        }
        None => (head, meter.used),
    }
}

/// The last rows (at or after `floor`) that fit in `room`, in text order. If not even
/// the last row fits and it is larger than all the room for content, its line is cut.
fn choose_tail(
    text: &str,
    floor: usize,
    total_lines: usize,
    room: Limits,
    content: Limits,
) -> Vec<Shown> {
    let mut meter = Meter::new(room);
    let mut tail = Vec::new();
    for row in Backward::new(text, floor, total_lines) {
        if let Some(cost) = row_cost(text, &row, meter.left()) {
            meter.used = meter.used.plus(cost);
            tail.push(Shown::Whole(row));
            continue;
        }
        if tail.is_empty() && row_cost(text, &row, content).is_none() {
            tail.extend(cut_row(text, &row, room).map(Shown::Cut));
        }
        break;
    }
    tail.reverse();
    tail
}

/// The lines between the head and the tail, if any.
fn omitted_between(
    text: &str,
    head: &[Shown],
    tail: &[Shown],
    total_lines: usize,
) -> Option<Omitted> {
    let (first, start) = head.last().map_or((0, 0), |s| {
        (s.row().first + s.row().count, s.row().next_start())
    });
    // Each omitted line counts with its line break, except the last line of the text.
    let (end_line, end) = tail.first().map_or((total_lines, text.len()), |s| {
        (s.row().first, s.row().span.start)
    });
    (end_line > first).then(|| Omitted {
        first,
        lines: end_line - first,
        bytes: end - start,
    })
}

impl<'a> Plan<'a> {
    /// Whether the rendering leaves anything out; if so, keep [`full_text`](Self::full_text)
    /// and pass its id to [`finish`](Self::finish).
    pub fn is_truncated(&self) -> bool {
        self.omitted.is_some()
            || self
                .head
                .iter()
                .chain(&self.tail)
                .any(|s| s.cut_bytes() > 0)
    }

    /// The text to keep for `read_output`: the input with its trailing blank lines (and
    /// its final line break) removed. Its lines are the ones the elision line counts.
    pub fn full_text(&self) -> &str {
        &self.text
    }

    /// Writes the rendering out. `output_id` is where the full text was kept, if it was;
    /// the elision line and cut markers tell the reader to use it.
    pub fn finish(&self, output_id: Option<&OutputId>) -> Rendered {
        let text = &*self.text;
        let mut out: Vec<Cow<'_, str>> = self
            .head
            .iter()
            .map(|s| s.display(text, output_id))
            .collect();
        if let Some(o) = self.omitted {
            out.push(Cow::Owned(marker::elision_line(
                o.first, o.lines, o.bytes, output_id,
            )));
        }
        out.extend(self.tail.iter().map(|s| s.display(text, output_id)));
        let out = out.join("\n");
        let cut_bytes: usize = self
            .head
            .iter()
            .chain(&self.tail)
            .map(Shown::cut_bytes)
            .sum();
        let lines_of = |shown: &[Shown]| shown.iter().map(|s| s.row().count).sum();
        let omitted = self.omitted.unwrap_or(Omitted {
            first: 0,
            lines: 0,
            bytes: 0,
        });
        Rendered {
            shown_tokens: tokens::estimate_tokens(&out),
            text: out,
            truncated: self.is_truncated(),
            total_lines: self.total_lines,
            total_bytes: text.len(),
            omitted_lines: omitted.lines,
            omitted_bytes: omitted.bytes + cut_bytes,
            head_lines: lines_of(&self.head),
            tail_lines: lines_of(&self.tail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered_lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn elision_lines(text: &str) -> usize {
        text.lines()
            .filter(|l| l.starts_with("[... ") && l.contains(" omitted ("))
            .count()
    }

    #[test]
    fn a_text_that_fits_is_shown_whole_without_trailing_blank_lines() {
        let rendered = render("a\nb\n\n   \n", &Budget::default(), None);
        assert_eq!(rendered.text, "a\nb");
        assert!(!rendered.truncated);
        assert_eq!(
            (
                rendered.total_lines,
                rendered.head_lines,
                rendered.omitted_lines
            ),
            (2, 2, 0)
        );
    }

    #[test]
    fn a_long_text_keeps_its_head_and_tail_around_one_elision_line() {
        let text = numbered_lines(20_000);
        let id: OutputId = "o7".parse().unwrap();
        let rendered = render(&text, &Budget::default(), Some(&id));
        assert!(rendered.truncated);
        assert_eq!(elision_lines(&rendered.text), 1);
        assert!(rendered.text.starts_with("line 1\nline 2\n"));
        assert!(rendered.text.ends_with("line 19999\nline 20000"));
        assert!(rendered.text.contains(&format!(
            "read_output id=o7 offset={} shows them",
            rendered.head_lines
        )));
        assert_eq!(
            rendered.head_lines + rendered.omitted_lines + rendered.tail_lines,
            20_000
        );
        assert!(rendered.shown_tokens <= 2_000);
        // The head gets about a quarter of the budget.
        assert!(
            rendered.tail_lines > 2 * rendered.head_lines,
            "{} {}",
            rendered.head_lines,
            rendered.tail_lines
        );
    }

    #[test]
    fn omitted_bytes_are_what_is_not_shown() {
        let text = numbered_lines(1_000);
        let rendered = render(&text, &Budget::tokens(300), None);
        let full = text.trim_end();
        let head_bytes: usize = full
            .lines()
            .take(rendered.head_lines)
            .map(|l| l.len() + 1)
            .sum();
        let tail_bytes: usize = full
            .lines()
            .rev()
            .take(rendered.tail_lines)
            .map(|l| l.len() + 1)
            .sum::<usize>()
            - 1;
        assert_eq!(head_bytes + rendered.omitted_bytes + tail_bytes, full.len());
        assert_eq!(rendered.total_bytes, full.len());
    }

    #[test]
    fn line_and_byte_limits_count_the_elision_line() {
        let text = numbered_lines(1_000);
        let by_lines = render(
            &text,
            &Budget {
                max_lines: Some(10),
                ..Budget::default()
            },
            None,
        );
        assert_eq!(by_lines.text.lines().count(), 10);
        let by_bytes = render(
            &text,
            &Budget {
                max_bytes: Some(400),
                ..Budget::default()
            },
            None,
        );
        assert!(by_bytes.text.len() <= 400, "{}", by_bytes.text.len());
        assert_eq!(elision_lines(&by_bytes.text), 1);
    }

    #[test]
    fn identical_lines_fold_so_a_flood_of_them_fits() {
        let text = "start\n".to_owned() + &"same\n".repeat(100_000) + "end\n";
        let rendered = render(&text, &Budget::default(), None);
        assert_eq!(
            rendered.text,
            "start\nsame  [×100,000 identical lines]\nend"
        );
        assert!(!rendered.truncated);
        assert_eq!(rendered.total_lines, 100_002);
    }

    #[test]
    fn one_enormous_line_is_cut_within_itself() {
        let text = "x".repeat(5_000_000);
        let rendered = render(&text, &Budget::default(), None);
        assert!(rendered.truncated);
        assert_eq!(rendered.text.lines().count(), 1);
        assert!(
            rendered
                .text
                .contains("bytes (5.0 MB) of this line omitted"),
            "{}",
            rendered.text
        );
        assert!(rendered.shown_tokens <= 2_000);
        assert_eq!((rendered.omitted_lines, rendered.tail_lines), (0, 1));
        assert!(rendered.omitted_bytes > 4_900_000);
    }

    #[test]
    fn an_enormous_first_line_is_cut_in_the_head() {
        let text = "y".repeat(1_000_000) + "\n" + &numbered_lines(5);
        let rendered = render(&text, &Budget::default(), None);
        let first = rendered.text.lines().next().unwrap();
        assert!(
            first.starts_with("yyy") && first.contains("of this line omitted"),
            "{first}"
        );
        assert!(rendered.text.ends_with("line 4\nline 5"));
        assert_eq!(rendered.omitted_lines, 0);
    }

    #[test]
    fn a_line_too_long_for_the_head_but_not_the_budget_is_not_cut() {
        let first = "word ".repeat(150);
        let text = format!("{first}\n{}", numbered_lines(1_000));
        let rendered = render(&text, &Budget::tokens(300), None);
        assert!(
            rendered.text.starts_with("[... lines 1-"),
            "{}",
            rendered.text
        );
        assert!(!rendered.text.contains("of this line omitted"));
        assert_eq!(rendered.head_lines, 0);
    }

    #[test]
    fn a_last_line_that_fits_only_without_the_head_displaces_the_head() {
        let last = "word ".repeat(215);
        let text = format!("{}{last}", numbered_lines(1_000));
        let rendered = render(&text, &Budget::tokens(300), None);
        assert_eq!(rendered.head_lines, 0);
        assert!(rendered.text.ends_with(&last));
        assert!(rendered.shown_tokens <= 300);
    }

    #[test]
    fn a_budget_too_small_for_anything_still_says_what_was_left_out() {
        let rendered = render(&numbered_lines(100), &Budget::tokens(1), None);
        assert_eq!(
            rendered.text,
            "[... lines 1-100 omitted (100 lines, 791 bytes); not kept; raise max_tokens to see more ...]"
        );
    }

    #[test]
    fn an_empty_text_renders_empty() {
        let rendered = render("\n\n", &Budget::default(), None);
        assert_eq!(
            (
                rendered.text.as_str(),
                rendered.total_lines,
                rendered.truncated
            ),
            ("", 0, false)
        );
    }
}
