//! `termpilot status` and `termpilot stop`: what termpilot's tmux server is
//! doing, and ending it. termpilot's sessions outlive `serve` on purpose (an
//! agent's work survives a client restart), so a person needs both.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use termpilot_tmux::{ServerAdmin, StopCheck, Stopped};

use crate::server_args::ServerSelection;

/// Arguments of `termpilot status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    server: ServerSelection,
}

/// Arguments of `termpilot stop`.
#[derive(Debug, Args)]
pub struct StopArgs {
    #[command(flatten)]
    server: ServerSelection,

    /// End the server even if termpilot did not start it, or people are
    /// attached, without asking.
    #[arg(long)]
    force: bool,
}

/// The server `status` and `stop` talk to, with a runtime of its own: they
/// ask tmux through the engine's one-shot commands (see
/// `termpilot_tmux::server_admin`), which attach no client to it.
struct Admin {
    runtime: tokio::runtime::Runtime,
    server: ServerAdmin,
}

impl Admin {
    fn new(selection: &ServerSelection) -> anyhow::Result<Admin> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let server = ServerAdmin::new(selection.engine_config());
        Ok(Admin { runtime, server })
    }

    /// Runs one of the server's queries or commands to its end.
    fn run<T>(&self, asked: impl Future<Output = termpilot_tmux::Result<T>>) -> anyhow::Result<T> {
        Ok(self.runtime.block_on(asked)?)
    }
}

/// `termpilot status`.
pub fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let admin = Admin::new(&args.server)?;
    let server = &admin.server;
    let version = admin.run(server.tmux_version())?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "tmux: {version}")?;
    writeln!(out, "socket: {}", server.describe())?;
    let Some(survey) = admin.run(server.survey())? else {
        writeln!(out, "server: not running (serve starts it)")?;
        return Ok(ExitCode::SUCCESS);
    };
    let origin = if survey.started_by_termpilot {
        "started by termpilot"
    } else {
        "not started by termpilot"
    };
    writeln!(out, "server: running, {origin}")?;
    writeln!(out, "sessions: {}", survey.sessions.len())?;
    for session in &survey.sessions {
        writeln!(
            out,
            "  {}: {} windows, {} people attached",
            session.name, session.windows, session.people
        )?;
    }
    writeln!(
        out,
        "settings of a serve started now (flags and TERMPILOT_* variables): see \
         `termpilot serve --help`; a running serve's journal, budget and HTTP listener \
         live in its own process and are not visible here"
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `termpilot stop`.
pub fn stop(args: StopArgs) -> anyhow::Result<ExitCode> {
    let admin = Admin::new(&args.server)?;
    let server = &admin.server;
    let socket = server.describe();
    let Some(survey) = admin.run(server.survey())? else {
        eprintln!("termpilot: no tmux server runs on {socket}");
        return Ok(ExitCode::SUCCESS);
    };
    match survey.stop_check() {
        _ if args.force => {}
        StopCheck::Clear => {}
        StopCheck::NotStartedByTermpilot => anyhow::bail!(
            "the tmux server on {socket} was not started by termpilot; end it with --force if \
             you mean to"
        ),
        StopCheck::PeopleAttached(people) => {
            if !confirm(people)? {
                anyhow::bail!(
                    "{people} people are attached to the server on {socket}; not ended \
                     (--force ends it anyway)"
                );
            }
        }
    }
    let stopped = admin
        .run(server.kill_server())
        .context("tmux could not end the server")?;
    if stopped == Stopped::WasNotRunning {
        // It ended by itself since the survey.
        eprintln!("termpilot: no tmux server runs on {socket}");
        return Ok(ExitCode::SUCCESS);
    }
    remove_dead_socket(&survey.socket_path);
    eprintln!(
        "termpilot: ended the tmux server on {socket} ({} sessions)",
        survey.sessions.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Removes the socket file a server left when it ended (tmux leaves it),
/// once nothing answers on it any more; a server still (or again) running
/// there keeps it.
fn remove_dead_socket(path: &Path) {
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::net::UnixStream;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let is_socket = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket());
        if !is_socket {
            return;
        }
        match UnixStream::connect(path) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                if let Err(e) = std::fs::remove_file(path) {
                    eprintln!("termpilot: could not remove {}: {e}", path.display());
                }
                return;
            }
            _ if Instant::now() >= deadline => return,
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Asks the person at the terminal; without one, the answer is no.
fn confirm(people: usize) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("termpilot: {people} people are attached; end the server? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
