//! A fake tmux behind the engine's [`Transport`] seam: every control client
//! gets a pair of in-memory pipes (`tokio::io::duplex`) whose far end is
//! this module, speaking control mode as tmux 3.3a does.
//!
//! The far end of a connection is either
//! - the model (`model.rs`): a small tmux server that answers the commands
//!   the engine sends, expands their formats, and sends notifications and
//!   pane output to the clients attached to a session; tests change it, add
//!   hooks that answer or disturb chosen commands, and inject `%output`,
//!   `%pause` or a server's death; or
//! - a transcript (`replay.rs`), recorded from a real tmux or written by
//!   hand, played back line by line.
//!
//! One-shot commands (`Transport::run`: `list-sessions`, `display-message
//! -p #{pid}`, `wait-for`) are answered from the model too.

pub(crate) mod line;
pub(crate) mod model;
pub(crate) mod replay;

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::error::Result;
use crate::transport::{BoxFuture, Far, Pipe, Ran, Transport};
use line::{Cmd, escape_output, parse_cmd, split_line};
use model::{Effect, Exec, Server, To};
use replay::{Step, Transcript};

/// How a hook answers a command.
pub(crate) enum Act {
    /// As the model would.
    Model,
    /// A reply with these lines.
    Ok(Vec<String>),
    /// An `%error` reply with this message.
    Error(String),
    /// No reply at all: the command hangs (as `wait-for` does in tmux), and
    /// the rest of its line with it.
    Hang,
    /// The connection closes without a word, as when the server dies.
    Die,
}

/// A hook's answer: bytes written before the reply, the reply, bytes after.
pub(crate) struct Response {
    pub(crate) before: Vec<u8>,
    pub(crate) act: Act,
    pub(crate) after: Vec<u8>,
}

impl Response {
    pub(crate) fn act(act: Act) -> Response {
        Response {
            before: Vec::new(),
            act,
            after: Vec::new(),
        }
    }

    /// Writes `bytes` before the reply.
    pub(crate) fn before(mut self, bytes: impl AsRef<[u8]>) -> Response {
        self.before.extend_from_slice(bytes.as_ref());
        self
    }

    /// Writes `bytes` after the reply.
    pub(crate) fn after(mut self, bytes: impl AsRef<[u8]>) -> Response {
        self.after.extend_from_slice(bytes.as_ref());
        self
    }
}

type Hook = Box<dyn FnMut(&Cmd) -> Option<Response> + Send>;
type RunHook = Box<dyn FnMut(&[String]) -> Option<Ran> + Send>;

enum Out {
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
    out: mpsc::UnboundedSender<Out>,
    done: watch::Sender<bool>,
    paused: Vec<u32>,
    extended: bool,
    replay: bool,
}

impl Conn {
    pub(crate) fn is_open(&self) -> bool {
        self.closed.is_none()
    }

    fn push(&self, bytes: impl Into<Vec<u8>>) {
        let _ = self.out.send(Out::Bytes(bytes.into()));
    }

    fn close(&self) {
        let _ = self.out.send(Out::Close);
    }

    fn is_model(&self) -> bool {
        !self.replay && self.is_open()
    }
}

#[derive(Default)]
struct Channel {
    latched: bool,
    waiters: Vec<oneshot::Sender<bool>>,
}

struct State {
    server: Option<Server>,
    next_pid: u32,
    number: u64,
    started: Instant,
    conns: Vec<Conn>,
    hooks: Vec<Hook>,
    run_hooks: Vec<RunHook>,
    runs: Vec<Vec<String>>,
    scripts: VecDeque<Transcript>,
    failures: VecDeque<String>,
    mismatches: Vec<String>,
    channels: HashMap<String, Channel>,
    hold_exits: bool,
    connect_timeout: Option<std::time::Duration>,
}

struct Inner {
    /// A std `Mutex`: held for bookkeeping only, never across an `.await`.
    state: Mutex<State>,
    local: bool,
}

/// The fake tmux; cheap to clone, every clone is the same server.
#[derive(Clone)]
pub(crate) struct Fake(Arc<Inner>);

impl std::fmt::Debug for Fake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fake")
    }
}

impl Fake {
    fn new(local: bool) -> Fake {
        Fake(Arc::new(Inner {
            state: Mutex::new(State {
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
            }),
            local,
        }))
    }

    /// A tmux server on this machine, not running yet.
    pub(crate) fn local() -> Fake {
        Fake::new(true)
    }

    /// A tmux server on another host (as over ssh), not running yet.
    pub(crate) fn remote() -> Fake {
        Fake::new(false)
    }

    /// Starts the server with a session `name` (ids `$0`, `@0`, `%0` on a
    /// fresh server).
    pub(crate) fn with_session(self, name: &str) -> Fake {
        {
            let mut state = self.lock();
            let session = state.start_server().new_session(Some(name), (80, 24));
            let _ = session;
        }
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The transport the engine connects through.
    pub(crate) fn transport(&self) -> Arc<dyn Transport> {
        Arc::new(self.clone())
    }

    /// Reads or changes the model; panics when no server runs.
    pub(crate) fn server<R>(&self, f: impl FnOnce(&mut Server) -> R) -> R {
        f(self.lock().server.as_mut().expect("the fake server runs"))
    }

    /// Whether a server runs.
    pub(crate) fn running(&self) -> bool {
        self.lock().server.is_some()
    }

    /// Answers commands the hook picks (first hook that answers wins).
    pub(crate) fn hook(&self, hook: impl FnMut(&Cmd) -> Option<Response> + Send + 'static) {
        self.lock().hooks.push(Box::new(hook));
    }

    /// Answers one-shot commands the hook picks.
    pub(crate) fn on_run(&self, hook: impl FnMut(&[String]) -> Option<Ran> + Send + 'static) {
        self.lock().run_hooks.push(Box::new(hook));
    }

    /// The next connection plays this transcript instead of the model.
    pub(crate) fn replay_next(&self, transcript: Transcript) {
        self.lock().scripts.push_back(transcript);
    }

    /// The next connection fails at once, tmux saying `why` on stderr.
    pub(crate) fn fail_next_open(&self, why: &str) {
        self.lock().failures.push_back(why.to_owned());
    }

    /// While set, a client whose session ends gets `%exit` but its pipe
    /// stays open until [`Fake::close`] (a client slow to leave).
    pub(crate) fn hold_exits(&self, hold: bool) {
        self.lock().hold_exits = hold;
    }

    /// Connecting gives up after `limit` (as over ssh).
    pub(crate) fn with_connect_timeout(self, limit: std::time::Duration) -> Fake {
        self.lock().connect_timeout = Some(limit);
        self
    }

    /// The pane printed `data`: `%output` to each client attached to its
    /// session whose output of that pane is not paused.
    pub(crate) fn output(&self, pane: u32, data: &[u8]) {
        self.lock().route_output(pane, data);
    }

    /// tmux pauses the pane for every client carrying it.
    pub(crate) fn pause(&self, pane: u32) {
        let mut state = self.lock();
        let session = state.server.as_ref().and_then(|s| s.pane_session(pane));
        for conn in state
            .conns
            .iter_mut()
            .filter(|c| c.is_model() && c.session == session)
        {
            conn.paused.push(pane);
            conn.push(format!("%pause %{pane}\n"));
        }
    }

    /// Adds a session as another tmux client would (`new-session -d`),
    /// telling the clients; returns its id.
    pub(crate) fn add_session(&self, name: &str) -> u32 {
        let mut state = self.lock();
        let server = state.server.as_mut().expect("the fake server runs");
        let session = server.new_session(Some(name), (80, 24));
        let window = server.sessions[&session].windows[0];
        for conn in state.conns.iter().filter(|c| c.is_model()) {
            conn.push(format!(
                "%unlinked-window-add @{window}\n%sessions-changed\n"
            ));
        }
        session
    }

    /// Kills a session as another tmux client would.
    pub(crate) fn kill_session(&self, session: u32) {
        let mut state = self.lock();
        let server = state.server.as_mut().expect("the fake server runs");
        let effects = server.remove_session(session);
        state.apply(None, effects);
    }

    /// Writes raw bytes to one connection.
    pub(crate) fn send_raw(&self, conn: usize, bytes: impl AsRef<[u8]>) {
        self.lock().conns[conn].push(bytes.as_ref());
    }

    /// Closes one connection without a word (its process died).
    pub(crate) fn close(&self, conn: usize) {
        self.lock().conns[conn].close();
    }

    /// The server dies: with `exit`, it says `%exit` to every client first
    /// (as when killed with `kill-server`); without, the pipes just close.
    pub(crate) fn kill_server(&self, exit: bool) {
        self.lock().server_gone(exit);
    }

    /// The pane's program exited: the pane is dead (with `remain-on-exit`)
    /// or removed, with its window and session when it was their last.
    pub(crate) fn exit_pane(&self, pane: u32) {
        let mut state = self.lock();
        let server = state.server.as_mut().expect("the fake server runs");
        if server.remain_on_exit {
            server.panes.get_mut(&pane).expect("pane exists").dead = true;
            return;
        }
        let effects = server.remove_pane(pane);
        state.apply(None, effects);
    }

    /// How many connections were opened.
    pub(crate) fn opened(&self) -> usize {
        self.lock().conns.len()
    }

    /// Reads one connection's record.
    pub(crate) fn conn<R>(&self, conn: usize, f: impl FnOnce(&Conn) -> R) -> R {
        f(&self.lock().conns[conn])
    }

    /// The connections open now.
    pub(crate) fn open_conns(&self) -> Vec<usize> {
        let state = self.lock();
        (0..state.conns.len())
            .filter(|&i| state.conns[i].is_open())
            .collect()
    }

    /// Every command any client sent, parsed, in the order each client
    /// sent them (clients in the order they connected).
    pub(crate) fn commands(&self) -> Vec<Cmd> {
        let state = self.lock();
        let lines = state.conns.iter().flat_map(|c| c.lines.iter());
        lines
            .filter_map(|line| split_line(line))
            .flatten()
            .map(|words| parse_cmd(&words))
            .collect()
    }

    /// The commands named `name` that clients sent.
    pub(crate) fn sent(&self, name: &str) -> Vec<Cmd> {
        self.commands()
            .into_iter()
            .filter(|c| c.name == name)
            .collect()
    }

    /// The one-shot commands run so far.
    pub(crate) fn runs(&self) -> Vec<Vec<String>> {
        self.lock().runs.clone()
    }

    /// Where transcripts and clients disagreed.
    pub(crate) fn mismatches(&self) -> Vec<String> {
        self.lock().mismatches.clone()
    }

    /// `wait-for` commands waiting on `channel` whose caller still waits.
    pub(crate) fn channel_waiters(&self, channel: &str) -> usize {
        let state = self.lock();
        state
            .channels
            .get(channel)
            .map_or(0, |c| c.waiters.iter().filter(|w| !w.is_closed()).count())
    }

    fn mark_closed(&self, conn: usize) {
        let mut state = self.lock();
        let now = Instant::now();
        let entry = &mut state.conns[conn];
        entry.closed.get_or_insert(now);
        entry.done.send_replace(true);
        if let Some(server) = state.server.as_mut() {
            server.clients.remove(&conn);
        }
    }

    fn on_line(&self, conn: usize, line: Vec<u8>) {
        let mut state = self.lock();
        state.conns[conn].lines.push(line.clone());
        if line.is_empty() {
            // An empty line detaches the client.
            state.conns[conn].exited = true;
            state.conns[conn].push("%exit\n");
            state.conns[conn].close();
            return;
        }
        let Some(commands) = split_line(&line) else {
            state.block(conn, false, &[b"parse error: bad quoting".to_vec()], &[]);
            return;
        };
        let cmds: Vec<Cmd> = commands.iter().map(|w| parse_cmd(w)).collect();
        if let Some(unknown) = cmds
            .iter()
            .find(|c| !model::KNOWN.contains(&c.name.as_str()))
        {
            // tmux parses the whole line first: nothing of it runs.
            let message = format!("parse error: unknown command: {}", unknown.name);
            state.block(conn, false, &[message.into_bytes()], &[]);
            return;
        }
        for cmd in cmds {
            if !state.run_command(conn, &cmd) {
                break;
            }
        }
    }
}

impl State {
    fn start_server(&mut self) -> &mut Server {
        let pid = self.next_pid;
        self.next_pid += 1000;
        self.server.insert(Server::new(pid))
    }

    /// Writes one reply block with flags 1 to `conn`.
    fn block(&mut self, conn: usize, ok: bool, lines: &[Vec<u8>], inside: &[Vec<u8>]) {
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
    fn run_command(&mut self, conn: usize, cmd: &Cmd) -> bool {
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
    fn apply(&mut self, from: Option<usize>, effects: Vec<Effect>) {
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

    fn route_output(&mut self, pane: u32, data: &[u8]) {
        let Some(session) = self.server.as_ref().and_then(|s| s.pane_session(pane)) else {
            return;
        };
        let escaped = escape_output(data);
        for conn in self.conns.iter().filter(|c| c.is_model()) {
            if conn.session != Some(session) || conn.paused.contains(&pane) {
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

    fn server_gone(&mut self, exit: bool) {
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
    fn connect(&mut self, conn: usize, args: &[String]) -> std::result::Result<(), String> {
        let cmd = parse_cmd(args);
        self.conns[conn].extended = cmd.opt('f').is_some_and(|f| f.contains("pause-after"));
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
        let name = cmd.opt('s').map(|n| line::expand(n, &|_| String::new()));
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
    fn run(&mut self, args: &[String]) -> std::result::Result<Ran, oneshot::Receiver<bool>> {
        if let Some(ran) = self.run_hooks.iter_mut().find_map(|hook| hook(args)) {
            return Ok(ran);
        }
        let failed = |stderr: String| Ran {
            success: false,
            stdout: String::new(),
            stderr,
        };
        let Some(server) = self.server.as_ref() else {
            return Ok(failed(no_server()));
        };
        let cmd = parse_cmd(args);
        let stdout = match cmd.name.as_str() {
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
            other => return Ok(failed(format!("unknown command: {other}"))),
        };
        Ok(Ran {
            success: true,
            stdout,
            stderr: String::new(),
        })
    }
}

fn no_server() -> String {
    format!("no server running on {}", model::SOCKET_PATH)
}

/// The far end of a fake connection.
struct FakeEnd {
    fake: Fake,
    conn: usize,
    diagnostics: String,
}

impl Far for FakeEnd {
    fn diagnostics(&mut self) -> BoxFuture<'_, String> {
        let said = self.diagnostics.clone();
        Box::pin(async move { said })
    }

    fn close(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let mut done = {
                let state = self.fake.lock();
                let conn = &state.conns[self.conn];
                conn.close();
                conn.done.subscribe()
            };
            let _ = done.wait_for(|&closed| closed).await;
        })
    }
}

impl Transport for Fake {
    fn open(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<Pipe>> {
        Box::pin(async move {
            let args: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let (to_client, client_reads) = tokio::io::duplex(1 << 16);
            let (client_writes, from_client) = tokio::io::duplex(1 << 16);
            let (tx, rx) = mpsc::unbounded_channel();
            let mut state = self.lock();
            let conn = state.conns.len();
            let script = state.scripts.pop_front();
            state.conns.push(Conn {
                args: args.clone(),
                session: None,
                lines: Vec::new(),
                opened: Instant::now(),
                closed: None,
                exited: false,
                out: tx,
                done: watch::Sender::new(false),
                paused: Vec::new(),
                extended: false,
                replay: script.is_some(),
            });
            let mut diagnostics = String::new();
            match script {
                Some(script) => {
                    let player = play(self.clone(), conn, script, from_client, to_client, rx);
                    tokio::spawn(player);
                }
                None => {
                    tokio::spawn(write_out(self.clone(), conn, to_client, rx));
                    tokio::spawn(read_lines(self.clone(), conn, from_client));
                    let failed = match state.failures.pop_front() {
                        Some(why) => Err(why),
                        None => state.connect(conn, &args),
                    };
                    if let Err(why) = failed {
                        diagnostics = why;
                        state.conns[conn].close();
                    }
                }
            }
            drop(state);
            Ok(Pipe {
                reader: Box::pin(client_reads),
                writer: Box::pin(client_writes),
                end: Box::new(FakeEnd {
                    fake: self.clone(),
                    conn,
                    diagnostics,
                }),
            })
        })
    }

    fn run(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<Ran>> {
        Box::pin(async move {
            let args: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let answer = {
                let mut state = self.lock();
                state.runs.push(args.clone());
                state.run(&args)
            };
            let woken = match answer {
                Ok(ran) => return Ok(ran),
                Err(waiter) => waiter.await.unwrap_or(false),
            };
            Ok(Ran {
                success: woken,
                stdout: String::new(),
                stderr: if woken {
                    String::new()
                } else {
                    "server exited unexpectedly".into()
                },
            })
        })
    }

    fn describe(&self) -> String {
        "fake tmux".into()
    }

    fn is_local(&self) -> bool {
        self.0.local
    }

    fn connect_timeout(&self) -> Option<std::time::Duration> {
        self.lock().connect_timeout
    }
}

/// Writes what the fake queued for one connection, until it closes.
async fn write_out(
    fake: Fake,
    conn: usize,
    mut to_client: DuplexStream,
    mut rx: mpsc::UnboundedReceiver<Out>,
) {
    while let Some(Out::Bytes(bytes)) = rx.recv().await {
        if to_client.write_all(&bytes).await.is_err() {
            break;
        }
    }
    drop(to_client);
    fake.mark_closed(conn);
}

/// Reads the client's lines and answers them, until either side closes.
async fn read_lines(fake: Fake, conn: usize, from_client: DuplexStream) {
    let mut done = fake.lock().conns[conn].done.subscribe();
    let mut reader = BufReader::new(from_client);
    let mut line = Vec::new();
    loop {
        tokio::select! {
            _ = done.wait_for(|&closed| closed) => return,
            read = reader.read_until(b'\n', &mut line) => match read {
                Ok(n) if n > 0 && line.ends_with(b"\n") => {
                    line.pop();
                    fake.on_line(conn, std::mem::take(&mut line));
                }
                // The client closed its side: tmux's client process ends.
                _ => {
                    fake.lock().conns[conn].close();
                    return;
                }
            },
        }
    }
}

/// Plays a transcript to one connection.
async fn play(
    fake: Fake,
    conn: usize,
    script: Transcript,
    from_client: DuplexStream,
    mut to_client: DuplexStream,
    mut rx: mpsc::UnboundedReceiver<Out>,
) {
    let mut reader = BufReader::new(from_client);
    let mut line = Vec::new();
    let mut steps = script.steps.into_iter();
    let mut expecting: Option<Step> = None;
    loop {
        let step = match expecting.take() {
            Some(step) => step,
            None => match steps.next() {
                Some(step) => step,
                // The transcript is over: keep reading lines (and what the
                // test injects) until a side closes.
                None => Step::Listen,
            },
        };
        let wanted = match step {
            Step::Send(bytes) => {
                let mut bytes = bytes;
                bytes.push(b'\n');
                if to_client.write_all(&bytes).await.is_err() {
                    break;
                }
                continue;
            }
            Step::Wait(duration) => {
                let deadline = Instant::now() + duration;
                tokio::select! {
                    () = tokio::time::sleep_until(deadline) => continue,
                    out = rx.recv() => match out {
                        Some(Out::Bytes(bytes)) => {
                            let _ = to_client.write_all(&bytes).await;
                            let left = deadline.saturating_duration_since(Instant::now());
                            expecting = Some(Step::Wait(left));
                            continue;
                        }
                        _ => break,
                    },
                }
            }
            Step::Close => break,
            wanted => wanted,
        };
        tokio::select! {
            out = rx.recv() => match out {
                Some(Out::Bytes(bytes)) => {
                    if to_client.write_all(&bytes).await.is_err() {
                        break;
                    }
                    expecting = Some(wanted);
                }
                _ => break,
            },
            read = reader.read_until(b'\n', &mut line) => match read {
                Ok(n) if n > 0 && line.ends_with(b"\n") => {
                    line.pop();
                    let got = std::mem::take(&mut line);
                    let over = wanted == Step::Listen;
                    let mut state = fake.lock();
                    state.conns[conn].lines.push(got.clone());
                    if !over && replay::matches(&wanted, &got) != Some(true) {
                        let got = String::from_utf8_lossy(&got);
                        let wanted = match &wanted {
                            Step::Expect(line) => String::from_utf8_lossy(line).into_owned(),
                            other => format!("{other:?}"),
                        };
                        state.mismatches.push(format!("connection {conn}: expected {wanted:?}, got {got:?}"));
                        break;
                    }
                }
                _ => break,
            },
        }
    }
    drop(to_client);
    fake.mark_closed(conn);
}
