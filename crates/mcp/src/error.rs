//! Why a tool call failed: [`ToolError`]. Every variant is a problem the
//! caller can read and act on; it goes back as an `isError` result, never
//! as a protocol error.

/// A tool call that did not succeed.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ToolError {
    /// The engine refused the call or could not carry it out; its message
    /// says what happened and what to do.
    #[error(transparent)]
    Engine(#[from] termpilot_tmux::Error),
    /// The call cannot be done as asked: an argument is wrong, the
    /// operator's scope or the person does not allow it. The message names
    /// the argument or the reason, and what to do instead.
    #[error("{0}")]
    Refused(String),
    /// The server could not finish the call (it could not keep an output or
    /// encode a result).
    #[error("{0}")]
    Failed(String),
    /// Not a failure: the call needs the person's answer first, and the
    /// protocol (2026-07-28) asks for it with an input-required result,
    /// which the client answers by calling again (see `questions`).
    #[error("the call needs the person's answer first")]
    NeedsInput(Box<rmcp::model::InputRequiredResult>),
}

impl ToolError {
    /// A refusal with this message.
    pub(crate) fn refused(message: impl Into<String>) -> ToolError {
        ToolError::Refused(message.into())
    }

    /// The error as the engine carries it (a batch step refused before the
    /// batch ran fails with it when its turn comes).
    pub(crate) fn into_engine(self) -> termpilot_tmux::Error {
        match self {
            ToolError::Engine(error) => error,
            ToolError::Refused(message) | ToolError::Failed(message) => {
                termpilot_tmux::Error::InvalidArgument(message)
            }
            needs @ ToolError::NeedsInput(_) => {
                termpilot_tmux::Error::InvalidArgument(needs.to_string())
            }
        }
    }
}

/// The result of a tool's piece of work.
pub(crate) type ToolResult<T> = Result<T, ToolError>;
