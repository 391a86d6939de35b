//! Gaps: places where output was dropped before it reached the journal.

use std::fmt;

/// Why output is missing at a [`Gap`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GapReason {
    /// tmux paused the pane (`%pause`) and dropped its output until it was continued.
    Paused,
    /// The connection that delivered the pane's output was lost and re-established.
    Reconnected,
    /// Any other reason, in words.
    Other(String),
}

impl fmt::Display for GapReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GapReason::Paused => f.write_str("tmux paused the pane and dropped output"),
            GapReason::Reconnected => f.write_str("the output connection was re-established"),
            GapReason::Other(why) => f.write_str(why),
        }
    }
}

/// A marker recorded by [`Journal::record_gap`](crate::Journal::record_gap).
///
/// A gap occupies exactly one offset, so every cursor is unambiguously before it
/// (`cursor <= offset`, the gap will be reported) or after it (`cursor > offset`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// The offset the gap occupies.
    pub offset: u64,
    /// Why output is missing here.
    pub reason: GapReason,
}
