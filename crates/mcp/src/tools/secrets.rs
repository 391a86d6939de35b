//! `type_secret`: typing a secret the person configured, without the agent
//! seeing it (see [`crate::secrets`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_tmux::Input;

use crate::address::pane;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

/// `type_secret`.
pub(crate) struct TypeSecret;

/// Arguments of `type_secret`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSecretParams {
    /// Pane whose program asks for the secret: a pane id such as "%3" or a target.
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// The secret's name, as the person configured it (--secret NAME=...).
    #[schemars(length(min = 1, max = 64))]
    pub name: String,
    /// Press Enter after the secret. Default true.
    #[serde(default = "yes")]
    pub enter: bool,
}

fn yes() -> bool {
    true
}

/// Result of `type_secret`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SecretTypedEntry {
    /// The pane id the secret went to.
    pub pane: String,
    /// The secret's name (its value is never returned).
    pub name: String,
    /// Position in the pane's output from just before the secret was typed: give it as
    /// `since` to a wait to see what the program answered.
    pub cursor: String,
}

impl Tool for TypeSecret {
    const NAME: &'static str = "type_secret";
    const TITLE: &'static str = "Type a configured secret";
    const DESCRIPTION: &'static str = "Type a secret the person configured (termpilot serve \
        --secret NAME=...) into a pane whose program waits for it with echo off (a wait or \
        run_command ended with outcome awaiting_input and secret: true), then Enter. You never \
        see the value, and results show [secret NAME] wherever a program prints it. Refused \
        when the pane is not at a hidden prompt or the name is unknown (the error lists the \
        names).";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Writes;
    type Params = TypeSecretParams;
    type Output = SecretTypedEntry;

    async fn call(server: &TermpilotServer, params: TypeSecretParams, _: &CallContext) -> Outcome {
        type_secret(server, params).await
    }
}

/// Types a configured secret into a pane whose program waits for it with
/// echo off; refuses anything else.
pub(crate) async fn type_secret(
    server: &TermpilotServer,
    params: TypeSecretParams,
) -> ToolResult<Done> {
    let secrets = &server.options.secrets;
    let Some(secret) = secrets.get(&params.name) else {
        return Err(ToolError::refused(format!(
            "no secret named {:?}; {}",
            params.name,
            secrets.names()
        )));
    };
    let pane = pane(server, &params.pane).await?;
    let awaiting = pane.engine.awaiting_input(pane.id).await?;
    match awaiting {
        None => {
            return Err(ToolError::refused(format!(
                "{pane} is not waiting for input; wait for its password prompt (wait_for_text \
                 or run_command end with outcome awaiting_input and secret: true)"
            )));
        }
        Some(input) if !input.secret => {
            return Err(ToolError::refused(format!(
                "{pane}: the terminal would echo it; wait for a password prompt ({} waits at \
                 {:?} with echo on)",
                input.program, input.prompt
            )));
        }
        Some(_) => {}
    }
    let input = Input {
        text: Some(secret.value().map_err(ToolError::Refused)?),
        keys: Vec::new(),
        enter: params.enter,
    };
    let cursor = pane.engine.send_input(pane.id, &input).await?;
    let entry = SecretTypedEntry {
        pane: pane.to_string(),
        name: secret.name().to_owned(),
        cursor: pane.cursor_text(cursor),
    };
    let text = format!("typed secret {} into {pane}", entry.name);
    Done::new(&entry, text)
}
