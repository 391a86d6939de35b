//! One tmux control client: the task that owns a [`Connection`] and
//! applies what it reads, and the handles the engine sends commands with.
//!
//! Commands go in through a channel; the task writes them on the
//! connection, which matches each reply to its caller. Output is routed
//! into the pane journals as it is read, in stream order; that order is
//! what makes cursors exact. The task knows the engine only as a
//! [`Listener`]: the few things a client tells it.

use std::ffi::OsString;
use std::sync::Arc;

use termpilot_control::{Event, Notification, PaneId, Reply, SessionId};
use tokio::sync::{mpsc, oneshot};

pub(crate) use crate::connection::{Answer, BEHIND, Call, Group};
use crate::connection::{Connection, GroupReplyTo, Incoming, Lag, ReplyTo};
use crate::engine::Shared;
use crate::error::{Error, Result};
use crate::format::SessionIdRow;
use crate::panes::ClientId;
pub(crate) use crate::transport::SETTLE;
use crate::transport::{BoxFuture, PipeProcess};

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

/// What a client's task tells the engine, and the little it asks of it:
/// all the task knows of the engine's state.
pub(crate) trait Listener: Send + Sync + 'static {
    /// Appends output to `pane`'s journal if `client` carries the pane;
    /// whether it did.
    fn output(&self, client: ClientId, pane: PaneId, data: &[u8]) -> bool;
    /// Wakes whoever waits on these panes' journals, which grew.
    fn grew(&self, panes: &[PaneId]);
    /// The end of `pane`'s journal: the cursor of a reply taken now.
    fn journal_end(&self, pane: PaneId) -> u64;
    /// tmux dropped `pane`'s output for this client: a gap.
    fn paused(&self, pane: PaneId);
    /// tmux said the list of sessions changed.
    fn sessions_changed(&self);
    /// tmux said windows or panes changed.
    fn panes_changed(&self);
    /// tmux said a window's layout (`visible_layout`, as client `client`
    /// sees it) changed: its panes' sizes, for recordings.
    fn resized(&self, client: ClientId, visible_layout: &str);
    /// A session client's output comes late: replies wait behind it.
    fn falling_behind(&self);
    /// tmux moved session client `client` to another session: it leaves.
    fn moved(&self, client: ClientId);
    /// Client `client` ended; `dropped` when its pipe closed without tmux
    /// saying `%exit` and without the engine asking it to leave.
    fn ended(&self, client: ClientId, role: Role, dropped: bool);
    /// Whether the server runs on without `session` (and so the session
    /// ended, not the server); `false` when that cannot be told.
    fn session_gone(&self, session: SessionId) -> BoxFuture<'_, bool>;
}

enum Request {
    Calls(Vec<(Call, ReplyTo)>),
    Group(Group, GroupReplyTo),
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

/// The replies still to come for a group already handed to a client's task.
#[derive(Debug)]
pub(crate) struct GroupReplies {
    command: &'static str,
    rx: oneshot::Receiver<Result<Vec<Answer>>>,
}

impl GroupReplies {
    /// Waits for the replies of the group's commands that ran.
    pub(crate) async fn answers(self) -> Result<Vec<Answer>> {
        match self.rx.await {
            Ok(answers) => answers,
            Err(_) => Err(disconnected(self.command, "the control client stopped")),
        }
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
        self.send_group(group).await.answers().await
    }

    /// Hands a group of commands to the client's task, which writes it
    /// after everything handed to it before; the replies come later.
    pub(crate) async fn send_group(&self, group: Group) -> GroupReplies {
        let command = group.parts.first().map_or("", |p| p.0);
        let (tx, rx) = oneshot::channel();
        let _ = self.tx.send(Request::Group(group, tx)).await;
        GroupReplies { command, rx }
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
    // tmux 3.3a crashes when it writes to a control client still
    // identifying itself: the transport says when a client may (see
    // `ConnectTurn`), and the turn is held until the first reply.
    let _turn = shared.transport.turn_to_connect().await;
    // tmux answers each command of its command line (separated by `;`)
    // with a block of its own; the last one is the client's first reply.
    let setup_replies = args.iter().filter(|arg| *arg == ";").count();
    let pipe = shared.transport.open(args).await?;
    let id = shared.next_client_id();
    let (tx, rx) = mpsc::channel(256);
    let (ready_tx, ready_rx) = oneshot::channel();
    let conn = Connection::new(pipe.reader, pipe.writer, setup_replies);
    let lag = conn.lag();
    let task = ClientTask {
        id,
        role,
        listener: Arc::clone(shared) as Arc<dyn Listener>,
        conn,
        ready: Some(ready_tx),
        session,
        leaving: false,
        internal: Vec::new(),
        touched: Vec::new(),
        departing: false,
        detaching: false,
        process: pipe.process,
    };
    tokio::spawn(task.run(rx));
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
    /// Where what the client reads goes (the engine).
    listener: Arc<dyn Listener>,
    conn: Connection,
    /// Fired by the first block (the command on tmux's command line).
    ready: Option<oneshot::Sender<std::result::Result<Reply, String>>>,
    /// The session this client is attached to, once known.
    session: Option<SessionId>,
    /// Set when this client must detach after the events just read.
    leaving: bool,
    /// Commands the task itself sends (replies are discarded).
    internal: Vec<Vec<u8>>,
    /// Panes whose journals grew since the last read was drained.
    touched: Vec<PaneId>,
    /// tmux said `%exit`: counted as departing until the end.
    departing: bool,
    /// The engine asked this client to detach.
    detaching: bool,
    /// The process behind the pipe, ended with the task.
    process: Box<dyn PipeProcess>,
}

impl ClientTask {
    async fn run(mut self, mut rx: mpsc::Receiver<Request>) {
        let mut requests_done = false;
        let listener = Arc::clone(&self.listener);
        let journal_end = move |pane| listener.journal_end(pane);
        let reason = loop {
            // Commands first: under a flood the pipe from tmux always has
            // more to read, and a command must not wait for a pause in it.
            tokio::select! {
                biased;
                request = rx.recv(), if self.conn.started() && !requests_done => {
                    let written = match request {
                        Some(Request::Calls(calls)) => self.conn.send(calls).await,
                        Some(Request::Group(group, reply)) => self.conn.send_group(group, reply).await,
                        Some(Request::Detach) | None => {
                            // Once: a closed channel would answer `None` at
                            // once, every time, and the reads never come.
                            requests_done = true;
                            self.detaching = true;
                            self.conn.detach().await;
                            Ok(())
                        }
                    };
                    if let Err(e) = written {
                        break format!("writing to tmux failed: {e}");
                    }
                }
                incoming = self.conn.read_event(&journal_end) => match incoming {
                    Incoming::Started(first) => {
                        if let Some(ready) = self.ready.take() {
                            let _ = ready.send(first);
                        }
                    }
                    Incoming::Event(event) => self.apply(event),
                    Incoming::Drained => {
                        if let Err(e) = self.after_read().await {
                            break format!("writing to tmux failed: {e}");
                        }
                    }
                    Incoming::Closed(reason) => break reason,
                },
                () = abandoned(&mut self.ready), if self.ready.is_some() => {
                    // Whoever waited for the connection gave up (its time
                    // ran out): end it, and the process behind it.
                    self.detaching = true;
                    break "nobody waits for the connection any more".to_owned();
                }
            }
        };
        self.finish(reason).await;
    }

    /// Once the events of a read are applied: wakes the panes' waiters,
    /// writes what the events asked for, and leaves if told to.
    async fn after_read(&mut self) -> std::io::Result<()> {
        if !self.touched.is_empty() {
            self.listener.grew(&self.touched);
            self.touched.clear();
        }
        if self.role == Role::Session && self.conn.output_late() {
            self.listener.falling_behind();
        }
        if !self.internal.is_empty() {
            let lines = std::mem::take(&mut self.internal);
            self.conn.send_unanswered(lines, "refresh-client").await?;
        }
        if std::mem::take(&mut self.leaving) {
            self.detaching = true;
            self.conn.detach().await;
        }
        Ok(())
    }

    fn apply(&mut self, event: Event) {
        match event {
            Event::Reply(_) => {}
            // A quiet client gets no output; should tmux send some, its
            // journal position is not ours to move.
            Event::Output { .. } | Event::ExtendedOutput { .. } if self.role == Role::Quiet => {}
            Event::Output { pane, data } | Event::ExtendedOutput { pane, data, .. } => {
                if self.listener.output(self.id, pane, &data) && !self.touched.contains(&pane) {
                    self.touched.push(pane);
                }
            }
            Event::Pause { pane } => {
                // tmux dropped this pane's output for us: record the gap so
                // waits report it, then ask for the output to flow again.
                tracing::warn!(%pane, "tmux paused a pane's output; recording a gap");
                self.listener.paused(pane);
                let resume = termpilot_control::Command::new("refresh-client")
                    .opt("-A", format!("{pane}:continue"))
                    .build()
                    .expect("no NUL in a pane id");
                self.internal.push(resume);
            }
            Event::Continue { .. } => {}
            Event::Exit { reason } => {
                tracing::debug!(client = self.id.0, ?reason, "control client exiting");
                self.departing = true;
                self.process.exiting();
            }
            Event::Notification(_) if self.role == Role::Quiet => {}
            Event::Notification(notification) => self.apply_notification(notification),
        }
    }

    fn apply_notification(&mut self, notification: Notification) {
        match notification {
            Notification::SessionsChanged => self.listener.sessions_changed(),
            Notification::SessionChanged { session, .. } => match self.session {
                None => self.session = Some(session),
                Some(mine) if mine != session => {
                    // The session we tracked is gone and tmux moved this
                    // client to another one (detach-on-destroy off). That
                    // session has its own client: leave.
                    tracing::debug!(client = self.id.0, %mine, %session, "client moved; detaching");
                    self.listener.moved(self.id);
                    self.leaving = true;
                }
                Some(_) => {}
            },
            Notification::WindowClose { .. }
            | Notification::UnlinkedWindowClose { .. }
            | Notification::WindowAdd { .. }
            | Notification::PaneModeChanged { .. } => self.listener.panes_changed(),
            Notification::LayoutChange { visible_layout, .. } => {
                self.listener.resized(self.id, &visible_layout);
                self.listener.panes_changed();
            }
            _ => {}
        }
    }

    /// The client's session, when the client closed because that session
    /// ended while the server runs on: tmux said `%exit` without the engine
    /// asking, and the server still lists sessions, not this one. (tmux
    /// 3.3a says a bare `%exit` both when the session is killed and when the
    /// server is, and nothing when the server dies abruptly.) Asks the
    /// engine only when calls are pending, since only their error says it.
    async fn session_ended(&mut self) -> Option<SessionId> {
        let session = self.session?;
        if !self.conn.has_pending() || !self.departing || self.detaching {
            return None;
        }
        let listener = Arc::clone(&self.listener);
        let gone = tokio::time::timeout(SETTLE, listener.session_gone(session));
        gone.await.unwrap_or(false).then_some(session)
    }

    async fn finish(mut self, reason: String) {
        if let Some(ready) = self.ready.take() {
            let said = self.process.diagnostics().await;
            let why = if said.is_empty() {
                reason.clone()
            } else {
                said
            };
            let _ = ready.send(Err(why));
        }
        let dropped = !self.departing && !self.detaching;
        self.listener.ended(self.id, self.role, dropped);
        let ended = match self.role {
            Role::Session => self.session_ended().await,
            // Its commands name their targets: the session it sat in ending
            // says nothing about them.
            Role::Quiet => None,
        };
        self.conn.fail_pending(&reason, ended);
        self.process.close().await;
        tracing::debug!(client = self.id.0, %reason, "control client ended");
    }
}
