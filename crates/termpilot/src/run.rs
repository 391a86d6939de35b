//! `termpilot run`: runs a command interactively in a PTY behind the user's terminal,
//! with key bindings the command never sees.
//!
//! With a `detach` binding (or `--detachable`) the command runs in a new session of
//! termpilot's tmux server and the PTY's child is `tmux attach` to it: `detach` ends the
//! attach, and the command keeps running in its pane, where an agent can reach it over
//! MCP. A plain PTY child cannot be moved into tmux afterwards, so the choice is made
//! before the command starts.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::server_args::ServerSelection;
use anyhow::Context;
use termpilot_keys::Key;
use termpilot_pty::{Action, Outcome, Session, SessionBuilder, Terminal, parse_binding};
use termpilot_tmux::{DetachedSession, ServerAdmin};
use tokio::runtime::Runtime;

/// Arguments of `termpilot run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Bind a key sequence to an action, as SEQ=ACTION (repeatable). SEQ is tmux key
    /// names, space-separated for a sequence: "C-c", "M-c", "C-]", "Escape", "F5",
    /// "C-x C-c". ACTION is interrupt (SIGINT to the foreground job), terminate (SIGTERM,
    /// then SIGKILL after 2 s), event:NAME (a JSON line on --events) or detach (which
    /// implies --detachable). Bound keys never reach the command.
    #[arg(long = "bind", value_name = "SEQ=ACTION", value_parser = check_binding)]
    bindings: Vec<String>,

    /// How long a key that begins a longer binding waits for the rest, in milliseconds:
    /// a lone Escape reaches the command after this, Escape then c within it is Alt+C.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    escape_timeout_ms: u64,

    /// Where event:NAME bindings write {"event":NAME,"time":UNIX_SECONDS} lines: a file
    /// (appended to), fd:N (a descriptor termpilot inherited, not a socket) or unix:PATH
    /// (a listening Unix socket).
    #[arg(long, value_name = "PATH|fd:N|unix:PATH")]
    events: Option<String>,

    /// Run the command in a new session of termpilot's tmux server and attach to it, so
    /// that a detach binding leaves it running there (a detach binding implies this).
    /// The command then gets the tmux server's environment (the current directory is
    /// kept).
    #[arg(long)]
    detachable: bool,

    /// The tmux server for --detachable.
    #[command(flatten)]
    server: ServerSelection,

    /// The command to run and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// Runs the command and returns its exit status (128 + signal if a signal ended it).
///
/// Blocking; call it outside any async runtime's worker.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let terminal = Terminal::stdio().context("cannot use standard input/output")?;
    // Everything that can fail is checked before a tmux session is created.
    let options = Options::from_args(&args)?;
    let tmux = (options.detachable)
        .then(|| TmuxSession::new(&args))
        .transpose()?;
    let builder = match &tmux {
        Some(tmux) => tmux.start(&args.command, &terminal)?,
        None => Session::builder(command(&args.command)),
    };
    let report = options
        .apply(builder.terminal(terminal))
        .run()
        .map_err(|error| match &tmux {
            Some(tmux) => anyhow::Error::new(error).context(format!(
                "the command may still be running in {}",
                tmux.whereabouts()
            )),
            None => error.into(),
        })?;
    for failure in &report.action_failures {
        eprintln!("termpilot run: {failure}");
    }
    let code = match &tmux {
        Some(tmux) => tmux.finish(report.outcome),
        None => report.outcome.exit_code(),
    };
    Ok(ExitCode::from(code))
}

/// The validated bindings and session options.
struct Options {
    bindings: Vec<(Vec<Key>, Action)>,
    events: Option<Box<dyn Write + Send>>,
    escape_timeout: Duration,
    /// The command runs in termpilot's tmux server, so that it can be left there.
    detachable: bool,
}

impl Options {
    fn from_args(args: &RunArgs) -> anyhow::Result<Options> {
        let bindings: Vec<_> = args
            .bindings
            .iter()
            .map(|spec| parse_binding(spec))
            .collect::<Result<_, _>>()?;
        let detachable =
            args.detachable || bindings.iter().any(|(_, a)| matches!(a, Action::Detach));
        Ok(Options {
            detachable,
            bindings,
            events: args.events.as_deref().map(open_events).transpose()?,
            escape_timeout: Duration::from_millis(args.escape_timeout_ms),
        })
    }

    fn apply(self, mut builder: SessionBuilder) -> SessionBuilder {
        for (keys, action) in self.bindings {
            builder = builder.bind(keys, action);
        }
        if let Some(events) = self.events {
            builder = builder.events(events);
        }
        builder.escape_timeout(self.escape_timeout)
    }
}

/// Validates `--bind` when the command line is parsed, so mistakes show up as usage
/// errors (the value stays a string: actions are not `Clone`).
fn check_binding(spec: &str) -> Result<String, String> {
    parse_binding(spec)
        .map(|_| spec.to_owned())
        .map_err(|e| e.to_string())
}

fn command(argv: &[OsString]) -> Command {
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    command
}

/// Opens the `--events` destination.
fn open_events(spec: &str) -> anyhow::Result<Box<dyn Write + Send>> {
    if let Some(fd) = spec.strip_prefix("fd:") {
        let fd: u32 = fd
            .parse()
            .context("--events fd:N needs a descriptor number")?;
        // Opening the /dev/fd entry gives a descriptor of the same pipe or file without
        // adopting a raw descriptor (which would need unsafe code).
        let file = append_to(Path::new(&format!("/dev/fd/{fd}"))).with_context(|| {
            format!("cannot write events to descriptor {fd} (sockets: use unix:PATH)")
        })?;
        return Ok(Box::new(file));
    }
    if let Some(path) = spec.strip_prefix("unix:") {
        let socket = UnixStream::connect(path)
            .with_context(|| format!("cannot connect to the events socket {path}"))?;
        return Ok(Box::new(socket));
    }
    let file = append_to(Path::new(spec))
        .with_context(|| format!("cannot open the events file {spec}"))?;
    Ok(Box::new(file))
}

fn append_to(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).create(true).open(path)
}

/// The tmux session behind `--detachable`.
struct TmuxSession {
    /// The server, reached through the engine's one-shot commands (creating
    /// the session, detaching the person's client).
    server: ServerAdmin,
    /// Runs `server`'s commands; a worker of its own, since the detach hook
    /// blocks on it from the PTY's thread.
    runtime: Arc<Runtime>,
    /// The tmux program and `-L NAME` or `-S PATH`, for `tmux attach`.
    tmux: PathBuf,
    socket: Vec<OsString>,
    name: String,
    /// Where the wrapper shell writes the command's exit status, since `tmux attach`
    /// exits 0 whatever the command did.
    status_file: PathBuf,
}

/// Runs the command, then records its status in the file if it still exists (after a
/// detach, `termpilot run` has removed it and nobody would read it).
///
/// `set -m` (job control) runs the command in a process group of its own and gives it
/// the terminal: tmux names a pane for its terminal's foreground group, so the pane
/// shows the command (in `list_panes` too), not this shell, and keys such as C-c typed
/// in the pane reach only the command. The traps keep the shell alive through the
/// signals that terminate also sends to the pane's first process group (a trapped
/// signal is reset to its default in the command, unlike an ignored one). SIGHUP is not
/// trapped: when the pane closes, the shell must die so the kernel hangs up the command.
const WRAPPER: &str = r#"set -m; trap : INT QUIT TERM; "$@"; s=$?
[ -e "$TERMPILOT_RUN_STATUS" ] && echo $s > "$TERMPILOT_RUN_STATUS""#;

impl TmuxSession {
    fn new(args: &RunArgs) -> anyhow::Result<TmuxSession> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let pid = std::process::id();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        Ok(TmuxSession {
            server: ServerAdmin::new(args.server.engine_config()),
            runtime: Arc::new(runtime),
            tmux: args.server.tmux.clone(),
            socket: args.server.socket_args(),
            name: format!("run-{pid}"),
            status_file: std::env::temp_dir().join(format!("termpilot-run-{pid}-{nanos}.status")),
        })
    }

    /// Creates the session running `argv` and returns a builder whose child attaches
    /// to it.
    fn start(&self, argv: &[OsString], terminal: &Terminal) -> anyhow::Result<SessionBuilder> {
        let pane_pid = self.create(argv, terminal)?;
        // `tmux attach` stays a process of its own, unlike every other tmux
        // command here: it is the tmux client the person's terminal (the
        // PTY) is handed to, and only a client that owns a terminal can
        // show a pane and take its keys; no engine can stand in for it.
        let mut attach = Command::new(&self.tmux);
        attach
            .args(&self.socket)
            .args(["attach-session", "-t"])
            .arg(format!("={}", self.name))
            // Inside a tmux pane, tmux refuses to attach (nesting) unless TMUX is unset.
            .env_remove("TMUX");
        let server = self.server.clone();
        let runtime = Arc::clone(&self.runtime);
        Ok(Session::builder(attach)
            .signal_process(pane_pid)
            .detach_hook(move |pty: &Path| {
                let detached = runtime.block_on(server.detach_client(&pty.to_string_lossy()));
                detached.map_err(io::Error::other)
            }))
    }

    /// Creates the session (and the status file its wrapper writes to); returns the
    /// pane's process id.
    fn create(&self, argv: &[OsString], terminal: &Terminal) -> anyhow::Result<u32> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        File::create(&self.status_file)
            .with_context(|| format!("cannot create {}", self.status_file.display()))?;
        let created = self.new_session(argv, terminal, cwd);
        if created.is_err() {
            let _ = std::fs::remove_file(&self.status_file);
        }
        created
    }

    fn new_session(
        &self,
        argv: &[OsString],
        terminal: &Terminal,
        directory: PathBuf,
    ) -> anyhow::Result<u32> {
        let size = terminal.size();
        let mut status_env = OsString::from("TERMPILOT_RUN_STATUS=");
        status_env.push(&self.status_file);
        let mut command: Vec<OsString> = ["sh", "-c", WRAPPER, "termpilot-run"]
            .map(OsString::from)
            .to_vec();
        command.extend(argv.iter().cloned());
        let session = DetachedSession {
            name: self.name.clone(),
            size: (size.ws_col, size.ws_row),
            directory,
            environment: vec![status_env],
            command,
        };
        let pane = (self.runtime)
            .block_on(self.server.create_detached(&session))
            .context("cannot create the tmux session for the command")?;
        Ok(pane.pid)
    }

    /// Where the command went on running, for messages.
    fn whereabouts(&self) -> String {
        format!(
            "tmux session {} (tmux {})",
            self.name,
            self.server.describe()
        )
    }

    /// The exit code once the session ended, with a note on stderr when the command
    /// keeps running in tmux.
    fn finish(&self, outcome: Outcome) -> u8 {
        let recorded = std::fs::read_to_string(&self.status_file).ok();
        let _ = std::fs::remove_file(&self.status_file);
        match outcome {
            Outcome::Exited(_) => recorded
                .and_then(|text| text.trim().parse().ok())
                .unwrap_or_else(|| outcome.exit_code()),
            Outcome::Detached | Outcome::Signalled(_) => {
                eprintln!(
                    "termpilot run: detached; the command keeps running in {}",
                    self.whereabouts()
                );
                outcome.exit_code()
            }
        }
    }
}
