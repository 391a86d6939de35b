//! Which tmux server a command talks to: the options `serve`, `run` and
//! `attach` share; and the limits of `serve --http`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use termpilot_mcp::http::HttpLimits;
use termpilot_tmux::config::DEFAULT_SOCKET_NAME;
use termpilot_tmux::{EngineConfig, HostOptions, HostSpec, Socket};

/// Which tmux server to drive.
#[derive(Debug, Clone, Args)]
pub struct ServerSelection {
    /// tmux socket name (like `tmux -L`). Default: "termpilot", a server of
    /// termpilot's own, started when not running.
    #[arg(
        short = 'L',
        long = "socket-name",
        env = "TERMPILOT_SOCKET_NAME",
        conflicts_with = "socket_path"
    )]
    pub socket_name: Option<String>,

    /// tmux socket path (like `tmux -S`), e.g. to drive your own server.
    #[arg(short = 'S', long = "socket-path", env = "TERMPILOT_SOCKET_PATH")]
    pub socket_path: Option<PathBuf>,

    /// The tmux program.
    #[arg(long, env = "TERMPILOT_TMUX", default_value = "tmux")]
    pub tmux: PathBuf,

    /// Configuration file for a tmux server termpilot starts (default: none,
    /// /dev/null, so behaviour does not depend on ~/.tmux.conf). A server that
    /// is already running keeps its configuration.
    #[arg(long, env = "TERMPILOT_TMUX_CONFIG")]
    pub tmux_config: Option<PathBuf>,
}

impl ServerSelection {
    /// The engine configuration for `serve`.
    pub fn engine_config(&self) -> EngineConfig {
        let socket = match (&self.socket_name, &self.socket_path) {
            (_, Some(path)) => Socket::Path(path.clone()),
            (Some(name), None) => Socket::Name(name.clone()),
            (None, None) => Socket::default(),
        };
        EngineConfig {
            tmux: self.tmux.clone(),
            socket,
            server_config: self.tmux_config.clone(),
            ..EngineConfig::default()
        }
    }

    /// The `-L NAME` or `-S PATH` arguments for a `tmux` command.
    pub fn socket_args(&self) -> Vec<OsString> {
        match (&self.socket_path, &self.socket_name) {
            (Some(path), _) => vec!["-S".into(), path.into()],
            (None, Some(name)) => vec!["-L".into(), name.into()],
            (None, None) => vec!["-L".into(), DEFAULT_SOCKET_NAME.into()],
        }
    }
}

/// Terminals on other machines and in containers (`serve`).
#[derive(Debug, Clone, Args)]
pub struct HostArgs {
    /// A host besides this machine (which is `local`): NAME=ssh:DEST runs the
    /// system ssh to DEST (user@host, host or an alias of your ssh config);
    /// NAME=exec:PREFIX runs PREFIX (e.g. `docker exec -i box`) before the tmux
    /// command line. Targets on it are written NAME/TARGET. Repeatable. Without
    /// any, TERMPILOT_HOSTS holds the hosts, comma-separated (so a prefix with
    /// a comma in it is given with --host).
    #[arg(long = "host", value_name = "NAME=ssh:DEST|NAME=exec:PREFIX")]
    hosts: Vec<HostSpec>,

    /// ssh configuration file passed to every ssh termpilot runs (`ssh -F`);
    /// default: ssh's own (~/.ssh/config of the user in the password database).
    #[arg(long, env = "TERMPILOT_SSH_CONFIG", value_name = "PATH")]
    pub ssh_config: Option<PathBuf>,

    /// Seconds connecting to a host may take in all (ssh, logging in, tmux
    /// attaching) before the call fails; ssh's ConnectTimeout is a second
    /// less, so that ssh's own message comes first.
    #[arg(
        long,
        env = "TERMPILOT_HOST_TIMEOUT_S",
        value_name = "SECONDS",
        default_value_t = 10
    )]
    pub host_timeout_s: u64,
}

/// Where `serve` reads hosts from when no `--host` is given.
const HOSTS_ENV: &str = "TERMPILOT_HOSTS";

impl HostArgs {
    /// The hosts: those given with `--host`, else those `TERMPILOT_HOSTS`
    /// lists. Only the variable is split on commas: one value of `--host`
    /// is one host, whatever its exec prefix holds.
    pub fn hosts(&self) -> anyhow::Result<Vec<HostSpec>> {
        use anyhow::Context;
        if !self.hosts.is_empty() {
            return Ok(self.hosts.clone());
        }
        match std::env::var(HOSTS_ENV) {
            Ok(list) => hosts_of_list(&list)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("{HOSTS_ENV}: invalid host")),
            Err(std::env::VarError::NotPresent) => Ok(Vec::new()),
            Err(e) => Err(e).with_context(|| format!("{HOSTS_ENV} is not valid UTF-8")),
        }
    }

    /// The options every remote host shares; `control_dir` holds ssh's
    /// master connection sockets.
    pub fn options(&self, control_dir: PathBuf) -> anyhow::Result<HostOptions> {
        anyhow::ensure!(
            (1..=600).contains(&self.host_timeout_s),
            "--host-timeout-s must be between 1 and 600"
        );
        Ok(HostOptions {
            ssh_config: self.ssh_config.clone(),
            timeout: Duration::from_secs(self.host_timeout_s),
            control_dir,
        })
    }
}

/// The hosts of a comma-separated list, as `TERMPILOT_HOSTS` holds them;
/// blank items are skipped.
fn hosts_of_list(list: &str) -> Result<Vec<HostSpec>, String> {
    (list.split(',').map(str::trim))
        .filter(|item| !item.is_empty())
        .map(str::parse)
        .collect()
}

/// A person in the loop: approvals, the audit log and scopes (`serve`).
#[derive(Debug, Clone, Args)]
pub struct PersonArgs {
    /// Ask the person (through MCP elicitation) before input would submit, or
    /// leave typed, a pane line matching REGEX, however it is typed (text, key
    /// names, pastes, over several calls), or a new pane would start with a
    /// matching command; a line is tried with and without its newline
    /// (repeatable; TERMPILOT_CONFIRM holds one pattern per line).
    #[arg(
        long = "confirm",
        env = "TERMPILOT_CONFIRM",
        value_name = "REGEX",
        value_delimiter = '\n'
    )]
    pub confirm: Vec<String>,

    /// Append one JSON line per tool call to PATH, written by a queue no call
    /// waits for (created 0600, a wider mode is narrowed; a link, FIFO or
    /// file of another user is refused; reopened when moved, for log
    /// rotation). Typed text is logged as its length and a keyed HMAC only.
    #[arg(long, env = "TERMPILOT_AUDIT", value_name = "PATH")]
    pub audit: Option<PathBuf>,

    /// Refuse every tool call while the audit log cannot be written (or its
    /// queue is full), instead of going on and reporting it.
    #[arg(long, env = "TERMPILOT_AUDIT_REQUIRED", requires = "audit")]
    pub audit_required: bool,

    /// Log typed text itself in the audit log.
    #[arg(long, env = "TERMPILOT_AUDIT_PAYLOADS", requires = "audit")]
    pub audit_payloads: bool,

    /// Let tools see and touch only sessions whose name matches GLOB (`*`, `?`,
    /// `[...]`; repeatable). create_session may only create matching names.
    #[arg(long = "allow-session", value_name = "GLOB")]
    pub allow_sessions: Vec<String>,

    /// Publish only the read-only toolset (same as --toolsets read-only).
    #[arg(long)]
    pub read_only: bool,
}

impl PersonArgs {
    /// The oversight these options ask for; fails when a pattern is not a
    /// valid regex or the audit log cannot be written.
    pub fn oversight(&self) -> anyhow::Result<termpilot_mcp::Oversight> {
        use anyhow::Context;
        let confirm = termpilot_mcp::Confirm::new(&self.confirm)
            .context("--confirm (TERMPILOT_CONFIRM): invalid regex")?;
        let audit = match &self.audit {
            Some(path) => Some(
                termpilot_mcp::AuditLog::open(path, self.audit_payloads)?
                    .required(self.audit_required),
            ),
            None => None,
        };
        Ok(termpilot_mcp::Oversight {
            audit,
            confirm,
            scope: termpilot_mcp::Scope::new(self.allow_sessions.clone()),
        })
    }
}

/// Caps and timeouts of `serve --http`.
#[derive(Debug, Clone, Args)]
pub struct HttpLimitArgs {
    /// The most HTTP sessions open at once (one per client that sent
    /// initialize); an initialize over the cap gets 503 with a JSON-RPC error,
    /// no session is evicted. Requests with MCP-Protocol-Version 2026-07-28
    /// need no session.
    #[arg(
        long,
        env = "TERMPILOT_HTTP_MAX_SESSIONS",
        value_name = "N",
        default_value_t = 64
    )]
    pub http_max_sessions: usize,

    /// The most HTTP connections open at once; one over the cap gets 503 and
    /// is closed.
    #[arg(
        long,
        env = "TERMPILOT_HTTP_MAX_CONNECTIONS",
        value_name = "N",
        default_value_t = 256
    )]
    pub http_max_connections: usize,

    /// Seconds a client may take to send a request's headers; also how long
    /// an idle keep-alive connection stays open.
    #[arg(
        long,
        env = "TERMPILOT_HTTP_HEADER_TIMEOUT_S",
        value_name = "SECONDS",
        default_value_t = 10.0
    )]
    pub http_header_timeout_s: f64,

    /// Seconds after which an HTTP session without traffic is closed (its
    /// client must initialize again; panes and cursors are not affected).
    #[arg(
        long,
        env = "TERMPILOT_HTTP_SESSION_IDLE_S",
        value_name = "SECONDS",
        default_value_t = 300.0
    )]
    pub http_session_idle_s: f64,
}

impl HttpLimitArgs {
    /// The limits, checked.
    pub fn limits(&self) -> anyhow::Result<HttpLimits> {
        anyhow::ensure!(
            self.http_max_sessions > 0,
            "--http-max-sessions must be at least 1"
        );
        anyhow::ensure!(
            self.http_max_connections > 0,
            "--http-max-connections must be at least 1"
        );
        let seconds = |value: f64, flag: &str| {
            anyhow::ensure!(
                value.is_finite() && value > 0.0,
                "{flag} must be a positive number of seconds"
            );
            Ok(Duration::from_secs_f64(value))
        };
        Ok(HttpLimits {
            max_sessions: self.http_max_sessions,
            max_connections: self.http_max_connections,
            header_timeout: seconds(self.http_header_timeout_s, "--http-header-timeout-s")?,
            session_idle: seconds(self.http_session_idle_s, "--http-session-idle-s")?,
        })
    }
}

/// Recordings `serve` writes while it runs.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// Write every pane's recording (asciicast v3, wrappers hidden, secrets
    /// redacted, a marker per tool call) to DIR/<session>-<pane>.cast while
    /// serving, rewritten as the pane prints.
    #[arg(long = "record", env = "TERMPILOT_RECORD", value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// The most megabytes of one pane's recording; the oldest events are
    /// dropped beyond it, with a marker that says so.
    #[arg(
        long = "record-mb",
        env = "TERMPILOT_RECORD_MB",
        value_name = "N",
        default_value_t = 64
    )]
    pub record_mb: u64,
}

impl RecordArgs {
    /// Where and how much to record, if recording.
    pub fn options(&self) -> anyhow::Result<Option<termpilot_mcp::RecordOptions>> {
        anyhow::ensure!(self.record_mb > 0, "--record-mb must be at least 1");
        Ok(self.record.clone().map(|dir| termpilot_mcp::RecordOptions {
            dir,
            max_bytes: self.record_mb << 20,
        }))
    }
}

/// Secrets `serve` lets an agent type with `type_secret` without seeing them.
#[derive(Debug, Clone, Args)]
pub struct SecretArgs {
    /// A secret an agent may type into a password prompt without seeing it:
    /// NAME=env:VARIABLE or NAME=file:PATH, optionally followed by
    /// `;for=PROGRAM,...` to type it only where those programs (names, or
    /// absolute paths of executables) are alone in the foreground. Repeatable;
    /// TERMPILOT_SECRETS holds several, comma-separated. Read when typed, never
    /// printed; results show [secret NAME] wherever a program prints it. An
    /// env: variable is removed from every process termpilot starts.
    #[arg(
        long = "secret",
        env = SECRETS_ENV,
        value_name = "NAME=env:VAR|NAME=file:PATH[;for=PROGRAM,...]",
        hide_env_values = true
    )]
    pub secrets: Vec<String>,
}

/// Where `serve` reads secrets from when no `--secret` is given.
const SECRETS_ENV: &str = "TERMPILOT_SECRETS";

impl SecretArgs {
    /// The secrets, checked (a malformed or repeated one fails start-up).
    /// Their variables, and `TERMPILOT_SECRETS`, are kept from every
    /// process termpilot starts from now on.
    pub fn secrets(&self) -> anyhow::Result<termpilot_mcp::secrets::Secrets> {
        let secrets =
            termpilot_mcp::secrets::Secrets::parse(&self.secrets).map_err(anyhow::Error::msg)?;
        let variables = secrets
            .iter()
            .filter_map(|s| s.variable().map(str::to_owned));
        termpilot_tmux::child_env::hide_from_children(variables.chain([SECRETS_ENV.to_owned()]));
        Ok(secrets)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use termpilot_tmux::hosts::Reach;

    use super::*;

    /// `serve`'s host options alone.
    #[derive(Debug, Parser)]
    struct Serve {
        #[command(flatten)]
        hosts: HostArgs,
    }

    #[test]
    fn a_host_option_is_one_host_commas_and_all() {
        let prefix = "docker exec -i -e LIST=a,b box-1";
        let args = Serve::try_parse_from(["serve", "--host", &format!("box=exec:{prefix}")])
            .expect("parses");
        let hosts = args.hosts.hosts().expect("valid hosts");
        assert_eq!(hosts.len(), 1, "{hosts:?}");
        assert_eq!(hosts[0].reach, Reach::Exec(prefix.into()));
    }

    /// `serve`'s secret options alone.
    #[derive(Debug, Parser)]
    struct Secrets {
        #[command(flatten)]
        secrets: SecretArgs,
    }

    #[test]
    fn a_bound_secret_keeps_its_program_list() {
        let spec = "pw=env:TP_PW;for=sudo,ssh";
        let args = Secrets::try_parse_from(["serve", "--secret", spec, "--secret", "k=file:/k"])
            .expect("parses");
        let secrets = args.secrets.secrets().expect("valid secrets");
        let names: Vec<&str> = secrets.iter().map(|s| s.name()).collect();
        assert_eq!(names, ["pw", "k"]);
        let programs = &secrets.iter().next().unwrap().recipients().0;
        assert_eq!(programs, &["sudo", "ssh"]);
    }

    #[test]
    fn the_environment_list_is_split_on_commas() {
        let hosts = hosts_of_list("build=ssh:me@build-1, box=exec:docker exec -i box-1,").unwrap();
        let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["build", "box"]);
        assert_eq!(hosts[1].reach, Reach::Exec("docker exec -i box-1".into()));
        assert!(hosts_of_list("build=ssh:me@build-1,box").is_err());
        assert!(hosts_of_list(" ").unwrap().is_empty());
    }
}

/// How calls that run as MCP tasks are bounded.
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// The most tool calls running as MCP tasks at once (a client that asks
    /// for one more gets an error result).
    #[arg(long, env = "TERMPILOT_MAX_TASKS", default_value_t = termpilot_mcp::DEFAULT_MAX_TASKS)]
    pub max_tasks: usize,
}
