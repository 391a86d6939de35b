//! What can go wrong making a picture.

/// An error of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A screen needs at least one column and one row.
    #[error("a screen of {cols}x{rows} cells has nothing to draw")]
    Empty {
        /// Columns asked for.
        cols: u16,
        /// Rows asked for.
        rows: u16,
    },
    /// The PNG encoder failed.
    #[error("cannot encode the PNG: {0}")]
    Png(String),
}

impl Error {
    pub(crate) fn png(error: png::EncodingError) -> Error {
        Error::Png(error.to_string())
    }
}

/// This crate's `Result`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
