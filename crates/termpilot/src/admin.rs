//! `termpilot status` and `termpilot stop`: what termpilot's tmux server is
//! doing, and ending it. termpilot's sessions outlive `serve` on purpose (an
//! agent's work survives a client restart), so a person needs both.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use termpilot_tmux::STARTED_MARK;

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

/// Runs `tmux <socket> ARGS` and returns its output.
fn tmux(server: &ServerSelection, args: &[&str]) -> anyhow::Result<Output> {
    Command::new(&server.tmux)
        .args(server.socket_args())
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}: is tmux installed?", server.tmux.display()))
}

/// The server's sessions as `(name, windows, people attached)`, or `None`
/// when no server runs on the socket.
fn sessions(server: &ServerSelection) -> anyhow::Result<Option<Vec<(String, String, usize)>>> {
    let listed = tmux(
        server,
        &[
            "list-sessions",
            "-F",
            "#{session_name}\x1f#{session_windows}",
        ],
    )?;
    if !listed.status.success() {
        return Ok(None);
    }
    let people = people(server)?;
    let text = String::from_utf8_lossy(&listed.stdout);
    Ok(Some(
        text.lines()
            .filter_map(|line| line.split_once('\x1f'))
            .map(|(name, windows)| {
                let attached = people.iter().filter(|p| p.as_str() == name).count();
                (name.to_owned(), windows.to_owned(), attached)
            })
            .collect(),
    ))
}

/// The session of every person's client (control clients are termpilot's
/// own connections, not people).
fn people(server: &ServerSelection) -> anyhow::Result<Vec<String>> {
    let clients = tmux(
        server,
        &[
            "list-clients",
            "-F",
            "#{client_control_mode}\x1f#{session_name}",
        ],
    )?;
    Ok(String::from_utf8_lossy(&clients.stdout)
        .lines()
        .filter_map(|line| line.split_once('\x1f'))
        .filter(|(control, _)| *control == "0")
        .map(|(_, session)| session.to_owned())
        .collect())
}

fn socket_text(server: &ServerSelection) -> String {
    server
        .socket_args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether termpilot started the server (it marks the servers it starts).
fn started_by_termpilot(server: &ServerSelection) -> anyhow::Result<bool> {
    let shown = tmux(server, &["show-options", "-gv", STARTED_MARK])?;
    Ok(shown.status.success() && String::from_utf8_lossy(&shown.stdout).trim() == "1")
}

/// `termpilot status`.
pub fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let server = &args.server;
    let version = tmux(server, &["-V"])?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "tmux: {}",
        String::from_utf8_lossy(&version.stdout).trim()
    )?;
    writeln!(out, "socket: {}", socket_text(server))?;
    let Some(sessions) = sessions(server)? else {
        writeln!(out, "server: not running (serve starts it)")?;
        return Ok(ExitCode::SUCCESS);
    };
    let origin = if started_by_termpilot(server)? {
        "started by termpilot"
    } else {
        "not started by termpilot"
    };
    writeln!(out, "server: running, {origin}")?;
    writeln!(out, "sessions: {}", sessions.len())?;
    for (name, windows, attached) in sessions {
        writeln!(
            out,
            "  {name}: {windows} windows, {attached} people attached"
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
    let server = &args.server;
    let Some(sessions) = sessions(server)? else {
        eprintln!("termpilot: no tmux server runs on {}", socket_text(server));
        return Ok(ExitCode::SUCCESS);
    };
    if !args.force && !started_by_termpilot(server)? {
        anyhow::bail!(
            "the tmux server on {} was not started by termpilot; end it with --force if you \
             mean to",
            socket_text(server)
        );
    }
    let people: usize = sessions.iter().map(|s| s.2).sum();
    if people > 0 && !args.force && !confirm(people)? {
        anyhow::bail!(
            "{people} people are attached to the server on {}; not ended (--force ends it \
             anyway)",
            socket_text(server)
        );
    }
    let socket = socket_file(server)?;
    let killed = tmux(server, &["kill-server"])?;
    anyhow::ensure!(
        killed.status.success(),
        "tmux could not end the server: {}",
        String::from_utf8_lossy(&killed.stderr).trim()
    );
    if let Some(socket) = socket {
        remove_dead_socket(&socket);
    }
    eprintln!(
        "termpilot: ended the tmux server on {} ({} sessions)",
        socket_text(server),
        sessions.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// The path of the running server's socket file.
fn socket_file(server: &ServerSelection) -> anyhow::Result<Option<PathBuf>> {
    let shown = tmux(server, &["display-message", "-p", "#{socket_path}"])?;
    let path = String::from_utf8_lossy(&shown.stdout).trim().to_owned();
    Ok((shown.status.success() && !path.is_empty()).then(|| PathBuf::from(path)))
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
