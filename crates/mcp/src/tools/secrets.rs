//! `type_secret`: typing a secret into a pane's hidden prompt without the
//! agent seeing it. A configured secret (see [`crate::secrets`]) is typed
//! at once; for a name that is not configured, the person types the value
//! on a one-shot page termpilot opens for them (see [`crate::secret_page`]),
//! asked through URL-mode elicitation.

use rmcp::model::{
    ClientResult, CustomNotification, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ServerNotification, ServerRequest,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use termpilot_tmux::{AwaitingInput, Cursor, Recipients};
use tokio::time::Instant;

use crate::address::{Pane, pane};
use crate::audit::Approval;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::questions::{self, Asked};
use crate::secret_page::{About, NoValue, Opened, PersonSecret, wipe};
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

use super::input::PasteWait;
use super::then_wait;

/// `type_secret`.
pub(crate) struct TypeSecret;

/// Arguments of `type_secret`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSecretParams {
    /// Pane id (%3) or target.
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// A configured secret's name, or a short name of what is asked (the person types it).
    #[schemars(length(min = 1, max = 64))]
    pub name: String,
    /// Press Enter after it.
    #[serde(default = "yes")]
    pub enter: bool,
    /// As send_keys's wait.for.
    pub wait: Option<PasteWait>,
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
    /// Position in the pane's output from before the secret (`since` for a wait).
    pub cursor: String,
    /// True when the person typed it (the name is not configured).
    pub typed_by_person: bool,
    /// The result of `wait`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<serde_json::Map<String, Value>>,
}

impl Tool for TypeSecret {
    const NAME: &'static str = "type_secret";
    const TITLE: &'static str = "Type a secret";
    const DESCRIPTION: &'static str = "Type a secret at a hidden prompt (awaiting_input, \
        secret: true), then Enter; you never see it. A configured name (--secret) is typed at \
        once; another, the person types on a one-shot page. Results show it as [secret NAME].";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Writes;
    type Params = TypeSecretParams;
    type Output = SecretTypedEntry;

    async fn call(
        server: &TermpilotServer,
        params: TypeSecretParams,
        call: &CallContext,
    ) -> Outcome {
        match server.options.secrets.get(&params.name) {
            Some(_) => type_secret(server, params, call).await,
            None => typed_by_person(server, params, call).await,
        }
    }
}

/// Types a configured secret into a pane whose program waits for it with
/// echo off; refuses anything else.
pub(crate) async fn type_secret(
    server: &TermpilotServer,
    params: TypeSecretParams,
    call: &CallContext,
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
    hidden_prompt(&pane).await?.map_err(ToolError::Refused)?;
    let value = secret.value().map_err(ToolError::Refused)?;
    let cursor = type_value(&pane, value, params.enter, secret.recipients()).await?;
    let entry = SecretTypedEntry {
        pane: pane.to_string(),
        name: secret.name().to_owned(),
        cursor: pane.cursor_text(cursor),
        typed_by_person: false,
        wait: None,
    };
    let text = format!("typed secret {} into {pane}", entry.name);
    then_wait(server, call, &pane, cursor, params.wait, entry, text).await
}

/// The result of a typed secret, followed by that of `wait` when there is
/// one (its text replaces the typing's).
async fn then_wait(
    server: &TermpilotServer,
    call: &CallContext,
    pane: &Pane,
    cursor: Cursor,
    wait: Option<PasteWait>,
    mut entry: SecretTypedEntry,
    text: String,
) -> ToolResult<Done> {
    let Some(wait) = wait else {
        return Done::new(&entry, text);
    };
    let wait = wait.as_input_wait();
    let (waited, text) = then_wait::waited(server, call, pane, cursor, &wait).await?;
    entry.wait = waited.as_object().cloned();
    Done::new(&entry, text)
}

/// What the pane's program waits for, when it is a hidden prompt; else why
/// a secret may not be typed there.
async fn hidden_prompt(pane: &Pane) -> ToolResult<Result<AwaitingInput, String>> {
    Ok(match pane.engine.awaiting_input(pane.id).await? {
        None => Err(format!(
            "{pane} is not waiting for input; wait for its password prompt (wait_for_text or \
             run_command end with outcome awaiting_input and secret: true)"
        )),
        Some(input) if !input.secret => Err(format!(
            "{pane}: the terminal would echo it; wait for a password prompt ({} waits at {:?} \
             with echo on)",
            input.program, input.prompt
        )),
        Some(input) => Ok(input),
    })
}

/// Types `value` (then Enter) into the pane if `recipients` admit its
/// foreground programs, and overwrites it; returns the cursor from just
/// before it.
async fn type_value(
    pane: &Pane,
    value: String,
    enter: bool,
    recipients: &Recipients,
) -> ToolResult<Cursor> {
    let typed = (pane.engine)
        .send_secret(pane.id, &value, enter, recipients)
        .await;
    wipe(value);
    Ok(typed?)
}

/// The key of the secret question in an input-required result.
const SECRET: &str = "secret";

/// A name that is not configured: the person types the value on a page,
/// asked through URL-mode elicitation (an `elicitation/create` request, or
/// under protocol 2026-07-28 an input-required result answered by the call
/// that comes back).
async fn typed_by_person(
    server: &TermpilotServer,
    params: TypeSecretParams,
    call: &CallContext,
) -> Outcome {
    // The arguments as the question keeps them: a retry must repeat them.
    let arguments = json!({"pane": params.pane, "name": params.name, "enter": params.enter});
    // A retry under 2026-07-28 takes its question (and page) first, so that
    // the page closes whatever happens next.
    let resumed = match call.stateless() && call.continuation().state.is_some() {
        true => Some(answered(server, call, &arguments)?),
        false => None,
    };
    let pane = pane(server, &params.pane).await?;
    let input = hidden_prompt(&pane).await?.map_err(|why| {
        ToolError::Refused(format!(
            "no secret named {:?}; {}. The person can type a secret that is not configured \
             only at a hidden prompt, and {why}",
            params.name,
            server.options.secrets.names()
        ))
    })?;
    if let Some(page) = resumed {
        return receive_and_type(server, call, &pane, &params, page, None).await;
    }
    if !call.elicits(true) {
        call.record_approval(Approval {
            asked: false,
            answer: Some("unsupported"),
        });
        return Err(ToolError::Refused(format!(
            "no secret named {:?}; {}. The person can type a secret that is not configured \
             only through an MCP client that supports URL-mode elicitation (capability \
             elicitation.url), and this client did not declare it. Nothing was typed.",
            params.name,
            server.options.secrets.names()
        )));
    }
    let about = About {
        name: params.name.clone(),
        pane: pane.to_string(),
        program: input.program.clone(),
        prompt: input.prompt.clone(),
    };
    let page = server.pages.open(about).await.map_err(ToolError::Failed)?;
    let message = format!(
        "An AI agent asks you to type the secret {:?} into terminal pane {pane}, where {} waits \
         at the hidden prompt {:?}. Open the page to type it: termpilot types it into the pane \
         and forgets it, and the agent never sees it. The page works once, for {} minutes.",
        params.name,
        input.program,
        input.prompt,
        crate::secret_page::PAGE_TTL.as_secs() / 60,
    );
    call.record_approval(Approval {
        asked: true,
        answer: Some("pending"),
    });
    if call.stateless() {
        let url = url_params(message, page.url(), String::new());
        let handle = server
            .questions
            .ask(TypeSecret::NAME, &arguments, Asked::Secret(page))?;
        let input = questions::input_required(SECRET, url, handle);
        return Err(ToolError::NeedsInput(Box::new(input)));
    }
    let id = crate::random::hex_token(16)
        .ok_or_else(|| ToolError::Failed("cannot read /dev/urandom".into()))?;
    let request = ElicitRequest::new(url_params(message, page.url(), id.clone()));
    let sent = call
        .peer()
        .send_request(ServerRequest::ElicitRequest(request));
    let cancelled = call.cancellation();
    let response = tokio::select! {
        response = sent => response.map_err(|e| e.to_string()),
        () = tokio::time::sleep_until(page.expires()) => Err("the page expired first".into()),
        () = cancelled.cancelled() => Err("cancelled by the client".into()),
    };
    let action = match response {
        Ok(ClientResult::ElicitResult(result)) => result.action,
        Ok(_) => return Err(failed(call, "the client answered with something else")),
        Err(e) => return Err(failed(call, &e)),
    };
    accepted(call, action, &params.name)?;
    receive_and_type(server, call, &pane, &params, page, Some(id)).await
}

/// The page a call under protocol 2026-07-28 brings the person's answer
/// for, once it is accepted.
fn answered(server: &TermpilotServer, call: &CallContext, arguments: &Value) -> ToolResult<Opened> {
    let continuation = call.continuation();
    let state = continuation.state.as_deref().unwrap_or_default();
    let invalid = |error: ToolError| {
        call.record_approval(Approval {
            asked: true,
            answer: Some("invalid"),
        });
        error
    };
    let page = match server
        .questions
        .take(state, TypeSecret::NAME, arguments)
        .map_err(invalid)?
    {
        Asked::Secret(page) => page,
        Asked::Approval => {
            return Err(invalid(ToolError::refused(
                "the requestState is for another question (an approval). Nothing was typed.",
            )));
        }
    };
    let answer = continuation.answer(SECRET).map_err(invalid)?;
    let name = arguments["name"].as_str().unwrap_or_default();
    accepted(call, answer.action, name)?;
    Ok(page)
}

/// Refuses a declined or cancelled question.
fn accepted(call: &CallContext, action: ElicitationAction, name: &str) -> ToolResult<()> {
    let answer = match action {
        ElicitationAction::Accept => return Ok(()),
        ElicitationAction::Cancel => "cancel",
        _ => "decline",
    };
    call.record_approval(Approval {
        asked: true,
        answer: Some(answer),
    });
    Err(ToolError::refused(format!(
        "the person declined to type the secret {name:?}: nothing was typed. Ask them what to \
         do, or have them configure it (termpilot serve --secret NAME=...)."
    )))
}

fn failed(call: &CallContext, why: &str) -> ToolError {
    call.record_approval(Approval {
        asked: true,
        answer: Some("failed"),
    });
    ToolError::refused(format!(
        "the person was to type the secret but the question failed: {why}. Nothing was typed."
    ))
}

/// Waits for the person's submission on `page`, then types it into the
/// pane, if it still waits at a hidden prompt.
async fn receive_and_type(
    server: &TermpilotServer,
    call: &CallContext,
    pane: &Pane,
    params: &TypeSecretParams,
    mut page: Opened,
    elicitation: Option<String>,
) -> Outcome {
    let left = page.expires().saturating_duration_since(Instant::now());
    let cancelled = call.cancellation();
    let what = "waiting for the person to type the secret on the page";
    let received = call.run(what, left, page.receive(&cancelled)).await;
    let value: PersonSecret = match received {
        Ok(Ok(value)) => value,
        Ok(Err(NoValue::Expired)) => {
            call.record_approval(Approval {
                asked: true,
                answer: Some("expired"),
            });
            return Err(ToolError::refused(format!(
                "the person did not type the secret {:?} before the page expired; nothing was \
                 typed. Call type_secret again to give them a new page.",
                params.name
            )));
        }
        Ok(Err(NoValue::Cancelled)) | Err(_) => {
            return Err(failed(call, "cancelled by the client"));
        }
    };
    drop(page);
    if let Some(id) = elicitation {
        complete(call, id).await;
    }
    if let Err(why) = hidden_prompt(pane).await? {
        call.record_approval(Approval {
            asked: true,
            answer: Some("typed"),
        });
        return Err(ToolError::Refused(format!(
            "the person typed the secret, but it was not typed into the pane and is forgotten: \
             {why}"
        )));
    }
    let value = value.take();
    server.remember_typed(&params.name, &value);
    let cursor = type_value(pane, value, params.enter, &Recipients::default()).await?;
    call.record_approval(Approval {
        asked: true,
        answer: Some("typed"),
    });
    let entry = SecretTypedEntry {
        pane: pane.to_string(),
        name: params.name.clone(),
        cursor: pane.cursor_text(cursor),
        typed_by_person: true,
        wait: None,
    };
    let text = format!(
        "the person typed the secret {} into {pane}; termpilot kept no copy (results show \
         [secret {}] should the program print it)",
        entry.name, entry.name
    );
    then_wait(server, call, pane, cursor, params.wait, entry, text).await
}

/// Tells the client the page's interaction is over
/// (`notifications/elicitation/complete`, protocol 2025-11-25).
async fn complete(call: &CallContext, id: String) {
    let notification = CustomNotification::new(
        "notifications/elicitation/complete",
        Some(json!({ "elicitationId": id })),
    );
    let sent = call
        .peer()
        .send_notification(ServerNotification::CustomNotification(notification))
        .await;
    if let Err(error) = sent {
        tracing::debug!(%error, "elicitation/complete not sent");
    }
}

fn url_params(message: String, url: &str, elicitation_id: String) -> ElicitRequestParams {
    ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message,
        url: url.to_owned(),
        elicitation_id,
    }
}
