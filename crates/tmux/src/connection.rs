//! One control-mode connection: the parser, the two halves of the pipe to
//! tmux, and the replies still owed, in the order they are owed.
//!
//! tmux answers every command line with exactly one `%begin`/`%end` (or
//! `%error`) block marked as coming from this client (flags 1), so replies
//! are matched first in, first out. A line of several commands joined by
//! ` ; ` gets one block per command that ran: a failed one ends the line.
//! The commands on tmux's own command line (`tmux -C new-session ...`) are
//! answered by blocks with flags 0, before anything sent here.
//!
//! [`Connection::read_event`] hands a reply to whoever waits for it and
//! yields everything else (output, notifications, the end of the pipe) to
//! the task that owns the connection (`client.rs`), one event at a time in
//! stream order: output read before a reply is applied before the reply's
//! cursor is taken. Nothing here knows about the engine, which is why it
//! can be tested on a bare `tokio::io::duplex`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use termpilot_control::{Event, PaneId, Parser, Reply, SessionId};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;

use crate::error::{Error, Result};

/// One command line for tmux, and what the caller wants back with its reply.
#[derive(Debug)]
pub(crate) struct Call {
    /// The built command line, ending in a newline.
    pub(crate) line: Vec<u8>,
    /// The tmux command name, for error messages.
    pub(crate) command: &'static str,
    /// Snapshot this pane's journal end when the reply arrives.
    pub(crate) cursor_pane: Option<PaneId>,
}

/// Several commands on one line, separated by ` ; `. tmux runs them in
/// order and, when one fails, skips the rest of the line: the line yields one
/// reply per command that ran, the last an `%error` if one failed.
#[derive(Debug)]
pub(crate) struct Group {
    /// The commands joined into one line, ending in a newline.
    pub(crate) line: Vec<u8>,
    /// Each command's name and the pane whose cursor its reply snapshots.
    pub(crate) parts: Vec<(&'static str, Option<PaneId>)>,
}

/// A reply, with the journal position taken when it arrived.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The tmux command name the reply answers, for error messages.
    pub command: &'static str,
    /// The reply block.
    pub reply: Reply,
    /// The journal end of the requested pane at the moment the reply arrived:
    /// output read before it happened before the command ran.
    pub cursor: Option<u64>,
    /// When the reply was read.
    pub received: std::time::Instant,
}

/// Who waits for one call's reply.
pub(crate) type ReplyTo = oneshot::Sender<Result<Answer>>;

/// Who waits for the replies of one group.
pub(crate) type GroupReplyTo = oneshot::Sender<Result<Vec<Answer>>>;

/// Output that waited in tmux this long or longer, or a reply not come
/// after this long, means the connection's stream is behind.
pub(crate) const BEHIND: std::time::Duration = std::time::Duration::from_millis(50);

/// How long a reading of late output counts: while a connection is behind,
/// every read brings late output again.
const LATE_MEMORY: std::time::Duration = std::time::Duration::from_millis(250);

/// How far behind a connection's stream is, as its reader last saw it.
/// Shared with every handle on the client, which reads it without a round
/// trip. Times are milliseconds after `base`, plus one; zero means never.
#[derive(Debug)]
pub(crate) struct Lag {
    base: tokio::time::Instant,
    /// When output that had waited in tmux for [`BEHIND`] or longer was
    /// last read.
    late_output: AtomicU64,
    /// When the oldest command still unanswered was written.
    oldest_pending: AtomicU64,
}

impl Lag {
    fn new() -> Lag {
        Lag {
            base: tokio::time::Instant::now(),
            late_output: AtomicU64::new(0),
            oldest_pending: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        let elapsed = self.base.elapsed().as_millis();
        u64::try_from(elapsed).unwrap_or(u64::MAX - 1) + 1
    }

    /// Whether replies on this connection wait behind output tmux has
    /// queued: output read lately had waited [`BEHIND`] or longer, or a
    /// command has been unanswered that long.
    pub(crate) fn is_behind(&self) -> bool {
        let waiting = self
            .ago(&self.oldest_pending)
            .is_some_and(|ago| ago >= BEHIND.as_millis() as u64);
        self.output_late() || waiting
    }

    /// Whether output read lately had waited [`BEHIND`] or longer.
    pub(crate) fn output_late(&self) -> bool {
        self.ago(&self.late_output)
            .is_some_and(|ago| ago < LATE_MEMORY.as_millis() as u64)
    }

    /// How many milliseconds ago the time in `at` was, if it was ever set.
    fn ago(&self, at: &AtomicU64) -> Option<u64> {
        let at = at.load(Ordering::Relaxed);
        (at != 0).then(|| self.now().saturating_sub(at))
    }
}

/// Who waits for the replies of one line.
enum Replier {
    One(ReplyTo),
    Group(GroupReplyTo),
}

/// One line written and not yet fully answered.
struct Pending {
    parts: Vec<(&'static str, Option<PaneId>)>,
    answers: Vec<Answer>,
    reply: Replier,
    /// When the line was written (see [`Lag`]).
    sent: u64,
}

impl Pending {
    fn finish(self) {
        match self.reply {
            Replier::One(tx) => {
                let answer = self
                    .answers
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::Protocol {
                        command: self.parts.first().map_or("", |p| p.0).to_owned(),
                        detail: "no reply".into(),
                    });
                let _ = tx.send(answer);
            }
            Replier::Group(tx) => {
                let _ = tx.send(Ok(self.answers));
            }
        }
    }

    /// Fails the line: the connection closed, because the server went away
    /// or, when `ended` names it, because the client's session ended.
    fn fail(self, reason: &str, ended: Option<SessionId>) {
        let command = self
            .parts
            .iter()
            .map(|p| p.0)
            .collect::<Vec<_>>()
            .join(" ; ");
        let error = match ended {
            Some(session) => Error::SessionEnded { command, session },
            None => Error::Disconnected {
                command,
                reason: reason.to_owned(),
            },
        };
        match self.reply {
            Replier::One(tx) => {
                let _ = tx.send(Err(error));
            }
            Replier::Group(tx) => {
                let _ = tx.send(Err(error));
            }
        }
    }
}

/// What reading the connection brought, besides replies (which go to
/// their waiters).
#[derive(Debug)]
pub(crate) enum Incoming {
    /// tmux answered the last command on its command line: the connection
    /// is up (the reply), or tmux refused it (its message).
    Started(std::result::Result<Reply, String>),
    /// Output, a pause, `%exit` or a notification, in stream order. Never
    /// [`Event::Reply`].
    Event(Event),
    /// Every event of the bytes read so far has been yielded: the moment
    /// to wake whoever waits on what they changed.
    Drained,
    /// The pipe closed or failed; why. Nothing follows.
    Closed(String),
}

/// Bytes read from the pipe at once, at most.
const READ_SIZE: usize = 64 * 1024;

/// A control-mode connection (see the module docs).
pub(crate) struct Connection {
    reader: Pin<Box<dyn AsyncRead + Send + Sync>>,
    writer: Pin<Box<dyn AsyncWrite + Send + Sync>>,
    parser: Parser,
    buf: Vec<u8>,
    /// Whether the parser may hold events not yet yielded (bytes were fed
    /// since [`Incoming::Drained`]).
    unread: bool,
    pending: VecDeque<Pending>,
    /// Blocks (flags 0) of the commands before the last one on tmux's
    /// command line, still to come.
    setup_replies: usize,
    /// Whether the block answering tmux's command line has come.
    started: bool,
    lag: Arc<Lag>,
}

impl Connection {
    /// A connection over `reader` and `writer`, to a tmux started with
    /// `setup_replies + 1` commands on its command line.
    pub(crate) fn new(
        reader: Pin<Box<dyn AsyncRead + Send + Sync>>,
        writer: Pin<Box<dyn AsyncWrite + Send + Sync>>,
        setup_replies: usize,
    ) -> Connection {
        Connection {
            reader,
            writer,
            parser: Parser::new(),
            buf: vec![0; READ_SIZE],
            unread: false,
            pending: VecDeque::new(),
            setup_replies,
            started: false,
            lag: Arc::new(Lag::new()),
        }
    }

    /// How far behind the stream is, for handles to read.
    pub(crate) fn lag(&self) -> Arc<Lag> {
        Arc::clone(&self.lag)
    }

    /// Whether output read lately had waited in tmux (see [`Lag`]).
    pub(crate) fn output_late(&self) -> bool {
        self.lag.output_late()
    }

    /// Whether tmux has answered its command line.
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// Whether any line written waits for a reply.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes every call's line in one write; each reply goes to its
    /// sender.
    pub(crate) async fn send(&mut self, calls: Vec<(Call, ReplyTo)>) -> std::io::Result<()> {
        let mut bytes = Vec::new();
        let sent = self.lag.now();
        for (call, reply) in calls {
            bytes.extend_from_slice(&call.line);
            self.push_pending(Pending {
                parts: vec![(call.command, call.cursor_pane)],
                answers: Vec::with_capacity(1),
                reply: Replier::One(reply),
                sent,
            });
        }
        self.write(&bytes).await
    }

    /// Writes a group's line; the replies of the commands that ran go to
    /// `reply` together.
    pub(crate) async fn send_group(
        &mut self,
        group: Group,
        reply: GroupReplyTo,
    ) -> std::io::Result<()> {
        self.push_pending(Pending {
            parts: group.parts,
            answers: Vec::new(),
            reply: Replier::Group(reply),
            sent: self.lag.now(),
        });
        self.write(&group.line).await
    }

    /// Writes lines whose replies nobody wants (they are read and dropped).
    pub(crate) async fn send_unanswered(
        &mut self,
        lines: Vec<Vec<u8>>,
        command: &'static str,
    ) -> std::io::Result<()> {
        let calls = lines
            .into_iter()
            .map(|line| {
                let call = Call {
                    line,
                    command,
                    cursor_pane: None,
                };
                // The receiver is dropped at once: the reply goes nowhere.
                (call, oneshot::channel().0)
            })
            .collect();
        self.send(calls).await
    }

    /// Asks tmux to detach this client (an empty line); tmux then says
    /// `%exit` and closes the pipe. A pipe already broken is no error here:
    /// reading says so.
    pub(crate) async fn detach(&mut self) {
        let _ = self.write(b"\n").await;
    }

    /// The next event, after handing any replies read before it to their
    /// waiters. `journal_end` gives a pane's journal end, taken as the
    /// cursor of a reply that asked for one.
    ///
    /// Cancel safe: bytes are only fed to the parser once a read completed.
    pub(crate) async fn read_event(
        &mut self,
        journal_end: &(dyn Fn(PaneId) -> u64 + Sync),
    ) -> Incoming {
        loop {
            while let Some(event) = self.parser.next_event() {
                if let Some(incoming) = self.take(event, journal_end) {
                    return incoming;
                }
            }
            if std::mem::take(&mut self.unread) {
                return Incoming::Drained;
            }
            match self.reader.read(&mut self.buf).await {
                Ok(0) => return Incoming::Closed("tmux closed the control connection".into()),
                Ok(n) => {
                    self.parser.feed(&self.buf[..n]);
                    self.unread = true;
                }
                Err(e) => return Incoming::Closed(format!("reading from tmux failed: {e}")),
            }
        }
    }

    /// Fails every line still waiting: the connection is over (see
    /// `Pending::fail`).
    pub(crate) fn fail_pending(&mut self, reason: &str, ended: Option<SessionId>) {
        for pending in self.pending.drain(..) {
            pending.fail(reason, ended);
        }
        self.lag.oldest_pending.store(0, Ordering::Relaxed);
    }

    /// Handles one parsed event: a reply goes to its waiter (`None`),
    /// anything else is yielded.
    fn take(
        &mut self,
        event: Event,
        journal_end: &(dyn Fn(PaneId) -> u64 + Sync),
    ) -> Option<Incoming> {
        match event {
            Event::Reply(reply) if reply.flags & 1 == 0 => self.command_line_reply(reply),
            Event::Reply(reply) => {
                self.answer(reply, journal_end);
                None
            }
            Event::ExtendedOutput { age_ms, .. } => {
                if age_ms >= BEHIND.as_millis() as u64 {
                    (self.lag.late_output).store(self.lag.now(), Ordering::Relaxed);
                }
                Some(Incoming::Event(event))
            }
            event => Some(Incoming::Event(event)),
        }
    }

    /// A block answering a command on tmux's command line. The last one
    /// (or a failed one: tmux skips the rest of the line) starts the
    /// connection; any after that is no one's.
    fn command_line_reply(&mut self, reply: Reply) -> Option<Incoming> {
        if self.started {
            return None;
        }
        if self.setup_replies > 0 && reply.ok {
            self.setup_replies -= 1;
            return None;
        }
        self.setup_replies = 0;
        self.started = true;
        Some(Incoming::Started(if reply.ok {
            Ok(reply)
        } else {
            Err(reply.text())
        }))
    }

    /// Adds a reply to the oldest line waiting, finishing the line when it
    /// has all its replies or this one failed.
    fn answer(&mut self, reply: Reply, journal_end: &(dyn Fn(PaneId) -> u64 + Sync)) {
        let Some(pending) = self.pending.front_mut() else {
            tracing::warn!(
                number = reply.number,
                "reply with no command waiting for it"
            );
            return;
        };
        let part = pending.answers.len();
        let (command, cursor_pane) = pending.parts.get(part).copied().unwrap_or(("", None));
        let failed = !reply.ok;
        pending.answers.push(Answer {
            command,
            reply,
            cursor: cursor_pane.map(journal_end),
            received: std::time::Instant::now(),
        });
        // A failed command ends its line: tmux skips the rest of it.
        if (failed || pending.answers.len() >= pending.parts.len())
            && let Some(done) = self.pop_pending()
        {
            done.finish();
        }
    }

    fn push_pending(&mut self, pending: Pending) {
        if self.pending.is_empty() {
            (self.lag.oldest_pending).store(pending.sent, Ordering::Relaxed);
        }
        self.pending.push_back(pending);
    }

    fn pop_pending(&mut self) -> Option<Pending> {
        let done = self.pending.pop_front();
        let oldest = self.pending.front().map_or(0, |next| next.sent);
        self.lag.oldest_pending.store(oldest, Ordering::Relaxed);
        done
    }

    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes).await?;
        self.writer.flush().await
    }
}
