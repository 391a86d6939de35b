//! tmux `wait-for` channels: `wait_for_channel` and `signal_channel`.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;
use termpilot_tmux::ChannelOutcome;

use super::params::tool_params;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::ToolResult;
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

type Result<T> = ToolResult<T>;

/// `wait_for_channel`.
pub(crate) struct WaitForChannel;

tool_params! {
    /// Arguments of `wait_for_channel`.
    pub struct WaitForChannelParams {
        /// Channel name (tmux wait-for -S NAME).
        #[schemars(length(min = 1, max = 128))]
        pub channel: String,
        ..host,
        ..timeout_s,
    }
}

/// Result of `wait_for_channel` and `signal_channel`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChannelEntry {
    /// The channel.
    pub channel: String,
    /// "signalled", "timeout", "server_exited", "host_lost" (the connection to the host
    /// dropped), or "sent" (signal_channel).
    pub outcome: String,
    /// Seconds the call took.
    pub elapsed_s: f64,
}

impl Tool for WaitForChannel {
    const NAME: &'static str = "wait_for_channel";
    const TITLE: &'static str = "Wait for a tmux channel";
    const DESCRIPTION: &'static str = "Wait until a tmux wait-for channel is signalled, e.g. by \
        `make; tmux wait-for -S built` typed in a pane. Tells a signal from the tmux server \
        exiting.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = WaitForChannelParams;
    type Output = ChannelEntry;

    async fn call(
        server: &TermpilotServer,
        params: WaitForChannelParams,
        call: &CallContext,
    ) -> Outcome {
        wait_for_channel(server, params, call).await
    }
}

pub(crate) async fn wait_for_channel(
    server: &TermpilotServer,
    params: WaitForChannelParams,
    call: &CallContext,
) -> Result<Done> {
    let started = Instant::now();
    let timeout = server.wait_time(params.timeout_s);
    let what = format!("waiting for channel {}", params.channel);
    let host = crate::address::host_argument(server, params.host.as_deref())?;
    let engine = host.engine(server).await?;
    let outcome = call
        .run(
            &what,
            timeout,
            engine.wait_for_channel(&params.channel, timeout),
        )
        .await??;
    let outcome = match outcome {
        ChannelOutcome::Signalled => "signalled",
        ChannelOutcome::Timeout => "timeout",
        ChannelOutcome::ServerExited => "server_exited",
        ChannelOutcome::HostLost => "host_lost",
    };
    channel_done(params.channel, outcome, started)
}

/// `signal_channel`.
pub(crate) struct SignalChannel;

tool_params! {
    /// Arguments of `signal_channel`.
    pub struct SignalChannelParams {
        /// Channel name.
        #[schemars(length(min = 1, max = 128))]
        pub channel: String,
        ..host,
    }
}

impl Tool for SignalChannel {
    const NAME: &'static str = "signal_channel";
    const TITLE: &'static str = "Signal a tmux channel";
    const DESCRIPTION: &'static str = "Signal a tmux wait-for channel, waking its waiters (a \
        script in a pane, or wait_for_channel); with none, the next waiter wakes at once.";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Writes;
    type Params = SignalChannelParams;
    type Output = ChannelEntry;

    async fn call(
        server: &TermpilotServer,
        params: SignalChannelParams,
        _: &CallContext,
    ) -> Outcome {
        signal_channel(server, params).await
    }
}

pub(crate) async fn signal_channel(
    server: &TermpilotServer,
    params: SignalChannelParams,
) -> Result<Done> {
    let started = Instant::now();
    let host = crate::address::host_argument(server, params.host.as_deref())?;
    host.engine(server)
        .await?
        .signal_channel(&params.channel)
        .await?;
    channel_done(params.channel, "sent", started)
}

fn channel_done(channel: String, outcome: &str, started: Instant) -> Result<Done> {
    let entry = ChannelEntry {
        channel,
        outcome: outcome.to_owned(),
        elapsed_s: started.elapsed().as_secs_f64(),
    };
    let text = format!("channel {}: {}", entry.channel, entry.outcome);
    Done::new(&entry, text)
}
