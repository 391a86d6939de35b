//! Typed operations on tmux: what the MCP tools call.

use std::borrow::Cow;
use std::ffi::OsString;

use termpilot_control::{
    Command, NameKind, PaneId, PaneTarget, Reply, SessionId, SessionTarget, Target, TargetKind,
    WindowId, WindowSlot, WindowTarget, escape_format,
};
use termpilot_keys::Key;

use crate::client;
use crate::cursor::Cursor;
use crate::engine::{Engine, call, not_found_pane, ok_reply};
use crate::error::{Error, Result};
use crate::format::tmux_format;
use crate::shell::hide_wrappers;
use crate::targets::{checked_name, refuse_nul_in_spawn};

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

/// Keystrokes for one pane.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Literal text, sent byte for byte.
    pub text: Option<String>,
    /// Keys pressed after the text.
    pub keys: Vec<Key>,
    /// Press Enter last.
    pub enter: bool,
}

/// How much history a capture includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scrollback {
    /// The visible screen only.
    None,
    /// This many lines above the screen, plus the screen.
    Lines(u32),
    /// All history, plus the screen.
    All,
}

/// The text of a pane.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The pane.
    pub pane: PaneId,
    /// Lines, wrapped lines joined, trailing spaces and trailing blank lines
    /// removed, `run_command`'s wrappers shown as the command lines typed.
    pub lines: Vec<String>,
    /// The pane's output position when the capture was taken.
    pub cursor: Cursor,
    /// Whether a full-screen program is on the alternate screen.
    pub alternate_screen: bool,
    /// Whether the pane is in copy mode or another mode.
    pub in_mode: bool,
    /// Lines of history the pane holds above the screen.
    pub history_size: u64,
    /// The most lines of history tmux keeps for the pane.
    pub history_limit: u64,
}

impl Capture {
    /// Whether tmux's history is full, so that lines above what it holds
    /// are gone from the pane (the journal may still have them). tmux drops
    /// the oldest tenth of the history when it reaches its limit, so a full
    /// history holds between nine tenths of the limit and the limit.
    pub fn history_full(&self) -> bool {
        self.history_limit > 0 && self.history_size * 10 >= self.history_limit * 9
    }
}

/// How long input waits for its reply on the pane's own client before it
/// takes the cursor from before it was sent (see `Engine::run_for_pane`).
const INPUT_REPLY_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

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

tmux_format! {
    /// The screen facts reported with a capture.
    struct CaptureFacts {
        alternate_screen: bool = "alternate_on",
        in_mode: bool = "pane_in_mode",
        history_size: Option<u64> = "history_size",
        history_limit: Option<u64> = "history_limit",
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
        let killed = (self.doomed(listing, &target.text, TargetKind::Session)).await?;
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
        let killed = (self.doomed(listing, &target.text, TargetKind::Window)).await?;
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

    /// Types into a pane: literal text, then keys, then Enter. Returns the
    /// pane's cursor from before the input.
    pub async fn send_input(&self, pane: PaneId, input: &Input) -> Result<Cursor> {
        self.refuse_own_pane(pane, "type into")?;
        let bytes = crate::gate::input_bytes(input);
        let commands = input_commands(pane, input);
        let cursor = self.type_unless_held(pane, &bytes, commands).await?;
        if let Some(text) = &input.text {
            self.shared.panes.record_typed(pane, cursor, text);
        }
        Ok(self.cursor(pane, cursor))
    }

    /// Pastes text into a pane through a tmux buffer, bracketed when the
    /// program asked for bracketed paste and `bracketed` is set. Returns the
    /// cursor from before the paste.
    pub async fn paste(
        &self,
        pane: PaneId,
        text: &str,
        bracketed: bool,
        enter: bool,
    ) -> Result<Cursor> {
        self.refuse_own_pane(pane, "paste into")?;
        let buffer = self.buffer_name();
        let commands = paste_commands(pane, &buffer, text, bracketed, enter)?;
        let bytes = crate::gate::paste_bytes(text, enter);
        let cursor = self.type_unless_held(pane, &bytes, commands).await?;
        self.shared.panes.record_typed(pane, cursor, text);
        Ok(self.cursor(pane, cursor))
    }

    /// A paste buffer name no other paste uses.
    pub(crate) fn buffer_name(&self) -> String {
        format!("termpilot-{}", self.shared.next_client_id().0)
    }

    /// Captures a pane's text, with the cursor at the moment of the capture
    /// (output after it is not in the capture). When the pane's client is
    /// behind (tmux holds output for it that it has not read yet), the
    /// capture runs on the quiet client and the cursor is the end of the
    /// output read before it: output printed after the capture still never
    /// comes before the cursor, but output just before it may follow it.
    pub async fn capture(&self, pane: PaneId, scrollback: Scrollback) -> Result<Capture> {
        let mut capture = self.capture_raw(pane, scrollback).await?;
        capture.lines = without_wrappers(capture.lines);
        Ok(capture)
    }

    /// [`Engine::capture`] with the screen as tmux shows it, wrappers and all.
    pub(crate) async fn capture_raw(
        &self,
        pane: PaneId,
        scrollback: Scrollback,
    ) -> Result<Capture> {
        let target = pane.to_string();
        let mut capture = Command::new("capture-pane")
            .flag("-p")
            .flag("-J")
            .opt("-t", &target);
        capture = match scrollback {
            Scrollback::None => capture,
            Scrollback::Lines(n) => capture.opt("-S", format!("-{n}")),
            Scrollback::All => capture.opt("-S", "-"),
        };
        let facts = Command::new("display-message")
            .flag("-p")
            .opt("-t", &target)
            .arg(CaptureFacts::FORMAT);
        let (body, facts, cursor) = self.capture_with_facts(pane, capture, facts).await?;
        let facts = CaptureFacts::parse_first("display-message", &facts)?;
        let mut lines: Vec<String> = body
            .lines
            .iter()
            .map(|line| String::from_utf8_lossy(line).trim_end().to_owned())
            .collect();
        while lines.last().is_some_and(|line| line.is_empty()) {
            lines.pop();
        }
        Ok(Capture {
            pane,
            lines,
            cursor: self.cursor(pane, cursor),
            alternate_screen: facts.alternate_screen,
            in_mode: facts.in_mode,
            history_size: facts.history_size.unwrap_or_default(),
            history_limit: facts.history_limit.unwrap_or_default(),
        })
    }

    /// Runs a `capture-pane` of `pane` and a `display-message` of its facts
    /// in one write, so that the two agree: on the pane's own client, or on
    /// the quiet client when that one is behind (its reply would wait behind
    /// output queued in tmux). Returns the capture's reply, the facts' reply
    /// and the journal offset the capture follows.
    pub(crate) async fn capture_with_facts(
        &self,
        pane: PaneId,
        capture: Command,
        facts: Command,
    ) -> Result<(Reply, Reply, u64)> {
        let client = self.client_for_pane(pane).await?;
        // Everything read so far was printed before the capture.
        let before = self.journal_end(pane);
        let target = pane.to_string();
        let mut answers = None;
        if !client.is_behind() {
            let calls = vec![
                call(capture.clone(), Some(pane))?,
                call(facts.clone(), None)?,
            ];
            let replies = client.send_many(calls).await.answers();
            // Too late: the reply waits behind output queued in tmux.
            answers = tokio::time::timeout(client::BEHIND, replies).await.ok();
        }
        let answers = match answers {
            Some(answers) => answers,
            None => {
                let quiet = self.quiet().await.unwrap_or(client);
                let calls = vec![call(capture, None)?, call(facts, None)?];
                quiet.call_many(calls).await
            }
        };
        let mut answers = answers.into_iter();
        let captured = answers.next().expect("two answers")?;
        let cursor = captured.cursor.unwrap_or(before);
        let body = ok_reply(captured).map_err(|e| not_found_pane(e, &target))?;
        let facts = ok_reply(answers.next().expect("two answers")?)?;
        Ok((body, facts, cursor))
    }

    /// The journal offset after the last output seen for `pane`.
    pub fn journal_end(&self, pane: PaneId) -> u64 {
        self.shared.panes.end(pane)
    }

    /// Reads a pane's journal: output from `from` on, and bytes lost before it.
    pub fn read_journal<R>(
        &self,
        pane: PaneId,
        f: impl FnOnce(&termpilot_journal::Journal) -> R,
    ) -> R {
        self.shared.panes.with_journal(pane, f)
    }

    /// A receiver that changes whenever `pane` prints.
    pub fn subscribe(&self, pane: PaneId) -> tokio::sync::watch::Receiver<u64> {
        self.shared.panes.subscribe(pane)
    }

    /// Runs commands about one pane on the client that carries its output,
    /// in one write; returns the cursor taken at the first reply.
    ///
    /// tmux runs a command as soon as it reads it, but writes the reply
    /// after all output it queued for the client before: while the client
    /// is behind, the reply (and the exact cursor) can be seconds away. Then
    /// the commands run on the quiet client, or the reply is given up after
    /// [`INPUT_REPLY_WAIT`], and the cursor is the end of the output read
    /// before they were sent: no later than the input, so a wait from it
    /// misses nothing the input caused (it may see output from just before).
    pub(crate) async fn run_for_pane(&self, pane: PaneId, commands: Vec<Command>) -> Result<u64> {
        self.forget_ready(pane);
        let client = self.client_for_pane(pane).await?;
        let before = self.journal_end(pane);
        let target = pane.to_string();
        if client.is_behind()
            && let Ok(quiet) = self.quiet().await
        {
            let calls = (commands.into_iter())
                .map(|command| call(command, None))
                .collect::<Result<Vec<_>>>()?;
            for answer in quiet.call_many(calls).await {
                ok_reply(answer?).map_err(|e| not_found_pane(e, &target))?;
            }
            return Ok(before);
        }
        let mut calls = Vec::with_capacity(commands.len());
        for (i, command) in commands.into_iter().enumerate() {
            calls.push(call(command, (i == 0).then_some(pane))?);
        }
        let replies = client.send_many(calls).await.answers();
        let Ok(answers) = tokio::time::timeout(INPUT_REPLY_WAIT, replies).await else {
            return Ok(before);
        };
        let mut cursor = None;
        for answer in answers {
            let answer = answer?;
            cursor = cursor.or(answer.cursor);
            ok_reply(answer).map_err(|e| not_found_pane(e, &target))?;
        }
        Ok(cursor.unwrap_or(before))
    }

    async fn doomed(&self, listing: Command, target: &str, kind: TargetKind) -> Result<Killed> {
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

/// Lines of a pane's text with `run_command`'s wrappers shown as the
/// command lines typed (a wrapper spans several lines).
pub(crate) fn without_wrappers(lines: Vec<String>) -> Vec<String> {
    let text = lines.join("\n");
    match hide_wrappers(&text) {
        Cow::Borrowed(_) => lines,
        Cow::Owned(shown) if shown.is_empty() => Vec::new(),
        Cow::Owned(shown) => shown.split('\n').map(str::to_owned).collect(),
    }
}

/// The tmux commands that type `input` into `pane`.
pub(crate) fn input_commands(pane: PaneId, input: &Input) -> Vec<Command> {
    let target = pane.to_string();
    let mut commands = Vec::new();
    if let Some(text) = input.text.as_deref().filter(|t| !t.is_empty()) {
        commands.push(
            Command::new("send-keys")
                .flag("-l")
                .opt("-t", &target)
                .end_of_flags()
                .arg(text),
        );
    }
    if !input.keys.is_empty() {
        let mut command = Command::new("send-keys").opt("-t", &target).end_of_flags();
        for key in &input.keys {
            command = command.arg(key.tmux_name());
        }
        commands.push(command);
    }
    if input.enter {
        commands.push(Command::new("send-keys").opt("-t", &target).arg("Enter"));
    }
    commands
}

/// The tmux commands that paste `text` into `pane` through `buffer`.
///
/// A bracketed paste refuses text holding a bracketed-paste delimiter: an
/// end-of-paste sequence (`ESC[201~`) would end the paste early and the
/// program would take the rest as typed keys (a shell runs each line), and
/// a start-of-paste sequence (`ESC[200~`) has no place inside a paste either.
pub(crate) fn paste_commands(
    pane: PaneId,
    buffer: &str,
    text: &str,
    bracketed: bool,
    enter: bool,
) -> Result<Vec<Command>> {
    if bracketed {
        refuse_paste_delimiters(text)?;
    }
    let target = pane.to_string();
    let mut paste = Command::new("paste-buffer")
        .flag("-d")
        .flag("-r")
        .opt("-b", buffer)
        .opt("-t", &target);
    if bracketed {
        paste = paste.flag("-p");
    }
    let mut commands = vec![
        Command::new("set-buffer")
            .opt("-b", buffer)
            .end_of_flags()
            .arg(text),
        paste,
    ];
    if enter {
        commands.push(Command::new("send-keys").opt("-t", &target).arg("Enter"));
    }
    Ok(commands)
}

/// Refuses text that holds `ESC[200~` or `ESC[201~`.
fn refuse_paste_delimiters(text: &str) -> Result<()> {
    for (sequence, what) in [("\x1b[201~", "end"), ("\x1b[200~", "start")] {
        if let Some(at) = text.find(sequence) {
            return Err(Error::InvalidArgument(format!(
                "text contains ESC[{}~ (the {what}-of-paste sequence) at byte {at}: a bracketed \
                 paste cannot carry it, since it would let the rest of the text out of the paste \
                 as typed keys; remove it (or paste with bracketed: false, where every line is \
                 typed as keys anyway)",
                &sequence[2..5],
            )));
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Shell, wrapper};

    fn lines(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_owned).collect()
    }

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

    #[test]
    fn a_wrapper_on_several_lines_is_shown_as_its_command() {
        let typed = wrapper(Shell::Bash, "make test", "tp0123456789abcdef");
        let screen = format!("$ {}\nok\n$", typed.replace('\n', "\n> "));
        assert_eq!(without_wrappers(lines(&screen)), ["$ make test", "ok", "$"]);
        let plain = lines("$ ls\na.txt\n\n$");
        assert_eq!(without_wrappers(plain.clone()), plain);
        assert!(without_wrappers(Vec::new()).is_empty());
    }

    #[test]
    fn keys_are_sent_by_their_tmux_names() {
        let pane = PaneId(3);
        let input = Input {
            text: Some("ls".into()),
            keys: vec!["^c".parse().unwrap(), "pgup".parse().unwrap()],
            enter: true,
        };
        let lines: Vec<String> = input_commands(pane, &input)
            .iter()
            .map(|command| String::from_utf8_lossy(&command.clone().build().unwrap()).into_owned())
            .collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        // `^c` and `pgup` go to tmux by their canonical names.
        assert!(lines[1].contains(r#""C\-c" "PageUp""#), "{lines:?}");
    }
}
