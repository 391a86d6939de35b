//! Replaying a journal's bytes through the cleaner and the line collapser, from any
//! offset, incrementally.

use crate::clean::Cleaner;
use crate::gap::Gap;
use crate::journal::{Journal, Piece};
use crate::row::{Collapser, Row, RowSink};

/// A reading position in a journal with the cleaner and line state that go with it.
///
/// Text before the starting offset is not part of the first line: replay starts as if a
/// line began there (with the cleaner in the state it really had, so a start inside an
/// escape sequence does not turn its tail into text).
#[derive(Debug, Clone)]
pub(crate) struct Replay {
    next: u64,
    /// `None` until the first advance, which restores the state at `next`.
    cleaner: Option<Cleaner>,
    collapser: Collapser,
    /// Offsets skipped because they were evicted, plus one per gap crossed.
    pub(crate) lost: u64,
    /// Gaps crossed, oldest first.
    pub(crate) gaps: Vec<Gap>,
}

impl Replay {
    pub(crate) fn new(from: u64) -> Self {
        Replay {
            next: from,
            cleaner: None,
            collapser: Collapser::default(),
            lost: 0,
            gaps: Vec::new(),
        }
    }

    /// The offset of the next unit to replay.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// The unfinished row at the current position.
    pub(crate) fn row_mut(&mut self) -> &mut Row {
        self.collapser.row_mut()
    }

    /// Replays everything the journal holds after the current position, stopping early
    /// once `done` says so (checked after each piece of at most 4 KiB).
    pub(crate) fn advance<S: RowSink>(
        &mut self,
        journal: &Journal,
        sink: &mut S,
        done: impl Fn(&S) -> bool,
    ) {
        self.catch_up(journal, sink);
        let Replay {
            next,
            cleaner,
            collapser,
            lost,
            gaps,
        } = self;
        let cleaner = cleaner.get_or_insert_with(|| journal.cleaner_at(*next));
        for piece in journal.pieces(*next, journal.end()) {
            match piece {
                Piece::Bytes(bytes) => {
                    cleaner.feed(bytes, |event| collapser.apply(event, sink));
                    *next += bytes.len() as u64;
                }
                Piece::Gap(gap) => {
                    // Nothing after a gap continues what came before it.
                    cleaner.finish(|event| collapser.apply(event, sink));
                    collapser.end_line(gap.offset, sink);
                    if done(sink) {
                        // The consumer needed only the line the gap ended, not the gap.
                        break;
                    }
                    gaps.push(gap.clone());
                    *lost += 1;
                    *next = gap.offset + 1;
                    *cleaner = Cleaner::starting_at(*next);
                }
            }
            if done(sink) {
                break;
            }
        }
    }

    /// Positions a new replay, or one that eviction overtook, at the oldest held data.
    fn catch_up(&mut self, journal: &Journal, sink: &mut impl RowSink) {
        let from = self.next.min(journal.end());
        if from >= journal.start() && self.cleaner.is_some() {
            return;
        }
        if from < journal.start() {
            self.lost += journal.start() - from;
            if self.cleaner.is_some() {
                // The rest of the current line is gone: end it where the data ends.
                self.collapser.end_line(from, sink);
            }
        }
        self.next = from.max(journal.start());
        self.cleaner = Some(journal.cleaner_at(self.next));
    }
}
