//! The fake's side of its connections: what each client is owed, the
//! reply blocks and notifications written to it, and the one-shot commands.

use std::collections::{HashMap, VecDeque};

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::line::{Cmd, escape_output, parse_cmd};
use super::model::{self, Effect, Exec, Server, To};
use super::replay::Transcript;
use super::{Act, Hook, Response, RunHook};
use crate::transport::OneShot;

pub(super) enum Out {
    Bytes(Vec<u8>),
    Close,
}

/// One control client's connection, as the fake sees it.
pub(crate) struct Conn {
    /// The arguments after `tmux -C`.
    pub(crate) args: Vec<String>,
    /// The session the client is attached to (model connections).
    pub(crate) session: Option<u32>,
    /// Every line the client wrote, without its newline.
    pub(crate) lines: Vec<Vec<u8>>,
    /// When it was opened and closed (tokio time).
    pub(crate) opened: Instant,
    pub(crate) closed: Option<Instant>,
    /// `%exit` was written.
    pub(crate) exited: bool,
    pub(super) out: mpsc::UnboundedSender<Out>,
    /// Set once the connection closed.
    pub(super) done: watch::Sender<bool>,
    /// Panes whose output tmux does not send this client now.
    pub(super) paused: Vec<u32>,
    /// The client set `pause-after`: output comes as `%extended-output`.
    pub(super) extended: bool,
    /// The client set `no-output`: tmux sends it no pane output.
    pub(crate) no_output: bool,
    /// A transcript plays the far end, not the model.
    pub(super) replay: bool,
}

impl Conn {
    pub(crate) fn is_open(&self) -> bool {
        self.closed.is_none()
    }

    pub(super) fn push(&self, bytes: impl Into<Vec<u8>>) {
        let _ = self.out.send(Out::Bytes(bytes.into()));
    }

    pub(super) fn close(&self) {
        let _ = self.out.send(Out::Close);
    }

    pub(super) fn is_model(&self) -> bool {
        !self.replay && self.is_open()
    }
}

/// A `wait-for` channel.
#[derive(Default)]
pub(super) struct Channel {
    /// Signalled with nobody waiting: the next wait ends at once.
    pub(super) latched: bool,
    pub(super) waiters: Vec<oneshot::Sender<bool>>,
}

/// Everything the fake knows, behind one lock.
pub(super) struct State {
    pub(super) server: Option<Server>,
    pub(super) next_pid: u32,
    pub(super) number: u64,
    pub(super) started: Instant,
    pub(super) conns: Vec<Conn>,
    pub(super) hooks: Vec<Hook>,
    pub(super) run_hooks: Vec<RunHook>,
    pub(super) runs: Vec<Vec<String>>,
    pub(super) scripts: VecDeque<Transcript>,
    pub(super) failures: VecDeque<String>,
    pub(super) mismatches: Vec<String>,
    pub(super) channels: HashMap<String, Channel>,
    pub(super) hold_exits: bool,
    pub(super) connect_timeout: Option<std::time::Duration>,
    /// How long every one-shot command takes before it answers.
    pub(super) run_delay: std::time::Duration,
}

impl State {
    pub(super) fn new() -> State {
        State {
            server: None,
            next_pid: 1000,
            number: 260,
            started: Instant::now(),
            conns: Vec::new(),
            hooks: Vec::new(),
            run_hooks: Vec::new(),
            runs: Vec::new(),
            scripts: VecDeque::new(),
            failures: VecDeque::new(),
            mismatches: Vec::new(),
            channels: HashMap::new(),
            hold_exits: false,
            connect_timeout: None,
            run_delay: std::time::Duration::ZERO,
        }
    }

    pub(super) fn start_server(&mut self) -> &mut Server {
        let pid = self.next_pid;
        self.next_pid += 1000;
        self.server.insert(Server::new(pid))
    }

    /// Writes one reply block with flags 1 to `conn`.
    pub(super) fn block(&mut self, conn: usize, ok: bool, lines: &[Vec<u8>], inside: &[Vec<u8>]) {
        self.number += 1;
        let guard = self.guard(self.number, 1);
        let mut bytes = format!("%begin {guard}\n").into_bytes();
        for line in lines.iter().chain(inside) {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        let end = if ok { "%end" } else { "%error" };
        bytes.extend_from_slice(format!("{end} {guard}\n").as_bytes());
        self.conns[conn].push(bytes);
    }

    fn guard(&self, number: u64, flags: u32) -> String {
        let time = 1_795_400_000 + self.started.elapsed().as_secs();
        format!("{time} {number} {flags}")
    }

    /// Runs one command of a line; returns whether the line goes on.
    pub(super) fn run_command(&mut self, conn: usize, cmd: &Cmd) -> bool {
        let response = self
            .hooks
            .iter_mut()
            .find_map(|hook| hook(cmd))
            .unwrap_or(Response::act(Act::Model));
        if !response.before.is_empty() {
            self.conns[conn].push(response.before);
        }
        let ok = match response.act {
            Act::Hang => return false,
            Act::Die => {
                self.conns[conn].close();
                return false;
            }
            Act::Ok(lines) => {
                let lines: Vec<Vec<u8>> = lines.into_iter().map(String::into_bytes).collect();
                self.block(conn, true, &lines, &[]);
                true
            }
            Act::Error(message) => {
                self.block(conn, false, &[message.into_bytes()], &[]);
                false
            }
            Act::Model => {
                let session = self.conns[conn].session;
                let exec = match self.server.as_mut() {
                    Some(server) => server.execute(session, cmd),
                    None => Exec {
                        ok: false,
                        lines: vec![b"server exited unexpectedly".to_vec()],
                        ..Exec::default()
                    },
                };
                self.block(conn, exec.ok, &exec.lines, &exec.inside);
                self.apply(Some(conn), exec.effects);
                exec.ok
            }
        };
        if !response.after.is_empty() {
            self.conns[conn].push(response.after);
        }
        ok
    }

    /// Applies what a command (of client `from`, if any) changed.
    pub(super) fn apply(&mut self, from: Option<usize>, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Notify(to, line) => {
                    for conn in self.conns.iter().filter(|c| c.is_model()) {
                        let hears = match to {
                            To::All => true,
                            To::Attached(session) => conn.session == Some(session),
                        };
                        if hears {
                            conn.push(format!("{line}\n"));
                        }
                    }
                }
                Effect::Output(pane, data) => self.route_output(pane, &data),
                Effect::SessionGone(session) => {
                    let hold = self.hold_exits;
                    for conn in self.conns.iter_mut().filter(|c| c.is_model()) {
                        if conn.session == Some(session) && !conn.exited {
                            conn.exited = true;
                            conn.push("%exit\n");
                            if !hold {
                                conn.close();
                            }
                        }
                    }
                }
                Effect::ServerGone => self.server_gone(true),
                Effect::Signal(channel) => self.signal(&channel),
                Effect::Flow { pane, paused } => {
                    if let Some(conn) = from.map(|c| &mut self.conns[c]) {
                        conn.paused.retain(|&p| p != pane);
                        if paused {
                            conn.paused.push(pane);
                        }
                    }
                }
            }
        }
    }

    pub(super) fn route_output(&mut self, pane: u32, data: &[u8]) {
        let Some(session) = self.server.as_ref().and_then(|s| s.pane_session(pane)) else {
            return;
        };
        let escaped = escape_output(data);
        for conn in self.conns.iter().filter(|c| c.is_model()) {
            if conn.session != Some(session) || conn.paused.contains(&pane) || conn.no_output {
                continue;
            }
            let mut line = match conn.extended {
                true => format!("%extended-output %{pane} 0 : ").into_bytes(),
                false => format!("%output %{pane} ").into_bytes(),
            };
            line.extend_from_slice(&escaped);
            line.push(b'\n');
            conn.push(line);
        }
    }

    pub(super) fn server_gone(&mut self, exit: bool) {
        self.server = None;
        for conn in self.conns.iter_mut().filter(|c| c.is_model()) {
            if exit && !conn.exited {
                conn.exited = true;
                conn.push("%exit\n");
            }
            conn.close();
        }
        for channel in self.channels.values_mut() {
            for waiter in channel.waiters.drain(..) {
                let _ = waiter.send(false);
            }
        }
    }

    fn signal(&mut self, channel: &str) {
        let channel = self.channels.entry(channel.to_owned()).or_default();
        channel.waiters.retain(|w| !w.is_closed());
        if channel.waiters.is_empty() {
            channel.latched = true;
        }
        for waiter in channel.waiters.drain(..) {
            let _ = waiter.send(true);
        }
    }

    /// Starts or attaches the client of connection `conn`, as tmux does for
    /// the command on its command line.
    pub(super) fn connect(
        &mut self,
        conn: usize,
        args: &[String],
    ) -> std::result::Result<(), String> {
        // Commands before the last on the command line (`a ; b ; new-session`)
        // run first, each answered with a block; the client starts a server
        // for them, since the list holds a `new-session`.
        let mut commands: Vec<&[String]> = args.split(|arg| arg == ";").collect();
        let last = commands.pop().unwrap_or_default();
        for setup in commands {
            if self.server.is_none() {
                self.start_server();
            }
            let server = self.server.as_mut().expect("a server runs");
            let exec = server.execute(None, &parse_cmd(setup));
            let lines: Vec<String> = exec
                .lines
                .iter()
                .map(|line| String::from_utf8_lossy(line).into_owned())
                .collect();
            self.first_block(conn, exec.ok, &lines);
            if !exec.ok {
                self.conns[conn].push("%exit\n");
                self.conns[conn].close();
                return Ok(());
            }
        }
        let cmd = parse_cmd(last);
        let flags = cmd.opt('f').unwrap_or_default();
        self.conns[conn].extended = flags.contains("pause-after");
        self.conns[conn].no_output = flags.split(',').any(|flag| flag == "no-output");
        let (session, body, created) = match cmd.name.as_str() {
            "new-session" => self.connect_new(&cmd)?,
            "attach-session" => {
                let server = self.server.as_ref().ok_or_else(no_server)?;
                let found = server.resolve(cmd.target()).and_then(|ctx| ctx.session);
                match found {
                    Some(session) => (session, Vec::new(), false),
                    None => {
                        self.first_block(
                            conn,
                            false,
                            &[format!("can't find session: {}", cmd.target())],
                        );
                        self.conns[conn].push("%exit\n");
                        self.conns[conn].close();
                        return Ok(());
                    }
                }
            }
            other => return Err(format!("unknown command: {other}")),
        };
        self.first_block(conn, true, &body);
        let server = self.server.as_mut().expect("a server runs");
        server.clients.insert(conn, session);
        let name = server.sessions[&session].name.clone();
        let window = server.sessions[&session].windows[0];
        self.conns[conn].session = Some(session);
        if created {
            for (i, other) in self.conns.iter().enumerate().filter(|(_, c)| c.is_model()) {
                let (add, changed) = match i == conn {
                    true => (
                        "window-add",
                        format!("%session-changed ${session} {name}\n"),
                    ),
                    false => ("unlinked-window-add", String::new()),
                };
                other.push(format!("%{add} @{window}\n%sessions-changed\n{changed}"));
            }
        } else {
            self.conns[conn].push(format!("%session-changed ${session} {name}\n"));
        }
        Ok(())
    }

    /// `new-session`: the session, the first reply's body, and whether a
    /// session was made (`-A` attaches to an existing one).
    fn connect_new(&mut self, cmd: &Cmd) -> std::result::Result<(u32, Vec<String>, bool), String> {
        let name = cmd
            .opt('s')
            .map(|n| super::line::expand(n, &|_| String::new()));
        let server = match self.server.as_mut() {
            Some(server) => server,
            None => self.start_server(),
        };
        if let Some(existing) = name.as_deref().and_then(|n| server.session_named(n)) {
            if cmd.has('A') {
                return Ok((existing, Vec::new(), false));
            }
            return Err(format!("duplicate session: {}", name.unwrap_or_default()));
        }
        let size = |flag, default| {
            cmd.opt(flag)
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let session = server.new_session(name.as_deref(), (size('x', 80), size('y', 24)));
        let body = match cmd.has('P') {
            true => {
                let format = cmd.opt('F').unwrap_or("#{session_name}:");
                vec![server.format(server.session_ctx(session), format)]
            }
            false => Vec::new(),
        };
        Ok((session, body, true))
    }

    /// The block answering the command on tmux's command line (flags 0).
    fn first_block(&mut self, conn: usize, ok: bool, lines: &[String]) {
        self.number += 1;
        let guard = self.guard(self.number, 0);
        let end = if ok { "%end" } else { "%error" };
        let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.conns[conn].push(format!("%begin {guard}\n{body}{end} {guard}\n"));
    }

    /// A one-shot command: answered now, or a channel wait.
    pub(super) fn run(
        &mut self,
        args: &[String],
    ) -> std::result::Result<OneShot, oneshot::Receiver<bool>> {
        if let Some(ran) = self.run_hooks.iter_mut().find_map(|hook| hook(args)) {
            return Ok(ran);
        }
        let Some(server) = self.server.as_ref() else {
            return Ok(OneShot::NoServer);
        };
        let cmd = parse_cmd(args);
        let printed = match cmd.name.as_str() {
            "list-sessions" => {
                let format = cmd.opt('F').unwrap_or("#{session_name}");
                let ids = server.sessions.keys();
                ids.map(|&s| server.format(server.session_ctx(s), format) + "\n")
                    .collect()
            }
            "display-message" => {
                let format = cmd.args.first().map_or("", String::as_str);
                server.format(model::Ctx::default(), format) + "\n"
            }
            "wait-for" if cmd.has('S') => {
                let channel = cmd.args.first().cloned().unwrap_or_default();
                self.signal(&channel);
                String::new()
            }
            "wait-for" => {
                let name = cmd.args.first().cloned().unwrap_or_default();
                let channel = self.channels.entry(name).or_default();
                if !std::mem::take(&mut channel.latched) {
                    let (tx, rx) = oneshot::channel();
                    channel.waiters.push(tx);
                    return Err(rx);
                }
                String::new()
            }
            other => {
                let why = format!("unknown command: {other}");
                return Ok(OneShot::Refused { why });
            }
        };
        Ok(OneShot::Reply(printed))
    }
}

pub(super) fn no_server() -> String {
    format!("no server running on {}", model::SOCKET_PATH)
}
