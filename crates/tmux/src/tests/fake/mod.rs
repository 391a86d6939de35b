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
//!
//! Layout: this file is what tests call; `conn.rs` keeps the connections
//! and writes what each client is owed; `pipes.rs` holds the tasks at the
//! far end of each pipe; `model.rs` and `commands.rs` are the tmux server;
//! `line.rs` reads command lines and expands formats; `replay.rs` reads
//! transcripts.

mod commands;
mod conn;
pub(crate) mod line;
pub(crate) mod model;
mod pipes;
pub(crate) mod replay;

use std::ffi::OsString;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::error::Result;
use crate::transport::{BoxFuture, Departures, OneShot, Pipe, PipeProcess, Transport};
use conn::{Conn, State};
use line::{Cmd, parse_cmd, split_line};
use model::Server;
use replay::Transcript;

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

pub(crate) type Hook = Box<dyn FnMut(&Cmd) -> Option<Response> + Send>;
pub(crate) type RunHook = Box<dyn FnMut(&[String]) -> Option<OneShot> + Send>;

struct Inner {
    /// A std `Mutex`: held for bookkeeping only, never across an `.await`.
    state: Mutex<State>,
    local: bool,
    /// Counted as the real transports count them.
    departures: Departures,
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
            state: Mutex::new(State::new()),
            local,
            departures: Departures::default(),
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

    /// Starts the server with a session `name` (ids `$0`, `@0`, `%0`).
    pub(crate) fn with_session(self, name: &str) -> Fake {
        self.lock().start_server().new_session(Some(name), (80, 24));
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
    pub(crate) fn on_run(&self, hook: impl FnMut(&[String]) -> Option<OneShot> + Send + 'static) {
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

    /// Every one-shot command takes `delay` before it answers (a slow
    /// host).
    pub(crate) fn with_run_delay(self, delay: std::time::Duration) -> Fake {
        self.lock().run_delay = delay;
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
            .find(|c| !commands::KNOWN.contains(&c.name.as_str()))
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

/// The far end of a fake connection.
struct FakeEnd {
    fake: Fake,
    conn: usize,
    diagnostics: String,
}

impl PipeProcess for FakeEnd {
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
                no_output: false,
                replay: script.is_some(),
            });
            let mut diagnostics = String::new();
            match script {
                Some(script) => {
                    let player =
                        pipes::play(self.clone(), conn, script, from_client, to_client, rx);
                    tokio::spawn(player);
                }
                None => {
                    tokio::spawn(pipes::write_out(self.clone(), conn, to_client, rx));
                    tokio::spawn(pipes::read_lines(self.clone(), conn, from_client));
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
            let pipe = Pipe {
                reader: Box::pin(client_reads),
                writer: Box::pin(client_writes),
                process: Box::new(FakeEnd {
                    fake: self.clone(),
                    conn,
                    diagnostics,
                }),
            };
            Ok(self.0.departures.track(pipe))
        })
    }

    fn departures(&self) -> Option<&Departures> {
        Some(&self.0.departures)
    }

    fn run(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<OneShot>> {
        Box::pin(async move {
            let args: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let delay = self.lock().run_delay;
            tokio::time::sleep(delay).await;
            let answer = {
                let mut state = self.lock();
                state.runs.push(args.clone());
                state.run(&args)
            };
            let woken = match answer {
                Ok(ended) => return Ok(ended),
                Err(waiter) => waiter.await.unwrap_or(false),
            };
            Ok(match woken {
                true => OneShot::Reply(String::new()),
                false => OneShot::Refused {
                    why: "server exited unexpectedly".into(),
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
