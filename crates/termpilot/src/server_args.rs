//! Which tmux server a command talks to: the options `serve`, `run` and
//! `attach` share.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;
use termpilot_tmux::config::DEFAULT_SOCKET_NAME;
use termpilot_tmux::{EngineConfig, Socket};

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

    /// The configuration file for a server termpilot starts.
    pub fn config_path(&self) -> PathBuf {
        self.tmux_config
            .clone()
            .unwrap_or_else(|| PathBuf::from("/dev/null"))
    }
}

/// A person in the loop: approvals, the audit log and scopes (`serve`).
#[derive(Debug, Clone, Args)]
pub struct PersonArgs {
    /// Ask the person (through MCP elicitation) before typing text that matches
    /// REGEX into a pane; `enter` counts as a newline (repeatable;
    /// TERMPILOT_CONFIRM holds one pattern per line).
    #[arg(
        long = "confirm",
        env = "TERMPILOT_CONFIRM",
        value_name = "REGEX",
        value_delimiter = '\n'
    )]
    pub confirm: Vec<String>,

    /// Append one JSON line per tool call to PATH (created mode 0600; reopened
    /// when moved, for log rotation). Typed text is logged as its length and
    /// SHA-256 prefix only.
    #[arg(long, env = "TERMPILOT_AUDIT", value_name = "PATH")]
    pub audit: Option<PathBuf>,

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
            Some(path) => Some(termpilot_mcp::AuditLog::open(path, self.audit_payloads)?),
            None => None,
        };
        Ok(termpilot_mcp::Oversight {
            audit,
            confirm,
            scope: termpilot_mcp::Scope::new(self.allow_sessions.clone()),
        })
    }
}
