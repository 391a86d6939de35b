//! A small model of a tmux server: sessions, windows, panes and their
//! options, and the commands the engine sends, answered as tmux 3.3a
//! answers them (see the transcripts in `fixtures/`). Formats are expanded
//! from the model, so the fake does not depend on the order of the fields
//! the engine asks for.

use std::collections::{BTreeMap, HashMap};

use super::line::{Cmd, expand};

/// What a pane was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// `send-keys -l TEXT`.
    Text(String),
    /// `send-keys KEY...`.
    Keys(Vec<String>),
    /// `paste-buffer`: the buffer's text, and whether the paste was bracketed.
    Paste { text: String, bracketed: bool },
}

/// What a pane prints in answer to input (a stand-in for its program).
pub(crate) type Program = Box<dyn FnMut(&Input) -> Vec<u8> + Send>;

pub(crate) struct Pane {
    pub(crate) id: u32,
    pub(crate) window: u32,
    pub(crate) dead: bool,
    pub(crate) in_mode: bool,
    pub(crate) alternate: bool,
    pub(crate) pid: u32,
    pub(crate) command: String,
    pub(crate) cwd: String,
    pub(crate) width: u16,
    pub(crate) height: u16,
    /// What `capture-pane` shows: the history, then the screen.
    pub(crate) history: Vec<String>,
    pub(crate) screen: Vec<String>,
    pub(crate) options: HashMap<String, String>,
    /// Everything sent to the pane, in order.
    pub(crate) inputs: Vec<Input>,
    pub(crate) program: Option<Program>,
}

pub(crate) struct Window {
    pub(crate) id: u32,
    pub(crate) session: u32,
    pub(crate) index: u32,
    pub(crate) name: String,
    pub(crate) panes: Vec<u32>,
}

pub(crate) struct Session {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) created: u64,
    pub(crate) windows: Vec<u32>,
}

/// Who hears about a change.
#[derive(Debug, Clone, Copy)]
pub(crate) enum To {
    All,
    Attached(u32),
}

/// What a command changed beyond its reply, applied to the connections by
/// the fake after the reply is written.
pub(crate) enum Effect {
    /// A notification line.
    Notify(To, String),
    /// A pane printed this.
    Output(u32, Vec<u8>),
    /// The session ended: its control clients get `%exit` and close.
    SessionGone(u32),
    /// The last session ended and the server exited with it.
    ServerGone,
    /// `wait-for -S`.
    Signal(String),
    /// `refresh-client -A %N:continue` or `:pause` from the issuing client.
    Flow { pane: u32, paused: bool },
}

/// A command's reply and what it changed.
#[derive(Default)]
pub(crate) struct Exec {
    pub(crate) ok: bool,
    pub(crate) lines: Vec<Vec<u8>>,
    /// Lines written inside the reply block (`%pause`, `%continue`).
    pub(crate) inside: Vec<Vec<u8>>,
    pub(crate) effects: Vec<Effect>,
}

impl Exec {
    fn ok(lines: Vec<String>) -> Exec {
        Exec {
            ok: true,
            lines: lines.into_iter().map(String::into_bytes).collect(),
            ..Exec::default()
        }
    }

    fn error(message: impl Into<String>) -> Exec {
        Exec {
            ok: false,
            lines: vec![message.into().into_bytes()],
            ..Exec::default()
        }
    }

    fn with(mut self, effects: Vec<Effect>) -> Exec {
        self.effects.extend(effects);
        self
    }
}

/// What a format is expanded against.
#[derive(Default, Clone, Copy)]
pub(crate) struct Ctx {
    pub(crate) session: Option<u32>,
    pub(crate) window: Option<u32>,
    pub(crate) pane: Option<u32>,
    /// A control client, for `list-clients`.
    pub(crate) client: Option<u32>,
}

/// One tmux server.
pub(crate) struct Server {
    pub(crate) pid: u32,
    pub(crate) sessions: BTreeMap<u32, Session>,
    pub(crate) windows: BTreeMap<u32, Window>,
    pub(crate) panes: BTreeMap<u32, Pane>,
    next: [u32; 3],
    pub(crate) global: HashMap<String, String>,
    buffers: HashMap<String, String>,
    /// Control clients of the fake and the session each is attached to.
    pub(crate) clients: BTreeMap<usize, u32>,
    /// Non-control clients (people) attached, by session.
    pub(crate) people: Vec<u32>,
    /// Panes keep their program's exit (`remain-on-exit`).
    pub(crate) remain_on_exit: bool,
}

/// The commands the model answers; a line naming any other fails to parse.
pub(crate) const KNOWN: &[&str] = &[
    "display-message",
    "list-sessions",
    "list-clients",
    "list-panes",
    "capture-pane",
    "send-keys",
    "set-buffer",
    "paste-buffer",
    "set-option",
    "kill-session",
    "kill-window",
    "kill-pane",
    "new-window",
    "split-window",
    "refresh-client",
    "wait-for",
    "kill-server",
];

pub(crate) const SOCKET_PATH: &str = "/tmp/tmux-1000/fake";
const CREATED: u64 = 1_795_400_000;

impl Server {
    pub(crate) fn new(pid: u32) -> Server {
        Server {
            pid,
            sessions: BTreeMap::new(),
            windows: BTreeMap::new(),
            panes: BTreeMap::new(),
            next: [0; 3],
            global: HashMap::new(),
            buffers: HashMap::new(),
            clients: BTreeMap::new(),
            people: Vec::new(),
            remain_on_exit: false,
        }
    }

    /// Creates a session with one window and one pane; returns the session.
    pub(crate) fn new_session(&mut self, name: Option<&str>, size: (u16, u16)) -> u32 {
        let id = self.take_id(0);
        let name = name.map_or_else(|| id.to_string(), str::to_owned);
        self.sessions.insert(
            id,
            Session {
                id,
                name,
                created: CREATED + u64::from(id),
                windows: Vec::new(),
            },
        );
        self.new_window(id, None, None, size);
        id
    }

    fn new_window(
        &mut self,
        session: u32,
        index: Option<u32>,
        name: Option<&str>,
        size: (u16, u16),
    ) -> u32 {
        let id = self.take_id(1);
        let index = index.unwrap_or_else(|| {
            let used: Vec<u32> = self.session_windows(session).map(|w| w.index).collect();
            (0..).find(|i| !used.contains(i)).expect("a free index")
        });
        self.windows.insert(
            id,
            Window {
                id,
                session,
                index,
                name: name.unwrap_or("sh").to_owned(),
                panes: Vec::new(),
            },
        );
        let session = self.sessions.get_mut(&session).expect("session exists");
        session.windows.push(id);
        self.new_pane(id, size);
        id
    }

    fn new_pane(&mut self, window: u32, size: (u16, u16)) -> u32 {
        let id = self.take_id(2);
        self.panes.insert(
            id,
            Pane {
                id,
                window,
                dead: false,
                in_mode: false,
                alternate: false,
                pid: self.pid + 1 + id,
                command: "sh".into(),
                cwd: "/home/user".into(),
                width: size.0,
                height: size.1,
                history: Vec::new(),
                screen: vec!["$".into()],
                options: HashMap::new(),
                inputs: Vec::new(),
                program: None,
            },
        );
        self.windows
            .get_mut(&window)
            .expect("window exists")
            .panes
            .push(id);
        id
    }

    fn take_id(&mut self, kind: usize) -> u32 {
        let id = self.next[kind];
        self.next[kind] += 1;
        id
    }

    fn session_windows(&self, session: u32) -> impl Iterator<Item = &Window> {
        self.windows.values().filter(move |w| w.session == session)
    }

    /// The session of a pane.
    pub(crate) fn pane_session(&self, pane: u32) -> Option<u32> {
        let window = self.panes.get(&pane)?.window;
        Some(self.windows.get(&window)?.session)
    }

    /// The first pane of a session's first window.
    pub(crate) fn first_pane(&self, session: u32) -> Option<u32> {
        let window = *self.sessions.get(&session)?.windows.first()?;
        self.windows.get(&window)?.panes.first().copied()
    }

    pub(crate) fn session_named(&self, name: &str) -> Option<u32> {
        self.sessions
            .values()
            .find(|s| s.name == name)
            .map(|s| s.id)
    }

    /// The context of a session: its first window and pane.
    pub(crate) fn session_ctx(&self, session: u32) -> Ctx {
        let pane = self.first_pane(session);
        Ctx {
            session: Some(session),
            window: pane.and_then(|p| self.panes.get(&p)).map(|p| p.window),
            pane,
            client: None,
        }
    }

    fn pane_ctx(&self, pane: u32) -> Ctx {
        let window = self.panes[&pane].window;
        Ctx {
            session: Some(self.windows[&window].session),
            window: Some(window),
            pane: Some(pane),
            client: None,
        }
    }

    /// The value of one format field.
    pub(crate) fn field(&self, ctx: Ctx, name: &str) -> String {
        let session = ctx.session.and_then(|s| self.sessions.get(&s));
        let window = ctx.window.and_then(|w| self.windows.get(&w));
        let pane = ctx.pane.and_then(|p| self.panes.get(&p));
        let flag = |b: bool| if b { "1" } else { "0" }.to_owned();
        let value = match name {
            "pid" => Some(self.pid.to_string()),
            "socket_path" => Some(SOCKET_PATH.to_owned()),
            "version" => Some("3.3a".to_owned()),
            "client_control_mode" => ctx.client.map(|_| "1".to_owned()),
            "client_name" => ctx.client.map(|c| format!("client-{c}")),
            "session_id" => session.map(|s| format!("${}", s.id)),
            "session_name" => session.map(|s| s.name.clone()),
            "session_windows" => session.map(|s| s.windows.len().to_string()),
            "session_created" => session.map(|s| s.created.to_string()),
            "session_attached" => session.map(|s| {
                let control = self.clients.values().filter(|&&c| c == s.id).count();
                let people = self.people.iter().filter(|&&c| c == s.id).count();
                (control + people).to_string()
            }),
            "window_id" => window.map(|w| format!("@{}", w.id)),
            "window_index" => window.map(|w| w.index.to_string()),
            "window_name" => window.map(|w| w.name.clone()),
            "window_panes" => window.map(|w| w.panes.len().to_string()),
            "window_active" => window.map(|w| {
                let first = self.sessions[&w.session].windows.first();
                flag(first == Some(&w.id))
            }),
            "pane_id" => pane.map(|p| format!("%{}", p.id)),
            "pane_index" => pane.and_then(|p| {
                let w = self.windows.get(&p.window)?;
                Some(w.panes.iter().position(|&x| x == p.id)?.to_string())
            }),
            "pane_active" => {
                pane.map(|p| flag(self.windows[&p.window].panes.first() == Some(&p.id)))
            }
            "pane_width" => pane.map(|p| p.width.to_string()),
            "pane_height" => pane.map(|p| p.height.to_string()),
            "pane_dead" => pane.map(|p| flag(p.dead)),
            "pane_in_mode" => pane.map(|p| flag(p.in_mode)),
            "alternate_on" => pane.map(|p| flag(p.alternate)),
            "pane_pid" => pane.map(|p| p.pid.to_string()),
            "pane_current_command" => pane.map(|p| p.command.clone()),
            "pane_current_path" => pane.map(|p| p.cwd.clone()),
            "pane_title" => pane.map(|_| "fake".to_owned()),
            "pane_tty" => pane.map(|p| format!("/dev/pts/{}", p.id)),
            "history_size" => pane.map(|p| p.history.len().to_string()),
            "history_limit" => Some(
                self.global
                    .get("history-limit")
                    .cloned()
                    .unwrap_or_else(|| "2000".into()),
            ),
            option if option.starts_with('@') => pane
                .and_then(|p| p.options.get(option))
                .or_else(|| self.global.get(option))
                .cloned(),
            _ => None,
        };
        value.unwrap_or_default()
    }

    pub(crate) fn format(&self, ctx: Ctx, format: &str) -> String {
        expand(format, &|name| self.field(ctx, name))
    }

    /// Resolves a target to a context: `%N`, `@N`, `$N`, `$N:`, `NAME:`,
    /// `$N:IDX`, `$N:@W`, `$N:IDX.P`. `None` when it names nothing.
    pub(crate) fn resolve(&self, target: &str) -> Option<Ctx> {
        if let Some(pane) = target.strip_prefix('%') {
            let pane: u32 = pane.parse().ok()?;
            return self.panes.contains_key(&pane).then(|| self.pane_ctx(pane));
        }
        if let Some(window) = target.strip_prefix('@') {
            let window = self.windows.get(&window.parse().ok()?)?;
            return Some(self.window_ctx(window.id));
        }
        let (session, rest) = target.split_once(':').unwrap_or((target, ""));
        let session = match session.strip_prefix('$') {
            Some(id) => id
                .parse()
                .ok()
                .filter(|id| self.sessions.contains_key(id))?,
            None => self.session_named(session.trim_start_matches('='))?,
        };
        if rest.is_empty() {
            return Some(self.session_ctx(session));
        }
        let (window, pane) = rest.split_once('.').unwrap_or((rest, ""));
        let window = match window.strip_prefix('@') {
            Some(id) => self.windows.get(&id.parse().ok()?)?,
            None if window.is_empty() => {
                self.windows.get(self.sessions[&session].windows.first()?)?
            }
            None => match window.parse::<u32>() {
                Ok(index) => self.session_windows(session).find(|w| w.index == index)?,
                Err(_) => {
                    let name = window.trim_start_matches('=');
                    self.session_windows(session).find(|w| w.name == name)?
                }
            },
        };
        if window.session != session {
            return None;
        }
        if pane.is_empty() {
            return Some(self.window_ctx(window.id));
        }
        let pane = *window.panes.get(pane.parse::<usize>().ok()?)?;
        Some(self.pane_ctx(pane))
    }

    fn window_ctx(&self, window: u32) -> Ctx {
        let w = &self.windows[&window];
        Ctx {
            session: Some(w.session),
            window: Some(window),
            pane: w.panes.first().copied(),
            client: None,
        }
    }

    /// Runs one command from a control client attached to `session`.
    pub(crate) fn execute(&mut self, session: Option<u32>, cmd: &Cmd) -> Exec {
        let here = session.map(|s| self.session_ctx(s)).unwrap_or_default();
        match cmd.name.as_str() {
            "display-message" => self.display(cmd, here),
            "list-sessions" => self.list_sessions(cmd),
            "list-clients" => self.list_clients(cmd),
            "list-panes" => self.list_panes(cmd),
            "capture-pane" => self.capture(cmd),
            "send-keys" => self.send_keys(cmd),
            "set-buffer" => self.set_buffer(cmd),
            "paste-buffer" => self.paste_buffer(cmd),
            "set-option" => self.set_option(cmd),
            "kill-session" => self.kill_session(cmd),
            "kill-window" => self.kill_window(cmd),
            "kill-pane" => self.kill_pane(cmd),
            "new-window" => self.new_window_cmd(cmd),
            "split-window" => self.split_window(cmd),
            "refresh-client" => refresh_client(cmd),
            "wait-for" if cmd.has('S') => {
                let channel = cmd.args.first().cloned().unwrap_or_default();
                Exec::ok(Vec::new()).with(vec![Effect::Signal(channel)])
            }
            "kill-server" => Exec::ok(Vec::new()).with(vec![Effect::ServerGone]),
            name => Exec::error(format!("parse error: unknown command: {name}")),
        }
    }

    fn display(&self, cmd: &Cmd, here: Ctx) -> Exec {
        // tmux prints the message with empty fields when the target names
        // nothing (see `replies.tx`).
        let ctx = match cmd.opt('t') {
            Some(target) => self.resolve(target).unwrap_or_default(),
            None => here,
        };
        let format = cmd.args.first().map_or("", String::as_str);
        Exec::ok(vec![self.format(ctx, format)])
    }

    fn list_sessions(&self, cmd: &Cmd) -> Exec {
        let format = cmd.opt('F').unwrap_or("#{session_name}");
        let lines = self
            .sessions
            .keys()
            .map(|&s| self.format(self.session_ctx(s), format))
            .collect();
        Exec::ok(lines)
    }

    fn list_clients(&self, cmd: &Cmd) -> Exec {
        let format = cmd.opt('F').unwrap_or("#{client_name}");
        let lines = self
            .clients
            .iter()
            .map(|(&conn, &session)| {
                let ctx = Ctx {
                    client: Some(conn as u32),
                    ..self.session_ctx(session)
                };
                self.format(ctx, format)
            })
            .collect();
        Exec::ok(lines)
    }

    fn list_panes(&self, cmd: &Cmd) -> Exec {
        let format = cmd.opt('F').unwrap_or("#{pane_id}");
        let panes: Vec<u32> = if cmd.has('a') {
            self.panes.keys().copied().collect()
        } else {
            let Some(ctx) = self.resolve(cmd.target()) else {
                let kind = if cmd.has('s') { "session" } else { "window" };
                return Exec::error(format!("can't find {kind}: {}", cmd.target()));
            };
            self.panes
                .values()
                .filter(|p| match cmd.has('s') {
                    true => self.windows[&p.window].session == ctx.session.unwrap_or(u32::MAX),
                    false => Some(p.window) == ctx.window,
                })
                .map(|p| p.id)
                .collect()
        };
        let lines = panes
            .into_iter()
            .map(|p| self.format(self.pane_ctx(p), format))
            .collect();
        Exec::ok(lines)
    }

    fn pane_of(&self, cmd: &Cmd) -> Result<u32, Exec> {
        self.resolve(cmd.target())
            .and_then(|ctx| ctx.pane)
            .ok_or_else(|| Exec::error(format!("can't find pane: {}", cmd.target())))
    }

    fn capture(&self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => &self.panes[&pane],
            Err(error) => return error,
        };
        let mut lines: Vec<String> = match cmd.opt('S') {
            Some("-") => pane.history.clone(),
            Some(start) => match start.parse::<i64>() {
                Ok(n) if n < 0 => {
                    let keep = (n.unsigned_abs() as usize).min(pane.history.len());
                    pane.history[pane.history.len() - keep..].to_vec()
                }
                _ => Vec::new(),
            },
            None => Vec::new(),
        };
        lines.extend(pane.screen.iter().cloned());
        if cmd.opt('E') == Some("0") {
            lines.truncate(pane.history.len().min(lines.len()) + 1);
        }
        Exec::ok(lines)
    }

    fn send_keys(&mut self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let input = match cmd.has('l') {
            true => Input::Text(cmd.args.join(" ")),
            false => Input::Keys(cmd.args.clone()),
        };
        self.give(pane, input)
    }

    /// Records input to a pane and lets its program answer.
    fn give(&mut self, pane: u32, input: Input) -> Exec {
        let entry = self.panes.get_mut(&pane).expect("pane exists");
        let printed = entry.program.as_mut().map(|program| program(&input));
        entry.inputs.push(input);
        let effects = printed
            .filter(|bytes| !bytes.is_empty())
            .map(|bytes| Effect::Output(pane, bytes));
        Exec::ok(Vec::new()).with(effects.into_iter().collect())
    }

    fn set_buffer(&mut self, cmd: &Cmd) -> Exec {
        let name = cmd.opt('b').unwrap_or("buffer0").to_owned();
        self.buffers.insert(name, cmd.args.join(" "));
        Exec::ok(Vec::new())
    }

    fn paste_buffer(&mut self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let name = cmd.opt('b').unwrap_or("buffer0");
        let Some(text) = self.buffers.get(name).cloned() else {
            return Exec::error(format!("no buffer {name}"));
        };
        if cmd.has('d') {
            self.buffers.remove(name);
        }
        let bracketed = cmd.has('p');
        self.give(pane, Input::Paste { text, bracketed })
    }

    fn set_option(&mut self, cmd: &Cmd) -> Exec {
        let name = cmd.args.first().cloned().unwrap_or_default();
        let value = cmd.args.get(1).cloned();
        if cmd.has('g') {
            match value {
                Some(value) => self.global.insert(name, value),
                None => self.global.remove(&name),
            };
            return Exec::ok(Vec::new());
        }
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let options = &mut self.panes.get_mut(&pane).expect("pane exists").options;
        match (cmd.has('u'), value) {
            (false, Some(value)) => options.insert(name, value),
            _ => options.remove(&name),
        };
        Exec::ok(Vec::new())
    }

    fn kill_session(&mut self, cmd: &Cmd) -> Exec {
        match self.resolve(cmd.target()).and_then(|ctx| ctx.session) {
            Some(session) => Exec::ok(Vec::new()).with(self.remove_session(session)),
            None => Exec::error(format!("can't find session: {}", cmd.target())),
        }
    }

    fn kill_window(&mut self, cmd: &Cmd) -> Exec {
        match self.resolve(cmd.target()).and_then(|ctx| ctx.window) {
            Some(window) => Exec::ok(Vec::new()).with(self.remove_window(window)),
            None => Exec::error(format!("can't find window: {}", cmd.target())),
        }
    }

    fn kill_pane(&mut self, cmd: &Cmd) -> Exec {
        match self.pane_of(cmd) {
            Ok(pane) => Exec::ok(Vec::new()).with(self.remove_pane(pane)),
            Err(error) => error,
        }
    }

    /// Removes a pane, its window when it was the last, and so on up.
    pub(crate) fn remove_pane(&mut self, pane: u32) -> Vec<Effect> {
        let Some(entry) = self.panes.remove(&pane) else {
            return Vec::new();
        };
        let window = self.windows.get_mut(&entry.window).expect("window exists");
        window.panes.retain(|&p| p != pane);
        if window.panes.is_empty() {
            let id = window.id;
            return self.remove_window(id);
        }
        let line = format!(
            "%layout-change @{} 0000,80x24,0,0,{} 0000,80x24,0,0,{} *",
            window.id, window.panes[0], window.panes[0]
        );
        vec![Effect::Notify(To::Attached(window.session), line)]
    }

    fn remove_window(&mut self, window: u32) -> Vec<Effect> {
        let Some(entry) = self.windows.remove(&window) else {
            return Vec::new();
        };
        for pane in &entry.panes {
            self.panes.remove(pane);
        }
        let session = self
            .sessions
            .get_mut(&entry.session)
            .expect("session exists");
        session.windows.retain(|&w| w != window);
        if session.windows.is_empty() {
            let id = session.id;
            return self.remove_session(id);
        }
        // tmux 3.3a unlinks a killed window before closing it, so even the
        // clients of its own session hear of an unlinked window.
        vec![Effect::Notify(
            To::All,
            format!("%unlinked-window-close @{window}"),
        )]
    }

    pub(crate) fn remove_session(&mut self, session: u32) -> Vec<Effect> {
        let Some(entry) = self.sessions.remove(&session) else {
            return Vec::new();
        };
        for window in entry.windows {
            if let Some(window) = self.windows.remove(&window) {
                for pane in window.panes {
                    self.panes.remove(&pane);
                }
            }
        }
        self.people.retain(|&s| s != session);
        let mut effects = vec![
            Effect::Notify(To::All, "%sessions-changed".into()),
            Effect::SessionGone(session),
        ];
        if self.sessions.is_empty() {
            effects.push(Effect::ServerGone);
        }
        effects
    }

    fn new_window_cmd(&mut self, cmd: &Cmd) -> Exec {
        let (session, index) = match cmd.target().split_once(':') {
            Some((session, index)) => (session, index.parse().ok()),
            None => (cmd.target(), None),
        };
        let Some(session) = self.resolve(&format!("{session}:")).and_then(|c| c.session) else {
            return Exec::error(format!("can't find session: {session}"));
        };
        if let Some(index) = index
            && self.session_windows(session).any(|w| w.index == index)
        {
            return Exec::error(format!("index {index} in use"));
        }
        let name = cmd.opt('n').map(|n| expand(n, &|_| String::new()));
        let window = self.new_window(session, index, name.as_deref(), (80, 24));
        let ctx = self.window_ctx(window);
        let line = self.format(
            ctx,
            cmd.opt('F')
                .unwrap_or("#{session_name}:#{window_index}.#{pane_index}"),
        );
        Exec::ok(vec![line]).with(vec![Effect::Notify(
            To::Attached(session),
            format!("%window-add @{window}"),
        )])
    }

    fn split_window(&mut self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let window = self.panes[&pane].window;
        let new = self.new_pane(window, (40, 24));
        let ctx = self.pane_ctx(new);
        let line = self.format(ctx, cmd.opt('F').unwrap_or("#{pane_id}"));
        let session = self.windows[&window].session;
        let layout = format!("%layout-change @{window} 0000,80x24,0,0 0000,80x24,0,0 *");
        Exec::ok(vec![line]).with(vec![Effect::Notify(To::Attached(session), layout)])
    }
}

/// `refresh-client`: flow control of a pane (`-A %N:continue`); other
/// forms are accepted and do nothing.
fn refresh_client(cmd: &Cmd) -> Exec {
    let Some(spec) = cmd.opt('A') else {
        return Exec::ok(Vec::new());
    };
    let Some((pane, action)) = spec.split_once(':') else {
        return Exec::error(format!("bad pane flag: {spec}"));
    };
    let Some(id) = pane.strip_prefix('%').and_then(|p| p.parse().ok()) else {
        return Exec::error(format!("unknown pane: {pane}"));
    };
    let paused = match action {
        "pause" => true,
        "continue" | "on" => false,
        _ => return Exec::error(format!("bad pane flag: {spec}")),
    };
    let word = if paused { "pause" } else { "continue" };
    let mut exec = Exec::ok(Vec::new()).with(vec![Effect::Flow { pane: id, paused }]);
    // tmux writes the flow notification inside the command's own reply
    // (see `pause.tx`).
    exec.inside.push(format!("%{word} %{id}").into_bytes());
    exec
}
