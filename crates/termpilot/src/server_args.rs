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

/// Secrets `serve` lets an agent type with `type_secret` without seeing them.
#[derive(Debug, Clone, Args)]
pub struct SecretArgs {
    /// A secret an agent may type into a password prompt without seeing it:
    /// NAME=env:VARIABLE or NAME=file:PATH (repeatable; read when typed, never
    /// printed; results show [secret NAME] wherever a program prints it).
    #[arg(
        long = "secret",
        env = "TERMPILOT_SECRETS",
        value_delimiter = ',',
        value_name = "NAME=env:VAR|NAME=file:PATH",
        hide_env_values = true
    )]
    pub secrets: Vec<String>,
}

impl SecretArgs {
    /// The secrets, checked (a malformed or repeated one fails start-up).
    pub fn secrets(&self) -> anyhow::Result<termpilot_mcp::secrets::Secrets> {
        termpilot_mcp::secrets::Secrets::parse(&self.secrets).map_err(anyhow::Error::msg)
    }
}
