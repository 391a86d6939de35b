//! The engine: owns the control clients, keeps one attached to every session
//! (tmux sends a pane's output only to clients attached to its session),
//! routes commands, and reconnects when the tmux server comes back.
//!
//! tmux writes a reply to a client after all output it queued for that
//! client before, and a pane printing as fast as it can queues seconds of
//! it. So the engine also keeps, once a session client falls behind, a
//! quiet client (`no-output`) that commands can take instead, at the price
//! of a less exact cursor (see `Engine::run_for_pane`).

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use termpilot_control::{Command, PaneId, Reply, SessionId, TargetKind};
use tokio::sync::watch;

use crate::client::{self, Answer, Call, ClientHandle, Group, Role};
use crate::clients::Clients;
use crate::config::EngineConfig;
use crate::error::{Error, Result};
use crate::format::{PaneIdRow, SessionIdRow};
use crate::panes::{ClientId, Panes};
use crate::transport::{Local, OneShot, Transport};

/// State shared by the engine handle, the supervisor and every client task.
pub(crate) struct Shared {
    pub(crate) config: EngineConfig,
    /// How control clients reach the server.
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) panes: Panes,
    /// The control clients (see `clients.rs`).
    pub(crate) clients: Clients,
    /// What the engine knows of the server, and what changed there.
    pub(crate) server: ServerState,
    /// Commands `run_command` left running after a timeout.
    pub(crate) running: Mutex<crate::shell::RunningCommands>,
    /// The line typed into each pane, judged before input goes out.
    pub(crate) gate: crate::gate::Gate,
    /// The newest dump of each remote pane's processes (see `procfs`).
    pub(crate) dumps: crate::procfs::Dumps,
    /// Wakes the supervisor; capacity one, since one wake covers any number
    /// of changes.
    wake: tokio::sync::mpsc::Sender<()>,
    /// Whether connecting starts the server (with a first session) when
    /// none runs; `false` for a server termpilot did not start and must
    /// not start (see [`Engine::connect_existing`]).
    starts_server: AtomicBool,
}

/// What the engine knows of the tmux server it is connected to, and the
/// changes there its supervisor has yet to act on. A std `Mutex`: held
/// only to read or replace the facts, never across an `.await`.
pub(crate) struct ServerState {
    /// Facts learnt when connecting.
    facts: Mutex<Option<ServerFacts>>,
    /// Identifies the tmux server instance behind cursors (its pid).
    server_pid: AtomicU32,
    sessions_dirty: AtomicBool,
    /// Set when panes may have gone away, so the supervisor prunes journals.
    panes_dirty: AtomicBool,
    /// Bumped whenever tmux reports windows, panes or sessions changing, so
    /// waits can check whether their pane still exists.
    panes_changed: watch::Sender<u64>,
    /// Set when a control client's pipe closed without tmux saying it
    /// exits, on a server reached through ssh or an exec command: the
    /// connection to the host dropped. Cleared by the next connect.
    host_lost: AtomicBool,
    /// How many control clients lost their connection to the host (every
    /// client of a dropped connection counts): output printed while no
    /// client was attached is never sent, so a command typed before a drop
    /// may have lost its end marker (see `shell::unseen`).
    outages: AtomicU64,
}

impl ServerState {
    fn new() -> ServerState {
        ServerState {
            facts: Mutex::new(None),
            server_pid: AtomicU32::new(0),
            sessions_dirty: AtomicBool::new(false),
            panes_dirty: AtomicBool::new(false),
            panes_changed: watch::Sender::new(0),
            host_lost: AtomicBool::new(false),
            outages: AtomicU64::new(0),
        }
    }
}

/// What the engine learns about the server when it connects.
#[derive(Debug, Clone)]
pub(crate) struct ServerFacts {
    /// The pane termpilot itself runs in, when it runs inside this server.
    pub(crate) own_pane: Option<PaneId>,
}

impl Shared {
    /// The server's sessions, asked of a `tmux list-sessions` outside
    /// control mode (to connect, or to tell a session's end from the
    /// server's); none when no server runs.
    async fn sessions_by_subprocess(&self) -> Result<Vec<SessionId>> {
        match self.transport.run(SessionIdRow::listing_args()).await? {
            OneShot::Reply(listed) => Ok(SessionIdRow::ids_in(&listed)),
            OneShot::NoServer => Ok(Vec::new()),
            OneShot::Refused { why } => Err(self.connect_error(why)),
        }
    }

    pub(crate) fn connect_error(&self, reason: String) -> Error {
        Error::Connect {
            socket: self.transport.describe(),
            reason,
        }
    }

    pub(crate) fn mark_sessions_dirty(&self) {
        self.mark_panes_changed();
        self.server.sessions_dirty.store(true, Ordering::Release);
        let _ = self.wake.try_send(());
    }

    /// Records that a control client's connection dropped under it.
    pub(crate) fn mark_host_lost(&self) {
        if !self.transport.is_local() {
            self.server.host_lost.store(true, Ordering::Release);
            self.server.outages.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// How many control clients lost their connection to the host so far.
    pub(crate) fn outages(&self) -> u64 {
        self.server.outages.load(Ordering::Acquire)
    }

    /// Whether the connection to the host dropped since the last connect.
    pub(crate) fn host_lost(&self) -> bool {
        self.server.host_lost.load(Ordering::Acquire)
    }

    pub(crate) fn mark_panes_changed(&self) {
        self.server.panes_dirty.store(true, Ordering::Release);
        let _ = self.wake.try_send(());
        self.server
            .panes_changed
            .send_modify(|generation| *generation += 1);
    }

    /// Removes a session client from the table (it exited or is leaving).
    pub(crate) fn forget_client(&self, id: ClientId) {
        self.clients.remove(id);
        self.mark_panes_changed();
    }

    /// An id for a new client (unique in this engine).
    pub(crate) fn next_client_id(&self) -> ClientId {
        self.clients.next_id()
    }

    /// Some session client, if any is attached.
    pub(crate) fn any_client(&self) -> Option<ClientHandle> {
        self.clients.any()
    }

    /// Asks the supervisor to start the quiet client, if there is none.
    pub(crate) fn want_quiet(&self) {
        if self.clients.want_quiet() {
            let _ = self.wake.try_send(());
        }
    }
}

impl client::Listener for Shared {
    fn output(&self, client: ClientId, pane: PaneId, data: &[u8]) -> bool {
        self.panes.append(client, pane, data)
    }

    fn grew(&self, panes: &[PaneId]) {
        for &pane in panes {
            self.panes.notify(pane);
        }
    }

    fn journal_end(&self, pane: PaneId) -> u64 {
        self.panes.end(pane)
    }

    fn paused(&self, pane: PaneId) {
        self.panes
            .record_gap(pane, termpilot_journal::GapReason::Paused);
    }

    fn sessions_changed(&self) {
        self.mark_sessions_dirty();
    }

    fn panes_changed(&self) {
        self.mark_panes_changed();
    }

    fn resized(&self, client: ClientId, visible_layout: &str) {
        self.panes.resized(client, visible_layout);
    }

    fn falling_behind(&self) {
        self.want_quiet();
    }

    fn moved(&self, client: ClientId) {
        self.forget_client(client);
    }

    fn ended(&self, client: ClientId, role: Role, dropped: bool) {
        if dropped {
            self.mark_host_lost();
        }
        match role {
            Role::Session => {
                self.forget_client(client);
                self.panes.release(client);
            }
            Role::Quiet => self.clients.forget_quiet(client),
        }
    }

    fn session_gone(&self, session: SessionId) -> crate::transport::BoxFuture<'_, bool> {
        Box::pin(async move {
            let Ok(sessions) = self.sessions_by_subprocess().await else {
                return false;
            };
            !sessions.is_empty() && !sessions.contains(&session)
        })
    }
}

/// Flags of every control client: it never affects window sizes, and a pane
/// whose output has waited in tmux for 30 s is paused (its output dropped and
/// recorded as a gap) instead of tmux dropping the whole client when it falls
/// 300 s behind.
pub(crate) const CLIENT_FLAGS: &str = "ignore-size,pause-after=30";

/// Flags of the quiet client: it never affects window sizes, and tmux sends
/// it no pane output.
pub(crate) const QUIET_FLAGS: &str = "ignore-size,no-output";

/// How long after a failed start the quiet client is tried again.
const QUIET_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

/// How long connecting retries failures that another process starting the
/// same server at the same moment can cause.
const CONNECT_RETRY: std::time::Duration = std::time::Duration::from_secs(10);

/// A handle on the engine. Cheap to clone; every clone talks to the same
/// control clients.
#[derive(Clone)]
pub struct Engine {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("server", &self.shared.transport.describe())
            .finish()
    }
}

impl Engine {
    /// Connects to the configured tmux server, starting it with a first
    /// session when it is not running, and attaches a control client to every
    /// session.
    pub async fn connect(config: EngineConfig) -> Result<Engine> {
        let transport = Arc::new(Local::new(&config));
        Engine::connect_with(config, transport).await
    }

    /// Connects to the configured tmux server, which must be running with
    /// a session: a server someone else started (a person's, for `termpilot
    /// attach`). Fails at once when none runs, and never starts one, now or
    /// when reconnecting.
    pub async fn connect_existing(config: EngineConfig) -> Result<Engine> {
        let transport = Arc::new(Local::new(&config));
        Engine::connect_existing_with(config, transport).await
    }

    /// [`Engine::connect_existing`] to the server `transport` reaches.
    pub async fn connect_existing_with(
        config: EngineConfig,
        transport: Arc<dyn Transport>,
    ) -> Result<Engine> {
        let (engine, woken) = Engine::unconnected(config, transport);
        engine.shared.starts_server.store(false, Ordering::Release);
        engine.start(woken).await
    }

    /// Connects to the server `transport` reaches, as [`Engine::connect`]
    /// does; `config`'s tmux program and socket are not used.
    pub async fn connect_with(
        config: EngineConfig,
        transport: Arc<dyn Transport>,
    ) -> Result<Engine> {
        let (engine, woken) = Engine::unconnected(config, transport);
        engine.start(woken).await
    }

    /// Connects the engine, then starts its background tasks.
    async fn start(self, woken: tokio::sync::mpsc::Receiver<()>) -> Result<Engine> {
        let engine = self;
        engine.primary().await?;
        tokio::spawn(supervise(Arc::downgrade(&engine.shared), woken));
        let wanted = engine.shared.panes.watchers();
        tokio::spawn(crate::person::watch_panes(
            Arc::downgrade(&engine.shared),
            wanted,
        ));
        Ok(engine)
    }

    /// An engine over `transport` with no client and no background task
    /// yet, and the receiver that wakes its supervisor.
    pub(crate) fn unconnected(
        config: EngineConfig,
        transport: Arc<dyn Transport>,
    ) -> (Engine, tokio::sync::mpsc::Receiver<()>) {
        let journal_bytes = config.journal_bytes;
        let (wake, woken) = tokio::sync::mpsc::channel(1);
        let shared = Arc::new(Shared {
            config,
            transport,
            panes: Panes::new(journal_bytes),
            clients: Clients::new(),
            server: ServerState::new(),
            running: Mutex::new(Default::default()),
            gate: Default::default(),
            dumps: Default::default(),
            wake,
            starts_server: AtomicBool::new(true),
        });
        (Engine { shared }, woken)
    }

    /// The configuration the engine was started with.
    pub fn config(&self) -> &EngineConfig {
        &self.shared.config
    }

    /// The pid of the tmux server, which tells one server from the next on
    /// the same socket: cursors carry it, since a new server numbers its
    /// panes anew (0 before the engine first reached a server).
    pub fn server_pid(&self) -> u32 {
        self.shared.server.server_pid.load(Ordering::Acquire)
    }

    /// Whether the server's panes run on this machine, so `/proc` here
    /// tells about their processes. On another host nothing is read from
    /// this machine's `/proc`: pids there name other processes.
    pub(crate) fn panes_are_local(&self) -> bool {
        self.shared.transport.is_local()
    }

    /// Whether the connection to the server's host dropped and no control
    /// client is connected again yet.
    pub(crate) fn connection_lost(&self) -> bool {
        self.shared.any_client().is_none() && self.shared.host_lost()
    }

    /// The pane termpilot itself runs in, if it runs inside this server.
    pub fn own_pane(&self) -> Option<PaneId> {
        let server = (self.shared.server.facts.lock()).unwrap_or_else(|e| e.into_inner());
        server.as_ref().and_then(|facts| facts.own_pane)
    }

    /// A client for commands that are not about one pane, connecting (and
    /// starting the server) first if there is none. A client whose replies
    /// wait behind queued output is chosen only when all are behind and the
    /// quiet client cannot be had.
    pub(crate) async fn primary(&self) -> Result<ClientHandle> {
        let any = self.connected().await?;
        if !any.is_behind() {
            return Ok(any);
        }
        if let Some(client) = self.shared.clients.prompt().filter(|c| !c.is_behind()) {
            return Ok(client);
        }
        Ok(self.quiet().await.unwrap_or(any))
    }

    /// The control client that receives no pane output, started on first
    /// use (attached to the oldest session, without changing its size).
    /// Its replies never wait behind a flood; they have no place in any
    /// pane's output stream, so nothing that takes a cursor from a reply
    /// runs on it.
    pub(crate) async fn quiet(&self) -> Result<ClientHandle> {
        if let Some(quiet) = self.shared.clients.quiet() {
            return Ok(quiet);
        }
        let _turn = self.shared.clients.quiet_starting.lock().await;
        if let Some(quiet) = self.shared.clients.quiet() {
            return Ok(quiet);
        }
        let failed = *self
            .shared
            .clients
            .quiet_failed
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if failed.is_some_and(|at| at.elapsed() < QUIET_RETRY) {
            return Err(self
                .shared
                .connect_error("the quiet client failed to start".into()));
        }
        let started = self.start_quiet().await;
        *self
            .shared
            .clients
            .quiet_failed
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = match &started {
            Ok(_) => None,
            Err(_) => Some(tokio::time::Instant::now()),
        };
        started
    }

    async fn start_quiet(&self) -> Result<ClientHandle> {
        let session = self.connected().await?.session;
        let session = (self.shared.clients.sessions().into_iter().min()).unwrap_or(session);
        let args: Vec<OsString> = vec![
            "attach-session".into(),
            "-f".into(),
            QUIET_FLAGS.into(),
            "-t".into(),
            session.to_string().into(),
        ];
        let (handle, _) = client::spawn_as(&self.shared, args, Some(session), Role::Quiet)
            .await
            .inspect_err(|e| tracing::debug!(error = %e, "the quiet client did not start"))?;
        self.shared.clients.set_quiet(handle.clone());
        Ok(handle)
    }

    /// Some session client, connecting (and starting the server) first if
    /// there is none.
    async fn connected(&self) -> Result<ClientHandle> {
        if let Some(client) = self.shared.any_client() {
            return Ok(client);
        }
        let _guard = self.shared.clients.tracking.lock().await;
        if let Some(client) = self.shared.any_client() {
            return Ok(client);
        }
        let Some(limit) = self.shared.transport.connect_timeout() else {
            return self.connect_retrying().await;
        };
        // The whole of connecting to a host, from ssh's first packet to the
        // last session attached, gets the host's time.
        match tokio::time::timeout(limit, self.connect_retrying()).await {
            Ok(connected) => connected,
            Err(_) => {
                // Half a connection is none: the clients attached so far leave.
                self.shared.clients.detach_all();
                let secs = limit.as_secs_f64();
                Err(self
                    .shared
                    .connect_error(format!("no answer within {secs} s")))
            }
        }
    }

    /// Connects, retrying for a while on this machine. Called with the
    /// tracking lock held.
    async fn connect_retrying(&self) -> Result<ClientHandle> {
        // Another process may be starting the same server or its first
        // session this very moment: a failure then is transient.
        // A host elsewhere that cannot be reached says so at once.
        // A server someone else started is attached as it is, at once.
        let starts_server = self.shared.starts_server.load(Ordering::Acquire);
        let retry = if self.panes_are_local() && starts_server {
            CONNECT_RETRY
        } else {
            std::time::Duration::ZERO
        };
        let deadline = tokio::time::Instant::now() + retry;
        loop {
            match self.connect_all().await {
                Ok(()) if self.shared.any_client().is_some() => break,
                Ok(()) => {}
                Err(e @ Error::TmuxMissing { .. }) => return Err(e),
                Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
                Err(e) => tracing::debug!(error = %e, "connecting failed; retrying"),
            }
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        self.shared.any_client().ok_or_else(|| {
            self.shared
                .connect_error("no session could be attached".into())
        })
    }

    /// Attaches to every existing session, or starts the server with a first
    /// session. Called with the tracking lock held.
    async fn connect_all(&self) -> Result<()> {
        let sessions = self.list_sessions_by_subprocess().await?;
        if sessions.is_empty() && !self.shared.starts_server.load(Ordering::Acquire) {
            return Err(self
                .shared
                .connect_error("no tmux server is running there".into()));
        }
        if sessions.is_empty() {
            self.start_first_session().await?;
        } else {
            for session in sessions {
                if let Err(e) = self.attach(session).await {
                    tracing::warn!(%session, error = %e, "could not attach to session");
                }
            }
        }
        self.learn_server_facts().await
    }

    async fn start_first_session(&self) -> Result<()> {
        let config = &self.shared.config;
        let (w, h) = config.default_size;
        // Set up as every server termpilot starts: a longer history, and
        // the mark `termpilot stop` looks for.
        let mut args = crate::server_admin::started_server_options(config);
        args.extend(
            [
                "new-session",
                "-A",
                "-f",
                CLIENT_FLAGS,
                "-P",
                "-F",
                SessionIdRow::FORMAT,
                "-s",
            ]
            .map(OsString::from),
        );
        args.push(config.first_session.clone().into());
        args.extend([
            "-x".into(),
            w.to_string().into(),
            "-y".into(),
            h.to_string().into(),
        ]);
        let (handle, _) = client::spawn(&self.shared, args, None).await?;
        self.shared.clients.insert(handle);
        Ok(())
    }

    /// Attaches a control client to `session`. Called with the tracking lock
    /// held.
    async fn attach(&self, session: SessionId) -> Result<()> {
        let args: Vec<OsString> = vec![
            "attach-session".into(),
            "-f".into(),
            CLIENT_FLAGS.into(),
            "-t".into(),
            session.to_string().into(),
        ];
        let (handle, _) = client::spawn(&self.shared, args, Some(session)).await?;
        self.shared.clients.insert(handle);
        Ok(())
    }

    /// Runs `tmux list-sessions` outside control mode: used only to connect,
    /// when there is no control client to ask. An absent server is no error.
    async fn list_sessions_by_subprocess(&self) -> Result<Vec<SessionId>> {
        self.shared.sessions_by_subprocess().await
    }

    async fn learn_server_facts(&self) -> Result<()> {
        let client = self
            .shared
            .any_client()
            .ok_or_else(|| self.shared.connect_error("no control client".into()))?;
        let reply = run(
            &client,
            Command::new("display-message")
                .flag("-p")
                .arg(ServerRow::FORMAT),
        )
        .await?;
        let ServerRow { pid, socket_path } = ServerRow::parse_first("display-message", &reply)?;
        let own_pane = (self.shared.config.host.as_ref())
            .filter(|host| host.socket_path == socket_path)
            .map(|host| host.pane);
        self.shared.server.host_lost.store(false, Ordering::Release);
        let previous = self.shared.server.server_pid.swap(pid, Ordering::AcqRel);
        if previous != pid {
            self.shared.panes.clear();
        }
        *(self.shared.server.facts.lock()).unwrap_or_else(|e| e.into_inner()) =
            Some(ServerFacts { own_pane });
        Ok(())
    }

    /// Attaches clients to sessions that appeared since we last looked.
    pub(crate) async fn sync_sessions(&self) -> Result<()> {
        let _guard = self.shared.clients.tracking.lock().await;
        let Some(client) = self.shared.clients.prompt() else {
            return Ok(());
        };
        let reply = run(&client, SessionIdRow::listing()).await?;
        let tracked = self.shared.clients.sessions();
        for session in SessionIdRow::ids_in(&reply.text()) {
            if !tracked.contains(&session)
                && let Err(e) = self.attach(session).await
            {
                tracing::debug!(%session, error = %e, "session vanished before attach");
            }
        }
        Ok(())
    }

    /// Creates a session through a new control client, so the client is
    /// attached from the session's first byte of output.
    pub(crate) async fn spawn_session(&self, args: Vec<OsString>) -> Result<Reply> {
        self.primary().await?;
        let _guard = self.shared.clients.tracking.lock().await;
        let (handle, first) =
            client::spawn(&self.shared, args, None)
                .await
                .map_err(|e| match e {
                    Error::Connect { reason, .. } => Error::Command {
                        command: "new-session".into(),
                        message: reason,
                    },
                    other => other,
                })?;
        self.shared.clients.insert(handle);
        Ok(first)
    }

    /// Drops the journals of panes that are gone, beyond the most recent
    /// few (so output of a pane that just exited can still be read).
    async fn prune_journals(&self) -> Result<()> {
        let Some(client) = self.shared.clients.prompt() else {
            return Ok(());
        };
        let reply = run(
            &client,
            Command::new("list-panes")
                .flag("-a")
                .opt("-F", PaneIdRow::FORMAT),
        )
        .await?;
        let live: Vec<PaneId> = (PaneIdRow::parse_all("list-panes", &reply)?)
            .into_iter()
            .map(|row| row.id)
            .collect();
        self.shared.panes.prune(&live);
        Ok(())
    }

    /// The client whose stream carries `pane`'s output (claiming one if no
    /// output has been seen yet).
    pub(crate) async fn client_for_pane(&self, pane: PaneId) -> Result<ClientHandle> {
        if let Some(client) = self
            .shared
            .panes
            .owner(pane)
            .and_then(|id| self.shared.clients.by_id(id))
        {
            return Ok(client);
        }
        let primary = self.primary().await?;
        let query = Command::new("display-message")
            .flag("-p")
            .opt("-t", pane.to_string())
            .arg(SessionIdRow::FORMAT);
        let reply = run(&primary, query)
            .await
            .map_err(|e| not_found_pane(e, &pane.to_string()))?;
        // display-message does not fail on a missing target: it prints nothing.
        let session = SessionIdRow::parse_first("display-message", &reply)
            .map_err(|_| Error::pane_not_found(pane.to_string()))?
            .id;
        let client = match self.shared.clients.for_session(session) {
            Some(client) => client,
            None => {
                self.sync_sessions().await?;
                self.shared.clients.for_session(session).ok_or_else(|| {
                    self.shared
                        .connect_error(format!("cannot attach to session {session}"))
                })?
            }
        };
        let owner = self.shared.panes.claim(pane, client.id);
        Ok(self.shared.clients.by_id(owner).unwrap_or(client))
    }

    /// Runs one command on the primary client; a `%error` becomes an error.
    pub async fn command(&self, command: Command) -> Result<Reply> {
        let client = self.primary().await?;
        run(&client, command).await
    }

    /// Waits (at most a couple of seconds) until the control client of a
    /// session that was just killed has ended: connecting another client
    /// while tmux detaches that one can crash tmux 3.3a (see
    /// `transport::Departures`), and an agent often creates a session right
    /// after killing one.
    pub(crate) async fn await_client_gone(&self, session: SessionId) {
        let mut changed = self.panes_changed();
        let gone = async {
            while self.shared.clients.for_session(session).is_some() {
                if changed.changed().await.is_err() {
                    return;
                }
            }
            if let Some(departures) = self.shared.transport.departures() {
                departures.settled(client::SETTLE).await;
            }
        };
        let _ = tokio::time::timeout(client::SETTLE, gone).await;
    }

    /// A receiver that changes whenever tmux reports windows, panes or
    /// sessions changing.
    pub fn panes_changed(&self) -> watch::Receiver<u64> {
        self.shared.server.panes_changed.subscribe()
    }
}

crate::format::tmux_format! {
    /// The tmux server's pid (which cursors carry) and socket.
    struct ServerRow {
        pid: u32 = "pid",
        socket_path: String = "socket_path",
    }
}

/// The global user option that marks a tmux server termpilot started.
pub const STARTED_MARK: &str = "@termpilot-started";

/// Builds a call from a command, failing on arguments tmux cannot carry.
pub(crate) fn call(command: Command, cursor_pane: Option<PaneId>) -> Result<Call> {
    let name = command.name();
    let line = command
        .build()
        .map_err(|e| Error::InvalidArgument(format!("{name}: {e}")))?;
    Ok(Call {
        line,
        command: name,
        cursor_pane,
    })
}

/// Commands joined into one line (see [`Group`]), each with the pane whose
/// journal end its reply snapshots.
pub(crate) fn group(
    commands: impl IntoIterator<Item = (Command, Option<PaneId>)>,
) -> Result<Group> {
    let mut line = Vec::new();
    let mut parts = Vec::new();
    for (command, cursor_pane) in commands {
        let built = call(command, cursor_pane)?;
        if !line.is_empty() {
            line.extend_from_slice(b" ; ");
        }
        line.extend_from_slice(built.line.strip_suffix(b"\n").unwrap_or(&built.line));
        parts.push((built.command, built.cursor_pane));
    }
    line.push(b'\n');
    Ok(Group { line, parts })
}

/// Runs one command and turns `%error` into [`Error::Command`].
pub(crate) async fn run(client: &ClientHandle, command: Command) -> Result<Reply> {
    let answer = client.call(call(command, None)?).await?;
    ok_reply(answer)
}

/// Turns an `%error` reply into the error tmux's message means (see
/// [`crate::error::classify`]).
pub(crate) fn ok_reply(answer: Answer) -> Result<Reply> {
    if answer.reply.ok {
        Ok(answer.reply)
    } else {
        Err(crate::error::classify(answer.command, answer.reply.text()))
    }
}

/// A not-found error reported for the pane target `target` as the caller
/// wrote it; any other error as it is.
pub(crate) fn not_found_pane(error: Error, target: &str) -> Error {
    error.not_found_as(TargetKind::Pane, target)
}

/// Background task: attaches clients to new sessions when tmux says the
/// session list changed. Ends when the last engine handle is dropped (the
/// wake channel's sender lives in the shared state).
async fn supervise(shared: Weak<Shared>, mut woken: tokio::sync::mpsc::Receiver<()>) {
    while woken.recv().await.is_some() {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let sessions = strong.server.sessions_dirty.swap(false, Ordering::AcqRel);
        let panes = strong.server.panes_dirty.swap(false, Ordering::AcqRel);
        let quiet = strong.clients.take_quiet_wanted();
        let engine = Engine { shared: strong };
        // Started before it is needed: the first command to a flooding pane
        // then finds it ready. Apart, so that connecting holds up no sync.
        if quiet {
            let engine = engine.clone();
            tokio::spawn(async move {
                if let Err(e) = engine.quiet().await {
                    tracing::debug!(error = %e, "starting the quiet client failed");
                }
            });
        }
        if sessions && let Err(e) = engine.sync_sessions().await {
            tracing::debug!(error = %e, "session sync failed");
        }
        if panes && let Err(e) = engine.prune_journals().await {
            tracing::debug!(error = %e, "pruning journals failed");
        }
    }
}
