//! Creating and killing sessions, windows and panes.

use std::ffi::OsString;

use termpilot_control::{
    Command, NameKind, PaneId, PaneTarget, SessionId, SessionTarget, Target, TargetKind, WindowId,
    WindowSlot, WindowTarget, escape_format,
};

use crate::engine::{Engine, not_found_pane};
use crate::error::{Error, Result};
use crate::format::tmux_format;
use crate::targets::{checked_name, refuse_nul_in_spawn};

/// Options for a new session.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// Session name; tmux picks one when absent. Names tmux would change
    /// or could not tell from target syntax are refused (see
    /// [`termpilot_control::Name`]).
    pub name: Option<String>,
    /// Shell command to run instead of the default shell.
    pub command: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Environment variables set in the session.
    pub env: Vec<(String, String)>,
    /// Width in cells (default from the engine configuration).
    pub width: Option<u16>,
    /// Height in cells (default from the engine configuration).
    pub height: Option<u16>,
}

/// Options for a new window (the session it goes to is the target of
/// [`Engine::create_window`]).
#[derive(Debug, Clone, Default)]
pub struct NewWindow {
    /// Window name, checked as for a session name; a number (even after
    /// spaces) is refused, as it would read as an index.
    pub name: Option<String>,
    /// Shell command to run instead of the default shell.
    pub command: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Environment variables set for the window's first pane.
    pub env: Vec<(String, String)>,
}

/// Where a split puts the new pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitDirection {
    /// Right of the target pane.
    Right,
    /// Left of the target pane.
    Left,
    /// Below the target pane.
    Below,
    /// Above the target pane.
    Above,
}

/// Options for splitting a pane.
#[derive(Debug, Clone)]
pub struct Split {
    /// The pane to split: its id (`%3`) or `session:window.pane`.
    pub target: Target<PaneTarget>,
    /// Where the new pane goes.
    pub direction: SplitDirection,
    /// Size of the new pane: cells (`"20"`) or a percentage (`"30%"`).
    pub size: Option<String>,
    /// Shell command to run instead of the default shell.
    pub command: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Environment variables set for the new pane.
    pub env: Vec<(String, String)>,
}

/// What a create operation made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// Session id.
    pub session: SessionId,
    /// Session name.
    pub session_name: String,
    /// Window id.
    pub window: WindowId,
    /// Window index.
    pub window_index: u32,
    /// The new (or first) pane.
    pub pane: PaneId,
}

/// What a kill operation removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Killed {
    /// The session the target was in.
    pub session: SessionId,
    /// Windows removed (empty when one pane of a bigger window was killed).
    pub windows: Vec<WindowId>,
    /// Panes removed.
    pub panes: Vec<PaneId>,
}

tmux_format! {
    /// What `new-session -P` and `new-window -P` print.
    struct CreatedRow {
        session: SessionId = "session_id",
        window: WindowId = "window_id",
        pane: PaneId = "pane_id",
        window_index: u32 = "window_index",
        session_name: String = "session_name",
        window_name: String = "window_name",
        width: u16 = "pane_width",
        height: u16 = "pane_height",
    }
}

tmux_format! {
    /// A pane and where it is, for the panes a kill removes.
    struct PlaceRow {
        session: SessionId = "session_id",
        window: WindowId = "window_id",
        pane: PaneId = "pane_id",
    }
}

tmux_format! {
    /// A pane's session and window, and how many panes the window has.
    struct KilledPaneRow {
        session: SessionId = "session_id",
        window: WindowId = "window_id",
        window_panes: u32 = "window_panes",
    }
}

impl Engine {
    /// Creates a session with a control client attached from its start.
    pub async fn create_session(&self, options: &NewSession) -> Result<Created> {
        let name = checked_name(NameKind::Session, options.name.as_deref())?;
        refuse_nul_in_spawn(
            options.cwd.as_deref(),
            &options.env,
            options.command.as_deref(),
        )?;
        self.gate_spawn(options.command.as_deref(), &options.env)?;
        let (dw, dh) = self.config().default_size;
        let mut args: Vec<OsString> = vec![
            "new-session".into(),
            "-f".into(),
            crate::engine::CLIENT_FLAGS.into(),
            "-P".into(),
            "-F".into(),
            CreatedRow::FORMAT.into(),
            "-x".into(),
            options.width.unwrap_or(dw).to_string().into(),
            "-y".into(),
            options.height.unwrap_or(dh).to_string().into(),
        ];
        // tmux expands formats in both: `#(cmd)` would run a command.
        if let Some(name) = &name {
            args.extend(["-s".into(), name.to_format().into()]);
        }
        if let Some(cwd) = &options.cwd {
            args.extend(["-c".into(), escape_format(cwd).into()]);
        }
        for (key, value) in &options.env {
            args.extend(["-e".into(), format!("{key}={value}").into()]);
        }
        if let Some(command) = &options.command {
            args.extend(["--".into(), command.into()]);
        }
        let first = self.spawn_session(args).await?;
        let (made, _) = self.created(&first.text())?;
        if let Some(name) = name.filter(|name| name.as_str() != made.session_name) {
            (self.kill_session(&SessionTarget::Id(made.session).into())).await?;
            return Err(renamed(
                NameKind::Session,
                name.as_str(),
                &made.session_name,
            ));
        }
        Ok(made)
    }

    /// Adds a window to a session (by id `$1` or exact name, optionally
    /// with the new window's index: `work:5`), without selecting it.
    pub async fn create_window(
        &self,
        target: &Target<WindowSlot>,
        options: &NewWindow,
    ) -> Result<Created> {
        let slot = target.parsed.clone();
        let name = checked_name(NameKind::Window, options.name.as_deref())?;
        refuse_nul_in_spawn(
            options.cwd.as_deref(),
            &options.env,
            options.command.as_deref(),
        )?;
        self.gate_spawn(options.command.as_deref(), &options.env)?;
        let slot = self.pin_slot(slot).await?;
        let mut command = Command::new("new-window")
            .flag("-d")
            .flag("-P")
            .opt("-F", CreatedRow::FORMAT)
            .opt("-t", slot.tmux());
        if let Some(name) = &name {
            // tmux expands formats in a window name.
            command = command.opt("-n", name.to_format());
        }
        command = with_spawn_options(command, &options.cwd, &options.env, &options.command);
        let reply = self
            .command(command)
            .await
            .map_err(|e| e.not_found_as(TargetKind::NewWindow, &target.text))?;
        let (made, stored) = self.created(&reply.text())?;
        if let Some(name) = name.filter(|name| name.as_str() != stored) {
            (self.kill_window(&WindowTarget::Id(made.window).into())).await?;
            return Err(renamed(NameKind::Window, name.as_str(), &stored));
        }
        Ok(made)
    }

    /// Splits a pane, without selecting the new one.
    pub async fn split_pane(&self, options: &Split) -> Result<Created> {
        refuse_nul_in_spawn(
            options.cwd.as_deref(),
            &options.env,
            options.command.as_deref(),
        )?;
        self.gate_spawn(options.command.as_deref(), &options.env)?;
        let pane = self.resolve_pane(&options.target.parsed).await?;
        let mut command = Command::new("split-window")
            .flag("-d")
            .flag("-P")
            .opt("-F", CreatedRow::FORMAT)
            .opt("-t", pane.to_string());
        command = match options.direction {
            SplitDirection::Right => command.flag("-h"),
            SplitDirection::Left => command.flag("-h").flag("-b"),
            SplitDirection::Below => command.flag("-v"),
            SplitDirection::Above => command.flag("-v").flag("-b"),
        };
        if let Some(size) = &options.size {
            command = command.opt("-l", size);
        }
        command = with_spawn_options(command, &options.cwd, &options.env, &options.command);
        let reply = self
            .command(command)
            .await
            .map_err(|e| not_found_pane(e, &options.target.text))?;
        Ok(self.created(&reply.text())?.0)
    }

    /// Kills a session (its id `$1` or exact name), unless termpilot runs in
    /// one of its panes.
    pub async fn kill_session(&self, target: &Target<SessionTarget>) -> Result<Killed> {
        let session = self.pin_session(&target.parsed).await?;
        let listing = Command::new("list-panes")
            .flag("-s")
            .opt("-t", session.tmux())
            .opt("-F", PlaceRow::FORMAT);
        let killed = (self.panes_to_kill(listing, &target.text, TargetKind::Session)).await?;
        self.refuse_own(&killed, "kill")?;
        let kill = Command::new("kill-session").opt("-t", killed.session.to_string());
        self.kill(&killed, kill).await?;
        self.forget(&killed);
        self.await_client_gone(killed.session).await;
        Ok(killed)
    }

    /// Kills a window (its id `@2` or `session:window`), unless termpilot
    /// runs in one of its panes.
    pub async fn kill_window(&self, target: &Target<WindowTarget>) -> Result<Killed> {
        let window = self.pin_window(target.parsed.clone()).await?;
        let listing = Command::new("list-panes")
            .opt("-t", window.tmux())
            .opt("-F", PlaceRow::FORMAT);
        let killed = (self.panes_to_kill(listing, &target.text, TargetKind::Window)).await?;
        self.refuse_own(&killed, "kill")?;
        let window = killed
            .windows
            .first()
            .copied()
            .expect("a window was listed");
        let kill = Command::new("kill-window").opt("-t", window.to_string());
        self.kill(&killed, kill).await?;
        self.forget(&killed);
        Ok(killed)
    }

    /// Kills a pane (its id `%3` or `session:window.pane`), unless termpilot
    /// runs in it.
    pub async fn kill_pane(&self, target: &Target<PaneTarget>) -> Result<Killed> {
        let pane = self.resolve_pane(&target.parsed).await?;
        let reply = self
            .command(
                Command::new("display-message")
                    .flag("-p")
                    .opt("-t", pane.to_string())
                    .arg(KilledPaneRow::FORMAT),
            )
            .await
            .map_err(|e| not_found_pane(e, &target.text))?;
        let row = KilledPaneRow::parse_first("display-message", &reply)?;
        let killed = Killed {
            session: row.session,
            windows: if row.window_panes == 1 {
                vec![row.window]
            } else {
                Vec::new()
            },
            panes: vec![pane],
        };
        self.refuse_own(&killed, "kill")?;
        let kill = Command::new("kill-pane").opt("-t", pane.to_string());
        self.kill(&killed, kill)
            .await
            .map_err(|e| not_found_pane(e, &target.text))?;
        self.forget(&killed);
        Ok(killed)
    }

    /// What a kill of `target` removes: the panes `listing` lists, their
    /// windows and session.
    async fn panes_to_kill(
        &self,
        listing: Command,
        target: &str,
        kind: TargetKind,
    ) -> Result<Killed> {
        let reply = self
            .command(listing)
            .await
            .map_err(|e| e.not_found_as(kind, target))?;
        let mut killed = Killed {
            session: SessionId(0),
            windows: Vec::new(),
            panes: Vec::new(),
        };
        for row in PlaceRow::parse_all("list-panes", &reply)? {
            killed.session = row.session;
            if !killed.windows.contains(&row.window) {
                killed.windows.push(row.window);
            }
            killed.panes.push(row.pane);
        }
        if killed.panes.is_empty() {
            return Err(Error::not_found(kind, target));
        }
        Ok(killed)
    }

    fn refuse_own(&self, killed: &Killed, action: &'static str) -> Result<()> {
        killed
            .panes
            .iter()
            .try_for_each(|&pane| self.refuse_own_pane(pane, action))
    }

    pub(crate) fn refuse_own_pane(&self, pane: PaneId, action: &'static str) -> Result<()> {
        match self.own_pane() {
            Some(own) if own == pane => Err(Error::OwnPane { action, pane }),
            _ => Ok(()),
        }
    }

    /// Runs `kill`, with `killed`'s panes marked killed from before it is
    /// sent (waits on them learn of it as it happens, see
    /// [`Panes::killed`]), unless tmux refuses it.
    ///
    /// [`Panes::killed`]: crate::panes::Panes::killed
    async fn kill(&self, killed: &Killed, kill: Command) -> Result<()> {
        self.mark_killed(killed, true);
        let result = self.command(kill).await;
        // A reply lost with its connection says nothing: the kill may have
        // ended the session or the server.
        if let Err(e) = &result
            && !matches!(e, Error::Disconnected { .. } | Error::SessionEnded { .. })
        {
            self.mark_killed(killed, false);
        }
        result.map(drop)
    }

    fn mark_killed(&self, killed: &Killed, killing: bool) {
        for &pane in &killed.panes {
            self.shared.panes.mark_killed(pane, killing);
        }
    }

    fn forget(&self, killed: &Killed) {
        for &pane in &killed.panes {
            self.shared.panes.remove(pane);
            self.shared.gate.forget(pane);
        }
    }
}

/// Adds a new pane's directory, environment and command. The directory is
/// format escaped (tmux expands formats in `-c`); the environment and the
/// command are not expanded by tmux.
fn with_spawn_options(
    mut command: Command,
    cwd: &Option<String>,
    env: &[(String, String)],
    shell_command: &Option<String>,
) -> Command {
    if let Some(cwd) = cwd {
        command = command.opt("-c", escape_format(cwd));
    }
    for (key, value) in env {
        command = command.opt("-e", format!("{key}={value}"));
    }
    if let Some(shell_command) = shell_command {
        command = command.end_of_flags().arg(shell_command);
    }
    command
}

impl Engine {
    /// What a create command printed: the new objects, and the window's
    /// name as tmux stored it. The new pane's size is its journal's first.
    fn created(&self, text: &str) -> Result<(Created, String)> {
        let line = text.lines().next().unwrap_or_default();
        let row = CreatedRow::parse("new", line)?;
        self.shared
            .panes
            .learn_size(row.pane, row.width, row.height);
        let made = Created {
            session: row.session,
            window: row.window,
            pane: row.pane,
            window_index: row.window_index,
            session_name: row.session_name,
        };
        Ok((made, row.window_name))
    }
}

/// The error for a name tmux stored differently from how it was given: a
/// safety net behind [`termpilot_control::Name`]'s rules, for characters the
/// C library of tmux's host does not know (tmux escapes those).
fn renamed(kind: NameKind, asked: &str, stored: &str) -> Error {
    Error::InvalidArgument(format!(
        "{kind} name '{asked}' is refused: tmux would store it as '{stored}'; use letters, \
         digits, spaces and common punctuation"
    ))
}
