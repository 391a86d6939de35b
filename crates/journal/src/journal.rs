//! The journal itself: raw pane output with absolute offsets, bounded memory.

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::clean::{Cleaner, State};
use crate::gap::{Gap, GapReason};

/// Longest byte slice [`Journal::pieces`] yields, so that a consumer that can stop early
/// (a scanner that found its match) never processes much more than it needs.
const PIECE_MAX: usize = 4096;

/// How much a [`Journal`] may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most offsets (raw bytes, plus one per gap) held at once. Older data is
    /// evicted, oldest first, in chunks of at most a quarter of this (and at most 4 KiB).
    pub max_bytes: usize,
}

impl Default for Limits {
    /// 8 MiB: enough for minutes of a busy build, small enough for dozens of panes.
    fn default() -> Self {
        Limits { max_bytes: 8 << 20 }
    }
}

/// What [`Journal::read_from`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read<'a> {
    /// How many offsets between the requested position and the end are missing: those
    /// evicted before [`Journal::start`], plus one for each gap in the range. Zero means
    /// `bytes` is everything that was written after the requested position.
    pub lost: u64,
    /// The gaps (still held) between the requested position and the end, oldest first.
    pub gaps: Vec<Gap>,
    /// The bytes that are still held, in order, with gaps left out.
    pub bytes: Cow<'a, [u8]>,
    /// The offset to read from next time ([`Journal::end`] at the time of the read).
    pub next: u64,
}

/// The output journal of one pane.
///
/// Every byte appended gets the next absolute offset; [`record_gap`](Self::record_gap)
/// takes one offset too. Offsets are never reused, so a position stays meaningful after
/// older data is evicted: reading from before [`start`](Self::start) reports how much is
/// gone instead of silently skipping it.
#[derive(Debug, Clone)]
pub struct Journal {
    limits: Limits,
    /// Raw bytes from `start` to `end`, without the gap offsets.
    bytes: VecDeque<u8>,
    start: u64,
    end: u64,
    /// Gaps at offsets `>= start`, ascending.
    gaps: VecDeque<Gap>,
    /// Where each chunk starts, with the cleaner's state there; `checkpoints[0]` is at
    /// `start`. Eviction drops whole chunks, and a reader that starts anywhere restores
    /// the nearest checkpoint before it, so it knows whether it starts inside an escape
    /// sequence without cleaning everything from the beginning.
    checkpoints: VecDeque<Checkpoint>,
    chunk_len: u64,
    /// The cleaner's state at `end`, kept up to date for the next checkpoint.
    cleaner: Cleaner,
}

#[derive(Debug, Clone, Copy)]
struct Checkpoint {
    offset: u64,
    state: State,
}

/// One step of [`Journal::pieces`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece<'a> {
    Bytes(&'a [u8]),
    Gap(&'a Gap),
}

impl Journal {
    /// An empty journal.
    pub fn new(limits: Limits) -> Self {
        Journal {
            limits,
            bytes: VecDeque::new(),
            start: 0,
            end: 0,
            gaps: VecDeque::new(),
            checkpoints: VecDeque::from([Checkpoint {
                offset: 0,
                state: State::default(),
            }]),
            chunk_len: chunk_len(limits),
            cleaner: Cleaner::new(),
        }
    }

    /// The limits this journal was built with.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Appends raw pane output. Empty appends change nothing.
    pub fn append(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = self.chunk_room();
            let (now, later) = rest.split_at(rest.len().min(room));
            self.bytes.extend(now);
            self.cleaner.feed(now, |_| {});
            self.end += now.len() as u64;
            self.close_full_chunk();
            rest = later;
        }
        self.evict();
    }

    /// Records that output was dropped upstream at this point. The gap takes one offset;
    /// reads and scans that cross it report it. Consecutive gaps with no output between
    /// them are merged into the first.
    pub fn record_gap(&mut self, reason: GapReason) {
        if self
            .gaps
            .back()
            .is_some_and(|gap| gap.offset + 1 == self.end)
        {
            return;
        }
        self.gaps.push_back(Gap {
            offset: self.end,
            reason,
        });
        self.end += 1;
        // Text after a gap is unrelated to text before it: a fresh cleaner starts here.
        self.cleaner = Cleaner::starting_at(self.end);
        self.push_checkpoint();
        self.evict();
    }

    /// The offset after the last byte (or gap) ever appended.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The lowest offset still held; everything before it was evicted.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Everything held from `from` to the end. A `from` after the end reads nothing.
    pub fn read_from(&self, from: u64) -> Read<'_> {
        let from = from.min(self.end);
        let evicted = self.start.saturating_sub(from);
        let from = from.max(self.start);
        let gaps: Vec<Gap> = self.gaps_from(from).cloned().collect();
        Read {
            lost: evicted + gaps.len() as u64,
            bytes: self.bytes_between(from, self.end),
            gaps,
            next: self.end,
        }
    }

    /// Gaps at or after `from`, oldest first.
    pub(crate) fn gaps_from(&self, from: u64) -> impl Iterator<Item = &Gap> {
        let first = self.gaps.partition_point(|gap| gap.offset < from);
        self.gaps.range(first..)
    }

    /// The bytes and gaps held from `from` to `to`, in order, in slices of at most
    /// 4 KiB.
    pub(crate) fn pieces(&self, from: u64, to: u64) -> impl Iterator<Item = Piece<'_>> {
        let mut at = from.clamp(self.start, self.end);
        let to = to.min(self.end);
        let mut gaps = self.gaps_from(at).peekable();
        std::iter::from_fn(move || {
            if at >= to {
                return None;
            }
            if let Some(gap) = gaps.next_if(|gap| gap.offset == at) {
                at += 1;
                return Some(Piece::Gap(gap));
            }
            let limit = gaps.peek().map_or(to, |gap| gap.offset.min(to));
            let slice = self.contiguous_from(at);
            let len = slice.len().min((limit - at) as usize).min(PIECE_MAX);
            at += len as u64;
            Some(Piece::Bytes(&slice[..len]))
        })
    }

    /// A cleaner in the state it was in just before `offset` (clamped to what is held).
    pub(crate) fn cleaner_at(&self, offset: u64) -> Cleaner {
        let offset = offset.clamp(self.start, self.end);
        let index = self
            .checkpoints
            .partition_point(|point| point.offset <= offset)
            - 1;
        let checkpoint = self.checkpoints[index];
        let mut cleaner = Cleaner::from_state(checkpoint.state);
        // A gap always starts a chunk, so there is none between the checkpoint and offset.
        for piece in self.pieces(checkpoint.offset, offset) {
            if let Piece::Bytes(bytes) = piece {
                cleaner.feed(bytes, |_| {});
            }
        }
        cleaner
    }

    /// The held bytes from `offset` up to the end of the ring buffer's slice it is in.
    fn contiguous_from(&self, offset: u64) -> &[u8] {
        let (first, second) = self.bytes.as_slices();
        let index = self.byte_index(offset);
        match first.get(index..) {
            Some(rest) if !rest.is_empty() => rest,
            _ => &second[index - first.len()..],
        }
    }

    /// The raw bytes held between two offsets (both clamped to what is held).
    pub(crate) fn bytes_between(&self, from: u64, to: u64) -> Cow<'_, [u8]> {
        let (first, second) = self.bytes.as_slices();
        let range = self.byte_index(from)..self.byte_index(to);
        if range.end <= first.len() {
            Cow::Borrowed(&first[range])
        } else if range.start >= first.len() {
            Cow::Borrowed(&second[range.start - first.len()..range.end - first.len()])
        } else {
            Cow::Owned([&first[range.start..], &second[..range.end - first.len()]].concat())
        }
    }

    /// Index into `bytes` of the first byte at or after `offset`.
    fn byte_index(&self, offset: u64) -> usize {
        let offset = offset.clamp(self.start, self.end);
        let gaps_before = self.gaps.partition_point(|gap| gap.offset < offset) as u64;
        (offset - self.start - gaps_before) as usize
    }

    /// How many more offsets fit into the current chunk.
    fn chunk_room(&self) -> usize {
        let current = self
            .checkpoints
            .back()
            .map_or(self.start, |point| point.offset);
        (self.chunk_len - (self.end - current)) as usize
    }

    fn close_full_chunk(&mut self) {
        if self.chunk_room() == 0 {
            self.push_checkpoint();
        }
    }

    fn push_checkpoint(&mut self) {
        let point = Checkpoint {
            offset: self.end,
            state: self.cleaner.state(),
        };
        self.checkpoints.push_back(point);
    }

    /// Drops whole chunks, oldest first, until at most `max_bytes` offsets are held.
    fn evict(&mut self) {
        let max = self.limits.max_bytes as u64;
        while self.checkpoints.len() >= 2 && self.end - self.start > max {
            self.checkpoints.pop_front();
            let new_start = self.checkpoints[0].offset;
            let dropped = self.byte_index(new_start);
            self.bytes.drain(..dropped);
            while self.gaps.front().is_some_and(|gap| gap.offset < new_start) {
                self.gaps.pop_front();
            }
            self.start = new_start;
        }
    }
}

/// Chunks are small enough that eviction never drops more than a quarter of the limit,
/// and large enough that the per-chunk bookkeeping is negligible.
fn chunk_len(limits: Limits) -> u64 {
    const MAX_CHUNK: usize = 4096;
    (limits.max_bytes / 4).clamp(1, MAX_CHUNK) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(max_bytes: usize) -> Journal {
        Journal::new(Limits { max_bytes })
    }

    #[test]
    fn offsets_count_every_byte() {
        let mut j = journal(1024);
        j.append(b"hello ");
        j.append(b"");
        j.append(b"world");
        assert_eq!((j.start(), j.end()), (0, 11));
        let read = j.read_from(6);
        assert_eq!((read.lost, &*read.bytes, read.next), (0, &b"world"[..], 11));
    }

    #[test]
    fn read_after_end_is_empty() {
        let mut j = journal(1024);
        j.append(b"abc");
        let read = j.read_from(99);
        assert_eq!((read.lost, read.bytes.len(), read.next), (0, 0, 3));
    }

    #[test]
    fn eviction_bounds_memory_and_reports_lost() {
        let mut j = journal(100);
        for _ in 0..50 {
            j.append(b"0123456789");
        }
        assert_eq!(j.end(), 500);
        assert!(j.end() - j.start() <= 100, "held {}", j.end() - j.start());
        assert!(j.bytes.len() <= 100);
        let read = j.read_from(0);
        assert_eq!(read.lost, j.start());
        assert_eq!(read.bytes.len() as u64, j.end() - j.start());
        assert_eq!(read.bytes[0], b"0123456789"[(j.start() % 10) as usize]);
    }

    #[test]
    fn bytes_stay_in_order_across_ring_wrap() {
        let mut j = journal(64);
        let all: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for piece in all.chunks(7) {
            j.append(piece);
        }
        let read = j.read_from(j.start());
        assert_eq!(&*read.bytes, &all[j.start() as usize..]);
    }

    #[test]
    fn gap_takes_one_offset_and_is_reported() {
        let mut j = journal(1024);
        j.append(b"before");
        j.record_gap(GapReason::Paused);
        j.record_gap(GapReason::Other("merged".into()));
        j.append(b"after");
        assert_eq!(j.end(), 12);
        let read = j.read_from(0);
        assert_eq!((read.lost, &*read.bytes), (1, &b"beforeafter"[..]));
        assert_eq!(
            read.gaps,
            vec![Gap {
                offset: 6,
                reason: GapReason::Paused
            }]
        );
        let after = j.read_from(7);
        assert_eq!((after.lost, &*after.bytes), (0, &b"after"[..]));
        assert!(after.gaps.is_empty());
    }

    #[test]
    fn evicted_gaps_count_as_lost_offsets() {
        let mut j = journal(8);
        j.append(b"ab");
        j.record_gap(GapReason::Paused);
        j.append(b"0123456789abcdef");
        let read = j.read_from(0);
        assert!(read.gaps.is_empty());
        assert_eq!(read.lost, j.start());
        assert_eq!(read.lost + read.bytes.len() as u64, j.end());
    }

    #[test]
    fn pieces_split_at_gaps_and_ring_edges() {
        let mut j = journal(64);
        let all: Vec<u8> = (0..100u8).collect();
        j.append(&all[..70]);
        j.record_gap(GapReason::Paused);
        j.append(&all[70..]);
        let mut bytes = Vec::new();
        let mut gaps = Vec::new();
        for piece in j.pieces(j.start(), j.end()) {
            match piece {
                Piece::Bytes(slice) => {
                    assert!(!slice.is_empty());
                    bytes.extend_from_slice(slice);
                }
                Piece::Gap(gap) => gaps.push((gap.offset, bytes.len())),
            }
        }
        assert_eq!(&*j.read_from(j.start()).bytes, &bytes[..]);
        assert_eq!(gaps, [(70, (70 - j.start()) as usize)]);
    }

    #[test]
    fn cleaner_at_knows_it_is_inside_an_escape_sequence() {
        let mut j = journal(16);
        j.append(b"0123456789abcdef\x1b]0;a long title that spans chunks\x07ok");
        let offset = j.end() - 10;
        let mut text = String::new();
        let mut cleaner = j.cleaner_at(offset);
        for piece in j.pieces(offset, j.end()) {
            if let Piece::Bytes(bytes) = piece {
                cleaner.feed(bytes, |event| {
                    if let crate::clean::Event::Text(t) = event {
                        text.push_str(t)
                    }
                });
            }
        }
        assert_eq!(text, "ok");
    }

    #[test]
    fn zero_limit_keeps_nothing() {
        let mut j = journal(0);
        j.append(b"abc");
        assert_eq!((j.start(), j.end()), (3, 3));
        assert_eq!(j.read_from(0).lost, 3);
    }
}
