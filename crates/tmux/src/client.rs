//! One tmux control client: a control-mode connection over a byte pipe (see
//! [`crate::transport`]) and the task that owns it.
//!
//! Commands go in through a channel; the task writes them to tmux's stdin and
//! remembers, in order, who waits for each reply. tmux answers every command
//! line with exactly one `%begin`/`%end` (or `%error`) block marked as coming
//! from this client, so replies are matched first in, first out. Output
//! notifications are routed into the pane journals as they are read, in
//! stream order; that order is what makes cursors exact.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use termpilot_control::{Event, Notification, PaneId, Parser, Reply, SessionId};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::engine::Shared;
use crate::error::{Error, Result};
use crate::format::SessionIdRow;
use crate::panes::ClientId;

/// One command line for tmux, and what the caller wants back with its reply.
#[derive(Debug)]
pub(crate) struct Call {
    /// The built command line, ending in a newline.
    pub(crate) line: Vec<u8>,
    /// The tmux command name, for error messages.
    pub(crate) command: &'static str,
    /// Snapshot this pane's journal end when the reply arrives.
    pub(crate) cursor_pane: Option<PaneId>,
}

/// Several commands on one line, separated by ` ; `. tmux runs them in
/// order and, when one fails, skips the rest of the line: the line yields one
/// reply per command that ran, the last an `%error` if one failed.
#[derive(Debug)]
pub(crate) struct Group {
    /// The commands joined into one line, ending in a newline.
    pub(crate) line: Vec<u8>,
    /// Each command's name and the pane whose cursor its reply snapshots.
    pub(crate) parts: Vec<(&'static str, Option<PaneId>)>,
}

/// A reply, with the journal position taken when it arrived.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The tmux command name the reply answers, for error messages.
    pub command: &'static str,
    /// The reply block.
    pub reply: Reply,
    /// The journal end of the requested pane at the moment the reply arrived:
    /// output read before it happened before the command ran.
    pub cursor: Option<u64>,
    /// When the reply was read.
    pub received: std::time::Instant,
}

/// What a control client is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Attached to a session to carry its panes' output: its replies come
    /// in stream order with that output, which is what cursors rest on.
    Session,
    /// Attached with `no-output`: tmux sends it no pane output, so its
    /// replies never queue behind a flood. It leaves notifications to the
    /// session clients.
    Quiet,
}

/// Output that waited in tmux this long or longer, or a reply not come
/// after this long, means the client's stream is behind.
pub(crate) const BEHIND: std::time::Duration = std::time::Duration::from_millis(50);

/// How long a reading of late output counts: while a client is behind,
/// every read brings late output again.
const LATE_MEMORY: std::time::Duration = std::time::Duration::from_millis(250);

/// How far behind a client's stream is, as its task last saw it. Times are
/// milliseconds after `base`, plus one; zero means never.
#[derive(Debug)]
pub(crate) struct Lag {
    base: tokio::time::Instant,
    /// When output that had waited in tmux for [`BEHIND`] or longer was
    /// last read.
    late_output: AtomicU64,
    /// When the oldest command still unanswered was written.
    oldest_pending: AtomicU64,
}

impl Lag {
    fn new() -> Lag {
        Lag {
            base: tokio::time::Instant::now(),
            late_output: AtomicU64::new(0),
            oldest_pending: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        let elapsed = self.base.elapsed().as_millis();
        u64::try_from(elapsed).unwrap_or(u64::MAX - 1) + 1
    }

    /// Whether replies on this client wait behind output tmux has queued:
    /// output read lately had waited [`BEHIND`] or longer, or a command has
    /// been unanswered that long.
    fn is_behind(&self) -> bool {
        let waiting = self
            .ago(&self.oldest_pending)
            .is_some_and(|ago| ago >= BEHIND.as_millis() as u64);
        self.output_late() || waiting
    }

    /// Whether output read lately had waited [`BEHIND`] or longer.
    fn output_late(&self) -> bool {
        self.ago(&self.late_output)
            .is_some_and(|ago| ago < LATE_MEMORY.as_millis() as u64)
    }

    /// How many milliseconds ago the time in `at` was, if it was ever set.
    fn ago(&self, at: &AtomicU64) -> Option<u64> {
        let at = at.load(Ordering::Relaxed);
        (at != 0).then(|| self.now().saturating_sub(at))
    }
}

/// Who waits for the replies of one line.
enum Replier {
    One(oneshot::Sender<Result<Answer>>),
    Group(oneshot::Sender<Result<Vec<Answer>>>),
}

struct Pending {
    parts: Vec<(&'static str, Option<PaneId>)>,
    answers: Vec<Answer>,
    reply: Replier,
    /// When the line was written (see [`Lag`]).
    sent: u64,
}

impl Pending {
    fn finish(self) {
        match self.reply {
            Replier::One(tx) => {
                let answer = self
                    .answers
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::Protocol {
                        command: self.parts.first().map_or("", |p| p.0).to_owned(),
                        detail: "no reply".into(),
                    });
                let _ = tx.send(answer);
            }
            Replier::Group(tx) => {
                let _ = tx.send(Ok(self.answers));
            }
        }
    }

    /// Fails the line: the connection closed, because the server went away
    /// or, when `ended` names it, because the client's session ended.
    fn fail(self, reason: &str, ended: Option<SessionId>) {
        let command = self
            .parts
            .iter()
            .map(|p| p.0)
            .collect::<Vec<_>>()
            .join(" ; ");
        let error = match ended {
            Some(session) => Error::SessionEnded { command, session },
            None => Error::Disconnected {
                command,
                reason: reason.to_owned(),
            },
        };
        match self.reply {
            Replier::One(tx) => {
                let _ = tx.send(Err(error));
            }
            Replier::Group(tx) => {
                let _ = tx.send(Err(error));
            }
        }
    }
}

enum Request {
    Calls(Vec<(Call, oneshot::Sender<Result<Answer>>)>),
    Group(Group, oneshot::Sender<Result<Vec<Answer>>>),
    Detach,
}

/// The engine's side of a control client. Dropping every handle detaches it.
#[derive(Clone)]
pub(crate) struct ClientHandle {
    pub(crate) id: ClientId,
    pub(crate) session: SessionId,
    tx: mpsc::Sender<Request>,
    lag: Arc<Lag>,
}

/// Replies still to come for calls already handed to a client's task.
pub(crate) struct Replies {
    waiting: Vec<(&'static str, oneshot::Receiver<Result<Answer>>)>,
}

impl Replies {
    /// Waits for every reply, in the order of the calls.
    pub(crate) async fn answers(self) -> Vec<Result<Answer>> {
        let mut answers = Vec::with_capacity(self.waiting.len());
        for (command, rx) in self.waiting {
            let answer = match rx.await {
                Ok(answer) => answer,
                Err(_) => Err(disconnected(command, "the control client stopped")),
            };
            answers.push(answer);
        }
        answers
    }
}

impl std::fmt::Debug for ClientHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "client#{} ({})", self.id.0, self.session)
    }
}

impl ClientHandle {
    /// Sends all calls in one write and waits for every reply.
    pub(crate) async fn call_many(&self, calls: Vec<Call>) -> Vec<Result<Answer>> {
        self.send_many(calls).await.answers().await
    }

    /// Hands all calls to the client's task, which writes them at once (in
    /// one write); the replies come later.
    pub(crate) async fn send_many(&self, calls: Vec<Call>) -> Replies {
        let mut waiting = Vec::with_capacity(calls.len());
        let mut batch = Vec::with_capacity(calls.len());
        for call in calls {
            let (tx, rx) = oneshot::channel();
            waiting.push((call.command, rx));
            batch.push((call, tx));
        }
        let _ = self.tx.send(Request::Calls(batch)).await;
        Replies { waiting }
    }

    /// Whether this client's replies now wait behind pane output that tmux
    /// has queued for it (see [`Lag`]).
    pub(crate) fn is_behind(&self) -> bool {
        self.lag.is_behind()
    }

    /// Whether the client's task has ended: nothing sent to it goes anywhere.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Sends one call and waits for its reply.
    pub(crate) async fn call(&self, call: Call) -> Result<Answer> {
        let command = call.command;
        self.call_many(vec![call])
            .await
            .pop()
            .unwrap_or_else(|| Err(disconnected(command, "no reply")))
    }

    /// Sends a group of commands on one line and waits for the replies of
    /// those that ran.
    pub(crate) async fn call_group(&self, group: Group) -> Result<Vec<Answer>> {
        let name = group.parts.first().map_or("", |p| p.0);
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Request::Group(group, tx)).await;
        match rx.await {
            Ok(answers) => answers,
            Err(_) => Err(disconnected(name, "the control client stopped")),
        }
    }

    /// Asks the client to detach (an empty line) and exit.
    pub(crate) fn detach(&self) {
        let _ = self.tx.try_send(Request::Detach);
    }
}

fn disconnected(command: &str, reason: &str) -> Error {
    Error::Disconnected {
        command: command.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Starts `tmux <socket args> -C <args>` and waits until tmux has answered
/// the command given on its command line (the block with flags 0).
///
/// Returns the handle and that first reply (for `new-session -P`, the ids of
/// what it created).
pub(crate) async fn spawn(
    shared: &Arc<Shared>,
    args: Vec<OsString>,
    session: Option<SessionId>,
) -> Result<(ClientHandle, Reply)> {
    spawn_as(shared, args, session, Role::Session).await
}

/// [`spawn`] for a client of the given role.
pub(crate) async fn spawn_as(
    shared: &Arc<Shared>,
    args: Vec<OsString>,
    session: Option<SessionId>,
    role: Role,
) -> Result<(ClientHandle, Reply)> {
    // tmux 3.3a writes `%client-detached` to every control client, even one
    // still identifying itself, which crashes the server. A client of ours
    // being detached (its session ended) is the likely source: let those
    // departures finish before connecting another.
    let mut departing = shared.departing.subscribe();
    let _ = tokio::time::timeout(SETTLE, departing.wait_for(|&n| n == 0)).await;
    // tmux 3.3a also crashes when it writes any notification to a control
    // client that is still identifying itself (between its first identify
    // message and the last, which may come in several reads): another
    // client's `new-session` (`%sessions-changed`) is enough. Engines
    // connecting at once, in this process or others, take turns.
    let _turn = match shared.transport.start_lock() {
        Some(dir) => StartLock::acquire(&dir).await,
        None => StartLock { _file: None },
    };
    // tmux answers each command of its command line (separated by `;`)
    // with a block of its own; the last one is the client's first reply.
    let setup_replies = args.iter().filter(|arg| *arg == ";").count();
    let pipe = shared.transport.open(args).await?;
    let id = shared.next_client_id();
    let (tx, rx) = mpsc::channel(256);
    let (ready_tx, ready_rx) = oneshot::channel();
    let lag = Arc::new(Lag::new());
    let task = ClientTask {
        id,
        role,
        lag: Arc::clone(&lag),
        shared: Arc::clone(shared),
        parser: Parser::new(),
        pending: VecDeque::new(),
        ready: Some(ready_tx),
        setup_replies,
        session,
        leaving: false,
        internal: Vec::new(),
        touched: Vec::new(),
        departing: false,
        detaching: false,
        writer: pipe.writer,
    };
    tokio::spawn(task.run(pipe.reader, pipe.end, rx));
    let ready = async {
        match ready_rx.await {
            Ok(Ok(first)) => Ok(first),
            Ok(Err(reason)) => Err(shared.connect_error(reason)),
            Err(_) => Err(shared.connect_error("tmux exited during start-up".into())),
        }
    };
    let first = match shared.transport.connect_timeout() {
        // Dropping the sender (`tx`) on a timeout ends the task and the
        // process behind the pipe.
        Some(limit) => tokio::time::timeout(limit, ready).await.map_err(|_| {
            shared.connect_error(format!("no answer within {} s", limit.as_secs_f64()))
        })??,
        None => ready.await?,
    };
    let mut handle = ClientHandle {
        id,
        session: session.unwrap_or(SessionId(u32::MAX)),
        tx,
        lag,
    };
    if session.is_none() {
        handle.session = match first.text().trim() {
            // `new-session -A` attached to a session that already exists
            // and printed nothing: ask which one.
            "" => current_session(&handle).await?,
            _ => session_from_first_reply(&first)?,
        };
    }
    Ok((handle, first))
}

/// Resolves when nobody waits for the first reply any more.
async fn abandoned(ready: &mut Option<oneshot::Sender<std::result::Result<Reply, String>>>) {
    match ready {
        Some(ready) => ready.closed().await,
        None => std::future::pending().await,
    }
}

/// The session a control client is attached to.
async fn current_session(client: &ClientHandle) -> Result<SessionId> {
    let query = termpilot_control::Command::new("display-message")
        .flag("-p")
        .arg(SessionIdRow::FORMAT);
    let answer = client.call(crate::engine::call(query, None)?).await?;
    let reply = crate::engine::ok_reply(answer)?;
    Ok(SessionIdRow::parse_first("display-message", &reply)?.id)
}

/// An exclusive lock (`flock`) on the socket's directory, held while a
/// control client connects: servers in one directory take turns too, which
/// costs little, as identifying takes milliseconds. Best effort: when the
/// directory cannot be opened or the lock is not granted in
/// [`START_LOCK_WAIT`], the client connects without it.
struct StartLock {
    /// Closing the file releases the lock.
    _file: Option<std::fs::File>,
}

/// The longest a connecting client waits for its turn.
const START_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl StartLock {
    async fn acquire(path: &std::path::Path) -> StartLock {
        let Ok(file) = std::fs::File::open(path) else {
            return StartLock { _file: None };
        };
        let deadline = tokio::time::Instant::now() + START_LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return StartLock { _file: Some(file) },
                Err(std::fs::TryLockError::WouldBlock)
                    if tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                Err(_) => return StartLock { _file: None },
            }
        }
    }
}

/// The longest a new client waits for departing ones.
pub(crate) const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// `new-session -P -F '#{session_id}...'` puts the new ids first in its reply.
fn session_from_first_reply(first: &Reply) -> Result<SessionId> {
    let text = first.text();
    let field = text.split('\x1f').next().unwrap_or_default();
    field.trim().parse().map_err(|_| Error::Protocol {
        command: "new-session".into(),
        detail: format!("expected a session id, got '{text}'"),
    })
}

struct ClientTask {
    id: ClientId,
    role: Role,
    /// What the handles read to tell whether this client is behind.
    lag: Arc<Lag>,
    shared: Arc<Shared>,
    parser: Parser,
    pending: VecDeque<Pending>,
    /// Fired by the first block (the command on tmux's command line).
    ready: Option<oneshot::Sender<std::result::Result<Reply, String>>>,
    /// Blocks of the commands before the last one on tmux's command line,
    /// still to come.
    setup_replies: usize,
    /// The session this client is attached to, once known.
    session: Option<SessionId>,
    /// Set when this client must detach after the events just read.
    leaving: bool,
    /// Commands the task itself sends (replies are discarded).
    internal: Vec<Vec<u8>>,
    /// Panes whose journals grew during the current read.
    touched: Vec<PaneId>,
    /// tmux said `%exit`: counted in `Shared::departing` until the end.
    departing: bool,
    /// The engine asked this client to detach.
    detaching: bool,
    /// Where command lines go.
    writer: Pin<Box<dyn AsyncWrite + Send + Sync>>,
}

impl ClientTask {
    async fn run(
        mut self,
        mut reader: Pin<Box<dyn AsyncRead + Send + Sync>>,
        mut end: Box<dyn crate::transport::Far>,
        mut rx: mpsc::Receiver<Request>,
    ) {
        let mut buf = vec![0u8; 64 * 1024];
        let mut requests_done = false;
        let reason = loop {
            // Commands first: under a flood the pipe from tmux always has
            // more to read, and a command must not wait for a pause in it.
            tokio::select! {
                biased;
                request = rx.recv(), if self.ready.is_none() && !requests_done => match request {
                    Some(Request::Calls(calls)) => {
                        if let Err(e) = self.write_calls(calls).await {
                            break format!("writing to tmux failed: {e}");
                        }
                    }
                    Some(Request::Group(group, reply)) => {
                        self.push_pending(Pending {
                            parts: group.parts,
                            answers: Vec::new(),
                            reply: Replier::Group(reply),
                            sent: self.lag.now(),
                        });
                        if let Err(e) = self.write_bytes(&group.line).await {
                            break format!("writing to tmux failed: {e}");
                        }
                    }
                    Some(Request::Detach) | None => {
                        // Once: a closed channel would answer `None` at
                        // once, every time, and the reads never come.
                        requests_done = true;
                        self.detaching = true;
                        let _ = self.writer.write_all(b"\n").await;
                        let _ = self.writer.flush().await;
                    }
                },
                read = reader.read(&mut buf) => match read {
                    Ok(0) => break "tmux closed the control connection".to_owned(),
                    Ok(n) => {
                        self.parser.feed(&buf[..n]);
                        while let Some(event) = self.parser.next_event() {
                            self.handle(event);
                        }
                        for pane in self.touched.drain(..) {
                            self.shared.panes.notify(pane);
                        }
                        if self.role == Role::Session && self.lag.output_late() {
                            self.shared.want_quiet();
                        }
                        if let Err(e) = self.write_internal().await {
                            break format!("writing to tmux failed: {e}");
                        }
                        if std::mem::take(&mut self.leaving) {
                            self.detaching = true;
                            let _ = self.writer.write_all(b"\n").await;
                            let _ = self.writer.flush().await;
                        }
                    }
                    Err(e) => break format!("reading from tmux failed: {e}"),
                },
                () = abandoned(&mut self.ready), if self.ready.is_some() => {
                    // Whoever waited for the connection gave up (its time
                    // ran out): end it, and the process behind it.
                    self.detaching = true;
                    break "nobody waits for the connection any more".to_owned();
                }
            }
        };
        self.finish(end.as_mut(), reason).await;
    }

    async fn write_calls(
        &mut self,
        calls: Vec<(Call, oneshot::Sender<Result<Answer>>)>,
    ) -> std::io::Result<()> {
        let mut bytes = Vec::new();
        let sent = self.lag.now();
        for (call, reply) in calls {
            bytes.extend_from_slice(&call.line);
            self.push_pending(Pending {
                parts: vec![(call.command, call.cursor_pane)],
                answers: Vec::with_capacity(1),
                reply: Replier::One(reply),
                sent,
            });
        }
        self.write_bytes(&bytes).await
    }

    fn push_pending(&mut self, pending: Pending) {
        if self.pending.is_empty() {
            (self.lag.oldest_pending).store(pending.sent, Ordering::Relaxed);
        }
        self.pending.push_back(pending);
    }

    fn pop_pending(&mut self) -> Option<Pending> {
        let done = self.pending.pop_front();
        let oldest = self.pending.front().map_or(0, |next| next.sent);
        self.lag.oldest_pending.store(oldest, Ordering::Relaxed);
        done
    }

    async fn write_bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes).await?;
        self.writer.flush().await
    }

    async fn write_internal(&mut self) -> std::io::Result<()> {
        if self.internal.is_empty() {
            return Ok(());
        }
        let mut calls = Vec::new();
        for line in std::mem::take(&mut self.internal) {
            // Nobody waits for these replies: the receiver is dropped at once.
            let (reply, _) = oneshot::channel();
            let call = Call {
                line,
                command: "refresh-client",
                cursor_pane: None,
            };
            calls.push((call, reply));
        }
        self.write_calls(calls).await
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Reply(reply) => self.handle_reply(reply),
            // A quiet client gets no output; should tmux send some, its
            // journal position is not ours to move.
            Event::Output { .. } | Event::ExtendedOutput { .. } if self.role == Role::Quiet => {}
            Event::Output { pane, data } => self.handle_output(pane, &data),
            Event::ExtendedOutput { pane, data, age_ms } => {
                if age_ms >= BEHIND.as_millis() as u64 {
                    self.lag
                        .late_output
                        .store(self.lag.now(), Ordering::Relaxed);
                }
                self.handle_output(pane, &data);
            }
            Event::Pause { pane } => {
                // tmux dropped this pane's output for us: record the gap so
                // waits report it, then ask for the output to flow again.
                tracing::warn!(%pane, "tmux paused a pane's output; recording a gap");
                self.shared
                    .panes
                    .record_gap(pane, termpilot_journal::GapReason::Paused);
                let resume = termpilot_control::Command::new("refresh-client")
                    .opt("-A", format!("{pane}:continue"))
                    .build()
                    .expect("no NUL in a pane id");
                self.internal.push(resume);
            }
            Event::Continue { .. } => {}
            Event::Exit { reason } => {
                tracing::debug!(client = self.id.0, ?reason, "control client exiting");
                if !std::mem::replace(&mut self.departing, true) {
                    self.shared.departing.send_modify(|n| *n += 1);
                }
            }
            Event::Notification(_) if self.role == Role::Quiet => {}
            Event::Notification(notification) => self.handle_notification(notification),
        }
    }

    fn handle_output(&mut self, pane: PaneId, data: &[u8]) {
        if self.shared.panes.append(self.id, pane, data) && !self.touched.contains(&pane) {
            self.touched.push(pane);
        }
    }

    fn handle_reply(&mut self, reply: Reply) {
        if reply.flags & 1 == 0 {
            if self.setup_replies > 0 && reply.ok {
                self.setup_replies -= 1;
                return;
            }
            // A command that fails ends the command line: nothing follows.
            self.setup_replies = 0;
            if let Some(ready) = self.ready.take() {
                let result = if reply.ok {
                    Ok(reply)
                } else {
                    Err(reply.text())
                };
                let _ = ready.send(result);
            }
            return;
        }
        let Some(pending) = self.pending.front_mut() else {
            tracing::warn!(
                number = reply.number,
                "reply with no command waiting for it"
            );
            return;
        };
        let part = pending.answers.len();
        let (command, cursor_pane) = pending.parts.get(part).copied().unwrap_or(("", None));
        let cursor = cursor_pane.map(|pane| self.shared.panes.end(pane));
        let failed = !reply.ok;
        pending.answers.push(Answer {
            command,
            reply,
            cursor,
            received: std::time::Instant::now(),
        });
        // A failed command ends its line: tmux skips the rest of it.
        if (failed || pending.answers.len() >= pending.parts.len())
            && let Some(done) = self.pop_pending()
        {
            done.finish();
        }
    }

    fn handle_notification(&mut self, notification: Notification) {
        match notification {
            Notification::SessionsChanged => self.shared.mark_sessions_dirty(),
            Notification::SessionChanged { session, .. } => match self.session {
                None => self.session = Some(session),
                Some(mine) if mine != session => {
                    // The session we tracked is gone and tmux moved this
                    // client to another one (detach-on-destroy off). That
                    // session has its own client: leave.
                    tracing::debug!(client = self.id.0, %mine, %session, "client moved; detaching");
                    self.shared.forget_client(self.id);
                    self.leaving = true;
                }
                Some(_) => {}
            },
            Notification::WindowClose { .. }
            | Notification::UnlinkedWindowClose { .. }
            | Notification::WindowAdd { .. }
            | Notification::PaneModeChanged { .. }
            | Notification::LayoutChange { .. } => self.shared.mark_panes_changed(),
            _ => {}
        }
    }

    /// The client's session, when the client closed because that session
    /// ended while the server runs on: tmux said `%exit` without the engine
    /// asking, and the server still lists sessions, not this one. (tmux
    /// 3.3a says a bare `%exit` both when the session is killed and when the
    /// server is, and nothing when the server dies abruptly.) Asks the
    /// server only when calls are pending, since only their error says it.
    async fn session_ended(&self) -> Option<SessionId> {
        let session = self.session?;
        if self.pending.is_empty() || !self.departing || self.detaching {
            return None;
        }
        let listing = self.shared.transport.run(SessionIdRow::listing_args());
        let output = tokio::time::timeout(SETTLE, listing).await.ok()?.ok()?;
        let sessions = SessionIdRow::ids_in(&output.stdout);
        (output.success && !sessions.is_empty() && !sessions.contains(&session)).then_some(session)
    }

    async fn finish(mut self, end: &mut dyn crate::transport::Far, reason: String) {
        if let Some(ready) = self.ready.take() {
            let said = end.diagnostics().await;
            let why = if said.is_empty() {
                reason.clone()
            } else {
                said
            };
            let _ = ready.send(Err(why));
        }
        if !self.departing && !self.detaching {
            self.shared.mark_host_lost();
        }
        let ended = match self.role {
            Role::Session => {
                self.shared.forget_client(self.id);
                self.shared.panes.release(self.id);
                self.session_ended().await
            }
            // Its commands name their targets: the session it sat in ending
            // says nothing about them.
            Role::Quiet => {
                self.shared.forget_quiet(self.id);
                None
            }
        };
        for pending in self.pending.drain(..) {
            pending.fail(&reason, ended);
        }
        end.close().await;
        if self.departing {
            self.shared
                .departing
                .send_modify(|n| *n = n.saturating_sub(1));
        }
        tracing::debug!(client = self.id.0, %reason, "control client ended");
    }
}
