//! The crate's one error type.

/// Everything that can go wrong in this crate: building a [`Pattern`](crate::Pattern).
/// These are problems the caller can fix, so every message says what was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A pattern list was empty.
    #[error("no patterns given; pass at least one pattern")]
    NoPatterns,
    /// One of the regular expressions did not compile.
    #[error("pattern {index} ('{pattern}') is not a valid regular expression: {source}")]
    InvalidRegex {
        /// Position of the pattern in the list.
        index: usize,
        /// The pattern as given.
        pattern: String,
        /// The regex crate's explanation.
        source: Box<regex::Error>,
    },
    /// A pattern matches the empty string, so it would match anywhere at once.
    #[error("pattern {index} ('{pattern}') matches empty text, so it would match immediately")]
    MatchesEmpty {
        /// Position of the pattern in the list.
        index: usize,
        /// The pattern as given.
        pattern: String,
    },
}
