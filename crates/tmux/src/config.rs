//! How to reach the tmux server.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

/// The socket name termpilot uses when it is not told to use another server.
pub const DEFAULT_SOCKET_NAME: &str = "termpilot";

/// Which tmux server to talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Socket {
    /// A socket name in tmux's socket directory (`tmux -L NAME`).
    Name(String),
    /// A full socket path (`tmux -S PATH`).
    Path(PathBuf),
}

impl Default for Socket {
    fn default() -> Self {
        Socket::Name(DEFAULT_SOCKET_NAME.to_owned())
    }
}

impl fmt::Display for Socket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Socket::Name(name) => write!(f, "-L {name}"),
            Socket::Path(path) => write!(f, "-S {}", path.display()),
        }
    }
}

/// Everything the engine needs to know before it connects.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The tmux program to run.
    pub tmux: PathBuf,
    /// The server to talk to.
    pub socket: Socket,
    /// The configuration file for a server termpilot starts itself. `None`
    /// means `/dev/null`, so a server termpilot starts behaves the same on
    /// every machine; a server that is already running keeps its own.
    pub server_config: Option<PathBuf>,
    /// Name of the first session when termpilot has to start the server.
    pub first_session: String,
    /// Size of sessions termpilot creates when the caller gives none.
    pub default_size: (u16, u16),
    /// Bytes of output kept per pane before the oldest are evicted.
    pub journal_bytes: usize,
    /// Lines of history (scrollback) of panes created on a server termpilot
    /// starts itself (tmux's own default is 2,000).
    pub history_limit: u32,
    /// The tmux pane termpilot itself runs in, if any: the engine refuses to
    /// type into or kill it when it belongs to the server in use.
    pub host: Option<HostPane>,
    /// The secrets hidden from every text the engine shows and from every
    /// pattern a wait matches (shared: every host's engine gets a clone).
    pub redactor: termpilot_journal::Redactor,
}

/// Where termpilot itself runs, as tmux tells its child processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPane {
    /// The socket path of the server the pane belongs to (first field of `$TMUX`).
    pub socket_path: String,
    /// The pane id (`$TMUX_PANE`).
    pub pane: termpilot_control::PaneId,
}

impl HostPane {
    /// Reads `$TMUX` and `$TMUX_PANE`; `None` outside tmux.
    pub fn from_env() -> Option<HostPane> {
        let tmux = std::env::var("TMUX").ok()?;
        let socket_path = tmux.split(',').next()?.to_owned();
        let pane = std::env::var("TMUX_PANE").ok()?.parse().ok()?;
        Some(HostPane { socket_path, pane })
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            tmux: PathBuf::from("tmux"),
            socket: Socket::default(),
            server_config: None,
            first_session: "main".to_owned(),
            default_size: (160, 48),
            journal_bytes: 8 << 20,
            history_limit: 50_000,
            host: HostPane::from_env(),
            redactor: termpilot_journal::Redactor::default(),
        }
    }
}

impl Socket {
    /// The directory termpilot processes lock while one of their control
    /// clients connects to this server (see `transport::ConnectTurn`): the
    /// directory of its socket, so nothing is left behind. For a socket name that is
    /// tmux's socket directory, created (owner-only, as tmux makes it) when
    /// it does not exist yet.
    pub(crate) fn lock_directory(&self) -> PathBuf {
        match self {
            Socket::Path(path) => match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
                _ => PathBuf::from("."),
            },
            Socket::Name(_) => {
                use std::os::unix::fs::{DirBuilderExt, MetadataExt};
                let uid = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
                let base = std::env::var_os("TMUX_TMPDIR")
                    .filter(|dir| !dir.is_empty())
                    .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
                let dir = base.join(format!("tmux-{uid}"));
                let _ = std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&dir);
                dir
            }
        }
    }
}

impl EngineConfig {
    /// The arguments that select the server, for every tmux invocation.
    ///
    /// `-u` makes tmux treat the client as UTF-8 whatever the locale: an MCP
    /// client often starts servers with no `LANG` at all, and tmux would then
    /// replace every control and non-ASCII byte of replies with `_`.
    pub(crate) fn socket_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-u".into()];
        args.extend::<[OsString; 2]>(match &self.socket {
            Socket::Name(name) => ["-L".into(), name.into()],
            Socket::Path(path) => ["-S".into(), path.into()],
        });
        args.push("-f".into());
        args.push(
            self.server_config
                .clone()
                .unwrap_or_else(|| PathBuf::from("/dev/null"))
                .into(),
        );
        args
    }
}
