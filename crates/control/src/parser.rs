//! The incremental control-mode parser: buffers bytes, splits lines, tracks reply
//! blocks and turns each complete line into at most one [`Event`].

use std::ops::Range;

use memchr::memchr;

use crate::event::{Event, Reply};
use crate::guard::{GuardKind, parse_guard};
use crate::notification::parse_notification_line;
use crate::output::parse_pane_event;

/// Consumed bytes are dropped from the front of the buffer only once they make up at
/// least half of it, so each byte is moved at most once on average; below this size
/// the buffer is not compacted at all, since moving a few bytes is not worth a call.
const COMPACT_MIN: usize = 4096;

/// A sans-IO parser for the output of `tmux -C` (tmux 3.3a, no DCS wrapper).
///
/// Feed it bytes as they arrive, split anywhere, then drain events with
/// [`Parser::next_event`] until it returns `None`.
///
/// ```
/// use termpilot_control::{Event, PaneId, Parser};
///
/// let mut parser = Parser::new();
/// parser.feed(b"%output %1 hi\\015\\012\n%beg");
/// assert_eq!(parser.next_event(), Some(Event::Output { pane: PaneId(1), data: b"hi\r\n".to_vec() }));
/// assert_eq!(parser.next_event(), None);
/// parser.feed(b"in 1 7 1\nok\n%end 1 7 1\n");
/// let Some(Event::Reply(reply)) = parser.next_event() else { panic!() };
/// assert_eq!((reply.number, reply.ok, reply.text()), (7, true, "ok".to_string()));
/// ```
#[derive(Debug, Default)]
pub struct Parser {
    /// Received bytes; everything before `start` has been consumed.
    buffer: Vec<u8>,
    /// Start of the first unconsumed line.
    start: usize,
    /// Where to resume looking for a line end: bytes between `start` and here are
    /// known to hold none, so a huge line fed in small pieces is scanned only once.
    scanned: usize,
    /// The reply block being read, if a `%begin` was seen and not yet closed.
    block: Option<OpenBlock>,
}

/// A reply block between its `%begin` and its terminator.
#[derive(Debug)]
struct OpenBlock {
    time: u64,
    number: u64,
    flags: u32,
    lines: Vec<Vec<u8>>,
}

impl Parser {
    /// A parser at the start of a stream, outside any block.
    pub fn new() -> Self {
        Self::default()
    }

    /// Buffers more input. Bytes may be split anywhere, even inside a line or escape.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.compact();
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event, or `None` when more input is needed.
    pub fn next_event(&mut self) -> Option<Event> {
        loop {
            let line = self.next_line()?;
            if let Some(event) = process_line(&mut self.block, &self.buffer[line]) {
                return Some(event);
            }
        }
    }

    /// Whether a `%begin` was read whose `%end` or `%error` has not arrived yet.
    pub fn in_block(&self) -> bool {
        self.block.is_some()
    }

    /// How many bytes are buffered that do not yet form a complete line.
    pub fn pending_len(&self) -> usize {
        self.buffer.len() - self.start
    }

    /// Parses a whole stream fed in pieces of the given sizes (cycling through
    /// them; a size of 0 counts as 1), draining the events after each piece.
    /// The events never depend on the split, which is what tests and fuzz
    /// checks compare.
    pub fn parse_in_chunks(input: &[u8], sizes: &[usize]) -> Vec<Event> {
        let mut parser = Parser::new();
        let mut events = Vec::new();
        let mut rest = input;
        for &size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
            parser.feed(chunk);
            events.extend(std::iter::from_fn(|| parser.next_event()));
            rest = tail;
        }
        events
    }

    /// Consumes the next complete line and returns where it lies in the buffer,
    /// without its line end (`\n`, or `\r\n`).
    fn next_line(&mut self) -> Option<Range<usize>> {
        let Some(offset) = memchr(b'\n', &self.buffer[self.scanned..]) else {
            self.scanned = self.buffer.len();
            return None;
        };
        let end = self.scanned + offset;
        let line_start = self.start;
        self.start = end + 1;
        self.scanned = self.start;
        let has_cr = end > line_start && self.buffer[end - 1] == b'\r';
        Some(line_start..end - usize::from(has_cr))
    }

    /// Drops consumed bytes when that is cheap relative to what was consumed.
    fn compact(&mut self) {
        if self.start == self.buffer.len() {
            self.buffer.clear();
        } else if self.start < COMPACT_MIN || self.start * 2 < self.buffer.len() {
            return;
        } else {
            self.buffer.drain(..self.start);
        }
        self.scanned -= self.start;
        self.start = 0;
    }
}

/// Applies one line to the block state; returns the event it completes, if any.
fn process_line(block: &mut Option<OpenBlock>, line: &[u8]) -> Option<Event> {
    let Some(open) = block else {
        return process_free_line(block, line);
    };
    // Body lines are by far the most common inside blocks; only `%` lines can be
    // anything else.
    if !line.starts_with(b"%") {
        open.lines.push(line.to_vec());
        return None;
    }
    if open.is_terminated_by(line) {
        let ok = line.starts_with(b"%end");
        return block.take().map(|open| Event::Reply(open.into_reply(ok)));
    }
    // Flow control can arrive inside a block: `refresh-client -A '%N:pause'` writes
    // its `%pause` inside its own reply (see tests/fixtures/pause.txt). Pane output
    // never does (tmux 3.3a writes a block at once, even for a command that waits,
    // such as `run-shell`), while `capture-pane -p` prints pane text verbatim: an
    // `%output` line inside a block is a pane's text, not output of another pane.
    if let Some(event @ (Event::Pause { .. } | Event::Continue { .. })) = parse_pane_event(line) {
        return Some(event);
    }
    open.lines.push(line.to_vec());
    None
}

/// Handles a line outside any block: opens a block, or yields an event.
fn process_free_line(block: &mut Option<OpenBlock>, line: &[u8]) -> Option<Event> {
    if let Some(event) = parse_pane_event(line) {
        return Some(event);
    }
    match parse_guard(line) {
        Some(guard) if guard.kind == GuardKind::Begin => {
            *block = Some(OpenBlock {
                time: guard.time,
                number: guard.number,
                flags: guard.flags,
                lines: Vec::new(),
            });
            None
        }
        _ => Some(parse_notification_line(line)),
    }
}

impl OpenBlock {
    /// Whether `line` is an `%end` or `%error` with this block's TIME and NUMBER.
    /// Any other guard-looking line (a pane can print `%end 1 2 1` into a capture,
    /// and nested `%begin` lines are text too) is body.
    fn is_terminated_by(&self, line: &[u8]) -> bool {
        parse_guard(line).is_some_and(|guard| {
            guard.kind != GuardKind::Begin && guard.time == self.time && guard.number == self.number
        })
    }

    fn into_reply(self, ok: bool) -> Reply {
        Reply {
            time: self.time,
            number: self.number,
            flags: self.flags,
            ok,
            lines: self.lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Notification;
    use crate::ids::{PaneId, SessionId, WindowId};
    use proptest::prelude::*;

    const SESSION: &[u8] = include_bytes!("../tests/fixtures/session.txt");
    const PAUSE: &[u8] = include_bytes!("../tests/fixtures/pause.txt");

    fn parse_all(input: &[u8]) -> Vec<Event> {
        Parser::parse_in_chunks(input, &[usize::MAX])
    }

    fn replies(events: &[Event]) -> Vec<&Reply> {
        events
            .iter()
            .filter_map(|event| match event {
                Event::Reply(reply) => Some(reply),
                _ => None,
            })
            .collect()
    }

    fn output(pane: u32, data: &[u8]) -> Event {
        Event::Output {
            pane: PaneId(pane),
            data: data.to_vec(),
        }
    }

    #[test]
    fn recorded_session_parses_into_the_expected_events() {
        let events = parse_all(SESSION);
        let replies = replies(&events);
        assert_eq!(replies[0].flags, 0, "the start-up block is not ours");
        assert!(replies[1..].iter().all(|reply| reply.flags == 1));
        assert_eq!(replies[1].text(), "%0 @0 $0");
        assert_eq!(replies[2].text(), "@0 bash");
        assert!(!replies[3].ok);
        assert_eq!(
            replies[3].text(),
            "parse error: unknown command: no-such-command"
        );
        let capture = replies.iter().find(|reply| reply.lines.len() > 5).unwrap();
        assert!(capture.lines.contains(&b"%begin 3 4 1".to_vec()));
        assert!(capture.lines.contains(&b"%error 1 2 1".to_vec()));
        assert!(
            events.contains(&Event::Notification(Notification::SessionChanged {
                session: SessionId(0),
                name: "rec".into()
            }))
        );
        assert!(
            events.contains(&Event::Notification(Notification::WindowRenamed {
                window: WindowId(1),
                name: "second name".into()
            }))
        );
        assert!(events.contains(&output(0, b"1\r\n2\r\n3\r\n")));
        assert_eq!(events.last(), Some(&Event::Exit { reason: None }));
    }

    #[test]
    fn recorded_session_has_no_unknown_lines() {
        for event in parse_all(SESSION).iter().chain(&parse_all(PAUSE)) {
            assert!(
                !matches!(event, Event::Notification(Notification::Unknown { .. })),
                "{event:?}"
            );
        }
    }

    #[test]
    fn recorded_pause_arrives_inside_a_block() {
        let mut parser = Parser::new();
        parser.feed(PAUSE);
        let mut paused_in_block = false;
        while let Some(event) = parser.next_event() {
            if event == (Event::Pause { pane: PaneId(0) }) {
                paused_in_block = parser.in_block();
            }
        }
        assert!(paused_in_block);
        let events = parse_all(PAUSE);
        assert!(events.contains(&Event::ExtendedOutput {
            pane: PaneId(0),
            age_ms: 0,
            data: b"after\r\n$ ".to_vec()
        }));
        assert!(events.contains(&Event::Continue { pane: PaneId(0) }));
    }

    #[test]
    fn byte_at_a_time_gives_the_same_events() {
        for fixture in [SESSION, PAUSE] {
            assert_eq!(Parser::parse_in_chunks(fixture, &[1]), parse_all(fixture));
        }
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let whole = parse_all(PAUSE);
        for split in 0..=PAUSE.len() {
            assert_eq!(
                Parser::parse_in_chunks(PAUSE, &[split.max(1), usize::MAX]),
                whole,
                "split {split}"
            );
        }
    }

    #[test]
    fn only_the_matching_terminator_closes_a_block() {
        let input = b"%begin 10 5 1\n%end 10 6 1\n%error 11 5 1\n%begin 10 5 1\n%end 10 5\n\
                      %end 1 2 1\nplain\n%error 10 5 1\n";
        let mut parser = Parser::new();
        parser.feed(input);
        let Some(Event::Reply(reply)) = parser.next_event() else {
            panic!("no reply")
        };
        assert_eq!(
            (reply.time, reply.number, reply.flags, reply.ok),
            (10, 5, 1, false)
        );
        assert_eq!(
            reply.text(),
            "%end 10 6 1\n%error 11 5 1\n%begin 10 5 1\n%end 10 5\n%end 1 2 1\nplain"
        );
        assert!(!parser.in_block());
        assert_eq!(parser.next_event(), None);
    }

    #[test]
    fn terminator_flags_need_not_match() {
        let events = parse_all(b"%begin 1 2 1\n%end 1 2 0\n");
        assert_eq!(replies(&events).len(), 1);
    }

    #[test]
    fn flow_events_inside_a_block_are_events_and_the_rest_is_body() {
        // Output lines inside a block are text a command printed verbatim (a
        // capture of a pane that shows them), not output.
        let input = b"%begin 1 2 1\nbefore\n%output %4 x\n%pause %4\n%continue %4\n\
                      %extended-output %4 9 : y\n%output bad\n%window-add @1\n%end 1 2 1\n";
        let events = parse_all(input);
        assert_eq!(events[0], Event::Pause { pane: PaneId(4) });
        assert_eq!(events[1], Event::Continue { pane: PaneId(4) });
        let Event::Reply(reply) = &events[2] else {
            panic!("{:?}", events[2])
        };
        assert_eq!(
            reply.text(),
            "before\n%output %4 x\n%extended-output %4 9 : y\n%output bad\n%window-add @1"
        );
        assert_eq!(events.len(), 3);
    }

    #[test]
    fn body_lines_keep_raw_bytes_and_empty_lines() {
        let events = parse_all(b"%begin 1 2 1\n\x1b[1m\xff\xfe\n\n%end 1 2 1\n");
        assert_eq!(
            replies(&events)[0].lines,
            vec![b"\x1b[1m\xff\xfe".to_vec(), Vec::new()]
        );
    }

    #[test]
    fn carriage_return_before_line_feed_is_dropped() {
        let events = parse_all(b"%begin 1 2 1\r\nbody\r\n%end 1 2 1\r\n%output %1 a\r\n");
        assert_eq!(replies(&events)[0].lines, vec![b"body".to_vec()]);
        assert_eq!(events[1], output(1, b"a"));
    }

    #[test]
    fn stray_lines_outside_blocks_are_unknown_notifications() {
        let events = parse_all(b"%end 1 2 1\nhello\n\n%begin x\n");
        let unknown = |line: &[u8]| {
            Event::Notification(Notification::Unknown {
                line: line.to_vec(),
            })
        };
        assert_eq!(
            events,
            vec![
                unknown(b"%end 1 2 1"),
                unknown(b"hello"),
                unknown(b""),
                unknown(b"%begin x")
            ]
        );
    }

    #[test]
    fn exit_ends_the_stream() {
        let events = parse_all(b"%output %1 a\n%exit too far behind\n");
        assert_eq!(
            events[1],
            Event::Exit {
                reason: Some("too far behind".into())
            }
        );
    }

    #[test]
    fn incomplete_line_waits_for_more_input() {
        let mut parser = Parser::new();
        parser.feed(b"%begin 1 2 1\npart");
        assert_eq!(parser.next_event(), None);
        assert!(parser.in_block());
        assert_eq!(parser.pending_len(), 4);
        parser.feed(b"ial\n%end 1 2 1\n");
        let Some(Event::Reply(reply)) = parser.next_event() else {
            panic!("no reply")
        };
        assert_eq!(reply.text(), "partial");
        assert_eq!(parser.pending_len(), 0);
    }

    #[test]
    fn huge_line_fed_in_small_pieces_is_parsed_once() {
        let data = vec![b'x'; 2 << 20];
        let mut line = b"%output %2 ".to_vec();
        line.extend_from_slice(&data);
        line.push(b'\n');
        let events = Parser::parse_in_chunks(&line, &[7, 13]);
        assert_eq!(
            events,
            vec![Event::Output {
                pane: PaneId(2),
                data
            }]
        );
    }

    #[test]
    fn many_lines_compact_the_buffer() {
        let mut parser = Parser::new();
        for n in 0..20_000 {
            parser.feed(format!("%output %1 line {n}\\012\n%out").as_bytes());
            assert!(parser.next_event().is_some());
            parser.feed(b"put %1 x\n");
            assert_eq!(parser.next_event(), Some(output(1, b"x")));
        }
        assert!(
            parser.buffer.len() < 2 * COMPACT_MIN + 64,
            "buffer grew to {}",
            parser.buffer.len()
        );
    }

    /// tmux's escaping of output data (`control_append_data`), for round trips.
    fn encode_output(data: &[u8]) -> Vec<u8> {
        let mut encoded = Vec::new();
        for &byte in data {
            if byte < b' ' || byte == b'\\' {
                encoded.extend_from_slice(format!("\\{byte:03o}").as_bytes());
            } else {
                encoded.push(byte);
            }
        }
        encoded
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn output_round_trips_through_any_chunking(
            records in prop::collection::vec((0u32..100, prop::collection::vec(any::<u8>(), 0..80)), 1..8),
            sizes in prop::collection::vec(1usize..40, 1..8),
        ) {
            let mut stream = Vec::new();
            for (pane, data) in &records {
                stream.extend_from_slice(format!("%output %{pane} ").as_bytes());
                stream.extend_from_slice(&encode_output(data));
                stream.push(b'\n');
            }
            let expected: Vec<Event> = records.iter().map(|(pane, data)| output(*pane, data)).collect();
            prop_assert_eq!(Parser::parse_in_chunks(&stream, &sizes), expected);
        }

        #[test]
        fn fixture_in_random_chunks_gives_the_same_events(sizes in prop::collection::vec(1usize..64, 1..16)) {
            prop_assert_eq!(Parser::parse_in_chunks(SESSION, &sizes), parse_all(SESSION));
        }

        #[test]
        fn arbitrary_input_never_panics(input in prop::collection::vec(any::<u8>(), 0..512), sizes in prop::collection::vec(1usize..32, 1..4)) {
            let events = Parser::parse_in_chunks(&input, &sizes);
            let lines = input.iter().filter(|&&byte| byte == b'\n').count();
            prop_assert!(events.len() <= lines);
        }
    }
}
