//! A person at the keyboard: the state `termpilot attach` shares through
//! tmux pane options, so `attach` and `serve` need no channel of their own.
//!
//! - `@termpilot_held` is set (to a note saying who and since when) while a
//!   person holds the pane: the engine then refuses agent input to it.
//! - `@termpilot_cancel` is set to the time (Unix nanoseconds) each time the
//!   person cancels the agent's pending wait on the pane: waits that started
//!   before that time end with `Outcome::CancelledByUser`. Comparing times,
//!   not watching for a change, means a cancel is neither lost when tmux
//!   reports it in its very first report, nor replayed on a later wait.
//!
//! Input goes to a pane on one tmux command line behind a guard that fails
//! when the pane holds `@termpilot_held` (see [`unless_held`]): tmux itself
//! decides, as it runs the line, so a takeover counts at once and costs no
//! round trip before the input. The engine reads `@termpilot_cancel` of the
//! panes that waits are watching every [`CANCEL_POLL`] (see [`watch_panes`]).
//!
//! It does not ask tmux to report changes of these options with a format
//! subscription (`refresh-client -B`): tmux 3.3a crashes (`segfault at f0`)
//! when a session ends while a control client holds such a subscription, and
//! the crash takes every session with it.
//!
//! The person's side is a [`Person`]: an engine connected to the same server,
//! at one pane, with a note saying who they are. `termpilot attach` holds
//! one, and a [`ReleaseGuard`] hands the pane back however it ends.

use std::sync::Weak;
use std::time::Duration;

use termpilot_control::{Command, PaneId, SessionId, TargetKind, WindowId};
use tokio::runtime::RuntimeFlavor;
use tokio::sync::watch;

use crate::client::{Answer, Group, GroupReplies};
use crate::config::EngineConfig;
use crate::engine::{Engine, Shared, not_found_pane, ok_reply};
use crate::error::{Error, Result};
use crate::format::{HeldRow, tmux_format};
use crate::ops::PaneScope;
use crate::targets::invalid;

/// The pane option set while a person holds the pane.
pub const HELD_OPTION: &str = "@termpilot_held";
/// The pane option a person changes to cancel the agent's wait.
pub const CANCEL_OPTION: &str = "@termpilot_cancel";

tmux_format! {
    /// Whether a watched pane is dead, and when a person last cancelled
    /// its waits (the [`CANCEL_OPTION`]).
    struct Watched {
        dead: bool = "pane_dead",
        cancel: String = "@termpilot_cancel",
    }
}

tmux_format! {
    /// A tmux client's process and name.
    struct ClientName {
        pid: Option<u32> = "client_pid",
        name: String = "client_name",
    }
}

/// What the guard before input runs when a person holds the pane: no
/// command of that name exists, so it fails, and tmux skips the rest of
/// the line (see [`unless_held`]).
const HELD_REFUSAL: &str = "termpilot-pane-held";

/// How long guarded input waits for its replies on the pane's own client
/// before it takes the cursor from before it was sent (as
/// `Engine::run_for_pane` does).
const GUARDED_REPLY_WAIT: Duration = Duration::from_millis(100);

/// The tmux command that fails when a person holds `pane` and does nothing
/// otherwise. A failing command ends its command line: the commands after
/// it on the line run only on a pane nobody holds, as tmux finds it when it
/// runs them. The option is compared with the empty string, so any note
/// holds the pane, even one that reads as false (`0`).
fn unless_held(pane: PaneId) -> Command {
    Command::new("if-shell")
        .flag("-F")
        .opt("-t", pane.to_string())
        .arg(format!("#{{!=:#{{{HELD_OPTION}}},}}"))
        .arg(HELD_REFUSAL)
}

/// `commands` on one line behind [`unless_held`]; the reply to the first
/// of them takes the cursor of `cursor_pane`.
fn guarded_line(
    pane: PaneId,
    commands: Vec<Command>,
    cursor_pane: Option<PaneId>,
) -> Result<Group> {
    let first = (commands.into_iter().enumerate())
        .map(|(i, command)| (command, cursor_pane.filter(|_| i == 0)));
    crate::engine::group(std::iter::once((unless_held(pane), None)).chain(first))
}

/// Whether a reply is the guard's refusal.
fn refused_as_held(answer: &Answer) -> bool {
    !answer.reply.ok && answer.reply.text().contains(HELD_REFUSAL)
}

/// How often the cancel option (and dead flag) of a watched pane is read.
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(250);

/// The cancel time (Unix nanoseconds) in the option's value, if any.
fn cancel_time(value: &str) -> Option<u64> {
    value.trim().parse().ok()
}

/// The current time in Unix nanoseconds, as cancel times are written.
pub fn unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Engine {
    /// Refuses input to a pane a person holds.
    pub(crate) async fn refuse_held(&self, panes: &[PaneId]) -> Result<()> {
        for (pane, note) in panes.iter().zip(self.held_notes(panes).await?) {
            if let Some(note) = note {
                return Err(Error::HeldByPerson { pane: *pane, note });
            }
        }
        Ok(())
    }

    /// Types into `pane` unless a person holds it: `bytes` (what the
    /// terminal gets) pass the input gate, then `commands` run behind the
    /// held guard on one line, on the client that carries the pane's
    /// output. Returns the cursor from before the input, as
    /// `Engine::run_for_pane` does. A refused input leaves the gate's line
    /// as it was.
    pub(crate) async fn type_unless_held(
        &self,
        pane: PaneId,
        bytes: &[u8],
        commands: Vec<Command>,
    ) -> Result<u64> {
        let (cursor, _) = self
            .type_unless_held_then(pane, bytes, commands, None)
            .await?;
        Ok(cursor)
    }

    /// [`Engine::type_unless_held`], with `then` written right after the
    /// input on the same client (so tmux runs it after the keys, and its
    /// replies fall in the pane's stream); its replies, when it was sent.
    /// It is not sent when the input goes through another client.
    pub(crate) async fn type_unless_held_then(
        &self,
        pane: PaneId,
        bytes: &[u8],
        commands: Vec<Command>,
        then: Option<Group>,
    ) -> Result<(u64, Option<GroupReplies>)> {
        let line = self.shared.gate.pane_line(pane);
        self.gate_input(pane, bytes)?;
        let typed = self.run_unless_held(pane, commands, then).await;
        if let Err(Error::HeldByPerson { .. }) = &typed {
            self.shared.gate.put_back(pane, line);
        }
        typed
    }

    async fn run_unless_held(
        &self,
        pane: PaneId,
        commands: Vec<Command>,
        then: Option<Group>,
    ) -> Result<(u64, Option<GroupReplies>)> {
        self.forget_ready(pane);
        let client = self.client_for_pane(pane).await?;
        let before = self.journal_end(pane);
        if client.is_behind()
            && let Ok(quiet) = self.quiet().await
        {
            // The quiet client's replies have no place in the pane's stream.
            let answers = quiet
                .call_group(guarded_line(pane, commands, None)?)
                .await?;
            let cursor = self.typed_unless_held(pane, answers, before).await?;
            return Ok((cursor, None));
        }
        let group = guarded_line(pane, commands, Some(pane))?;
        let (sent_then, then_replies) = tokio::sync::oneshot::channel();
        // A task of its own: the line is sent even when the wait ends first.
        let replies = tokio::spawn(async move {
            let replies = client.send_group(group).await;
            let then = match then {
                Some(then) => Some(client.send_group(then).await),
                None => None,
            };
            // Handed back before the replies come: they may come late.
            let _ = sent_then.send(then);
            replies.answers().await
        });
        let typed = match tokio::time::timeout(GUARDED_REPLY_WAIT, replies).await {
            Ok(Ok(answers)) => self.typed_unless_held(pane, answers?, before).await,
            Ok(Err(_)) => Err(Error::Disconnected {
                command: "send-keys".into(),
                reason: "the task sending the input ended".into(),
            }),
            // The replies wait behind output tmux has queued: tmux has run
            // the line, so whether the guard refused is the pane's state
            // now, unless a person took or gave it back this very moment.
            Err(_) => self.refuse_held(&[pane]).await.map(|()| before),
        };
        Ok((typed?, then_replies.await.ok().flatten()))
    }

    /// The cursor of guarded input from its replies, or why it was not
    /// typed.
    async fn typed_unless_held(
        &self,
        pane: PaneId,
        answers: Vec<Answer>,
        before: u64,
    ) -> Result<u64> {
        let target = pane.to_string();
        let mut answers = answers.into_iter();
        let guard = answers.next().ok_or_else(|| Error::Protocol {
            command: "if-shell".into(),
            detail: "no reply".into(),
        })?;
        if refused_as_held(&guard) {
            let note = self
                .held_notes(&[pane])
                .await
                .ok()
                .and_then(|notes| notes.into_iter().next().flatten());
            // Handed back since the guard ran: who held it is gone with it.
            let note = note.unwrap_or_else(|| "a person".to_owned());
            return Err(Error::HeldByPerson { pane, note });
        }
        ok_reply(guard).map_err(|e| not_found_pane(e, &target))?;
        let mut cursor = None;
        for answer in answers {
            cursor = cursor.or(answer.cursor);
            ok_reply(answer).map_err(|e| not_found_pane(e, &target))?;
        }
        Ok(cursor.unwrap_or(before))
    }

    /// For each pane, who holds it (if a person does), in one round trip.
    pub(crate) async fn held_notes(&self, panes: &[PaneId]) -> Result<Vec<Option<String>>> {
        let client = self.primary().await?;
        let mut calls = Vec::with_capacity(panes.len());
        for pane in panes {
            let query = Command::new("display-message")
                .flag("-p")
                .opt("-t", pane.to_string())
                .arg(HeldRow::FORMAT);
            calls.push(crate::engine::call(query, None)?);
        }
        client
            .call_many(calls)
            .await
            .into_iter()
            .map(|answer| {
                let held = HeldRow::parse_first("display-message", &answer?.reply)?;
                Ok(held.note.map(|note| note.trim().to_owned()))
            })
            .collect()
    }

    /// Marks the pane held by a person (what `termpilot attach` does).
    pub async fn hold(&self, pane: PaneId, note: &str) -> Result<()> {
        self.set_pane_option(pane, HELD_OPTION, Some(note)).await
    }

    /// Hands the pane back to the agent.
    pub async fn release(&self, pane: PaneId) -> Result<()> {
        self.set_pane_option(pane, HELD_OPTION, None).await
    }

    /// Cancels the agent's waits on the pane that started before now.
    pub async fn cancel_waits(&self, pane: PaneId) -> Result<()> {
        let now = unix_nanos().to_string();
        self.set_pane_option(pane, CANCEL_OPTION, Some(&now)).await
    }

    /// Reads the cancel option and the dead flag of each pane, in one
    /// round trip: records cancels, and returns the panes that are dead
    /// (their program exited, the pane kept by `remain-on-exit`).
    async fn read_watched(&self, panes: &[PaneId]) -> Vec<PaneId> {
        let Some(client) = self.shared.any_client() else {
            return Vec::new();
        };
        let mut calls = Vec::with_capacity(panes.len());
        for pane in panes {
            let query = Command::new("display-message")
                .flag("-p")
                .opt("-t", pane.to_string())
                .arg(Watched::FORMAT);
            match crate::engine::call(query, None) {
                Ok(call) => calls.push(call),
                Err(_) => return Vec::new(),
            }
        }
        let mut dead = Vec::new();
        for (pane, answer) in panes.iter().zip(client.call_many(calls).await) {
            // A pane that is gone fails the query: its waits learn that
            // from tmux's notifications.
            let Ok(answer) = answer else { continue };
            if !answer.reply.ok {
                continue;
            }
            let Ok(watched) = Watched::parse_first("display-message", &answer.reply) else {
                continue;
            };
            if watched.dead {
                dead.push(*pane);
            }
            if let Some(time) = cancel_time(&watched.cancel) {
                self.shared.panes.record_cancel(*pane, time);
            }
        }
        dead
    }

    async fn set_pane_option(&self, pane: PaneId, option: &str, value: Option<&str>) -> Result<()> {
        let command = Command::new("set-option")
            .flag("-p")
            .opt("-t", pane.to_string());
        let command = match value {
            Some(value) => command.arg(option).arg(value),
            None => command.flag("-u").arg(option),
        };
        self.command(command).await.map(|_| ())
    }
}

/// Output a person's engine keeps per pane: it reads none, so little.
const PERSON_JOURNAL_BYTES: usize = 64 << 10;

/// The longest a [`ReleaseGuard`] waits for tmux to hand the pane back.
const RELEASE_LIMIT: Duration = Duration::from_secs(2);

/// A person at one pane of a tmux server, through an engine of their own:
/// they take the pane over from the agent (whose engine then refuses to type
/// into it), hand it back, and cancel the agent's waits on it.
#[derive(Debug, Clone)]
pub struct Person {
    engine: Engine,
    pane: PaneId,
    session: SessionId,
    window: WindowId,
    /// Who holds the pane and since when, as held-pane errors and
    /// `list_panes` show it; also how a person knows the hold is theirs.
    note: String,
}

impl Person {
    /// Connects to the tmux server of `config`, which must be running (a
    /// person attaches to what exists: no server is started), and finds the
    /// pane `target` (`%3` or `work:1.0`).
    pub async fn connect(mut config: EngineConfig, target: &str, note: String) -> Result<Person> {
        let parsed = target.parse().map_err(invalid)?;
        config.journal_bytes = PERSON_JOURNAL_BYTES;
        let engine = Engine::connect_existing(config).await?;
        let pane = engine.resolve_pane(&parsed).await?;
        let panes = engine.list_panes(&PaneScope::All).await?;
        let info = panes
            .iter()
            .find(|info| info.id == pane)
            .ok_or_else(|| Error::not_found(TargetKind::Pane, target))?;
        Ok(Person {
            pane,
            session: info.session,
            window: info.window,
            note,
            engine,
        })
    }

    /// The pane.
    pub fn pane(&self) -> PaneId {
        self.pane
    }

    /// The session the pane is in (the one to attach a terminal to).
    pub fn session(&self) -> SessionId {
        self.session
    }

    /// The engine the person acts through.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Makes the pane the active one of its window, and the window the
    /// current one of its session, so a terminal attaching there shows it.
    pub async fn focus(&self) -> Result<()> {
        let window = Command::new("select-window").opt("-t", self.window.to_string());
        self.engine.command(window).await?;
        let pane = Command::new("select-pane").opt("-t", self.pane.to_string());
        self.engine.command(pane).await.map(|_| ())
    }

    /// Takes the pane over: the agent's input to it is refused until
    /// [`Person::hand_back`].
    pub async fn take_over(&self) -> Result<()> {
        self.engine.hold(self.pane, &self.note).await
    }

    /// Hands the pane back to the agent, whoever held it.
    pub async fn hand_back(&self) -> Result<()> {
        self.engine.release(self.pane).await
    }

    /// Whether this person holds the pane now.
    pub async fn holds(&self) -> Result<bool> {
        let notes = self.engine.held_notes(&[self.pane]).await?;
        Ok(notes.first().and_then(Option::as_deref) == Some(self.note.as_str()))
    }

    /// Hands the pane back if this person holds it (another person's hold
    /// stays); returns whether it did.
    pub async fn release_if_held(&self) -> Result<bool> {
        if !self.holds().await? {
            return Ok(false);
        }
        self.hand_back().await.map(|()| true)
    }

    /// Ends the agent's waits on the pane that began before now (their
    /// outcome is `Outcome::CancelledByUser`).
    pub async fn cancel_waits(&self) -> Result<()> {
        self.engine.cancel_waits(self.pane).await
    }

    /// Shows `message` on the status line of the tmux client whose process
    /// is `client_pid` (the person's `tmux attach`); nothing when that client
    /// is not attached (yet).
    pub async fn tell(&self, client_pid: u32, message: &str) -> Result<()> {
        let clients = Command::new("list-clients").opt("-F", ClientName::FORMAT);
        let reply = self.engine.command(clients).await?;
        let clients = ClientName::parse_all("list-clients", &reply)?;
        let Some(client) = clients.iter().find(|c| c.pid == Some(client_pid)) else {
            return Ok(());
        };
        let name = client.name.trim();
        let display = Command::new("display-message")
            .opt("-c", name)
            .opt("-t", self.pane.to_string())
            .end_of_flags()
            .arg(format!("termpilot: {}", message.replace('#', "##")));
        self.engine.command(display).await.map(|_| ())
    }

    /// Detaches the tmux client `name` (a terminal's path, such as
    /// `/dev/pts/3`) from the server.
    pub async fn detach_client(&self, name: &str) -> Result<()> {
        let detach = Command::new("detach-client").opt("-t", name);
        self.engine.command(detach).await.map(|_| ())
    }

    /// A guard that hands the pane back when dropped, if this person still
    /// holds it then (see [`ReleaseGuard`]). `runtime` runs the engine.
    pub fn release_on_drop(&self, runtime: tokio::runtime::Handle) -> ReleaseGuard {
        ReleaseGuard {
            person: Some(self.clone()),
            runtime,
        }
    }
}

/// Hands a person's pane back when dropped, if they still hold it: however
/// the code holding the guard ends, a panic unwinding included, the agent is
/// not locked out of the pane. It waits at most two seconds for tmux.
///
/// Dropped in blocking code (as `termpilot attach` is) or on a thread of a
/// multi-thread runtime, it blocks until the pane is handed back; in a
/// current-thread runtime, which it must not block, it only starts that.
#[derive(Debug)]
pub struct ReleaseGuard {
    person: Option<Person>,
    runtime: tokio::runtime::Handle,
}

impl ReleaseGuard {
    /// The guard no longer hands the pane back.
    pub fn disarm(mut self) {
        self.person = None;
    }
}

impl Drop for ReleaseGuard {
    fn drop(&mut self) {
        let Some(person) = self.person.take() else {
            return;
        };
        let release = async move {
            if let Ok(Err(e)) = tokio::time::timeout(RELEASE_LIMIT, person.release_if_held()).await
            {
                tracing::warn!(pane = %person.pane, error = %e, "could not hand the pane back");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Err(_) => self.runtime.block_on(release),
            Ok(current) if current.runtime_flavor() == RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| self.runtime.block_on(release));
            }
            // A current-thread runtime cannot block its only thread.
            Ok(_) => drop(self.runtime.spawn(release)),
        }
    }
}

/// Background task: while any wait watches a pane, reads the watched
/// panes' cancel options and dead flags every [`CANCEL_POLL`]. Ends when the
/// engine is dropped.
///
/// The dead flag is read here because tmux says nothing to control clients
/// when a pane's program exits and `remain-on-exit` keeps the pane: a pane
/// found dead counts as a change of the panes, which makes waits check
/// their pane (once per death: a pane is reported again only after it was
/// seen alive, as after `respawn-pane`).
pub(crate) async fn watch_panes(shared: Weak<Shared>, mut wanted: watch::Receiver<u64>) {
    let mut reported: Vec<PaneId> = Vec::new();
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let panes = strong.panes.watched();
        if panes.is_empty() {
            drop(strong);
            if wanted.changed().await.is_err() {
                return;
            }
            continue;
        }
        let engine = Engine { shared: strong };
        let dead = engine.read_watched(&panes).await;
        reported.retain(|pane| dead.contains(pane));
        if dead.iter().any(|pane| !reported.contains(pane)) {
            reported = dead;
            engine.shared.mark_panes_changed();
        }
        drop(engine);
        tokio::time::sleep(CANCEL_POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_query_reads_the_cancel_option() {
        assert_eq!(Watched::FIELDS, ["pane_dead", CANCEL_OPTION]);
        assert_eq!(
            Watched::parse("display-message", "1\x1f17").unwrap(),
            Watched {
                dead: true,
                cancel: "17".into()
            }
        );
    }

    #[test]
    fn reads_cancel_times() {
        assert_eq!(cancel_time(""), None);
        assert_eq!(
            cancel_time("1795307802000000000\n"),
            Some(1_795_307_802_000_000_000)
        );
    }
}
