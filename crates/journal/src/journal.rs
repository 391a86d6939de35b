//! The journal itself: raw pane output with absolute offsets, bounded memory.
//!
//! The bytes live in chunks of at most 4 KiB, each behind an [`Arc`]: a chunk that is
//! full never changes again, so a copy of the journal ([`Journal::snapshot_from`], or
//! `clone`) shares them and costs a reference count per chunk, not a copy of the bytes.
//! The owner of a pane's journal can therefore hand a snapshot to a reader under a short
//! lock and let it scan, clean and copy with no lock held, while more output is appended.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clean::{Cleaner, State};
use crate::gap::{Gap, GapReason};
use crate::size::{Resize, Sizes, SizesBetween};

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
///
/// Cloning is cheap (one reference count per 4 KiB held), and
/// [`snapshot_from`](Self::snapshot_from) is cheaper still; see the module docs.
#[derive(Debug, Clone)]
pub struct Journal {
    limits: Limits,
    /// Consecutive runs of offsets, oldest first; never empty. `chunks[0]` starts at
    /// [`Journal::start`], the last one is the open chunk appends go to. Eviction drops
    /// whole chunks, and a reader that starts anywhere restores the cleaner state saved
    /// at the start of its chunk, so it knows whether it starts inside an escape sequence
    /// without cleaning everything from the beginning.
    chunks: VecDeque<Chunk>,
    end: u64,
    chunk_len: u64,
    /// The cleaner's state at `end`, kept up to date for the next chunk's start.
    cleaner: Cleaner,
    /// When the latest [`Arrival`] was recorded.
    last_arrival: Option<Instant>,
    /// The pane's size along the output, for recordings.
    sizes: Sizes,
}

/// A run of consecutive offsets: bytes, then at most one gap, which closes the chunk.
#[derive(Debug, Clone)]
struct Chunk {
    /// The offset of the first byte (or of the gap, when there is no byte).
    offset: u64,
    /// The cleaner's state at `offset`.
    state: State,
    /// Shared with snapshots. Only the open chunk grows; it is copied first when a
    /// snapshot still holds it (at most 4 KiB).
    bytes: Arc<Vec<u8>>,
    /// A gap at `offset + bytes.len()`.
    gap: Option<Gap>,
    /// When output starting in this chunk arrived; shared with snapshots like
    /// `bytes` (only the open chunk's grow).
    arrivals: Arc<Vec<Arrival>>,
}

/// When the output from an offset on arrived (see [`Journal::timed_output`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// The offset of the first byte that arrived then.
    pub offset: u64,
    /// When it arrived.
    pub at: Instant,
}

/// Appends closer together than this share the first one's arrival: a
/// flood of small appends keeps at most a thousand a second.
const ARRIVAL_SPACING: Duration = Duration::from_millis(1);

impl Chunk {
    fn new(offset: u64, state: State, capacity: usize) -> Self {
        Chunk {
            offset,
            state,
            bytes: Arc::new(Vec::with_capacity(capacity)),
            gap: None,
            arrivals: Arc::default(),
        }
    }

    /// The offset after the last byte (where the gap is, if there is one).
    fn bytes_end(&self) -> u64 {
        self.offset + self.bytes.len() as u64
    }
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
        let chunk_len = chunk_len(limits);
        Journal {
            limits,
            chunks: VecDeque::from([Chunk::new(0, State::default(), chunk_len as usize)]),
            end: 0,
            chunk_len,
            cleaner: Cleaner::new(),
            last_arrival: None,
            sizes: Sizes::default(),
        }
    }

    /// The limits this journal was built with.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Appends raw pane output, arrived now. Empty appends change nothing.
    pub fn append(&mut self, bytes: &[u8]) {
        self.append_at(bytes, Instant::now());
    }

    /// Appends raw pane output that arrived at `at` (not before the last
    /// append's). Empty appends change nothing.
    pub fn append_at(&mut self, bytes: &[u8], at: Instant) {
        let spaced = self
            .last_arrival
            .is_none_or(|last| at.saturating_duration_since(last) >= ARRIVAL_SPACING);
        if !bytes.is_empty() && spaced {
            let offset = self.end;
            let open = self
                .chunks
                .back_mut()
                .expect("a journal always has a chunk");
            Arc::make_mut(&mut open.arrivals).push(Arrival { offset, at });
            self.last_arrival = Some(at);
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = self.chunk_room();
            let (now, later) = rest.split_at(rest.len().min(room));
            self.open_bytes().extend_from_slice(now);
            self.cleaner.feed(now, |_| {});
            self.end += now.len() as u64;
            if self.chunk_room() == 0 {
                self.open_chunk();
            }
            rest = later;
        }
        self.evict();
    }

    /// Records that output was dropped upstream at this point. The gap takes one offset;
    /// reads and scans that cross it report it. Consecutive gaps with no output between
    /// them are merged into the first.
    pub fn record_gap(&mut self, reason: GapReason) {
        let previous = self.chunks.len().checked_sub(2).map(|i| &self.chunks[i]);
        let open_is_empty = self.chunks.back().is_some_and(|c| c.bytes.is_empty());
        if open_is_empty && previous.is_some_and(|c| c.gap.is_some()) {
            return;
        }
        let offset = self.end;
        if let Some(open) = self.chunks.back_mut() {
            open.gap = Some(Gap { offset, reason });
        }
        self.end += 1;
        // Text after a gap is unrelated to text before it: a fresh cleaner starts here.
        self.cleaner = Cleaner::starting_at(self.end);
        self.open_chunk();
        self.evict();
    }

    /// The pane was resized to `cols` × `rows` at `at`, after the output
    /// appended so far (tmux said so). Output appended later is cut from
    /// the output before it (see [`timed_output`](Self::timed_output)), so
    /// that a recording can put the resize between the two. A size the pane
    /// already had changes nothing.
    pub fn resize(&mut self, cols: u16, rows: u16, at: Instant) {
        let offset = self.end;
        if !self.sizes.changed(Resize {
            offset,
            at,
            cols,
            rows,
        }) || self.last_arrival.is_some_and(|last| last > at)
        {
            return;
        }
        let open = self
            .chunks
            .back_mut()
            .expect("a journal always has a chunk");
        let arrivals = Arc::make_mut(&mut open.arrivals);
        arrivals.retain(|a| a.offset != offset);
        arrivals.push(Arrival { offset, at });
        self.last_arrival = Some(at);
    }

    /// The pane's size is `cols` × `rows`, learned at `at` without a change
    /// being seen: kept as the size so far when none is known yet.
    pub fn learn_size(&mut self, cols: u16, rows: u16, at: Instant) {
        self.sizes.learned(Resize {
            offset: self.end,
            at,
            cols,
            rows,
        });
    }

    /// The pane's size at offset `from` and its changes up to `to`; `None`
    /// when no size is known.
    pub fn sizes(&self, from: u64, to: u64) -> Option<SizesBetween> {
        self.sizes.between(from.max(self.start()), to)
    }

    /// The offset after the last byte (or gap) ever appended.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The lowest offset still held; everything before it was evicted.
    pub fn start(&self) -> u64 {
        self.chunks.front().map_or(self.end, |chunk| chunk.offset)
    }

    /// A copy of the journal that holds only what is needed to read from `from` on: the
    /// chunk containing `from` and every later one, shared rather than copied. The
    /// snapshot's [`start`](Self::start) is the start of that chunk, so reading it from
    /// an earlier offset reports the bytes before as lost; read it from `from` or later.
    ///
    /// This is how a reader gets at a journal that another thread keeps appending to:
    /// take the snapshot under the lock, then scan or copy it with no lock held.
    pub fn snapshot_from(&self, from: u64) -> Journal {
        let first = self.chunk_index(from);
        Journal {
            limits: self.limits,
            chunks: self.chunks.range(first..).cloned().collect(),
            end: self.end,
            chunk_len: self.chunk_len,
            cleaner: self.cleaner.clone(),
            last_arrival: self.last_arrival,
            sizes: self.sizes.clone(),
        }
    }

    /// The output held from `from` to `to`, gaps left out, cut where it
    /// arrived at different times (appends within a millisecond of each
    /// other count as one): each piece with when it arrived. Bytes held from
    /// before the first arrival still held (evicted with the chunk that
    /// had it) take the next known time.
    pub fn timed_output(&self, from: u64, to: u64) -> Vec<(Instant, Vec<u8>)> {
        let (from, to) = (from.clamp(self.start(), self.end), to.min(self.end));
        let first = self.chunk_index(from);
        let mut now = self.chunks.range(..=first).rev().find_map(|chunk| {
            chunk
                .arrivals
                .iter()
                .rev()
                .find(|a| a.offset <= from)
                .map(|a| a.at)
        });
        let mut pieces: Vec<(Option<Instant>, Vec<u8>)> = Vec::new();
        for chunk in self.chunks.range(first..) {
            if chunk.offset >= to {
                break;
            }
            let end = chunk.bytes_end().min(to);
            let start = from.max(chunk.offset);
            let mut at = start;
            for arrival in chunk
                .arrivals
                .iter()
                .filter(|a| a.offset >= start && a.offset < end)
            {
                timed_piece(&mut pieces, now, chunk, at, arrival.offset);
                (at, now) = (arrival.offset, Some(arrival.at));
            }
            timed_piece(&mut pieces, now, chunk, at, end);
        }
        // Fill unknown times from the next known one (or the last).
        let mut next = self.last_arrival.unwrap_or_else(Instant::now);
        let mut timed: Vec<(Instant, Vec<u8>)> = pieces
            .into_iter()
            .rev()
            .map(|(at, bytes)| {
                next = at.unwrap_or(next);
                (next, bytes)
            })
            .collect();
        timed.reverse();
        timed
    }

    /// Everything held from `from` to the end. A `from` after the end reads nothing.
    pub fn read_from(&self, from: u64) -> Read<'_> {
        let from = from.min(self.end);
        let evicted = self.start().saturating_sub(from);
        let from = from.max(self.start());
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
        let first = self.chunk_index(from);
        self.chunks
            .range(first..)
            .filter_map(|chunk| chunk.gap.as_ref())
            .filter(move |gap| gap.offset >= from)
    }

    /// The bytes and gaps held from `from` to `to`, in order, in slices of at most
    /// 4 KiB.
    pub(crate) fn pieces(&self, from: u64, to: u64) -> impl Iterator<Item = Piece<'_>> {
        let mut at = from.clamp(self.start(), self.end);
        let to = to.min(self.end);
        let mut index = self.chunk_index(at);
        std::iter::from_fn(move || {
            while at < to {
                let chunk = self.chunks.get(index)?;
                if at < chunk.bytes_end() {
                    let low = (at - chunk.offset) as usize;
                    let high = (chunk.bytes_end().min(to) - chunk.offset) as usize;
                    let high = high.min(low + PIECE_MAX);
                    at += (high - low) as u64;
                    return Some(Piece::Bytes(&chunk.bytes[low..high]));
                }
                index += 1;
                if let Some(gap) = chunk.gap.as_ref().filter(|gap| gap.offset == at) {
                    at += 1;
                    return Some(Piece::Gap(gap));
                }
            }
            None
        })
    }

    /// A cleaner in the state it was in just before `offset` (clamped to what is held).
    pub(crate) fn cleaner_at(&self, offset: u64) -> Cleaner {
        let offset = offset.clamp(self.start(), self.end);
        let chunk = &self.chunks[self.chunk_index(offset)];
        let mut cleaner = Cleaner::from_state(chunk.state);
        // A gap always ends a chunk, so there is none between the chunk's start and
        // offset.
        let upto = ((offset - chunk.offset) as usize).min(chunk.bytes.len());
        cleaner.feed(&chunk.bytes[..upto], |_| {});
        cleaner
    }

    /// The raw bytes held between two offsets (both clamped to what is held).
    pub(crate) fn bytes_between(&self, from: u64, to: u64) -> Cow<'_, [u8]> {
        let mut slices = self.pieces(from, to).filter_map(|piece| match piece {
            Piece::Bytes(bytes) => Some(bytes),
            Piece::Gap(_) => None,
        });
        let Some(first) = slices.next() else {
            return Cow::Borrowed(&[]);
        };
        let Some(second) = slices.next() else {
            return Cow::Borrowed(first);
        };
        let mut owned = Vec::with_capacity((to.saturating_sub(from)) as usize);
        owned.extend_from_slice(first);
        owned.extend_from_slice(second);
        slices.for_each(|slice| owned.extend_from_slice(slice));
        Cow::Owned(owned)
    }

    /// The index of the chunk holding `offset` (clamped to what is held); the open chunk
    /// for the end.
    fn chunk_index(&self, offset: u64) -> usize {
        self.chunks
            .partition_point(|chunk| chunk.offset <= offset)
            .saturating_sub(1)
    }

    /// How many more offsets fit into the open chunk.
    fn chunk_room(&self) -> usize {
        let open = self.chunks.back().map_or(self.end, |chunk| chunk.offset);
        (self.chunk_len - (self.end - open)) as usize
    }

    /// The open chunk's bytes, copied first if a snapshot shares them.
    fn open_bytes(&mut self) -> &mut Vec<u8> {
        let capacity = self.chunk_len as usize;
        let open = self
            .chunks
            .back_mut()
            .expect("a journal always has a chunk");
        if Arc::get_mut(&mut open.bytes).is_none() {
            let mut copy = Vec::with_capacity(capacity);
            copy.extend_from_slice(&open.bytes);
            open.bytes = Arc::new(copy);
        }
        Arc::get_mut(&mut open.bytes).expect("the bytes were just made unique")
    }

    /// Closes the open chunk and starts a new one at the end.
    fn open_chunk(&mut self) {
        let chunk = Chunk::new(self.end, self.cleaner.state(), self.chunk_len as usize);
        self.chunks.push_back(chunk);
    }

    /// Drops whole chunks, oldest first, until at most `max_bytes` offsets are held.
    fn evict(&mut self) {
        let max = self.limits.max_bytes as u64;
        while self.chunks.len() >= 2 && self.end - self.start() > max {
            self.chunks.pop_front();
        }
        self.sizes.forget_before(self.start());
    }
}

/// Adds `chunk`'s bytes from offset `from` to `to` to `pieces`, with the
/// piece before when they arrived at the same time.
fn timed_piece(
    pieces: &mut Vec<(Option<Instant>, Vec<u8>)>,
    at: Option<Instant>,
    chunk: &Chunk,
    from: u64,
    to: u64,
) {
    if from >= to {
        return;
    }
    let bytes = &chunk.bytes[(from - chunk.offset) as usize..(to - chunk.offset) as usize];
    match pieces.last_mut() {
        Some((last, piece)) if *last == at => piece.extend_from_slice(bytes),
        _ => pieces.push((at, bytes.to_vec())),
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
        let held: usize = j.chunks.iter().map(|chunk| chunk.bytes.len()).sum();
        assert!(held <= 100);
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
    fn timed_output_cuts_where_output_arrived_later() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut j = journal(64);
        j.append_at(b"ab", ms(0));
        // Within a millisecond: the same arrival.
        j.append_at(b"c", ms(0) + Duration::from_micros(300));
        j.append_at(b"de", ms(50));
        j.record_gap(GapReason::Paused);
        j.append_at(b"f", ms(900));
        assert_eq!(
            j.timed_output(0, j.end()),
            [
                (ms(0), b"abc".to_vec()),
                (ms(50), b"de".to_vec()),
                (ms(900), b"f".to_vec())
            ]
        );
        // From the middle of an arrival: its time; up to a bound.
        assert_eq!(j.timed_output(4, 5), [(ms(50), b"e".to_vec())]);
        // Evicted arrivals: what is left takes the next known time.
        let mut small = journal(8);
        small.append_at(&[b'x'; 30], ms(0));
        small.append_at(b"y", ms(10));
        let timed = small.timed_output(0, small.end());
        assert_eq!(timed.last(), Some(&(ms(10), b"y".to_vec())));
        assert!(timed.iter().all(|(at, _)| *at == ms(10)), "{timed:?}");
    }

    #[test]
    fn a_resize_cuts_the_output_and_is_kept_where_it_happened() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_micros(n);
        let mut j = journal(64);
        j.learn_size(80, 24, ms(0));
        j.append_at(b"ab", ms(0));
        // Output after a resize within a millisecond is cut from the output
        // before it all the same, and takes the resize's time.
        j.resize(100, 30, ms(200));
        j.append_at(b"cd", ms(400));
        j.resize(100, 30, ms(600));
        assert_eq!(
            j.timed_output(0, j.end()),
            [(ms(0), b"ab".to_vec()), (ms(200), b"cd".to_vec())]
        );
        let sizes = j.sizes(0, j.end()).unwrap();
        assert_eq!(sizes.initial, (80, 24));
        let changes: Vec<(u64, Instant, u16, u16)> = sizes
            .changes
            .iter()
            .map(|r| (r.offset, r.at, r.cols, r.rows))
            .collect();
        assert_eq!(changes, [(2, ms(200), 100, 30)]);
        assert_eq!(j.sizes(2, 4).unwrap().initial, (100, 30));
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
    fn snapshot_is_unchanged_by_later_appends_and_gaps() {
        let mut j = journal(64);
        j.append(b"0123456789");
        let snapshot = j.clone();
        j.append(b"abc");
        j.record_gap(GapReason::Paused);
        assert_eq!(&*snapshot.read_from(0).bytes, b"0123456789");
        assert_eq!((snapshot.end(), snapshot.read_from(0).lost), (10, 0));
        assert_eq!(&*j.read_from(0).bytes, b"0123456789abc");
        assert_eq!(j.read_from(0).lost, 1);
    }

    #[test]
    fn full_chunks_are_shared_not_copied() {
        let mut j = journal(1 << 20);
        j.append(&[b'x'; 10_000]);
        let snapshot = j.snapshot_from(0);
        let shared = j
            .chunks
            .iter()
            .zip(&snapshot.chunks)
            .filter(|(a, b)| Arc::ptr_eq(&a.bytes, &b.bytes))
            .count();
        assert_eq!(shared, j.chunks.len(), "every chunk is shared");
        j.append(b"y");
        // The open chunk was copied before it grew; the full ones stay shared.
        assert!(!Arc::ptr_eq(
            &j.chunks.back().unwrap().bytes,
            &snapshot.chunks.back().unwrap().bytes
        ));
        assert!(Arc::ptr_eq(&j.chunks[0].bytes, &snapshot.chunks[0].bytes));
        assert_eq!(snapshot.end(), 10_000);
    }

    #[test]
    fn snapshot_from_holds_only_the_chunks_it_needs() {
        let mut j = journal(1 << 20);
        for _ in 0..100 {
            j.append(
                b"0123456789
",
            );
        }
        let from = j.end() - 20;
        let snapshot = j.snapshot_from(from);
        assert!(
            snapshot.chunks.len() <= 2,
            "{} chunks",
            snapshot.chunks.len()
        );
        assert!(snapshot.start() <= from);
        assert_eq!(snapshot.read_from(from), j.read_from(from));
        assert_eq!(snapshot.lines(from), j.lines(from));
        // Before its start, a snapshot reports the missing offsets as lost.
        assert_eq!(snapshot.read_from(0).lost, snapshot.start());
    }

    #[test]
    fn snapshot_after_eviction_reports_the_loss() {
        let mut j = journal(32);
        for _ in 0..10 {
            j.append(b"0123456789");
        }
        let snapshot = j.snapshot_from(0);
        assert_eq!(snapshot.start(), j.start());
        assert_eq!(snapshot.read_from(0).lost, j.start());
    }

    #[test]
    fn zero_limit_keeps_nothing() {
        let mut j = journal(0);
        j.append(b"abc");
        assert_eq!((j.start(), j.end()), (3, 3));
        assert_eq!(j.read_from(0).lost, 3);
    }
}
