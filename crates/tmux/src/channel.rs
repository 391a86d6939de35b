//! tmux wait channels (`wait-for`).
//!
//! `wait-for CHANNEL` holds up every later command of the client that sent
//! it, so a wait never goes through a shared control client: each one runs
//! as its own one-shot `tmux wait-for` through the transport, ended when the
//! wait times out or is cancelled (the future is dropped).

use std::ffi::OsString;
use std::time::Duration;

use termpilot_control::Command;

use crate::engine::Engine;
use crate::error::Result;
use crate::format::ServerPidRow;
use crate::transport::OneShot;

/// How a channel wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelOutcome {
    /// Someone signalled the channel.
    Signalled,
    /// Nobody signalled it in time.
    Timeout,
    /// The tmux server exited (tmux wakes every waiter when it exits).
    ServerExited,
    /// The connection to the server's host dropped during the wait (ssh or
    /// the exec command ended, and the host cannot be asked about its
    /// server); the next call on that host connects again.
    HostLost,
}

/// What asking the server's pid after a wait tells.
pub(crate) enum Since {
    /// The server the wait started on still runs.
    Same,
    /// tmux answered: no server runs, or another one (another pid).
    Gone,
    /// Nothing answered for tmux: the way to its host failed.
    Unreachable,
}

impl Engine {
    /// Waits until `channel` is signalled (`tmux wait-for -S`), for at most
    /// `timeout`.
    pub async fn wait_for_channel(
        &self,
        channel: &str,
        timeout: Duration,
    ) -> Result<ChannelOutcome> {
        self.primary().await?;
        let server_pid = self.server_pid();
        let args = ["wait-for", "--", channel].map(OsString::from).to_vec();
        // Dropping the command on a timeout ends it.
        let ended = match tokio::time::timeout(timeout, self.shared.transport.run(args)).await {
            Err(_) => return Ok(ChannelOutcome::Timeout),
            Ok(ended) => ended?,
        };
        let woken = matches!(ended, OneShot::Reply(_));
        // tmux also ends every wait-for when the server exits, and a
        // dropped connection ends it too: check that the server we were
        // waiting on is still there.
        let remote = !self.panes_are_local();
        Ok(match (self.server_since(server_pid).await, woken) {
            (Since::Same, true) => ChannelOutcome::Signalled,
            // The wait's own connection failed while the host answers.
            (Since::Same, false) if remote => ChannelOutcome::HostLost,
            (Since::Unreachable, _) if remote => ChannelOutcome::HostLost,
            _ => ChannelOutcome::ServerExited,
        })
    }

    /// Signals `channel`, waking its waiters. With nobody waiting, tmux keeps
    /// the signal for the next waiter.
    pub async fn signal_channel(&self, channel: &str) -> Result<()> {
        self.command(
            Command::new("wait-for")
                .flag("-S")
                .end_of_flags()
                .arg(channel),
        )
        .await
        .map(|_| ())
    }

    /// Whether the server whose pid is `server_pid` still runs, asked outside control
    /// mode: the control clients may not have noticed yet that the server
    /// (or the connection to its host) went away. Channel waits and text
    /// waits whose pane went both ask it.
    pub(crate) async fn server_since(&self, server_pid: u32) -> Since {
        let args = ["display-message", "-p", ServerPidRow::FORMAT]
            .map(OsString::from)
            .to_vec();
        match self.shared.transport.run(args).await {
            Ok(OneShot::Reply(printed)) => match ServerPidRow::parse("display-message", &printed) {
                Ok(row) if row.pid == server_pid => Since::Same,
                _ => Since::Gone,
            },
            Ok(OneShot::NoServer) => Since::Gone,
            Ok(OneShot::Refused { .. }) | Err(_) => Since::Unreachable,
        }
    }
}
