//! The `termpilot` command: an MCP server that gives AI agents real
//! terminals in tmux.
//!
//! Layout:
//! - `main.rs`: the subcommands (`Commands`) and `serve`, which builds the
//!   engine (`Hosts`) and the MCP server over stdio or HTTP.
//! - `server_args`: the options the subcommands share (which tmux server,
//!   hosts, secrets, recordings, oversight, HTTP limits, tasks).
//! - `run`: `termpilot run`, a command in a PTY behind bound keys; with
//!   `--detachable`, in a session of termpilot's server created through the
//!   engine (`termpilot_tmux::ServerAdmin`).
//! - `attach`: `termpilot attach`, a person at a pane through an engine of
//!   their own (`termpilot_tmux::person::Person`).
//! - `admin`: `termpilot status` and `stop`, through the engine's one-shot
//!   commands (`termpilot_tmux::ServerAdmin`), which attach no client.
//! - `replay`: plays a recording in the terminal.
//! - `redacted_log`: the log on stderr, secrets hidden.
//!
//! Every tmux command goes through the engine crate except the `tmux attach`
//! of `run` and `attach`: that one is the tmux client a person's terminal
//! is handed to, so it must be a process owning the PTY.

mod admin;
mod attach;
mod redacted_log;
mod replay;
mod run;
mod server_args;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use server_args::ServerSelection;
use termpilot_mcp::http::{self, HttpOptions};
use termpilot_mcp::{AuditLog, ServerOptions, TermpilotServer, Toolsets};
use termpilot_tmux::{Engine, Hosts};
use tokio_util::sync::CancellationToken;

/// Real terminals for AI agents: an MCP server over tmux.
///
/// `termpilot serve` speaks the Model Context Protocol on stdin/stdout. Agents
/// create panes, type into them and read what programs print. By default it
/// uses its own tmux server (socket name "termpilot"), started on demand, so
/// your own tmux sessions stay private.
#[derive(Debug, Parser)]
#[command(name = "termpilot", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Serve MCP over stdio (register this command with your MCP client), or over
    /// HTTP with --http.
    Serve(Box<ServeArgs>),
    /// Run a program interactively in a PTY, with key sequences (such as
    /// Ctrl+C or Alt+C) intercepted before they reach it.
    Run(run::RunArgs),
    /// Attach your terminal to a pane of termpilot's tmux server, with keys to
    /// take it over from the agent, hand it back, cancel the agent's wait, or detach.
    Attach(attach::AttachArgs),
    /// Show termpilot's tmux server: whether it runs, its sessions, who is attached.
    Status(admin::StatusArgs),
    /// End termpilot's tmux server and its sessions (they outlive `serve` on purpose).
    Stop(admin::StopArgs),
    /// Play a recording (export_recording or serve --record writes them) in this terminal.
    Replay(replay::ReplayArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    #[command(flatten)]
    server: ServerSelection,

    #[command(flatten)]
    hosts: server_args::HostArgs,

    #[command(flatten)]
    secrets: server_args::SecretArgs,

    #[command(flatten)]
    record: server_args::RecordArgs,

    #[command(flatten)]
    person: server_args::PersonArgs,

    #[command(flatten)]
    tasks: server_args::TaskArgs,

    /// Toolsets to publish, comma-separated: read-only, input, lifecycle,
    /// destructive, or all. The destructive set (kill_*) is off by default.
    #[arg(
        long,
        env = "TERMPILOT_TOOLSETS",
        default_value = "read-only,input,lifecycle"
    )]
    toolsets: String,

    /// Token budget of tools that return terminal text, when the caller gives none.
    #[arg(long, env = "TERMPILOT_DEFAULT_MAX_TOKENS", default_value_t = 2_000)]
    default_max_tokens: u32,

    /// The most tokens any call may ask for.
    #[arg(long, env = "TERMPILOT_MAX_TOKENS", default_value_t = 20_000)]
    max_tokens: u32,

    /// Megabytes of output kept per pane for waits and capture_since; older
    /// output is evicted (and reported as lost to a reader that needed it).
    #[arg(long, env = "TERMPILOT_JOURNAL_MB", default_value_t = 8)]
    journal_mb: usize,

    /// Lines of history (scrollback) of panes created on a tmux server termpilot
    /// starts itself; tmux's own default is 2,000.
    #[arg(long, env = "TERMPILOT_HISTORY_LIMIT", default_value_t = 50_000)]
    history_limit: u32,

    /// The longest any wait may last, in seconds; longer requests are clamped.
    #[arg(long, env = "TERMPILOT_MAX_WAIT_S", default_value_t = 3_600.0)]
    max_wait_s: f64,

    /// Directory for full outputs that a tool cut to its budget (read back with
    /// read_output). Default: a fresh private temporary directory, removed on exit.
    #[arg(long, env = "TERMPILOT_OUTPUT_DIR")]
    output_dir: Option<PathBuf>,

    /// Keep the output directory when the server exits.
    #[arg(long, env = "TERMPILOT_KEEP_OUTPUTS")]
    keep_outputs: bool,

    /// The most megabytes of kept outputs; the oldest are evicted first.
    #[arg(long, env = "TERMPILOT_KEPT_OUTPUT_MB", default_value_t = 256)]
    kept_output_mb: u64,

    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio, e.g.
    /// 127.0.0.1:8787 (port 0 picks a free one; the address is printed on stderr).
    /// Every request needs the bearer token (--http-token).
    #[arg(long, env = "TERMPILOT_HTTP", value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,

    /// The bearer token HTTP clients must send (Authorization: Bearer TOKEN). Default:
    /// a random one, printed on stderr at start-up. Prefer the environment variable:
    /// other users can read a command line.
    #[arg(
        long,
        env = "TERMPILOT_HTTP_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    http_token: Option<String>,

    /// A host name HTTP requests may name in their Host header besides localhost,
    /// 127.0.0.1 and ::1 (needed to serve on another address; repeatable).
    #[arg(long = "http-allow-host", value_name = "HOST")]
    http_allowed_hosts: Vec<String>,

    /// A browser origin allowed to call the HTTP server besides the loopback ones, as
    /// scheme://host:port (":*" for any port; repeatable). Requests without an Origin
    /// header need only the token.
    #[arg(long = "http-allow-origin", value_name = "ORIGIN")]
    http_allowed_origins: Vec<String>,

    #[command(flatten)]
    http_limits: server_args::HttpLimitArgs,

    /// Log filter for stderr, e.g. "info" or "termpilot_tmux=debug".
    #[arg(long, env = "TERMPILOT_LOG", default_value = "warn")]
    log: String,
}

fn init_logging(filter: &str, redactor: termpilot_tmux::Redactor) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .with_context(|| format!("invalid log filter {filter:?}"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(redacted_log::RedactedStderr::new(redactor))
        .with_ansi(false)
        .init();
    Ok(())
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // The one redactor: the log, every host's engine and the MCP server share it.
    let redactor = termpilot_tmux::Redactor::default();
    init_logging(&args.log, redactor.clone())?;
    let toolsets = if args.person.read_only {
        Toolsets::parse("read-only")?
    } else {
        Toolsets::parse(&args.toolsets)?
    };
    let oversight = args.person.oversight()?;
    let secrets = args.secrets.secrets()?;
    let record = args.record.options()?;
    let host_specs = args.hosts.hosts()?;
    anyhow::ensure!(args.journal_mb > 0, "--journal-mb must be at least 1");
    anyhow::ensure!(args.max_wait_s > 0.0, "--max-wait-s must be positive");
    let http_limits = args.http_limits.limits()?;
    if let Some(token) = &args.http_token {
        // A blank token would let anyone in.
        anyhow::ensure!(
            !token.is_empty() && !token.contains(char::is_whitespace),
            "--http-token (TERMPILOT_HTTP_TOKEN) must be non-empty, without spaces"
        );
    }
    // Taken before tmux is started, so that a busy port fails start-up at once.
    let listener = match args.http {
        Some(address) => Some(http::bind(address).await?),
        None => None,
    };
    let mut config = args.server.engine_config();
    config.journal_bytes = args.journal_mb << 20;
    config.history_limit = args.history_limit;
    config.redactor = redactor;
    let socket = config.socket.clone();
    let engine = Engine::connect(config)
        .await
        .with_context(|| format!("cannot start the tmux connection ({socket})"))?;
    tracing::info!(%socket, %toolsets, "connected to tmux");
    let options = ServerOptions {
        toolsets,
        default_max_tokens: args.default_max_tokens.min(args.max_tokens),
        max_tokens_ceiling: args.max_tokens,
        max_wait_s: args.max_wait_s,
        output_dir: args.output_dir,
        kept_output_bytes: args.kept_output_mb << 20,
        keep_outputs: args.keep_outputs,
        secrets,
        max_tasks: args.tasks.max_tasks,
    };
    // ssh's master connections put their sockets in a directory of this
    // process's own (owner-only), removed when serve ends.
    let control_dir = tempfile::Builder::new()
        .prefix("termpilot-ssh-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .context("cannot make a directory for ssh's connection sockets")?;
    let host_options = args.hosts.options(control_dir.path().to_owned())?;
    let hosts = Hosts::new(engine.config().clone(), &host_specs, &host_options)?;
    if hosts.names().len() > 1 {
        tracing::info!(hosts = ?hosts.names(), "hosts connect on first use");
    }
    let audit = oversight.audit.as_ref().map(AuditLog::flusher);
    let server = TermpilotServer::new(engine, options)
        .context("cannot set up the kept-output directory")?
        .with_hosts(hosts)
        .with_oversight(oversight);
    if let Some(record) = record {
        let dir = record.dir.clone();
        server
            .record(record)
            .with_context(|| format!("cannot make the recordings' directory {}", dir.display()))?;
    }
    // On SIGTERM or SIGINT stop serving and return, so the kept outputs'
    // directory is removed as on a normal end of input.
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot watch for SIGTERM")?;
    let shutdown = CancellationToken::new();
    let serving = async {
        let Some(listener) = listener else {
            announce_stdio();
            return termpilot_mcp::serve_stdio(server).await;
        };
        let options = HttpOptions {
            token: args.http_token.clone().unwrap_or_else(random_token),
            allowed_hosts: args.http_allowed_hosts,
            allowed_origins: args.http_allowed_origins,
            limits: http_limits,
        };
        announce_http(&listener, &options, args.http_token.is_none())?;
        http::serve_http(server, listener, options, shutdown.clone()).await
    };
    let served = tokio::select! {
        served = serving => served,
        _ = terminate.recv() => {
            tracing::info!("SIGTERM: shutting down");
            Ok(())
        }
        _ = tokio::signal::ctrl_c() => {
            tracing::info!("SIGINT: shutting down");
            Ok(())
        }
    };
    shutdown.cancel();
    // The audit lines of the last calls are written before the process ends.
    if let Some(audit) = audit {
        audit.flush(std::time::Duration::from_secs(2));
    }
    served?;
    Ok(())
}

/// A person who typed `termpilot serve` at a terminal sees nothing happen:
/// say once, on stderr (stdout is the protocol), what it is waiting for.
fn announce_stdio() {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        eprintln!(
            "termpilot: speaking MCP on stdin/stdout and waiting for a client; register \
             `termpilot serve` with an MCP client (see docs/clients.md), or use --http. \
             Ctrl-C ends it."
        );
    }
}

/// Says on stderr where the HTTP server listens, and the token if termpilot
/// made it up.
fn announce_http(
    listener: &tokio::net::TcpListener,
    options: &HttpOptions,
    made_up: bool,
) -> std::io::Result<()> {
    let address = listener.local_addr()?;
    eprintln!(
        "termpilot: serving MCP at http://{address}{}",
        http::MCP_PATH
    );
    if made_up {
        eprintln!(
            "termpilot: bearer token {} (set TERMPILOT_HTTP_TOKEN to choose one)",
            options.token
        );
    }
    Ok(())
}

/// 32 random hex digits from the kernel's random source.
fn random_token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    // Without /dev/urandom there is no safe default: a made-up token must not
    // be guessable, so fail loudly rather than fall back to something weaker.
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .expect("/dev/urandom is readable");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn main() -> ExitCode {
    match run_cli(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            // One line with the whole chain of causes, without the backtrace
            // anyhow would print when RUST_BACKTRACE is set.
            eprintln!("termpilot: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run_cli(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Commands::Serve(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                // Deeply nested calls (a batch step running a command that
                // waits) make large futures; tokio's 2 MiB is tight for them
                // in a debug build.
                .thread_stack_size(8 << 20)
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            let served = runtime.block_on(serve(*args));
            // The stdin reader is a blocking read that may never return (the
            // client keeps the pipe open after a signal): do not wait for it.
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            served?;
            Ok(ExitCode::SUCCESS)
        }
        Commands::Run(args) => run::run(args),
        Commands::Attach(args) => attach::attach(args),
        Commands::Status(args) => admin::status(args),
        Commands::Stop(args) => admin::stop(args),
        Commands::Replay(args) => replay::replay(args),
    }
}
