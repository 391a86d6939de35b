//! The crate's error type.

use std::io;

use termpilot_keys::{BindingError, KeyError};

/// Why a session could not be set up or run, or why a binding was rejected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A binding is not of the form `SEQ=ACTION`.
    #[error("binding {spec:?} is not of the form SEQ=ACTION (e.g. \"C-c=interrupt\")")]
    BindingSyntax {
        /// The binding as written.
        spec: String,
    },
    /// A key name in a binding is unknown.
    #[error("binding {spec:?}: {source}")]
    Key {
        /// The binding as written.
        spec: String,
        /// What is wrong with the key name.
        source: KeyError,
    },
    /// An action name is unknown.
    #[error("unknown action {action:?}; actions are interrupt, terminate, detach and event:NAME")]
    UnknownAction {
        /// The action as written.
        action: String,
    },
    /// The bindings cannot be matched (empty or duplicate sequences).
    #[error("invalid key bindings: {0}")]
    Bindings(#[from] BindingError),
    /// An `event:` binding exists but the session has nowhere to write events.
    #[error("the binding for event {name:?} needs an events writer (SessionBuilder::events)")]
    EventsWithoutWriter {
        /// The event's name.
        name: String,
    },
    /// A `detach` binding exists but nothing knows how to detach the child.
    #[error(
        "a detach binding needs a detach hook (SessionBuilder::detach_hook); \
         `termpilot run` offers detach only with --detachable"
    )]
    DetachWithoutHook,
    /// The command could not be started in a PTY.
    #[error("cannot start {program:?} in a pseudo-terminal: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The underlying failure.
        source: pty_process::Error,
    },
    /// A system call on the terminal, the PTY or a signal failed.
    #[error("{doing}: {source}")]
    Io {
        /// What the session was doing.
        doing: &'static str,
        /// The underlying failure.
        source: io::Error,
    },
    /// An action could not be carried out (the session goes on).
    #[error("action {action} failed: {source}")]
    Action {
        /// The action, as `termpilot run --bind` writes it.
        action: String,
        /// The underlying failure.
        source: io::Error,
    },
}

impl Error {
    /// Wraps an I/O failure with what the session was doing.
    pub(crate) fn io(doing: &'static str) -> impl FnOnce(io::Error) -> Error {
        move |source| Error::Io { doing, source }
    }
}
