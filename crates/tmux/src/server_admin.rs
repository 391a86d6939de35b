//! A tmux server as a person's commands see it (`termpilot status`,
//! `termpilot stop`, `termpilot run --detachable`): asked about and changed
//! with one-shot tmux commands through the server's [`Transport`], never
//! through a control client.
//!
//! An [`Engine`](crate::Engine) attaches a control client to every session,
//! and a control client is a tmux client like any other: it would show in
//! `list-clients`, which `status` reports, and `kill-server` would end it
//! under `stop`. A [`ServerAdmin`] attaches nothing and starts no server
//! unless asked to create a session; where no server runs, its answers say
//! so as a value ([`ServerSurvey`] absent, [`Stopped::WasNotRunning`]), not
//! as tmux's words on standard error.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use termpilot_control::{PaneId, SessionId};

use crate::config::EngineConfig;
use crate::engine::STARTED_MARK;
use crate::error::{Error, Result};
use crate::format::tmux_format;
use crate::transport::{Local, OneShot, Transport};

tmux_format! {
    /// The server itself, as `display-message -p` prints it.
    struct ServerRow {
        pid: u32 = "pid",
        socket_path: String = "socket_path",
        /// The global [`STARTED_MARK`] option: `1` on a server termpilot
        /// started, empty on any other.
        mark: String = "@termpilot-started",
    }
}

tmux_format! {
    /// A session, as `list-sessions` prints it.
    struct SessionRow {
        id: SessionId = "session_id",
        name: String = "session_name",
        windows: u32 = "session_windows",
    }
}

tmux_format! {
    /// A tmux client, as `list-clients` prints it.
    struct ClientRow {
        control: bool = "client_control_mode",
        session: Option<SessionId> = "session_id",
    }
}

tmux_format! {
    /// The pane of a session created detached, as `new-session -P` prints
    /// it.
    pub struct DetachedPane {
        /// The new session.
        session: SessionId = "session_id",
        /// Its one pane.
        pane: PaneId = "pane_id",
        /// The process the pane runs (the command given, or the shell
        /// running it).
        pid: u32 = "pane_pid",
    }
}

/// What a running tmux server holds, asked without attaching to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSurvey {
    /// The server's process.
    pub pid: u32,
    /// Its socket file, as the server names it.
    pub socket_path: PathBuf,
    /// Whether termpilot started it (it carries the [`STARTED_MARK`]).
    pub started_by_termpilot: bool,
    /// Its sessions, in tmux's order.
    pub sessions: Vec<SessionSummary>,
}

/// One session of a [`ServerSurvey`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session's id.
    pub id: SessionId,
    /// Its name.
    pub name: String,
    /// How many windows it has.
    pub windows: u32,
    /// How many people's tmux clients are attached to it (control clients,
    /// which are termpilot's own connections, are not people).
    pub people: usize,
}

/// What stands in the way of ending a surveyed server, most serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCheck {
    /// Nothing: termpilot started it and nobody is attached.
    Clear,
    /// termpilot did not start it: it is someone's own server.
    NotStartedByTermpilot,
    /// People are attached to its sessions (this many clients).
    PeopleAttached(usize),
}

impl ServerSurvey {
    /// How many people's clients are attached, over all sessions.
    pub fn people(&self) -> usize {
        self.sessions.iter().map(|s| s.people).sum()
    }

    /// Whether ending the server would end something termpilot has no
    /// claim on.
    pub fn stop_check(&self) -> StopCheck {
        match self.people() {
            _ if !self.started_by_termpilot => StopCheck::NotStartedByTermpilot,
            0 => StopCheck::Clear,
            people => StopCheck::PeopleAttached(people),
        }
    }
}

/// How `kill-server` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The server was running and has ended.
    Ended,
    /// No server ran on the socket (it ended before it was asked to).
    WasNotRunning,
}

/// A session to create detached, running one command: what
/// `termpilot run --detachable` leaves in tmux.
#[derive(Debug, Clone, Default)]
pub struct DetachedSession {
    /// The session's name.
    pub name: String,
    /// Its size, as columns and rows.
    pub size: (u16, u16),
    /// The pane's working directory.
    pub directory: PathBuf,
    /// Variables set in the session's environment, as `NAME=VALUE`.
    pub environment: Vec<OsString>,
    /// The program and its arguments, run without a shell.
    pub command: Vec<OsString>,
}

/// One tmux server, reached through a [`Transport`] with one-shot commands
/// only (see the module documentation). Cheap to clone.
#[derive(Debug, Clone)]
pub struct ServerAdmin {
    transport: Arc<dyn Transport>,
    /// How a server this admin starts is set up (its history limit).
    config: EngineConfig,
}

impl ServerAdmin {
    /// The server `config` names on this machine.
    pub fn new(config: EngineConfig) -> ServerAdmin {
        let transport = Arc::new(Local::new(&config));
        ServerAdmin::with_transport(config, transport)
    }

    /// The server `transport` reaches; `config`'s tmux program and socket
    /// are not used.
    pub fn with_transport(config: EngineConfig, transport: Arc<dyn Transport>) -> ServerAdmin {
        ServerAdmin { transport, config }
    }

    /// The server as messages name it: `-L termpilot`, `-S /path`.
    pub fn describe(&self) -> String {
        self.transport.describe()
    }

    /// What `tmux -V` prints: `tmux 3.3a`.
    pub async fn tmux_version(&self) -> Result<String> {
        let printed = self.ask("-V", vec!["-V".into()]).await?;
        Ok(printed.unwrap_or_default().trim().to_owned())
    }

    /// The server's state, or `None` when no server runs on the socket.
    pub async fn survey(&self) -> Result<Option<ServerSurvey>> {
        let Some(sessions) = self.sessions().await? else {
            return Ok(None);
        };
        let Some(server) = self.server().await? else {
            return Ok(None);
        };
        let people = self.people().await?.unwrap_or_default();
        let sessions = sessions
            .into_iter()
            .map(|row| SessionSummary {
                people: people.iter().filter(|&&session| session == row.id).count(),
                id: row.id,
                name: row.name,
                windows: row.windows,
            })
            .collect();
        Ok(Some(ServerSurvey {
            pid: server.pid,
            socket_path: PathBuf::from(server.socket_path),
            started_by_termpilot: server.mark.trim() == "1",
            sessions,
        }))
    }

    /// Ends the server and every session on it, whoever started it (check
    /// [`ServerSurvey::stop_check`] first).
    pub async fn kill_server(&self) -> Result<Stopped> {
        let killed = self.ask("kill-server", args(["kill-server"])).await?;
        Ok(match killed {
            Some(_) => Stopped::Ended,
            None => Stopped::WasNotRunning,
        })
    }

    /// Creates `session` detached, starting the server when none runs;
    /// returns its pane. A server started here is set up as
    /// [`Engine::connect`](crate::Engine::connect) sets up one it starts:
    /// marked as termpilot's (so `termpilot stop` may end it) and with the
    /// configured history limit.
    pub async fn create_detached(&self, session: &DetachedSession) -> Result<DetachedPane> {
        let mut line = match self.sessions().await? {
            None => started_server_options(&self.config),
            Some(_) => Vec::new(),
        };
        line.extend(new_session_args(session));
        let printed = self.ask("new-session", line).await?.ok_or_else(|| {
            self.no_server_error("the server ended while the session was created")
        })?;
        DetachedPane::parse("new-session", printed.lines().next().unwrap_or_default())
    }

    /// Detaches the tmux client whose terminal is `tty` (a person's
    /// `tmux attach`, named by its terminal's path).
    pub async fn detach_client(&self, tty: &str) -> Result<()> {
        let mut line = args(["detach-client", "-t"]);
        line.push(tty.into());
        match self.ask("detach-client", line).await? {
            Some(_) => Ok(()),
            None => Err(self.no_server_error("no tmux server is running there")),
        }
    }

    async fn sessions(&self) -> Result<Option<Vec<SessionRow>>> {
        let line = args(["list-sessions", "-F", SessionRow::FORMAT]);
        let Some(printed) = self.ask("list-sessions", line).await? else {
            return Ok(None);
        };
        rows(&printed, |line| SessionRow::parse("list-sessions", line)).map(Some)
    }

    async fn server(&self) -> Result<Option<ServerRow>> {
        let line = args(["display-message", "-p", ServerRow::FORMAT]);
        let Some(printed) = self.ask("display-message", line).await? else {
            return Ok(None);
        };
        let first = printed.lines().next().unwrap_or_default();
        ServerRow::parse("display-message", first).map(Some)
    }

    /// The session of every person's client.
    async fn people(&self) -> Result<Option<Vec<SessionId>>> {
        let line = args(["list-clients", "-F", ClientRow::FORMAT]);
        let Some(printed) = self.ask("list-clients", line).await? else {
            return Ok(None);
        };
        let clients = rows(&printed, |line| ClientRow::parse("list-clients", line))?;
        let people = clients.into_iter().filter(|client| !client.control);
        Ok(Some(people.filter_map(|client| client.session).collect()))
    }

    /// Runs one tmux command line: what it printed, or `None` when no
    /// server runs; a refusal is [`Error::Command`] naming `command`.
    async fn ask(&self, command: &'static str, line: Vec<OsString>) -> Result<Option<String>> {
        match self.transport.run(line).await? {
            OneShot::Reply(printed) => Ok(Some(printed)),
            OneShot::NoServer => Ok(None),
            OneShot::Refused { why } => Err(Error::Command {
                command: command.to_owned(),
                message: why,
            }),
        }
    }

    fn no_server_error(&self, reason: &str) -> Error {
        Error::Connect {
            socket: self.describe(),
            reason: reason.to_owned(),
        }
    }
}

/// Words as a command line.
fn args<const N: usize>(words: [&str; N]) -> Vec<OsString> {
    words.map(OsString::from).to_vec()
}

/// Every non-empty line of `printed`, parsed.
fn rows<T>(printed: &str, parse: impl Fn(&str) -> Result<T>) -> Result<Vec<T>> {
    (printed.lines())
        .filter(|line| !line.is_empty())
        .map(parse)
        .collect()
}

/// The commands that set up a server termpilot starts, each followed by
/// `;`, to come first on the command line that starts it: a longer history
/// than tmux's 2,000 lines (set before the first session exists, it reaches
/// the first pane too), and the [`STARTED_MARK`] `termpilot stop` looks for.
pub(crate) fn started_server_options(config: &EngineConfig) -> Vec<OsString> {
    let limit = config.history_limit.to_string();
    let mut line = Vec::new();
    for (option, value) in [("history-limit", limit.as_str()), (STARTED_MARK, "1")] {
        line.extend(args(["set-option", "-g", option, value, ";"]));
    }
    line
}

/// `new-session` creating `session` detached and printing its pane.
fn new_session_args(session: &DetachedSession) -> Vec<OsString> {
    let (columns, rows) = session.size;
    let mut line = args(["new-session", "-d", "-P", "-F", DetachedPane::FORMAT, "-s"]);
    line.push(session.name.clone().into());
    line.extend(args(["-x", &columns.to_string(), "-y", &rows.to_string()]));
    line.push("-c".into());
    line.push(session.directory.clone().into());
    for variable in &session.environment {
        line.push("-e".into());
        line.push(variable.clone());
    }
    // `--` ends tmux's options: a command starting with `-` is still one.
    line.push("--".into());
    line.extend(session.command.iter().cloned());
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_read_as_the_engine_writes_it() {
        assert!(ServerRow::FIELDS.contains(&STARTED_MARK));
        let options = started_server_options(&EngineConfig {
            history_limit: 7,
            ..EngineConfig::default()
        });
        let words: Vec<_> = options.iter().map(|w| w.to_string_lossy()).collect();
        assert_eq!(
            words.join(" "),
            format!("set-option -g history-limit 7 ; set-option -g {STARTED_MARK} 1 ;")
        );
    }

    #[test]
    fn a_stop_is_held_back_by_a_foreign_server_first_then_by_people() {
        let session = |people| SessionSummary {
            id: SessionId(0),
            name: "main".into(),
            windows: 1,
            people,
        };
        let survey = |started, people: &[usize]| ServerSurvey {
            pid: 1,
            socket_path: "/tmp/s".into(),
            started_by_termpilot: started,
            sessions: people.iter().copied().map(session).collect(),
        };
        assert_eq!(survey(true, &[0, 0]).stop_check(), StopCheck::Clear);
        assert_eq!(
            survey(true, &[1, 2]).stop_check(),
            StopCheck::PeopleAttached(3)
        );
        assert_eq!(
            survey(false, &[1]).stop_check(),
            StopCheck::NotStartedByTermpilot
        );
        assert_eq!(
            survey(false, &[]).stop_check(),
            StopCheck::NotStartedByTermpilot
        );
    }

    #[test]
    fn a_detached_session_runs_its_command_after_the_options() {
        let line = new_session_args(&DetachedSession {
            name: "run-1".into(),
            size: (80, 24),
            directory: "/work".into(),
            environment: vec!["A=b c".into()],
            command: vec!["-weird".into(), "x".into()],
        });
        let words: Vec<_> = line.iter().map(|w| w.to_string_lossy()).collect();
        let format = DetachedPane::FORMAT;
        assert_eq!(
            words,
            [
                "new-session",
                "-d",
                "-P",
                "-F",
                format,
                "-s",
                "run-1",
                "-x",
                "80",
                "-y",
                "24",
                "-c",
                "/work",
                "-e",
                "A=b c",
                "--",
                "-weird",
                "x"
            ]
        );
    }
}
