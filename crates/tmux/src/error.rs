//! The engine's error type.

use termpilot_control::{PaneId, TargetKind};

use crate::batch::CursorRef;
use crate::cursor::Cursor;

/// Everything that can go wrong between a caller and tmux.
///
/// Messages are written for the person (or agent) who has to act on them: they
/// say what happened and, where there is one, what to do next.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The `tmux` program could not be started at all.
    #[error(
        "cannot run tmux ({program}): {reason}; install it (for example `apt-get install tmux`) \
         or point termpilot at it with --tmux PATH"
    )]
    TmuxMissing {
        /// The program termpilot tried to run.
        program: String,
        /// Why starting it failed.
        reason: String,
    },
    /// tmux started but refused to give us a control client.
    #[error("could not connect to the tmux server ({socket}): {reason}")]
    Connect {
        /// The socket in use, as a human-readable description.
        socket: String,
        /// What tmux said.
        reason: String,
    },
    /// The control connection closed while a command was waiting for its reply.
    #[error(
        "the tmux connection closed before `{command}` was answered ({reason}); \
         the tmux server may have exited — termpilot reconnects on the next call"
    )]
    Disconnected {
        /// The tmux command that was pending.
        command: String,
        /// Why the connection closed.
        reason: String,
    },
    /// The session whose control client carried the command ended (it was
    /// killed, or its last pane exited) before the reply; the server runs on.
    #[error(
        "session {session} ended before `{command}` was answered (it was killed or its last \
         pane exited); call list_sessions to see the sessions"
    )]
    SessionEnded {
        /// The tmux command that was pending.
        command: String,
        /// The session that ended.
        session: termpilot_control::SessionId,
    },
    /// tmux ran the command and reported an error.
    #[error("tmux refused `{command}`: {message}")]
    Command {
        /// The tmux command name.
        command: String,
        /// tmux's own message.
        message: String,
    },
    /// A target did not name an existing pane, window or session. The
    /// message ends with what to call to find a valid one, chosen by `kind`
    /// alone, so every path to a missing target words it the same way (the
    /// MCP scope check relies on that to hide other sessions).
    #[error("{kind} {target} not found; {}", missing_hint(*kind))]
    NotFound {
        /// What the target was meant to name.
        kind: TargetKind,
        /// The target as the caller wrote it.
        target: String,
    },
    /// A host name that is not among the configured hosts.
    #[error("host {name} not found; the hosts are local and those given with --host")]
    UnknownHost {
        /// The name as the caller wrote it.
        name: String,
    },
    /// The pane a command ran in closed before the command finished.
    #[error("pane {pane} not found; the pane closed while the command ran; call list_panes")]
    PaneClosed {
        /// The pane.
        pane: PaneId,
    },
    /// The caller asked for something about the pane termpilot itself runs in.
    #[error("refusing to {action} pane {pane}: termpilot itself is running in it")]
    OwnPane {
        /// What was refused ("kill", "type into", ...).
        action: &'static str,
        /// The pane termpilot runs in.
        pane: PaneId,
    },
    /// A person took the pane over with `termpilot attach`.
    #[error(
        "pane {pane} is held by {}; termpilot will not type into it until they hand it back",
        holder(note)
    )]
    HeldByPerson {
        /// The pane.
        pane: PaneId,
        /// Who holds it and since when, as `termpilot attach` wrote it.
        note: String,
    },
    /// A person at the pane cancelled the agent's wait for a command.
    #[error(
        "a person at pane {pane} cancelled the wait; the command may still be running \
         (wait_for_command with command_id {command_id} picks it up)"
    )]
    CancelledByUser {
        /// The pane.
        pane: PaneId,
        /// The running command's id.
        command_id: String,
    },
    /// `run_command` needs a shell at its prompt.
    #[error("pane {pane} is not at a shell prompt: {why}")]
    NotAtPrompt {
        /// The pane.
        pane: PaneId,
        /// What it shows instead.
        why: String,
    },
    /// An argument the engine cannot pass to tmux.
    #[error("{0}")]
    InvalidArgument(String),
    /// A cursor handed out for another pane.
    #[error(
        "cursor {cursor} belongs to pane {}, not {pane}; use a cursor returned for {pane}",
        cursor.pane
    )]
    ForeignCursor {
        /// The cursor.
        cursor: Cursor,
        /// The pane it was given for.
        pane: PaneId,
    },
    /// A cursor from a tmux server that has since gone away.
    #[error(
        "cursor {cursor} is from an earlier tmux server (it restarted since); \
         take a new cursor with capture_pane"
    )]
    StaleCursor {
        /// The cursor.
        cursor: Cursor,
    },
    /// A batch step's cursor reference (`$prev`, `$N`) names no cursor.
    #[error("steps[{step}]: {reference} {problem}")]
    CursorReference {
        /// The step, from 0.
        step: usize,
        /// The reference.
        reference: CursorRef,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The caller cancelled the work.
    #[error("{what}: cancelled by the client")]
    Cancelled {
        /// What was under way, e.g. "waiting for text in %3".
        what: String,
    },
    /// tmux answered something the engine could not understand.
    #[error("unexpected reply from tmux to `{command}`: {detail}")]
    Protocol {
        /// The tmux command name.
        command: String,
        /// What was wrong with the reply.
        detail: String,
    },
}

/// Shorthand for results of engine calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A target that names no existing `kind`.
    pub fn not_found(kind: TargetKind, target: impl Into<String>) -> Self {
        Error::NotFound {
            kind,
            target: target.into(),
        }
    }

    /// A pane target that names no pane.
    pub(crate) fn pane_not_found(target: impl Into<String>) -> Self {
        Self::not_found(TargetKind::Pane, target)
    }

    /// A session target that names no session.
    pub(crate) fn session_not_found(target: impl Into<String>) -> Self {
        Self::not_found(TargetKind::Session, target)
    }

    /// This error with a not-found error reported as `kind` `target`, the
    /// target as the caller wrote it (tmux names the target it was given,
    /// which may be a pinned id); any other error as it is.
    pub(crate) fn not_found_as(self, kind: TargetKind, target: impl Into<String>) -> Self {
        match self {
            Error::NotFound { .. } => Self::not_found(kind, target),
            other => other,
        }
    }
}

/// What to call to find a valid target of `kind`: the one hint every
/// not-found error of that kind gives.
fn missing_hint(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Pane => "call list_panes to see the panes",
        TargetKind::Window => "call list_panes to see the windows",
        TargetKind::Session | TargetKind::NewWindow => "call list_sessions to see the sessions",
    }
}

/// The error for tmux's `%error` reply `message` to `command`: "can't find
/// pane/window/session: T" is [`Error::NotFound`] (for the target T tmux
/// names), anything else [`Error::Command`] naming the command.
pub(crate) fn classify(command: &'static str, message: String) -> Error {
    for kind in [TargetKind::Pane, TargetKind::Window, TargetKind::Session] {
        if let Some((_, rest)) = message.split_once(&format!("can't find {kind}")) {
            let target = rest.trim_start_matches(':').trim();
            return Error::not_found(kind, target);
        }
    }
    Error::Command {
        command: command.to_owned(),
        message,
    }
}

/// Who holds a pane, from the note on it: `termpilot attach` writes "a
/// person (termpilot attach, pid N) since T"; any other note is put in
/// brackets after "a person".
fn holder(note: &str) -> String {
    if note.starts_with("a person") {
        note.to_owned()
    } else {
        format!("a person ({note})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_pane_names_its_holder_once() {
        let error = Error::HeldByPerson {
            pane: "%3".parse().unwrap(),
            note: "a person (termpilot attach, pid 7) since 2026-11-24T00:00:00Z".into(),
        };
        assert_eq!(
            error.to_string(),
            "pane %3 is held by a person (termpilot attach, pid 7) since 2026-11-24T00:00:00Z; \
             termpilot will not type into it until they hand it back"
        );
        let other = Error::HeldByPerson {
            pane: "%3".parse().unwrap(),
            note: "someone".into(),
        };
        assert!(
            other
                .to_string()
                .starts_with("pane %3 is held by a person (someone);")
        );
    }

    #[test]
    fn cursor_errors_name_the_cursor_and_what_to_do() {
        let cursor = Cursor {
            server_pid: 2,
            pane: PaneId(4),
            offset: 10,
        };
        let foreign = Error::ForeignCursor {
            cursor,
            pane: "%3".parse().unwrap(),
        };
        assert_eq!(
            foreign.to_string(),
            "cursor c1.2.4.10 belongs to pane %4, not %3; use a cursor returned for %3"
        );
        assert_eq!(
            Error::StaleCursor { cursor }.to_string(),
            "cursor c1.2.4.10 is from an earlier tmux server (it restarted since); take a new \
             cursor with capture_pane"
        );
    }

    #[test]
    fn tmux_not_found_messages_become_not_found_errors() {
        let pane = classify("send-keys", "can't find pane: %99".into());
        assert!(
            matches!(&pane, Error::NotFound { kind: TargetKind::Pane, target, .. } if target == "%99"),
            "{pane:?}"
        );
        assert_eq!(
            pane.to_string(),
            "pane %99 not found; call list_panes to see the panes"
        );
        let window = classify("list-panes", "can't find window: 7".into());
        assert!(
            matches!(&window, Error::NotFound { kind: TargetKind::Window, target, .. } if target == "7"),
            "{window:?}"
        );
        let session = classify("new-window", "can't find session: $4".into());
        assert!(
            matches!(&session, Error::NotFound { kind: TargetKind::Session, target, .. } if target == "$4"),
            "{session:?}"
        );
    }

    #[test]
    fn other_tmux_errors_keep_the_command_name() {
        let error = classify("resize-pane", "not a terminal".into());
        assert!(
            matches!(&error, Error::Command { command, message }
                if command == "resize-pane" && message == "not a terminal"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "tmux refused `resize-pane`: not a terminal"
        );
        let client = classify("display-message", "can't find client: /dev/pts/9".into());
        assert!(matches!(client, Error::Command { .. }), "{client:?}");
    }

    #[test]
    fn a_not_found_error_takes_the_callers_target() {
        let error = classify("kill-pane", "can't find pane: %9".into())
            .not_found_as(TargetKind::Window, "main:2");
        assert_eq!(
            error.to_string(),
            "window main:2 not found; call list_panes to see the windows"
        );
        let other =
            classify("kill-pane", "server exited".into()).not_found_as(TargetKind::Pane, "%1");
        assert!(matches!(other, Error::Command { .. }), "{other:?}");
    }
}
