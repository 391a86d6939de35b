//! A small model of a tmux server: sessions, windows, panes and their
//! options, and the commands the engine sends, answered as tmux 3.3a
//! answers them (see the transcripts in `fixtures/`). Formats are expanded
//! from the model, so the fake does not depend on the order of the fields
//! the engine asks for.

use std::collections::{BTreeMap, HashMap};

use super::line::expand;

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
    pub(crate) fn ok(lines: Vec<String>) -> Exec {
        Exec {
            ok: true,
            lines: lines.into_iter().map(String::into_bytes).collect(),
            ..Exec::default()
        }
    }

    pub(crate) fn error(message: impl Into<String>) -> Exec {
        Exec {
            ok: false,
            lines: vec![message.into().into_bytes()],
            ..Exec::default()
        }
    }

    pub(crate) fn with(mut self, effects: Vec<Effect>) -> Exec {
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
    pub(crate) buffers: HashMap<String, String>,
    /// Control clients of the fake and the session each is attached to.
    pub(crate) clients: BTreeMap<usize, u32>,
    /// Non-control clients (people) attached, by session.
    pub(crate) people: Vec<u32>,
    /// Panes keep their program's exit (`remain-on-exit`).
    pub(crate) remain_on_exit: bool,
}

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

    pub(crate) fn new_window(
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

    pub(crate) fn new_pane(&mut self, window: u32, size: (u16, u16)) -> u32 {
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

    pub(crate) fn session_windows(&self, session: u32) -> impl Iterator<Item = &Window> {
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

    pub(crate) fn pane_ctx(&self, pane: u32) -> Ctx {
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

    pub(crate) fn window_ctx(&self, window: u32) -> Ctx {
        let w = &self.windows[&window];
        Ctx {
            session: Some(w.session),
            window: Some(window),
            pane: w.panes.first().copied(),
            client: None,
        }
    }
}
