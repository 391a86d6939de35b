//! Where the bytes of a control client come from.
//!
//! The engine speaks tmux control mode over any byte pipe: a [`Pipe`] is a
//! reader, a writer and the [`PipeProcess`] that keeps the far end alive. A
//! [`Transport`] opens such pipes to one tmux server and runs the few
//! one-shot tmux commands the engine needs outside control mode, saying how
//! each ended as a [`OneShot`]: what a process's exit status and standard
//! error mean is decided here, once, where the process ends. Today's
//! transports run a local `tmux`, or `tmux` through `ssh` or an exec prefix
//! such as `docker exec -i NAME`; tests plug in in-memory pipes. Nothing
//! above this module knows that a process exists.

use std::ffi::OsString;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{Error, Result};
pub(crate) use crate::identify::SETTLE;
pub use crate::identify::{ConnectTurn, Departures};

/// A boxed future, as trait objects return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One control-mode connection: bytes from tmux, bytes to tmux, and the
/// process behind them.
pub struct Pipe {
    /// What tmux writes: control-mode lines.
    pub reader: Pin<Box<dyn AsyncRead + Send + Sync>>,
    /// What tmux reads: command lines.
    pub writer: Pin<Box<dyn AsyncWrite + Send + Sync>>,
    /// What keeps the far end alive; ended when the connection closes.
    pub process: Box<dyn PipeProcess>,
}

impl std::fmt::Debug for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pipe")
    }
}

/// The process behind a [`Pipe`]: `tmux -C`, or the ssh or exec command
/// running it elsewhere (in tests, a fake standing in for one).
pub trait PipeProcess: Send {
    /// What the far end said about why it stopped (a process's standard
    /// error), read once the pipe has closed; empty when it said nothing.
    fn diagnostics(&mut self) -> BoxFuture<'_, String>;
    /// Ends the far end and waits until it has ended.
    fn close(&mut self) -> BoxFuture<'_, ()>;
    /// tmux said `%exit` to this client: it is leaving (see
    /// [`Departures`]).
    fn exiting(&mut self) {}
}

/// How a one-shot tmux command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OneShot {
    /// tmux ran it; what it printed.
    Reply(String),
    /// tmux refused it, or the way to tmux (ssh, an exec command) failed;
    /// what they said.
    Refused {
        /// The message (a process's standard error).
        why: String,
    },
    /// No tmux server runs on the socket.
    NoServer,
}

impl OneShot {
    /// How a tmux process that ended with `output` ran: tmux says on
    /// standard error when no server runs on its socket, or when the one
    /// it reached ended under it (a server still exiting after
    /// `kill-server` accepts a client, then drops it).
    fn from_output(output: &std::process::Output) -> OneShot {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        let absent = [
            "no server running",
            "error connecting",
            "server exited unexpectedly",
        ];
        if output.status.success() {
            OneShot::Reply(String::from_utf8_lossy(&output.stdout).into_owned())
        } else if absent.iter().any(|words| said.contains(words)) {
            OneShot::NoServer
        } else {
            OneShot::Refused { why: said }
        }
    }
}

/// How a script run on the server's machine ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptEnd {
    /// It exited with status 0, printing this.
    Printed(String),
    /// It failed, or the way to the machine did.
    Failed {
        /// What it printed before.
        printed: String,
        /// What it (or ssh, or the exec command) said.
        why: String,
    },
}

impl ScriptEnd {
    /// What the script printed, however it ended.
    pub fn printed(&self) -> &str {
        match self {
            ScriptEnd::Printed(printed) | ScriptEnd::Failed { printed, .. } => printed,
        }
    }

    fn from_output(output: &std::process::Output) -> ScriptEnd {
        let printed = String::from_utf8_lossy(&output.stdout).into_owned();
        match output.status.success() {
            true => ScriptEnd::Printed(printed),
            false => ScriptEnd::Failed {
                printed,
                why: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            },
        }
    }
}

/// A way to reach one tmux server.
pub trait Transport: Send + Sync + std::fmt::Debug {
    /// Opens a control client: runs tmux with `-C` followed by `args`
    /// (`attach-session -t $1`, `new-session ...`) and returns its pipe.
    fn open(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<Pipe>>;

    /// Runs one tmux command to its end outside control mode (`wait-for`,
    /// `list-sessions` before any client is connected). Dropping the future
    /// ends the command.
    fn run(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<OneShot>>;

    /// Runs a POSIX shell script on the server's machine, outside tmux:
    /// how the engine reads `/proc` of panes on another host where the
    /// tmux server there cannot run the script itself (see `procfs`).
    /// Transports without one (in-memory test pipes) fail it, and those
    /// facts are then unknown.
    fn shell(&self, script: &str) -> BoxFuture<'_, Result<ScriptEnd>> {
        let _ = script;
        Box::pin(async {
            Err(Error::InvalidArgument(
                "this transport runs no shell".into(),
            ))
        })
    }

    /// [`Transport::shell`] with `input` as the script's standard input:
    /// how a secret reaches the server's machine in no command line
    /// (`crate::secret_delivery`). Transports without a shell fail it.
    fn shell_fed(&self, script: &str, input: Vec<u8>) -> BoxFuture<'_, Result<ScriptEnd>> {
        let _ = (script, input);
        Box::pin(async {
            Err(Error::InvalidArgument(
                "this transport runs no shell".into(),
            ))
        })
    }

    /// The server as errors name it: `-L termpilot`, `host build (ssh build-1)`.
    fn describe(&self) -> String;

    /// Waits until a new control client may identify itself to the
    /// server (no client is departing, see [`Departures`]), and returns its
    /// turn (see [`ConnectTurn`]), to hold until it has identified.
    fn turn_to_connect(&self) -> BoxFuture<'_, ConnectTurn> {
        Box::pin(async move {
            if let Some(departures) = self.departures() {
                departures.settled(SETTLE).await;
            }
            ConnectTurn::default()
        })
    }

    /// The clients of this transport's pipes that are departing, when it
    /// counts them.
    fn departures(&self) -> Option<&Departures> {
        None
    }

    /// Whether panes of this server run on this machine, so their processes
    /// can be read in `/proc` here.
    fn is_local(&self) -> bool {
        false
    }

    /// How long opening a connection may take before it counts as failed.
    fn connect_timeout(&self) -> Option<Duration> {
        None
    }
}

/// A child process behind a pipe: killed when the connection ends.
struct ChildEnd {
    child: tokio::process::Child,
}

impl PipeProcess for ChildEnd {
    fn diagnostics(&mut self) -> BoxFuture<'_, String> {
        Box::pin(async move {
            let mut text = String::new();
            if let Some(mut stderr) = self.child.stderr.take() {
                // A far end that keeps its stderr open (an ssh master) must
                // not hold up the error.
                let read = stderr.read_to_string(&mut text);
                let _ = tokio::time::timeout(Duration::from_millis(500), read).await;
            }
            text.trim().to_owned()
        })
    }

    fn close(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Asked first, so that ssh can end what it started (a proxy
            // command); killed when it does not end at once.
            if let Some(pid) = self.child.id().and_then(|id| i32::try_from(id).ok())
                && let Some(pid) = rustix::process::Pid::from_raw(pid)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
                let ended = tokio::time::timeout(Duration::from_millis(500), self.child.wait());
                if ended.await.is_ok() {
                    return;
                }
            }
            let _ = self.child.start_kill();
            let _ = self.child.wait().await;
        })
    }
}

/// A command line: the program and the arguments before tmux's own.
#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    /// The program to run (`tmux`, `ssh`, `docker`).
    program: OsString,
    /// Arguments that come first (ssh's options and destination, an exec
    /// prefix's words).
    prefix: Vec<OsString>,
    /// The tmux program on the far side, after the prefix; `None` when
    /// `program` is tmux itself.
    tmux: Option<OsString>,
    /// The arguments that select the tmux server (`-u -L NAME -f FILE`).
    server: Vec<OsString>,
    /// Whether the arguments after the prefix pass through a remote shell
    /// (ssh joins its arguments into one command line), so each needs
    /// quoting.
    quote: bool,
}

impl Launcher {
    /// The command running tmux with `tail` after the server's arguments.
    fn command(&self, tail: &[OsString]) -> tokio::process::Command {
        let words: Vec<&OsString> = self.tmux.iter().chain(&self.server).chain(tail).collect();
        self.far_command(&words)
    }

    /// The command running `words` on the far side.
    fn far_command(&self, words: &[&OsString]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        crate::child_env::scrub(&mut command);
        command.args(&self.prefix);
        if self.quote {
            for word in words {
                command.arg(shell_quote(&word.to_string_lossy()));
            }
        } else {
            command.args(words);
        }
        command.kill_on_drop(true);
        command
    }

    async fn shell(&self, script: &str, input: Option<Vec<u8>>) -> Result<ScriptEnd> {
        let words: [OsString; 3] = ["sh".into(), "-c".into(), script.into()];
        let command = if self.tmux.is_none() {
            // tmux itself is the program: the script runs here.
            let mut here = tokio::process::Command::new("sh");
            crate::child_env::scrub(&mut here);
            here.args(&words[1..]).kill_on_drop(true);
            here
        } else {
            self.far_command(&words.iter().collect::<Vec<_>>())
        };
        let output = output(command, input).await.map_err(|e| self.missing(&e))?;
        Ok(ScriptEnd::from_output(&output))
    }

    fn missing(&self, error: &std::io::Error) -> Error {
        Error::TmuxMissing {
            program: self.program.to_string_lossy().into_owned(),
            reason: error.to_string(),
        }
    }

    async fn open(&self, args: Vec<OsString>) -> Result<Pipe> {
        let mut tail: Vec<OsString> = vec!["-C".into()];
        tail.extend(args);
        let mut child = self
            .command(&tail)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.missing(&e))?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        Ok(Pipe {
            reader: Box::pin(stdout),
            writer: Box::pin(stdin),
            process: Box::new(ChildEnd { child }),
        })
    }

    async fn run(&self, args: Vec<OsString>) -> Result<OneShot> {
        let output = output(self.command(&args), None)
            .await
            .map_err(|e| self.missing(&e))?;
        Ok(OneShot::from_output(&output))
    }
}

/// Runs `command` to its end with `input` (overwritten once written) as
/// its standard input, or none.
async fn output(
    mut command: tokio::process::Command,
    input: Option<Vec<u8>>,
) -> std::io::Result<std::process::Output> {
    let Some(mut input) = input else {
        return command.stdin(Stdio::null()).output().await;
    };
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = command.stderr(Stdio::piped()).spawn()?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let written = stdin.write_all(&input).await;
    input.fill(0);
    drop(stdin);
    let output = child.wait_with_output().await?;
    written?;
    Ok(output)
}

/// Quotes one word for a POSIX shell: as is when it is plainly safe, else
/// in single quotes.
pub(crate) fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The tmux server on this machine, run as a child process.
#[derive(Debug, Clone)]
pub struct Local {
    launcher: Launcher,
    socket: crate::config::Socket,
    departures: Departures,
}

impl Local {
    /// The server `config` names (`tmux`, socket, configuration file).
    pub fn new(config: &crate::config::EngineConfig) -> Local {
        Local {
            launcher: Launcher {
                program: config.tmux.clone().into(),
                prefix: Vec::new(),
                tmux: None,
                server: config.socket_args(),
                quote: false,
            },
            socket: config.socket.clone(),
            departures: Departures::default(),
        }
    }
}

impl Transport for Local {
    fn open(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<Pipe>> {
        Box::pin(async move { Ok(self.departures.track(self.launcher.open(args).await?)) })
    }

    fn shell(&self, script: &str) -> BoxFuture<'_, Result<ScriptEnd>> {
        let script = script.to_owned();
        Box::pin(async move { self.launcher.shell(&script, None).await })
    }

    fn shell_fed(&self, script: &str, input: Vec<u8>) -> BoxFuture<'_, Result<ScriptEnd>> {
        let script = script.to_owned();
        Box::pin(async move { self.launcher.shell(&script, Some(input)).await })
    }

    fn run(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<OneShot>> {
        Box::pin(self.launcher.run(args))
    }

    fn describe(&self) -> String {
        self.socket.to_string()
    }

    fn turn_to_connect(&self) -> BoxFuture<'_, ConnectTurn> {
        Box::pin(async move {
            self.departures.settled(SETTLE).await;
            ConnectTurn::lock(&self.socket.lock_directory()).await
        })
    }

    fn departures(&self) -> Option<&Departures> {
        Some(&self.departures)
    }

    fn is_local(&self) -> bool {
        true
    }
}

/// The socket name termpilot uses on other machines.
pub const REMOTE_SOCKET_NAME: &str = "termpilot";

/// A tmux server on another machine or in a container, reached through a
/// command that runs tmux there: the system's `ssh` ([`Remote::ssh`]) or an
/// exec prefix ([`Remote::exec`]).
#[derive(Debug, Clone)]
pub struct Remote {
    /// How errors name it: `host build (ssh build-1)`.
    description: String,
    launcher: Launcher,
    /// How long opening a connection may take.
    connect_timeout: Duration,
    /// ssh's master connection, for an ssh host.
    master: Option<Arc<Master>>,
    departures: Departures,
}

/// What an ssh host needs besides its destination.
#[derive(Debug, Clone)]
pub struct SshOptions {
    /// `-F PATH` for every ssh run, when set.
    pub config: Option<PathBuf>,
    /// The directory holding the master connections' sockets.
    pub control_dir: PathBuf,
    /// How long connecting may take in all (ssh's `ConnectTimeout` is a
    /// second less).
    pub timeout: Duration,
    /// The tmux program on the far side.
    pub tmux: String,
}

impl Remote {
    /// The host `name`, reached as `ssh DESTINATION`.
    ///
    /// ssh runs with the user's own configuration (or `-F` a given file), in
    /// batch mode (a host that would ask for a password fails at once
    /// instead), and with a master connection of termpilot's own, so every
    /// control client and one-shot command to the host shares one
    /// connection.
    pub fn ssh(name: &str, destination: &str, options: &SshOptions) -> Remote {
        let socket = options.control_dir.join(name);
        let prefix = |master: &str| {
            let mut prefix: Vec<OsString> = Vec::new();
            if let Some(config) = &options.config {
                prefix.push("-F".into());
                prefix.push(config.into());
            }
            for option in [
                "BatchMode=yes".to_owned(),
                format!("ConnectTimeout={}", ssh_connect_timeout(options.timeout)),
                format!("ControlMaster={master}"),
                format!("ControlPath={}", socket.display()),
                "ServerAliveInterval=5".to_owned(),
                "ServerAliveCountMax=2".to_owned(),
                "LogLevel=ERROR".to_owned(),
            ] {
                prefix.push("-o".into());
                prefix.push(option.into());
            }
            prefix.push("-T".into());
            // `--` ends ssh's options, so a destination cannot pass as one.
            prefix.push("--".into());
            prefix.push(destination.into());
            prefix
        };
        // The master runs `cat` there, reading this process's pipe: when
        // termpilot ends, however it ends, the pipe closes, `cat` ends, and
        // so does the master once its last client has gone.
        let mut master = prefix("yes");
        master.push("cat".into());
        Remote {
            description: format!("host {name} (ssh {destination})"),
            launcher: Launcher {
                program: "ssh".into(),
                prefix: prefix("no"),
                tmux: Some(options.tmux.clone().into()),
                server: remote_server_args(),
                quote: true,
            },
            connect_timeout: options.timeout,
            master: Some(Arc::new(Master {
                args: master,
                socket,
                child: tokio::sync::Mutex::new(None),
            })),
            departures: Departures::default(),
        }
    }

    /// The host `name`, reached through `prefix` (`docker exec -i NAME`,
    /// `kubectl exec -i POD --`; split as a shell would, without running
    /// one) followed by the tmux command line. Fails on an empty prefix or
    /// unbalanced quotes.
    pub fn exec(name: &str, prefix: &str, timeout: Duration) -> Result<Remote> {
        let words = split_words(prefix).ok_or_else(|| {
            Error::InvalidArgument(format!("host {name}: unbalanced quotes in {prefix:?}"))
        })?;
        let Some((program, rest)) = words.split_first() else {
            return Err(Error::InvalidArgument(format!(
                "host {name}: empty exec prefix"
            )));
        };
        Ok(Remote {
            description: format!("host {name} ({})", words.join(" ")),
            launcher: Launcher {
                program: program.into(),
                prefix: rest.iter().map(OsString::from).collect(),
                tmux: Some("tmux".into()),
                server: remote_server_args(),
                quote: false,
            },
            connect_timeout: timeout,
            master: None,
            departures: Departures::default(),
        })
    }
}

/// ssh's master connection to one host, started by termpilot as a child of
/// its own, which every other ssh to the host shares (they run with
/// `ControlMaster=no`: without a master they connect by themselves, and
/// report their own errors).
///
/// It runs `cat` on the host with this process's pipe for input, and no
/// `ControlPersist`: when termpilot ends, even killed, the pipe closes, the
/// remote `cat` ends, and the master ends once its last client (a control
/// client, which ends with its own pipe) has gone, removing its socket. It
/// never outlives termpilot, nor its socket's directory.
#[derive(Debug)]
struct Master {
    /// ssh's arguments: options with `ControlMaster=yes`, destination,
    /// `cat`.
    args: Vec<OsString>,
    /// Its control socket, in termpilot's own directory.
    socket: PathBuf,
    /// The running master, if one was started; a new one is started when
    /// it has ended (the connection dropped).
    child: tokio::sync::Mutex<Option<tokio::process::Child>>,
}

/// How often a starting master is looked at until its socket appears.
const MASTER_POLL: Duration = Duration::from_millis(5);

impl Master {
    /// Starts the master unless it runs, and waits (at most `limit`) until
    /// it listens on its socket or has given up.
    async fn ensure(&self, limit: Duration) {
        let mut child = self.child.lock().await;
        if let Some(running) = child.as_mut()
            && matches!(running.try_wait(), Ok(None))
        {
            return;
        }
        let mut command = tokio::process::Command::new("ssh");
        crate::child_env::scrub(&mut command);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let Ok(mut started) = command.spawn() else {
            // No ssh: the client's own ssh says so.
            *child = None;
            return;
        };
        let deadline = tokio::time::Instant::now() + limit;
        while !self.socket.exists()
            && matches!(started.try_wait(), Ok(None))
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(MASTER_POLL).await;
        }
        *child = Some(started);
    }
}

/// ssh's `ConnectTimeout`, in whole seconds, for connections that may take
/// `timeout` in all: a second less (at least one), so that a host that does
/// not answer gets ssh's own message ("timed out during banner exchange")
/// before termpilot's bound on the whole connection ends it.
fn ssh_connect_timeout(timeout: Duration) -> u64 {
    timeout.as_secs().saturating_sub(1).max(1)
}

/// The arguments that select termpilot's server on another machine.
fn remote_server_args() -> Vec<OsString> {
    ["-u", "-L", REMOTE_SOCKET_NAME, "-f", "/dev/null"]
        .map(OsString::from)
        .to_vec()
}

impl Remote {
    /// Makes sure an ssh host's master connection runs (see [`Master`]).
    async fn with_master(&self) {
        if let Some(master) = &self.master {
            master.ensure(self.connect_timeout).await;
        }
    }
}

impl Transport for Remote {
    fn open(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<Pipe>> {
        Box::pin(async move {
            self.with_master().await;
            Ok(self.departures.track(self.launcher.open(args).await?))
        })
    }

    fn shell(&self, script: &str) -> BoxFuture<'_, Result<ScriptEnd>> {
        let script = script.to_owned();
        Box::pin(async move {
            self.with_master().await;
            self.launcher.shell(&script, None).await
        })
    }

    fn shell_fed(&self, script: &str, input: Vec<u8>) -> BoxFuture<'_, Result<ScriptEnd>> {
        let script = script.to_owned();
        Box::pin(async move {
            self.with_master().await;
            self.launcher.shell(&script, Some(input)).await
        })
    }

    fn run(&self, args: Vec<OsString>) -> BoxFuture<'_, Result<OneShot>> {
        Box::pin(async move {
            self.with_master().await;
            self.launcher.run(args).await
        })
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn departures(&self) -> Option<&Departures> {
        Some(&self.departures)
    }

    fn connect_timeout(&self) -> Option<Duration> {
        Some(self.connect_timeout)
    }
}

/// Splits a command line into words as a POSIX shell would, without
/// expansions: whitespace separates, single quotes keep everything, double
/// quotes keep all but `\"` and `\\`, a backslash outside quotes escapes the
/// next character. `None` for unbalanced quotes.
pub fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => word.push(c),
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_a_tmux_process_ended_is_read_from_its_status_and_stderr() {
        use std::os::unix::process::ExitStatusExt;
        let ended = |code: i32, stdout: &str, stderr: &str| std::process::Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: stdout.into(),
            stderr: stderr.into(),
        };
        let reply = OneShot::from_output(&ended(0, "$0\n", ""));
        assert_eq!(reply, OneShot::Reply("$0\n".into()));
        for absent in [
            "no server running on /tmp/tmux-0/x",
            "error connecting to /tmp/tmux-0/x (No such file or directory)",
            "server exited unexpectedly",
        ] {
            assert_eq!(
                OneShot::from_output(&ended(1, "", absent)),
                OneShot::NoServer
            );
        }
        let refused = OneShot::from_output(&ended(1, "", "can't find session: x\n"));
        let why = "can't find session: x".to_owned();
        assert_eq!(refused, OneShot::Refused { why });
        let script = ScriptEnd::from_output(&ended(2, "half", "disk full"));
        assert_eq!(script.printed(), "half");
        assert!(matches!(script, ScriptEnd::Failed { why, .. } if why == "disk full"));
    }

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split_words("docker exec -i 'my box' \"a \\\"b\\\"\" c\\ d").unwrap(),
            ["docker", "exec", "-i", "my box", "a \"b\"", "c d"]
        );
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert_eq!(split_words("a ''").unwrap(), ["a", ""]);
        assert!(split_words("a 'b").is_none());
        assert!(split_words("a \"b").is_none());
    }

    #[test]
    fn quoting_survives_a_shell() {
        for word in [
            "plain",
            "",
            "a b",
            "it's",
            "#{pane_id}",
            "$HOME",
            "a\nb",
            "%1",
        ] {
            let quoted = shell_quote(word);
            assert_eq!(split_words(&quoted).unwrap(), [word], "{quoted}");
        }
    }

    #[test]
    fn exec_prefix_comes_before_tmux() {
        let exec = Remote::exec("box", "docker exec -i box-1", Duration::from_secs(5)).unwrap();
        let command = exec.launcher.command(&["-C".into()]);
        let std = command.as_std();
        let args: Vec<_> = std
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(std.get_program(), "docker");
        assert_eq!(
            args,
            [
                "exec",
                "-i",
                "box-1",
                "tmux",
                "-u",
                "-L",
                "termpilot",
                "-f",
                "/dev/null",
                "-C"
            ]
        );
        let script = exec
            .launcher
            .far_command(&[&"sh".into(), &"-c".into(), &"echo 'a b'".into()]);
        let args: Vec<_> = script
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args, ["exec", "-i", "box-1", "sh", "-c", "echo 'a b'"]);
        assert!(Remote::exec("box", "", Duration::from_secs(1)).is_err());
        assert!(Remote::exec("box", "docker 'exec", Duration::from_secs(1)).is_err());
    }

    #[test]
    fn ssh_quotes_what_the_remote_shell_reads() {
        let options = SshOptions {
            config: Some("cfg".into()),
            control_dir: "/run/x".into(),
            timeout: Duration::from_secs(10),
            tmux: "tmux".into(),
        };
        let ssh = Remote::ssh("build", "me@build-1", &options);
        let command =
            ssh.launcher
                .command(&["display-message".into(), "-p".into(), "#{pid} x".into()]);
        let args: Vec<_> = command
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(&args[..2], ["-F", "cfg"]);
        assert!(args.contains(&"BatchMode=yes".to_owned()));
        // ssh gives up a second before termpilot's bound on the whole
        // connection, which is the host's timeout itself.
        assert!(args.contains(&"ConnectTimeout=9".to_owned()), "{args:?}");
        assert_eq!(ssh.connect_timeout(), Some(Duration::from_secs(10)));
        assert_eq!(ssh_connect_timeout(Duration::from_secs(1)), 1);
        assert!(args.contains(&"ControlPath=/run/x/build".to_owned()));
        assert!(args.contains(&"ControlMaster=no".to_owned()));
        let master = ssh.master.as_ref().expect("an ssh host has a master");
        assert!(master.args.contains(&"ControlMaster=yes".into()));
        assert_eq!(master.args.last(), Some(&"cat".into()));
        let at = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(
            &args[at..],
            [
                "--",
                "me@build-1",
                "tmux",
                "-u",
                "-L",
                "termpilot",
                "-f",
                "/dev/null",
                "display-message",
                "-p",
                "'#{pid} x'"
            ]
        );
    }
}
