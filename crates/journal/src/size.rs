//! A pane's size along its output, for recordings: where in the output the
//! pane was resized, and to what.

use std::time::Instant;

/// The most size records a journal keeps (a person dragging a border makes
/// dozens a second); the oldest go first.
const KEPT: usize = 256;

/// The pane's size from an offset on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resize {
    /// The first offset printed at this size.
    pub offset: u64,
    /// When the size was learned.
    pub at: Instant,
    /// Width in cells.
    pub cols: u16,
    /// Height in cells.
    pub rows: u16,
}

/// The sizes of a stretch of output ([`Journal::sizes`](crate::Journal::sizes)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizesBetween {
    /// The size at the stretch's start (columns, rows).
    pub initial: (u16, u16),
    /// The changes within it, oldest first.
    pub changes: Vec<Resize>,
}

/// The size records of one journal, oldest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sizes {
    records: Vec<Resize>,
}

impl Sizes {
    /// Records `resize` unless the pane already had that size; returns
    /// whether it did.
    pub(crate) fn changed(&mut self, resize: Resize) -> bool {
        let same = self
            .records
            .last()
            .is_some_and(|last| (last.cols, last.rows) == (resize.cols, resize.rows));
        if same {
            return false;
        }
        if self.records.len() >= KEPT {
            self.records.remove(0);
        }
        self.records.push(resize);
        true
    }

    /// Records `resize` if no size is known yet: a size learned without a
    /// change being seen only says what the size has been so far.
    pub(crate) fn learned(&mut self, resize: Resize) {
        if self.records.is_empty() {
            self.records.push(resize);
        }
    }

    /// Forgets the records of output evicted before `start`, but the last
    /// of them: the size at `start`.
    pub(crate) fn forget_before(&mut self, start: u64) {
        let before = self.records.partition_point(|r| r.offset <= start);
        if before > 1 {
            self.records.drain(..before - 1);
        }
    }

    /// The size at `from` and its changes up to `to` (a change at `to`
    /// itself included: it came after the last output); `None` when no size
    /// is known. A size learned only after `from` stands for the size there.
    pub(crate) fn between(&self, from: u64, to: u64) -> Option<SizesBetween> {
        let first = self
            .records
            .partition_point(|r| r.offset <= from)
            .saturating_sub(1);
        let initial = self.records.get(first)?;
        let changes = self.records[first + 1..]
            .iter()
            .take_while(|r| r.offset <= to)
            .copied()
            .collect();
        Some(SizesBetween {
            initial: (initial.cols, initial.rows),
            changes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: u64, cols: u16, rows: u16) -> Resize {
        Resize {
            offset,
            at: Instant::now(),
            cols,
            rows,
        }
    }

    /// The size at the start, and each change's offset and size.
    type Seen = ((u16, u16), Vec<(u64, u16, u16)>);

    fn sizes(sizes: &Sizes, from: u64, to: u64) -> Option<Seen> {
        let between = sizes.between(from, to)?;
        let changes = between.changes.iter().map(|r| (r.offset, r.cols, r.rows));
        Some((between.initial, changes.collect()))
    }

    #[test]
    fn changes_are_kept_where_they_happened() {
        let mut s = Sizes::default();
        assert_eq!(s.between(0, 10), None);
        s.learned(at(5, 80, 24));
        // Learned again, or told the same size: nothing new.
        s.learned(at(6, 100, 30));
        assert!(!s.changed(at(7, 80, 24)));
        assert!(s.changed(at(10, 100, 30)));
        assert!(s.changed(at(20, 120, 40)));
        assert_eq!(
            sizes(&s, 0, 100),
            Some(((80, 24), vec![(10, 100, 30), (20, 120, 40)]))
        );
        assert_eq!(sizes(&s, 10, 19), Some(((100, 30), vec![])));
        assert_eq!(sizes(&s, 12, 20), Some(((100, 30), vec![(20, 120, 40)])));
        // Output evicted up to 15: the size there is still known.
        s.forget_before(15);
        assert_eq!(sizes(&s, 15, 30), Some(((100, 30), vec![(20, 120, 40)])));
    }

    #[test]
    fn records_are_bounded() {
        let mut s = Sizes::default();
        for n in 0..1000u16 {
            s.changed(at(u64::from(n), 80 + n % 2, 24));
        }
        assert_eq!(s.records.len(), KEPT);
        assert_eq!(s.records[0].offset, 1000 - KEPT as u64);
    }
}
