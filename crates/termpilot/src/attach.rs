//! `termpilot attach PANE`: a person attaches their terminal to a pane of
//! termpilot's tmux server and can take it over from the agent, hand it back,
//! cancel the agent's pending wait on it, or detach.
//!
//! The person acts through an engine of their own ([`Person`]), connected to
//! the same server; the state is shared through tmux pane options (see
//! `termpilot_tmux::person`), so `attach` and `serve` need no channel of their
//! own: while the pane is held, `serve` refuses agent input to it, and
//! `list_panes` shows who holds it. The terminal itself is a `tmux attach` in a
//! PTY whose key bindings call the engine.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use termpilot_keys::parse_sequence;
use termpilot_pty::{Action, Outcome, Session, Terminal};
use termpilot_tmux::person::Person;
use tokio::runtime::{Handle, Runtime};

use crate::server_args::ServerSelection;

/// The longest a key binding waits for tmux before the terminal goes on.
const ACTION_LIMIT: Duration = Duration::from_secs(2);

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

/// What the key bindings do, on the PTY's thread, through the person's
/// engine on the runtime.
#[derive(Clone)]
struct Keyboard {
    person: Person,
    runtime: Handle,
    /// The process of the person's `tmux attach` (its tmux client), once
    /// started: messages go to that client's status line.
    client: Arc<OnceLock<u32>>,
}

impl Keyboard {
    /// Runs `action` on the engine, waiting at most [`ACTION_LIMIT`].
    fn run<T>(&self, action: impl Future<Output = termpilot_tmux::Result<T>>) -> Result<T, String> {
        let limited = async { tokio::time::timeout(ACTION_LIMIT, action).await };
        match self.runtime.block_on(limited) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("tmux did not answer within {ACTION_LIMIT:?}")),
        }
    }

    fn take_over(&self) {
        match self.run(self.person.take_over()) {
            Ok(()) => self.tell("you hold this pane: the agent cannot type into it"),
            Err(error) => self.tell(&format!("could not take the pane over: {error}")),
        }
    }

    fn hand_back(&self) {
        match self.run(self.person.hand_back()) {
            Ok(()) => self.tell("handed back: the agent may type into this pane again"),
            Err(error) => self.tell(&format!("could not hand the pane back: {error}")),
        }
    }

    fn cancel_waits(&self) {
        match self.run(self.person.cancel_waits()) {
            Ok(()) => self.tell("cancelled the agent's wait on this pane"),
            Err(error) => self.tell(&format!("could not cancel the agent's wait: {error}")),
        }
    }

    /// Shows a message on the person's status line.
    fn tell(&self, message: &str) {
        if let Some(&pid) = self.client.get() {
            let _ = self.run(self.person.tell(pid, message));
        }
    }

    /// Detaches the person's tmux client, whose terminal is `pty`.
    fn detach(&self, pty: &Path) -> std::io::Result<()> {
        let tty = pty.to_string_lossy();
        self.run(self.person.detach_client(&tty))
            .map_err(std::io::Error::other)
    }
}

/// Attaches the terminal to the pane until the person detaches.
///
/// Blocking; call it outside any async runtime's worker.
pub fn attach(args: AttachArgs) -> anyhow::Result<ExitCode> {
    // One worker keeps the engine's control clients read while the PTY's
    // thread waits for keys.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let attached = attach_with(&args, &runtime);
    runtime.shutdown_timeout(Duration::from_millis(200));
    attached
}

fn attach_with(args: &AttachArgs, runtime: &Runtime) -> anyhow::Result<ExitCode> {
    let note = format!(
        "a person (termpilot attach, pid {}) since {}",
        std::process::id(),
        utc_now()
    );
    let config = args.server.engine_config();
    let person = runtime
        .block_on(Person::connect(config, &args.pane, note))
        .with_context(|| format!("cannot attach to pane {}", args.pane))?;
    // Whatever ends the session (a detach, the terminal closing, a signal,
    // a panic), a pane this attach holds is handed back.
    let hold = person.release_on_drop(runtime.handle().clone());
    runtime.block_on(person.focus())?;
    let pane = person.pane();
    eprintln!(
        "termpilot attach: {pane}. {} takes over, {} hands back, {} cancels the agent's wait, {} detaches.",
        args.take_over_key, args.hand_back_key, args.cancel_key, args.detach_key
    );
    let keyboard = Keyboard {
        person,
        runtime: runtime.handle().clone(),
        client: Arc::default(),
    };
    let outcome = run_session(args, &keyboard);
    drop(hold);
    let outcome = outcome?;
    eprintln!("termpilot attach: detached from {pane}; it keeps running.");
    Ok(ExitCode::from(match outcome {
        Outcome::Detached => 0,
        other => other.exit_code(),
    }))
}

fn run_session(args: &AttachArgs, keyboard: &Keyboard) -> anyhow::Result<Outcome> {
    let terminal = Terminal::stdio().context("cannot use standard input/output")?;
    // The one tmux command that is a process of its own, not the person's
    // engine: `tmux attach` is the tmux client the person's terminal (the
    // PTY) is handed to, and only a client that owns a terminal can show
    // the pane and take its keys. No engine can stand in for it.
    let mut attach = Command::new(&args.server.tmux);
    attach
        .args(args.server.socket_args())
        .args([
            "attach-session",
            "-t",
            &keyboard.person.session().to_string(),
        ])
        .env_remove("TMUX");
    let keys =
        |spec: &str| parse_sequence(spec).with_context(|| format!("bad key sequence {spec:?}"));
    let bind = |action: fn(&Keyboard)| {
        let keyboard = keyboard.clone();
        Action::Callback(Box::new(move || action(&keyboard)))
    };
    let detach = keyboard.clone();
    let session = Session::builder(attach)
        .terminal(terminal)
        .escape_timeout(Duration::from_millis(args.escape_timeout_ms))
        .bind(keys(&args.take_over_key)?, bind(Keyboard::take_over))
        .bind(keys(&args.hand_back_key)?, bind(Keyboard::hand_back))
        .bind(keys(&args.cancel_key)?, bind(Keyboard::cancel_waits))
        .bind(keys(&args.detach_key)?, Action::Detach)
        .detach_hook(move |pty: &Path| detach.detach(pty))
        .spawn()?;
    // From here the session catches the shutdown signals (it ends, and the
    // hold is handed back), so the pane is taken only now.
    let _ = keyboard.client.set(session.child_id());
    if args.take_over {
        keyboard.take_over();
    }
    let report = session.run()?;
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
