//! What the parser produces: reply blocks, pane output, flow control and notifications.

use crate::ids::{PaneId, SessionId, WindowId};

/// One complete unit of the control-mode stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A completed `%begin` … `%end` or `%error` block: the result of one command.
    Reply(Reply),
    /// `%output %N DATA`: bytes the pane wrote, with tmux's octal escapes decoded.
    Output {
        /// The pane that wrote the bytes.
        pane: PaneId,
        /// The raw bytes, not necessarily valid UTF-8 (a character can be split
        /// across two events).
        data: Vec<u8>,
    },
    /// `%extended-output %N AGE ... : DATA`, sent instead of `%output` once the client
    /// enabled `pause-after`.
    ExtendedOutput {
        /// The pane that wrote the bytes.
        pane: PaneId,
        /// How long, in milliseconds, the output waited in tmux before being sent.
        age_ms: u64,
        /// The raw, decoded bytes.
        data: Vec<u8>,
    },
    /// `%pause %N`: tmux stopped sending this pane's output because the client fell
    /// behind; output written meanwhile is lost until the pane is continued.
    Pause {
        /// The paused pane.
        pane: PaneId,
    },
    /// `%continue %N`: output of a paused pane flows again.
    Continue {
        /// The continued pane.
        pane: PaneId,
    },
    /// `%exit` or `%exit REASON`: the control client is leaving; nothing follows.
    Exit {
        /// Why, when tmux said (for example `too far behind`).
        reason: Option<String>,
    },
    /// Any other line outside a block.
    Notification(Notification),
}

/// The body and outcome of one command, from its `%begin` to its `%end` or `%error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The TIME field of the guard lines (seconds since the epoch when the command ran).
    pub time: u64,
    /// The NUMBER field: a server-wide command counter, shared by all clients.
    pub number: u64,
    /// The FLAGS field: 1 when the command came from this client's input, 0 otherwise
    /// (for example the block tmux sends when a control client starts).
    pub flags: u32,
    /// `true` for `%end`, `false` for `%error`.
    pub ok: bool,
    /// The body lines, raw bytes without their line ends.
    pub lines: Vec<Vec<u8>>,
}

impl Reply {
    /// The body as text: lines joined with `\n`, invalid UTF-8 replaced by U+FFFD.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.lines.join(&b'\n')).into_owned()
    }
}

/// An asynchronous notification line (tmux's `control-notify.c`), with its ids parsed.
///
/// Names and free text are decoded as lossy UTF-8: tmux writes them unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notification {
    /// `%sessions-changed`: a session was created or destroyed.
    SessionsChanged,
    /// `%session-changed $S NAME`: this client is now attached to another session.
    SessionChanged {
        /// The session now attached.
        session: SessionId,
        /// Its name.
        name: String,
    },
    /// `%session-renamed $S NAME`.
    SessionRenamed {
        /// The renamed session.
        session: SessionId,
        /// Its new name.
        name: String,
    },
    /// `%session-window-changed $S @W`: the current window of a session changed.
    SessionWindowChanged {
        /// The session.
        session: SessionId,
        /// Its new current window.
        window: WindowId,
    },
    /// `%client-session-changed CLIENT $S NAME`: another client switched session.
    ClientSessionChanged {
        /// The other client's name (usually its tty).
        client: String,
        /// The session it is now attached to.
        session: SessionId,
        /// That session's name.
        name: String,
    },
    /// `%client-detached CLIENT`.
    ClientDetached {
        /// The client's name.
        client: String,
    },
    /// `%window-add @W`: a window was linked into the attached session.
    WindowAdd {
        /// The new window.
        window: WindowId,
    },
    /// `%window-close @W`: a window was closed or unlinked from the attached session.
    WindowClose {
        /// The closed window.
        window: WindowId,
    },
    /// `%window-renamed @W NAME`.
    WindowRenamed {
        /// The renamed window.
        window: WindowId,
        /// Its new name.
        name: String,
    },
    /// `%unlinked-window-add @W`: a window was created outside the attached session.
    UnlinkedWindowAdd {
        /// The new window.
        window: WindowId,
    },
    /// `%unlinked-window-close @W`.
    UnlinkedWindowClose {
        /// The closed window.
        window: WindowId,
    },
    /// `%unlinked-window-renamed @W NAME`.
    UnlinkedWindowRenamed {
        /// The renamed window.
        window: WindowId,
        /// Its new name.
        name: String,
    },
    /// `%window-pane-changed @W %P`: the active pane of a window changed.
    WindowPaneChanged {
        /// The window.
        window: WindowId,
        /// Its new active pane.
        pane: PaneId,
    },
    /// `%layout-change @W LAYOUT VISIBLE_LAYOUT FLAGS`.
    LayoutChange {
        /// The window whose layout changed.
        window: WindowId,
        /// The layout string (`select-layout` syntax).
        layout: String,
        /// The layout of what is visible (differs when a pane is zoomed).
        visible_layout: String,
        /// The window flags such as `*` or `Z`; may be empty.
        flags: String,
    },
    /// `%pane-mode-changed %P`: a pane entered or left a mode such as copy mode.
    PaneModeChanged {
        /// The pane.
        pane: PaneId,
    },
    /// `%paste-buffer-changed NAME` (tmux 3.4 and later).
    PasteBufferChanged {
        /// The buffer's name.
        name: String,
    },
    /// `%paste-buffer-deleted NAME` (tmux 3.4 and later).
    PasteBufferDeleted {
        /// The buffer's name.
        name: String,
    },
    /// `%message TEXT`: a message shown by `display-message` (tmux 3.4 and later).
    Message {
        /// The message.
        text: String,
    },
    /// `%config-error TEXT`: an error in a configuration file (tmux 3.4 and later).
    ConfigError {
        /// The error.
        text: String,
    },
    /// `%subscription-changed ...`: a format subscription's value changed.
    SubscriptionChanged {
        /// The whole line, raw, as its fields depend on the subscription's kind.
        line: Vec<u8>,
    },
    /// Any other line outside a block, or a known notification whose fields did not
    /// parse; the whole line, raw.
    Unknown {
        /// The line without its line end.
        line: Vec<u8>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_text_joins_lines_and_replaces_invalid_utf8() {
        let reply = Reply {
            time: 1,
            number: 2,
            flags: 1,
            ok: true,
            lines: vec![b"one".to_vec(), vec![b't', 0xff], Vec::new()],
        };
        assert_eq!(reply.text(), "one\nt\u{fffd}\n");
    }

    #[test]
    fn empty_reply_text_is_empty() {
        let reply = Reply {
            time: 1,
            number: 2,
            flags: 1,
            ok: false,
            lines: Vec::new(),
        };
        assert_eq!(reply.text(), "");
    }
}
