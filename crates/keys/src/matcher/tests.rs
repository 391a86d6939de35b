use super::*;
use crate::parse_sequence;
use proptest::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Forward(Vec<u8>),
    Action(u32, Vec<u8>),
}

/// Records events, merging adjacent forwards so that results compare by content, not by
/// how the bytes happened to be sliced.
#[derive(Default)]
struct Log {
    events: Vec<Event>,
    forward_calls: usize,
}

impl MatchSink<u32> for Log {
    fn forward(&mut self, bytes: &[u8]) {
        assert!(!bytes.is_empty(), "forward called with no bytes");
        self.forward_calls += 1;
        match self.events.last_mut() {
            Some(Event::Forward(previous)) => previous.extend_from_slice(bytes),
            _ => self.events.push(Event::Forward(bytes.to_vec())),
        }
    }

    fn action(&mut self, action: &u32, sequence: &[u8]) {
        self.events.push(Event::Action(*action, sequence.to_vec()));
    }
}

impl Log {
    fn reconstruct(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for event in &self.events {
            match event {
                Event::Forward(bytes) | Event::Action(_, bytes) => out.extend_from_slice(bytes),
            }
        }
        out
    }
}

fn fwd(bytes: &[u8]) -> Event {
    Event::Forward(bytes.to_vec())
}

fn act(id: u32, bytes: &[u8]) -> Event {
    Event::Action(id, bytes.to_vec())
}

fn matcher(sequences: &[&[u8]]) -> KeySequenceMatcher<u32> {
    let bindings = (0..)
        .zip(sequences)
        .map(|(id, s)| (s.to_vec(), id))
        .collect();
    KeySequenceMatcher::new(bindings, DEFAULT_ESCAPE_TIMEOUT).unwrap()
}

/// Escape (0), Alt+C (1) and Ctrl+C (2), the bindings of the examples in the brief.
fn escape_bindings() -> KeySequenceMatcher<u32> {
    matcher(&[b"\x1b", b"\x1bc", b"\x03"])
}

const MS: Duration = Duration::from_millis(1);

#[test]
fn plain_text_is_forwarded_in_one_slice() {
    let mut m = escape_bindings();
    let mut log = Log::default();
    m.feed(b"hello world", Instant::now(), &mut log);
    assert_eq!(log.events, [fwd(b"hello world")]);
    assert_eq!(log.forward_calls, 1);
    assert_eq!(m.deadline(), None);
}

#[test]
fn ctrl_c_fires_and_is_never_forwarded() {
    let mut m = matcher(&[b"\x03"]);
    let mut log = Log::default();
    m.feed(b"ab\x03cd\x03", Instant::now(), &mut log);
    assert_eq!(
        log.events,
        [fwd(b"ab"), act(0, b"\x03"), fwd(b"cd"), act(0, b"\x03")]
    );
    assert_eq!(m.deadline(), None);
}

#[test]
fn lone_escape_waits_for_the_timeout() {
    let mut m = escape_bindings();
    let mut log = Log::default();
    let t0 = Instant::now();
    m.feed(b"x\x1b", t0, &mut log);
    assert_eq!(log.events, [fwd(b"x")]);
    assert_eq!(m.deadline(), Some(t0 + DEFAULT_ESCAPE_TIMEOUT));
    m.poll(t0 + 49 * MS, &mut log);
    assert_eq!(log.events, [fwd(b"x")], "fired before the timeout");
    m.poll(t0 + 50 * MS, &mut log);
    assert_eq!(log.events, [fwd(b"x"), act(0, b"\x1b")]);
    assert_eq!(m.deadline(), None);
}

#[test]
fn lone_unbound_escape_is_forwarded_after_the_timeout() {
    let mut m = matcher(&[b"\x1bc"]);
    let mut log = Log::default();
    let t0 = Instant::now();
    m.feed(b"\x1b", t0, &mut log);
    assert!(log.events.is_empty());
    m.poll(t0 + DEFAULT_ESCAPE_TIMEOUT, &mut log);
    assert_eq!(log.events, [fwd(b"\x1b")]);
}

#[test]
fn escape_c_within_the_timeout_is_alt_c() {
    let mut m = escape_bindings();
    let mut log = Log::default();
    let t0 = Instant::now();
    m.feed(b"\x1bc", t0, &mut log);
    assert_eq!(log.events, [act(1, b"\x1bc")]);
    assert_eq!(
        m.deadline(),
        None,
        "a sequence completed in one call leaves no deadline"
    );

    let mut log = Log::default();
    m.feed(b"\x1b", t0, &mut log);
    m.feed(b"c", t0 + 10 * MS, &mut log);
    assert_eq!(log.events, [act(1, b"\x1bc")]);
    assert_eq!(m.deadline(), None);
}

#[test]
fn escape_then_c_after_the_timeout_is_two_keys() {
    let mut m = escape_bindings();
    let mut log = Log::default();
    let t0 = Instant::now();
    m.feed(b"\x1b", t0, &mut log);
    m.feed(b"c", t0 + 60 * MS, &mut log);
    assert_eq!(log.events, [act(0, b"\x1b"), fwd(b"c")]);
}

#[test]
fn a_byte_that_cannot_continue_resolves_at_once() {
    let mut m = escape_bindings();
    let mut log = Log::default();
    m.feed(b"\x1bx", Instant::now(), &mut log);
    assert_eq!(log.events, [act(0, b"\x1b"), fwd(b"x")]);

    let mut m = matcher(&[b"\x1bc"]);
    let mut log = Log::default();
    m.feed(b"\x1bxy", Instant::now(), &mut log);
    assert_eq!(log.events, [fwd(b"\x1bxy")]);
    assert_eq!(log.forward_calls, 1);
}

#[test]
fn held_bytes_are_scanned_again_after_a_mismatch() {
    // "aa" is held for "aab"; a third "a" breaks it, and the last two "a"s start over.
    let mut m = matcher(&[b"aab"]);
    let mut log = Log::default();
    let t0 = Instant::now();
    for &byte in b"aaab" {
        m.feed(&[byte], t0, &mut log);
    }
    assert_eq!(log.events, [fwd(b"a"), act(0, b"aab")]);

    let mut m = matcher(&[b"ab", b"bc"]);
    let mut log = Log::default();
    m.feed(b"b", t0, &mut log);
    m.feed(b"bc", t0, &mut log);
    assert_eq!(log.events, [fwd(b"b"), act(1, b"bc")]);
}

#[test]
fn longest_match_wins_across_calls() {
    let mut m = matcher(&[b"\x1b", b"\x1b[", b"\x1b[A"]);
    let mut log = Log::default();
    let t0 = Instant::now();
    m.feed(b"\x1b", t0, &mut log);
    m.feed(b"[", t0 + MS, &mut log);
    assert!(log.events.is_empty());
    assert_eq!(
        m.deadline(),
        Some(t0 + MS + DEFAULT_ESCAPE_TIMEOUT),
        "restarted"
    );
    m.feed(b"A!", t0 + 2 * MS, &mut log);
    assert_eq!(log.events, [act(2, b"\x1b[A"), fwd(b"!")]);

    let mut log = Log::default();
    m.feed(b"\x1b[B", t0, &mut log);
    assert_eq!(log.events, [act(1, b"\x1b["), fwd(b"B")]);
}

#[test]
fn late_input_first_resolves_what_timed_out() {
    let mut m = escape_bindings();
    let mut log = Log::default();
    let t0 = Instant::now();
    m.feed(b"\x1b", t0, &mut log);
    m.feed(b"\x1bc", t0 + 100 * MS, &mut log);
    assert_eq!(log.events, [act(0, b"\x1b"), act(1, b"\x1bc")]);
}

#[test]
fn flush_resolves_held_bytes() {
    let mut m = matcher(&[b"\x1b", b"\x1b[A"]);
    let mut log = Log::default();
    m.feed(b"\x1b[", Instant::now(), &mut log);
    assert!(log.events.is_empty());
    m.flush(&mut log);
    assert_eq!(log.events, [act(0, b"\x1b"), fwd(b"[")]);
    assert_eq!(m.deadline(), None);
    m.flush(&mut log);
    assert_eq!(log.events.len(), 2, "a second flush has nothing to do");
}

#[test]
fn rejects_empty_and_duplicate_bindings() {
    let timeout = DEFAULT_ESCAPE_TIMEOUT;
    let empty = KeySequenceMatcher::new(vec![(b"a".to_vec(), 0), (vec![], 1)], timeout);
    assert_eq!(empty.unwrap_err(), BindingError::Empty { index: 1 });
    let duplicate =
        KeySequenceMatcher::new(vec![(b"\x03".to_vec(), 0), (b"\x03".to_vec(), 1)], timeout);
    let err = duplicate.unwrap_err();
    assert_eq!(
        err,
        BindingError::Duplicate {
            sequence: b"\x03".to_vec(),
            first: 0,
            second: 1
        }
    );
    assert_eq!(
        err.to_string(),
        r#"bindings 0 and 1 have the same key sequence "\x03""#
    );
}

#[test]
fn key_bindings_bind_the_bytes_their_keys_send() {
    let bindings = vec![
        (parse_sequence("C-c").unwrap(), 0),
        (parse_sequence("M-c").unwrap(), 1),
        (parse_sequence("Escape").unwrap(), 2),
        (parse_sequence("C-x C-c").unwrap(), 3),
    ];
    let mut m = KeySequenceMatcher::from_key_bindings(bindings, DEFAULT_ESCAPE_TIMEOUT).unwrap();
    let mut log = Log::default();
    m.feed(b"\x1bc\x18\x03\x03", Instant::now(), &mut log);
    assert_eq!(
        log.events,
        [act(1, b"\x1bc"), act(3, b"\x18\x03"), act(0, b"\x03")]
    );
}

#[test]
fn key_bindings_reject_empty_and_duplicate_sequences() {
    let timeout = DEFAULT_ESCAPE_TIMEOUT;
    let empty = KeySequenceMatcher::<u32>::from_key_bindings(vec![(vec![], 0)], timeout);
    assert_eq!(empty.unwrap_err(), BindingError::Empty { index: 0 });
    // C-[ and Escape are the same byte.
    let same = vec![
        (parse_sequence("Escape").unwrap(), 0),
        (parse_sequence("C-[").unwrap(), 1),
    ];
    let err = KeySequenceMatcher::from_key_bindings(same, timeout).unwrap_err();
    assert!(matches!(err, BindingError::Duplicate { .. }), "{err}");
}

/// The result of matching the whole input at once, with no timeouts: at each position
/// the longest binding that matches fires, otherwise one byte is forwarded.
fn reference(sequences: &[Vec<u8>], input: &[u8]) -> Vec<Event> {
    let mut log = Log::default();
    let mut at = 0;
    while at < input.len() {
        let best = (0u32..)
            .zip(sequences)
            .filter(|(_, s)| input[at..].starts_with(s))
            .max_by_key(|(_, s)| s.len());
        match best {
            Some((id, s)) => {
                log.action(&id, s);
                at += s.len();
            }
            None => {
                log.forward(&input[at..at + 1]);
                at += 1;
            }
        }
    }
    log.events
}

/// Bindings over a small alphabet so that inputs hit them, prefixes and near misses often.
fn bindings_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let byte = proptest::sample::select(vec![0x1b, b'[', b'a', b'c', 0x03]);
    proptest::collection::btree_set(proptest::collection::vec(byte, 1..5), 1..6)
        .prop_map(|set| set.into_iter().collect())
}

fn input_strategy() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => proptest::sample::select(vec![0x1b, b'[', b'a', b'c', 0x03]),
        1 => any::<u8>(),
    ];
    proptest::collection::vec(byte, 0..64)
}

/// Splits `input` into chunks at the given cut points (taken modulo the length).
fn chunks(input: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    points.extend([0, input.len()]);
    points.sort_unstable();
    points
        .windows(2)
        .map(|w| input[w[0]..w[1]].to_vec())
        .collect()
}

fn build(sequences: &[Vec<u8>], timeout: Duration) -> KeySequenceMatcher<u32> {
    let bindings = (0..)
        .zip(sequences)
        .map(|(id, s)| (s.clone(), id))
        .collect();
    KeySequenceMatcher::new(bindings, timeout).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nothing_is_lost_or_duplicated_under_any_timing(
        sequences in bindings_strategy(),
        input in input_strategy(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        gaps in proptest::collection::vec((0u64..120, any::<bool>()), 8),
    ) {
        let mut m = build(&sequences, DEFAULT_ESCAPE_TIMEOUT);
        let mut log = Log::default();
        let mut now = Instant::now();
        for (chunk, &(gap, poll)) in chunks(&input, &cuts).iter().zip(gaps.iter().cycle()) {
            now += Duration::from_millis(gap);
            if poll {
                m.poll(now, &mut log);
            }
            m.feed(chunk, now, &mut log);
            if let Some(deadline) = m.deadline() {
                prop_assert!(deadline > now);
            }
        }
        m.flush(&mut log);
        prop_assert_eq!(log.reconstruct(), input);
        prop_assert_eq!(m.deadline(), None);
        for event in &log.events {
            if let Event::Action(id, bytes) = event {
                prop_assert_eq!(bytes, &sequences[*id as usize]);
            }
        }
    }

    #[test]
    fn chunking_does_not_matter_at_one_instant(
        sequences in bindings_strategy(),
        input in input_strategy(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut m = build(&sequences, DEFAULT_ESCAPE_TIMEOUT);
        let mut log = Log::default();
        let now = Instant::now();
        for chunk in chunks(&input, &cuts) {
            m.feed(&chunk, now, &mut log);
        }
        m.flush(&mut log);
        prop_assert_eq!(log.events, reference(&sequences, &input));
    }

    #[test]
    fn expired_bytes_never_join_later_ones(
        sequences in bindings_strategy(),
        first in input_strategy(),
        second in input_strategy(),
    ) {
        // Feeding after the deadline must give the same as flushing in between.
        let t0 = Instant::now();
        let later = t0 + 2 * DEFAULT_ESCAPE_TIMEOUT;
        let mut m = build(&sequences, DEFAULT_ESCAPE_TIMEOUT);
        let mut late = Log::default();
        m.feed(&first, t0, &mut late);
        m.feed(&second, later, &mut late);
        m.flush(&mut late);

        let mut expected = reference(&sequences, &first);
        let mut log = Log { events: std::mem::take(&mut expected), forward_calls: 0 };
        for event in reference(&sequences, &second) {
            match event {
                Event::Forward(bytes) => log.forward(&bytes),
                Event::Action(id, bytes) => log.action(&id, &bytes),
            }
        }
        prop_assert_eq!(late.events, log.events);
    }
}
