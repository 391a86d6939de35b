//! The errors of the output store. Rendering itself cannot fail.

use std::io;

use crate::OutputId;

/// What went wrong with a kept output. The messages are written for the agent that
/// called `read_output`: they say what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The id is not of the form the store hands out.
    #[error("\"{id}\" is not an output id; ids look like o7, as given in an elision line")]
    MalformedId {
        /// The id as given (at most 40 characters of it).
        id: String,
    },
    /// The store made this id but has since dropped it to stay within its size.
    #[error(
        "output id {id} not found; it may have been evicted (the store keeps the newest {kept}); \
         capture the output again"
    )]
    Evicted {
        /// The id asked for.
        id: OutputId,
        /// The store's size limit, for people (`64.0 MB`).
        kept: String,
    },
    /// The store never made this id.
    #[error("output id {id} not found; use an id from an elision line of this session")]
    Unknown {
        /// The id asked for.
        id: OutputId,
    },
    /// The file system failed.
    #[error("could not {action} in the output store: {source}")]
    Io {
        /// What the store was doing, e.g. `write o7`.
        action: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl StoreError {
    pub(crate) fn io(action: impl Into<String>) -> impl FnOnce(io::Error) -> StoreError {
        let action = action.into();
        move |source| StoreError::Io { action, source }
    }
}
