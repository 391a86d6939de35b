//! tmux wait channels (`wait-for`).
//!
//! `wait-for CHANNEL` holds up every later command of the client that sent
//! it, so a wait never goes through a shared control client: each one runs
//! as its own `tmux wait-for` process, killed when the wait times out or is
//! cancelled (the future is dropped).

use std::process::Stdio;
use std::time::Duration;

use termpilot_control::Command;

use crate::engine::Engine;
use crate::error::{Error, Result};

/// How a channel wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelOutcome {
    /// Someone signalled the channel.
    Signalled,
    /// Nobody signalled it in time.
    Timeout,
    /// The tmux server exited (tmux wakes every waiter when it exits).
    ServerExited,
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
        let epoch = self.epoch();
        let config = self.config();
        let mut child = config
            .tmux_command()
            .args(["wait-for", "--", channel])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| config.missing(e))?;
        let status = match tokio::time::timeout(timeout, child.wait()).await {
            Err(_) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                return Ok(ChannelOutcome::Timeout);
            }
            Ok(status) => {
                status.map_err(|e| Error::InvalidArgument(format!("wait-for failed: {e}")))?
            }
        };
        // tmux also ends every wait-for when the server exits: check that
        // the server we were waiting on is still there.
        if !status.success() || !self.same_server(epoch).await {
            return Ok(ChannelOutcome::ServerExited);
        }
        Ok(ChannelOutcome::Signalled)
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

    async fn same_server(&self, epoch: u32) -> bool {
        let config = self.config();
        // Ask with a fresh process: the control clients may not have noticed
        // yet that the server went away.
        let output = config
            .tmux_command()
            .args(["display-message", "-p", "#{pid}"])
            .output()
            .await;
        match output {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse::<u32>()
                    .ok()
                    == Some(epoch)
            }
            _ => false,
        }
    }
}
