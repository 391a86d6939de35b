//! `termpilot attach PANE`: a person attaches their terminal to a pane of
//! termpilot's tmux server and can take it over from the agent, hand it back,
//! cancel the agent's pending wait on it, or detach.
//!
//! The state is shared through tmux pane options (see `termpilot_tmux::person`),
//! so `attach` and `serve` need no channel of their own: while the pane is held,
//! `serve` refuses agent input to it, and `list_panes` shows who holds it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use termpilot_keys::parse_sequence;
use termpilot_pty::{Action, Outcome, Session, Terminal};
use termpilot_tmux::person::{CANCEL_OPTION, HELD_OPTION};

use crate::server_args::ServerSelection;

/// Arguments of `termpilot attach`.
#[derive(Debug, clap::Args)]
pub struct AttachArgs {
    /// The pane: a pane id such as %3 or a target such as work:1.0.
    pane: String,

    /// Take the pane over at once (agent input is refused until you hand it back).
    #[arg(long)]
    take_over: bool,

    /// Keys that take the pane over from the agent.
    #[arg(long, value_name = "KEYS", default_value = "C-] t")]
    take_over_key: String,

    /// Keys that hand the pane back to the agent.
    #[arg(long, value_name = "KEYS", default_value = "C-] h")]
    hand_back_key: String,

    /// Keys that cancel the agent's pending wait on the pane (the wait ends with
    /// outcome cancelled_by_user).
    #[arg(long, value_name = "KEYS", default_value = "C-] c")]
    cancel_key: String,

    /// Keys that detach (the pane keeps running; a held pane is handed back).
    #[arg(long, value_name = "KEYS", default_value = "C-] d")]
    detach_key: String,

    /// How long a key that begins a longer binding waits for the rest, in ms.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    escape_timeout_ms: u64,

    /// The tmux server the pane is on.
    #[command(flatten)]
    server: ServerSelection,
}

/// The tmux server and the pane, for the small tmux commands bindings run.
#[derive(Clone)]
struct Target {
    tmux: PathBuf,
    socket: Vec<OsString>,
    pane: String,
    note: String,
}

impl Target {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.tmux);
        command
            .args(&self.socket)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .env_remove("TMUX");
        command
    }

    /// Runs a tmux command; returns its stdout.
    fn run(&self, args: &[&str]) -> anyhow::Result<String> {
        let output = self
            .command()
            .args(args)
            .output()
            .with_context(|| format!("cannot run {}", self.tmux.display()))?;
        if !output.status.success() {
            bail!("tmux {} failed", args.first().copied().unwrap_or_default());
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn hold(&self) {
        let _ = self.run(&[
            "set-option",
            "-p",
            "-t",
            &self.pane,
            HELD_OPTION,
            &self.note,
        ]);
        self.tell("you hold this pane: the agent cannot type into it");
    }

    fn hand_back(&self) {
        let _ = self.run(&["set-option", "-p", "-u", "-t", &self.pane, HELD_OPTION]);
        self.tell("handed back: the agent may type into this pane again");
    }

    /// Hands the pane back if this attach still holds it.
    fn release_if_mine(&self) {
        let format = format!("#{{{HELD_OPTION}}}");
        let holder = self.run(&["display-message", "-p", "-t", &self.pane, &format]);
        if holder.is_ok_and(|h| h.trim() == self.note) {
            let _ = self.run(&["set-option", "-p", "-u", "-t", &self.pane, HELD_OPTION]);
        }
    }

    fn cancel_waits(&self) {
        let token = termpilot_tmux::person::unix_nanos().to_string();
        let _ = self.run(&["set-option", "-p", "-t", &self.pane, CANCEL_OPTION, &token]);
        self.tell("cancelled the agent's wait on this pane");
    }

    /// Shows a message on the attached terminal's status line.
    fn tell(&self, message: &str) {
        let _ = self.run(&[
            "display-message",
            "-t",
            &self.pane,
            &format!("termpilot: {message}"),
        ]);
    }
}

/// Attaches the terminal to the pane until the person detaches.
///
/// Blocking; call it outside any async runtime's worker.
pub fn attach(args: AttachArgs) -> anyhow::Result<ExitCode> {
    let mut target = Target {
        tmux: args.server.tmux.clone(),
        socket: args.server.socket_args(),
        pane: args.pane.clone(),
        note: format!(
            "a person (termpilot attach, pid {}) since {}",
            std::process::id(),
            utc_now()
        ),
    };
    let found = target
        .run(&[
            "display-message",
            "-p",
            "-t",
            &args.pane,
            "#{pane_id} #{session_id} #{window_id}",
        ])
        .ok()
        .filter(|out| out.starts_with('%'))
        .with_context(|| format!("pane {} not found on the tmux server", args.pane))?;
    let ids: Vec<&str> = found.split_whitespace().collect();
    let (pane, session, window) = (ids[0].to_owned(), ids[1].to_owned(), ids[2].to_owned());
    target.pane = pane.clone();
    target.run(&["select-window", "-t", &window])?;
    target.run(&["select-pane", "-t", &pane])?;
    if args.take_over {
        target.hold();
    }
    eprintln!(
        "termpilot attach: {pane}. {} takes over, {} hands back, {} cancels the agent's wait, {} detaches.",
        args.take_over_key, args.hand_back_key, args.cancel_key, args.detach_key
    );
    let outcome = run_session(&args, &target, &session);
    target.release_if_mine();
    let outcome = outcome?;
    eprintln!("termpilot attach: detached from {pane}; it keeps running.");
    Ok(ExitCode::from(match outcome {
        Outcome::Detached => 0,
        other => other.exit_code(),
    }))
}

fn run_session(args: &AttachArgs, target: &Target, session: &str) -> anyhow::Result<Outcome> {
    let terminal = Terminal::stdio().context("cannot use standard input/output")?;
    let mut attach = target.command();
    attach.stderr(Stdio::inherit());
    attach.args(["attach-session", "-t", session]);
    let keys =
        |spec: &str| parse_sequence(spec).with_context(|| format!("bad key sequence {spec:?}"));
    let (hold, hand_back, cancel) = (target.clone(), target.clone(), target.clone());
    let detach = target.clone();
    let report = Session::builder(attach)
        .terminal(terminal)
        .escape_timeout(Duration::from_millis(args.escape_timeout_ms))
        .bind(
            keys(&args.take_over_key)?,
            Action::Callback(Box::new(move || hold.hold())),
        )
        .bind(
            keys(&args.hand_back_key)?,
            Action::Callback(Box::new(move || hand_back.hand_back())),
        )
        .bind(
            keys(&args.cancel_key)?,
            Action::Callback(Box::new(move || cancel.cancel_waits())),
        )
        .bind(keys(&args.detach_key)?, Action::Detach)
        .detach_hook(move |pty: &Path| {
            let tty = pty.to_string_lossy().into_owned();
            detach
                .run(&["detach-client", "-t", &tty])
                .map(|_| ())
                .map_err(std::io::Error::other)
        })
        .run()?;
    for failure in &report.action_failures {
        eprintln!("termpilot attach: {failure}");
    }
    Ok(report.outcome)
}

/// The time of day in UTC, for the holder note.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let day = secs % 86_400;
    format!(
        "{:02}:{:02}:{:02} UTC",
        day / 3600,
        day % 3600 / 60,
        day % 60
    )
}
