//! Following one command's markers through its pane's journal as the
//! output streams in.
//!
//! The journal keeps only the newest bytes of a pane's output, so a command
//! that prints more than it holds would lose its start marker (and with it
//! the place where its output begins) before its end marker arrives. The
//! tracker reads each byte once, as it arrives: it remembers where the
//! output began, keeps a copy of its first bytes (the head), and notes every
//! end marker carrying the command's nonce. The report is then the head, the
//! tail the journal still holds, and how many bytes between them are gone.

use std::ops::Range;

use termpilot_journal::{Gap, Journal};

use crate::marker::{marker_for, markers_in};
use crate::screen::{addresses_cursor, drawn_span, split_screens};

/// The most bytes of a command's output kept as its head, beyond what the
/// journal holds (at most a quarter of the journal).
pub const HEAD_MAX: usize = 64 << 10;

/// An end marker with the command's nonce, as seen in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndMarker {
    /// Where the marker begins: the output ends here.
    pub at: u64,
    /// Just after the marker.
    pub after: u64,
    /// The exit code it carries (`-1` when it carries none that parses).
    pub code: i32,
}

/// What is known of one command's output so far.
#[derive(Debug)]
pub struct Tracker {
    /// `ESC ] 7770 ; NONCE ;`, what both markers start with.
    marker: Vec<u8>,
    /// Journal position before the command was typed.
    typed_at: u64,
    /// Every byte before this has been looked at.
    scanned: u64,
    /// Where the output begins: just after the start marker.
    body: Option<u64>,
    /// Bytes after the typed position were evicted before they were looked
    /// at, so the start marker may be among them.
    start_lost: bool,
    /// The first bytes of the output, copied before the journal evicts them.
    head: Vec<u8>,
    head_cap: usize,
    /// The head stopped growing at a hole (eviction or a gap).
    head_done: bool,
    /// The newest end marker seen: the shell prints its own last, so once it
    /// is back in charge of the terminal, the newest is the real one.
    last_end: Option<EndMarker>,
    /// Where the next command typed into the pane began: nothing of this
    /// command lies beyond it.
    cut: Option<u64>,
}

/// The command's output as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The first bytes of the output, copied as they arrived.
    pub head: Vec<u8>,
    /// After the lost part (if any), what the journal still holds.
    pub tail: Vec<u8>,
    /// Bytes between the two that are gone (evicted or dropped by tmux).
    pub lost: u64,
}

impl Output {
    /// The output's text, control sequences removed and trailing newlines
    /// trimmed; when bytes were lost, a line between head and tail says how
    /// many.
    pub fn text(&self) -> String {
        let text = if self.lost == 0 {
            termpilot_journal::clean_text(&[&self.head[..], &self.tail[..]].concat())
        } else {
            let head = termpilot_journal::clean_text(&self.head);
            let tail = termpilot_journal::clean_text(&self.tail);
            let mut text = head.trim_end_matches('\n').to_owned();
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&lost_line(self.lost));
            text.push('\n');
            text.push_str(tail.trim_start_matches('\n'));
            text
        };
        text.trim_end_matches('\n').to_owned()
    }
}

/// What a report shows of an output: its text from a point on, with any
/// full-screen program's drawing left out (see [`crate::split_screens`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The text drawn on the normal screen, as [`Output::text`] cleans it.
    pub text: String,
    /// A full-screen program drew on the alternate screen meanwhile.
    pub full_screen: bool,
    /// The output ends on the alternate screen.
    pub ends_full_screen: bool,
    /// What the normal screen got addresses the cursor (a screen drawn
    /// there, see [`crate::addresses_cursor`]).
    pub draws: bool,
}

impl Output {
    /// The output from the line holding its byte `skip` on (what an earlier
    /// report showed before that line is left out), with a full-screen
    /// program's drawing replaced by `note`. An output that lost bytes is
    /// shown whole.
    pub fn shown_from(&self, skip: usize, note: &str) -> Shown {
        let (head, tail, lost, on_alternate) = if self.lost == 0 && skip > 0 {
            let all = [&self.head[..], &self.tail[..]].concat();
            let skip = skip.min(all.len());
            let start = memchr::memrchr(b'\n', &all[..skip]).map_or(0, |at| at + 1);
            let before = split_screens(&all[..start], false, b"").ends_full_screen;
            (all[start..].to_vec(), Vec::new(), 0, before)
        } else {
            (self.head.clone(), self.tail.clone(), self.lost, false)
        };
        let note = note.as_bytes();
        let head = split_screens(&head, on_alternate, note);
        // A stretch on the alternate screen across the lost bytes is noted once.
        let tail_note = if head.ends_full_screen {
            &b""[..]
        } else {
            note
        };
        let tail = split_screens(&tail, head.ends_full_screen, tail_note);
        let draws = addresses_cursor(&head.normal) || addresses_cursor(&tail.normal);
        let normal = Output {
            head: undrawn(head.normal, note),
            tail: undrawn(tail.normal, note),
            lost,
        };
        Shown {
            text: normal.text(),
            full_screen: head.full_screen || tail.full_screen,
            ends_full_screen: tail.ends_full_screen,
            draws,
        }
    }

    /// How many bytes of the output are held (head and tail).
    pub fn held(&self) -> usize {
        self.head.len() + self.tail.len()
    }
}

/// `bytes` with a screen drawn there by cursor addressing replaced by
/// `note` on a line of its own: what is left is what was printed before
/// the drawing began, and the last line printed after it (a pager's rows
/// after its last jump are more of its drawing; an editor's last line says
/// what it wrote).
fn undrawn(bytes: Vec<u8>, note: &[u8]) -> Vec<u8> {
    let Some(span) = drawn_span(&bytes) else {
        return bytes;
    };
    let mut kept = bytes[..span.start].to_vec();
    if kept.last().is_some_and(|&b| b != b'\n') {
        kept.extend_from_slice(b"\r\n");
    }
    kept.extend_from_slice(note);
    kept.extend_from_slice(b"\r\n");
    let after = &bytes[span.end..];
    let body = after.strip_suffix(b"\n").unwrap_or(after);
    let last = memchr::memrchr(b'\n', body).map_or(0, |at| at + 1);
    kept.extend_from_slice(&after[last..]);
    kept
}

/// The line that stands for the part of an output the journal lost.
pub fn lost_line(lost: u64) -> String {
    format!("[... {lost} bytes of output lost: more than the pane's journal keeps ...]")
}

impl Tracker {
    /// A tracker for the command typed at `typed_at` with `nonce`, in a pane
    /// whose journal holds `journal_max` bytes.
    pub fn new(nonce: &str, typed_at: u64, journal_max: usize) -> Tracker {
        Tracker {
            marker: marker_for(nonce),
            typed_at,
            scanned: typed_at,
            body: None,
            start_lost: false,
            head: Vec::new(),
            head_cap: HEAD_MAX.min(journal_max / 4),
            head_done: false,
            last_end: None,
            cut: None,
        }
    }

    /// Whether the command began: its start marker was seen, or may have
    /// been evicted.
    pub fn started(&self) -> bool {
        self.body.is_some() || self.start_lost
    }

    /// The newest end marker seen after the start (or after a start that
    /// may have been evicted). A program can print a marker too, once it
    /// read the nonce off the screen: only the caller can tell whether the
    /// shell has the terminal back, which makes the newest the real one.
    pub fn last_end(&self) -> Option<EndMarker> {
        self.last_end
    }

    /// Where the command's output was cut off by the next command, if it was.
    pub fn cut(&self) -> Option<u64> {
        self.cut
    }

    /// Ends the command's output at `cut` (where the next command began),
    /// unless an earlier cut is known.
    pub fn cut_at(&mut self, cut: u64) {
        self.cut.get_or_insert(cut);
    }

    /// Looks at the bytes that arrived since the last call.
    pub fn advance(&mut self, journal: &Journal) {
        let limit = self.cut.unwrap_or(u64::MAX).min(journal.end());
        if self.scanned >= limit {
            return;
        }
        let read = journal.read_from(self.scanned);
        let first = self.scanned.max(journal.start());
        if first > self.scanned {
            // Evicted before it was looked at.
            match self.body {
                Some(_) => self.head_done = true,
                None => self.start_lost = true,
            }
        }
        // A gap shifts the offsets of the bytes after it by one.
        let offset_of = |index: usize| {
            let mut offset = first + index as u64;
            for gap in &read.gaps {
                if gap.offset <= offset {
                    offset += 1;
                }
            }
            offset
        };
        let gaps_before = read.gaps.iter().filter(|gap| gap.offset < limit).count() as u64;
        let held = (limit.saturating_sub(first).saturating_sub(gaps_before) as usize)
            .min(read.bytes.len());
        let bytes = &read.bytes[..held];
        let done = self.find_markers(bytes, offset_of);
        let (run, run_offset, stopped) = self.head_run(&read.gaps, first, done);
        self.grow_head(&bytes[run], run_offset);
        if stopped {
            self.head_done = true;
        }
        self.scanned = if done == held {
            limit.min(read.next)
        } else {
            offset_of(done)
        };
    }

    /// Records the markers in `bytes`; returns how many bytes are done with
    /// (the rest may hold the beginning of a marker still arriving).
    fn find_markers(&mut self, bytes: &[u8], offset_of: impl Fn(usize) -> u64) -> usize {
        let (found, done) = markers_in(&self.marker, bytes);
        for (value, at, after) in found {
            self.marker_seen(value, offset_of(at), offset_of(after));
        }
        done
    }

    fn marker_seen(&mut self, value: &[u8], at: u64, after: u64) {
        if value == b"start" {
            self.body.get_or_insert(after);
        } else if self.started() {
            let code = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse().ok());
            self.last_end = Some(EndMarker {
                at,
                after,
                code: code.unwrap_or(-1),
            });
        }
    }

    /// Where the head may grow in the `done` bytes just read from `first`:
    /// the contiguous run (its indices and its first byte's offset) after
    /// the last gap before the head's end, up to the first gap after it; and
    /// whether such a gap stops the head. A gap before the output began (a
    /// pane paused before the command started) is no hole in the output.
    fn head_run(&self, gaps: &[Gap], first: u64, done: usize) -> (Range<usize>, u64, bool) {
        let head_end = self.body.map(|body| body + self.head.len() as u64);
        let (mut start, mut offset) = (0, first);
        for (before, gap) in gaps.iter().enumerate() {
            // Each earlier gap takes an offset but no byte.
            let index = (gap.offset.saturating_sub(first) as usize).saturating_sub(before);
            match head_end {
                Some(head_end) if gap.offset < head_end => {
                    (start, offset) = (index, gap.offset + 1)
                }
                Some(_) if index < done => return (start.min(index)..index, offset, true),
                _ => break,
            }
        }
        (start.min(done)..done, offset, false)
    }

    /// Copies the output among `bytes` (which begin at `offset`) into the
    /// head, while it is contiguous and not full.
    fn grow_head(&mut self, bytes: &[u8], offset: u64) {
        let Some(body) = self.body else { return };
        if self.head_done || self.head.len() >= self.head_cap {
            return;
        }
        let head_end = body + self.head.len() as u64;
        let end = offset + bytes.len() as u64;
        if head_end < offset {
            self.head_done = true;
            return;
        }
        if head_end >= end {
            return;
        }
        let from = (head_end - offset) as usize;
        let room = self.head_cap - self.head.len();
        let take = (bytes.len() - from).min(room);
        self.head.extend_from_slice(&bytes[from..from + take]);
    }

    /// The output up to `end` (an end marker's position, a cut, or the end
    /// of the journal): the head, and what the journal still holds after it.
    pub fn output(&self, journal: &Journal, end: u64) -> Output {
        let Some(body) = self.body.or(self.start_lost.then_some(self.typed_at)) else {
            return Output {
                head: Vec::new(),
                tail: Vec::new(),
                lost: 0,
            };
        };
        let end = end.max(body);
        let in_head = (self.head.len() as u64).min(end - body);
        let head = self.head[..in_head as usize].to_vec();
        let head_end = body + in_head;
        let read = journal.read_from(head_end);
        let first = head_end.max(journal.start());
        let gaps = read.gaps.iter().filter(|gap| gap.offset < end).count() as u64;
        let held = end.saturating_sub(first).saturating_sub(gaps) as usize;
        let tail = read.bytes[..held.min(read.bytes.len())].to_vec();
        let lost = first.min(end) - head_end + gaps;
        Output { head, tail, lost }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use termpilot_journal::{GapReason, Limits};

    const NONCE: &str = "tp0123";

    fn marker(value: &str) -> Vec<u8> {
        format!("\x1b]7770;{NONCE};{value}\x07").into_bytes()
    }

    fn journal(max_bytes: usize) -> Journal {
        Journal::new(Limits { max_bytes })
    }

    #[test]
    fn a_full_screen_program_s_drawing_is_noted_not_shown() {
        let output = Output {
            head: b"a\r\n\x1b[?1049hdrawn\x1b[?1049lb\r\n".to_vec(),
            tail: Vec::new(),
            lost: 0,
        };
        let shown = output.shown_from(0, "[vim: full screen]");
        assert_eq!(shown.text, "a\n[vim: full screen]\nb");
        assert!(shown.full_screen && !shown.ends_full_screen);
        // From the line an earlier report ended on.
        assert_eq!(output.shown_from(5, "[vim]").text, "[vim]\nb");
        let drawn = Output {
            head: b"\x1b[H\x1b[2Jrow 1\x1b[2;1Hrow 2\r\nrow 3\r\n\x1b[24;1H\x1b[K\"f\" written\r\n"
                .to_vec(),
            tail: Vec::new(),
            lost: 0,
        };
        let shown = drawn.shown_from(0, "[vi: full screen]");
        assert_eq!(shown.text, "[vi: full screen]\n\"f\" written");
        assert!(shown.draws && !shown.full_screen);
    }

    #[test]
    fn finds_markers_split_across_appends() {
        let mut journal = journal(1 << 20);
        let mut tracker = Tracker::new(NONCE, 0, 1 << 20);
        let mut stream = b"$ echo\r\n".to_vec();
        stream.extend(marker("start"));
        stream.extend(b"out\r\n");
        stream.extend(marker("3"));
        stream.extend(b"$ ");
        for byte in &stream {
            journal.append(std::slice::from_ref(byte));
            tracker.advance(&journal);
        }
        let end = tracker.last_end.expect("the end marker");
        assert_eq!(end.code, 3);
        let output = tracker.output(&journal, end.at);
        assert_eq!((&output.head[..], output.lost), (&b"out\r\n"[..], 0));
        assert!(output.tail.is_empty());
    }

    #[test]
    fn keeps_head_and_tail_of_an_output_larger_than_the_journal() {
        let mut journal = journal(4096);
        let mut tracker = Tracker::new(NONCE, 0, 4096);
        journal.append(&marker("start"));
        let body_at = journal.end();
        let line = b"0123456789abcde\n";
        for _ in 0..2000 {
            journal.append(line);
            tracker.advance(&journal);
        }
        let ends_at = journal.end();
        journal.append(&marker("0"));
        tracker.advance(&journal);
        let end = tracker.last_end.expect("the end marker");
        assert_eq!((end.at, end.code), (ends_at, 0));
        let output = tracker.output(&journal, end.at);
        assert_eq!(output.head.len(), 1024);
        assert!(output.head.starts_with(line));
        assert!(output.tail.ends_with(line));
        let total = output.head.len() as u64 + output.tail.len() as u64 + output.lost;
        assert_eq!(total, ends_at - body_at);
        assert!(output.lost > 0);
    }

    #[test]
    fn an_end_marker_after_an_evicted_start_still_counts() {
        let mut journal = journal(256);
        let mut tracker = Tracker::new(NONCE, 0, 256);
        journal.append(&marker("start"));
        journal.append(&[b'x'; 1000]);
        journal.append(&marker("5"));
        tracker.advance(&journal);
        assert!(tracker.started());
        assert_eq!(tracker.last_end.map(|end| end.code), Some(5));
    }

    #[test]
    fn counts_gaps_as_lost_and_stops_at_a_cut() {
        let mut journal = journal(1 << 20);
        let mut tracker = Tracker::new(NONCE, 0, 1 << 20);
        journal.append(&marker("start"));
        journal.append(b"before");
        journal.record_gap(GapReason::Paused);
        journal.append(b"after");
        let cut = journal.end();
        journal.append(&marker("0"));
        tracker.cut_at(cut);
        tracker.advance(&journal);
        assert_eq!(tracker.last_end, None, "the marker lies beyond the cut");
        let output = tracker.output(&journal, cut);
        let kept = [&output.head[..], &output.tail[..]].concat();
        assert_eq!((&kept[..], output.lost), (&b"beforeafter"[..], 1));
    }

    #[test]
    fn a_gap_before_the_start_is_no_hole_in_the_output() {
        let mut journal = journal(1 << 20);
        let mut tracker = Tracker::new(NONCE, 0, 1 << 20);
        journal.append(b"$ ");
        journal.record_gap(GapReason::Paused);
        journal.append(&marker("start"));
        journal.append(b"out\r\n");
        tracker.advance(&journal);
        journal.record_gap(GapReason::Paused);
        journal.append(b"more, after the gap\r\n");
        let cut = journal.end();
        tracker.advance(&journal);
        let output = tracker.output(&journal, cut);
        assert_eq!((&output.head[..], output.lost), (&b"out\r\n"[..], 1));
        let text = format!("out\n{}\nmore, after the gap", lost_line(1));
        assert_eq!(output.text(), text);
    }

    #[test]
    fn the_newest_end_marker_wins_and_strangers_are_ignored() {
        let mut journal = journal(1 << 20);
        let mut tracker = Tracker::new(NONCE, 0, 1 << 20);
        journal.append(&marker("0"));
        tracker.advance(&journal);
        assert_eq!(tracker.last_end, None, "an end before the start");
        journal.append(&marker("start"));
        journal.append(&marker("0"));
        journal.append(b"\x1b]7770;tpother;1\x07");
        journal.append(&marker("42"));
        tracker.advance(&journal);
        assert_eq!(tracker.last_end.map(|end| end.code), Some(42));
    }

    /// The output a tracker finds in `stream` (typed at offset 0), cut at
    /// `cut` if given, and the exit code.
    fn tracked(stream: &[u8], cut: Option<u64>) -> (String, Option<i32>) {
        let mut journal = Journal::new(Limits::default());
        journal.append(stream);
        let mut tracker = Tracker::new(NONCE, 0, 1 << 20);
        if let Some(cut) = cut {
            tracker.cut_at(cut);
        }
        tracker.advance(&journal);
        let end = tracker.last_end();
        let to = end.map_or(cut.unwrap_or(journal.end()), |end| end.at);
        let output = tracker.output(&journal, to);
        (output.text(), end.map(|end| end.code))
    }

    #[test]
    fn output_lies_between_the_echo_and_the_marker() {
        let typed = "$ { printf '\\033]7770;tp0123;start\\007'; ls\r\n> }; printf \
                     '\\033]7770;tp0123;%s\\007' \"$?\"\r\n";
        let running = format!("{typed}\x1b]7770;tp0123;start\x07a.txt\r\nb.txt\r\n");
        assert_eq!(
            tracked(running.as_bytes(), None),
            ("a.txt\nb.txt".into(), None)
        );
        let done = format!("{running}\x1b]7770;tp0123;3\x07$ ");
        assert_eq!(
            tracked(done.as_bytes(), None),
            ("a.txt\nb.txt".into(), Some(3))
        );
    }

    #[test]
    fn a_command_cut_off_by_the_next_one_ends_there() {
        let mut stream = b"\x1b]7770;tp0123;start\x07partial\r\n^C\r\n$ ".to_vec();
        let next = stream.len() as u64;
        stream.extend(b"{ printf next-command-echo\r\n");
        let (output, code) = tracked(&stream, Some(next));
        assert_eq!((output.as_str(), code), ("partial\n^C\n$ ", None));
    }

    #[test]
    fn a_forged_marker_without_the_nonce_does_not_finish() {
        let stream = b"\x1b]7770;tp0123;start\x07echo\r\n\x1b]7770;tpfake;0\x07 \\033]7770;tp0123;0\\007\r\n";
        assert_eq!(tracked(stream, None).1, None);
    }

    #[test]
    fn a_lost_middle_is_marked() {
        let output = Output {
            head: b"1\r\n2\r\n".to_vec(),
            tail: b"9\r\n10\r\n".to_vec(),
            lost: 12,
        };
        assert_eq!(output.text(), format!("1\n2\n{}\n9\n10", lost_line(12)));
    }
}
