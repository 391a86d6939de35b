//! Listing sessions and panes, and the formats their lines are read with.

use termpilot_control::{
    Command, PaneId, SessionId, SessionTarget, Target, TargetKind, WindowId, WindowTarget,
};

use crate::engine::{Engine, call, ok_reply};
use crate::error::Result;
use crate::format::tmux_format;

/// A tmux session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Session id (`$0`).
    pub id: SessionId,
    /// Session name.
    pub name: String,
    /// Number of windows.
    pub windows: u32,
    /// Clients attached, not counting termpilot's own control clients.
    pub attached: u32,
    /// Creation time, seconds since the Unix epoch.
    pub created: u64,
}

tmux_format! {
    /// A tmux pane, as seen in one session (a window linked into several
    /// sessions lists its panes once per session): a line of `list-panes`.
    pub struct PaneInfo {
        /// Pane id (`%3`).
        id: PaneId = "pane_id",
        /// Session id.
        session: SessionId = "session_id",
        /// Window id.
        window: WindowId = "window_id",
        /// Window index in the session.
        window_index: u32 = "window_index",
        /// Pane index in the window.
        index: u32 = "pane_index",
        /// Width in cells.
        width: u16 = "pane_width",
        /// Height in cells.
        height: u16 = "pane_height",
        /// Whether this is the active pane of its window.
        pane_active: bool = "pane_active",
        /// Whether its window is the active window of the session.
        window_active: bool = "window_active",
        /// Whether the pane's program exited (pane kept by remain-on-exit).
        dead: bool = "pane_dead",
        /// Whether the pane is in a mode (copy mode, ...).
        in_mode: bool = "pane_in_mode",
        /// Whether a full-screen program has switched to the alternate screen.
        alternate_screen: bool = "alternate_on",
        /// Pid of the pane's first process.
        pid: Option<u32> = "pane_pid",
        /// Session name.
        session_name: String = "session_name",
        /// Window name.
        window_name: String = "window_name",
        /// The command running in the foreground of the pane.
        current_command: String = "pane_current_command",
        /// Pane title (programs set it with an escape sequence).
        title: String = "pane_title",
        /// The pane's current working directory.
        cwd: String = "pane_current_path",
        /// Who holds the pane, when a person took it over with `termpilot attach`.
        held_by: Option<String> = "@termpilot_held",
    }
}

impl PaneInfo {
    /// Whether this is the active pane of the active window.
    pub fn active(&self) -> bool {
        self.pane_active && self.window_active
    }
}

/// Which panes to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneScope {
    /// Every pane of every session.
    All,
    /// The panes of one session: its id (`$1`) or exact name.
    Session(Target<SessionTarget>),
    /// The panes of one window: its id (`@2`) or `session:window`.
    Window(Target<WindowTarget>),
}

tmux_format! {
    /// A line of `list-sessions`.
    struct SessionRow {
        id: SessionId = "session_id",
        name: String = "session_name",
        windows: u32 = "session_windows",
        attached: u32 = "session_attached",
        created: u64 = "session_created",
    }
}

tmux_format! {
    /// A line of `list-clients`: the client's session and whether it is a
    /// control client.
    struct ClientRow {
        session: Option<SessionId> = "session_id",
        control: bool = "client_control_mode",
    }
}

impl Engine {
    /// Lists sessions.
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>> {
        let client = self.primary().await?;
        let calls = vec![
            call(
                Command::new("list-sessions").opt("-F", SessionRow::FORMAT),
                None,
            )?,
            call(
                Command::new("list-clients").opt("-F", ClientRow::FORMAT),
                None,
            )?,
        ];
        let mut answers = client.call_many(calls).await.into_iter();
        let sessions = ok_reply(answers.next().expect("two answers")?)?;
        let clients = ok_reply(answers.next().expect("two answers")?)?;
        let mut control = std::collections::HashMap::<SessionId, u32>::new();
        for client in ClientRow::parse_all("list-clients", &clients)? {
            if let (true, Some(session)) = (client.control, client.session) {
                *control.entry(session).or_default() += 1;
            }
        }
        let mut out = Vec::new();
        for row in SessionRow::parse_all("list-sessions", &sessions)? {
            let controls = control.get(&row.id).copied().unwrap_or(0);
            out.push(SessionInfo {
                id: row.id,
                name: row.name,
                windows: row.windows,
                attached: row.attached.saturating_sub(controls),
                created: row.created,
            });
        }
        Ok(out)
    }

    /// Lists panes.
    pub async fn list_panes(&self, scope: &PaneScope) -> Result<Vec<PaneInfo>> {
        let command = Command::new("list-panes").opt("-F", PaneInfo::FORMAT);
        let command = match scope {
            PaneScope::All => command.flag("-a"),
            PaneScope::Session(target) => {
                let session = self.pin_session(&target.parsed).await?;
                command.flag("-s").opt("-t", session.tmux())
            }
            PaneScope::Window(target) => {
                let window = self.pin_window(target.parsed.clone()).await?;
                command.opt("-t", window.tmux())
            }
        };
        let reply = self.command(command).await.map_err(|e| match scope {
            PaneScope::All => e,
            PaneScope::Session(t) => e.not_found_as(TargetKind::Session, &t.text),
            PaneScope::Window(t) => e.not_found_as(TargetKind::Window, &t.text),
        })?;
        let rows = PaneInfo::parse_all("list-panes", &reply)?;
        for row in &rows {
            self.shared.panes.learn_size(row.id, row.width, row.height);
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pane_line_reads_the_held_option_by_name() {
        assert_eq!(PaneInfo::FIELDS.last(), Some(&crate::person::HELD_OPTION));
        let fields = [
            "%3", "$1", "@2", "0", "1", "80", "24", "1", "1", "0", "0", "0", "", "main", "w",
            "bash", "t", "/tmp", "",
        ];
        assert_eq!(fields.len(), PaneInfo::FIELDS.len());
        let info = PaneInfo::parse("list-panes", &fields.join("\x1f")).unwrap();
        assert_eq!(
            (info.id.to_string(), info.width, info.height),
            ("%3".into(), 80, 24)
        );
        assert!(info.active() && !info.dead);
        assert_eq!((info.pid, info.held_by), (None, None));
        assert_eq!(info.cwd, "/tmp");
        let garbled = PaneInfo::parse("list-panes", &fields.join("\x1f").replace("80", "wide"));
        assert_eq!(
            garbled.unwrap_err().to_string(),
            "unexpected reply from tmux to `list-panes`: field pane_width is 'wide'"
        );
    }
}
