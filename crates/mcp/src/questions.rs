//! Questions to the person that span two requests (protocol 2026-07-28).
//!
//! Under 2026-07-28 the server cannot send `elicitation/create` in the middle
//! of a call. It answers the call with an input-required result instead: the
//! question (`inputRequests`) and a `requestState` the client echoes when it
//! calls again with the person's answer (`inputResponses`).
//!
//! `requestState` passes through the client and the model, so it carries
//! nothing but an opaque handle: 128 random bits naming what was asked,
//! which stays here. A handle works once, for [`QUESTION_TTL`], and only for
//! a call of the same tool with the same arguments as the one that was
//! asked about, by the caller it was asked of ([`Caller`]); anything else is
//! refused (another caller's handle as one that never existed, and left for
//! its own caller). So an answer cannot be made up for a question the server
//! never asked, replayed, moved to other text or given by someone else.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest, InputRequests,
    InputRequiredResult, InputResponses,
};
use serde_json::Value;
use tokio::time::Instant;

use crate::caller::Caller;
use crate::error::{ToolError, ToolResult};
use crate::secret_page::Opened;

/// How long a question waits for the call that brings its answer.
pub(crate) const QUESTION_TTL: Duration = crate::secret_page::PAGE_TTL;

/// The most questions waiting at once.
const MAX_OPEN: usize = 256;

/// Random bytes in a handle (128 bits).
const HANDLE_BYTES: usize = 16;

/// What was asked.
pub(crate) enum Asked {
    /// Whether to type text matching these patterns.
    Approval,
    /// A secret, through this page.
    Secret(Opened),
}

struct Question {
    expires: Instant,
    /// Who was asked: only they may answer.
    caller: Caller,
    tool: String,
    arguments: Value,
    asked: Asked,
}

/// The questions waiting for their answer, by handle.
#[derive(Default)]
pub(crate) struct Questions {
    /// A std `Mutex`: held for one map operation, never across an `.await`.
    open: Mutex<HashMap<String, Question>>,
}

impl std::fmt::Debug for Questions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Questions").finish_non_exhaustive()
    }
}

/// A call's answers to an earlier input-required result, as the client sent
/// them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Continuation {
    pub(crate) responses: Option<InputResponses>,
    pub(crate) state: Option<String>,
}

impl Continuation {
    /// The person's answer to the question under `key`.
    pub(crate) fn answer(&self, key: &str) -> ToolResult<ElicitResult> {
        let response = self
            .responses
            .as_ref()
            .and_then(|responses| responses.get(key))
            .ok_or_else(|| {
                ToolError::refused(format!(
                    "the call carries a requestState but no answer under inputResponses.{key}; \
                     call again without requestState to ask the person again. Nothing was typed."
                ))
            })?;
        serde_json::from_value(response.clone()).map_err(|e| {
            ToolError::refused(format!(
                "inputResponses.{key} is not an elicitation result ({e}). Nothing was typed."
            ))
        })
    }
}

impl Questions {
    /// Keeps a question about a call of `tool` with `arguments`; returns its
    /// handle, for `requestState`.
    pub(crate) fn ask(&self, tool: &str, arguments: &Value, asked: Asked) -> ToolResult<String> {
        let handle = crate::random::hex_token(HANDLE_BYTES).ok_or_else(|| {
            ToolError::Failed("cannot read /dev/urandom to make a requestState".into())
        })?;
        let now = Instant::now();
        let mut open = lock(&self.open);
        open.retain(|_, q| now < q.expires);
        if open.len() >= MAX_OPEN {
            return Err(ToolError::refused(format!(
                "{MAX_OPEN} questions already wait for the person's answer; answer or let them \
                 expire (after {} s), then call again",
                QUESTION_TTL.as_secs()
            )));
        }
        let question = Question {
            expires: now + QUESTION_TTL,
            caller: Caller::current(),
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            asked,
        };
        open.insert(handle.clone(), question);
        Ok(handle)
    }

    /// Takes the question `handle` names, which must be about a call of
    /// `tool` with exactly these `arguments`. A handle is spent by any use.
    pub(crate) fn take(&self, handle: &str, tool: &str, arguments: &Value) -> ToolResult<Asked> {
        let now = Instant::now();
        let question = {
            let mut open = lock(&self.open);
            let theirs = open
                .get(handle)
                .is_some_and(|q| q.caller == Caller::current());
            if theirs { open.remove(handle) } else { None }
        };
        let Some(question) = question.filter(|q| now < q.expires) else {
            return Err(ToolError::refused(
                "the requestState names no question waiting for an answer: it is unknown, \
                 already used or expired. Call the tool again without inputResponses and \
                 requestState to ask the person again. Nothing was typed.",
            ));
        };
        if question.tool != tool || &question.arguments != arguments {
            return Err(ToolError::refused(
                "the requestState is for a call with other arguments than these: the person \
                 answers only about what they were asked. Call the tool again without \
                 inputResponses and requestState to ask about this call. Nothing was typed.",
            ));
        }
        Ok(question.asked)
    }
}

/// The input-required result asking `params` under `key`, with `handle` as
/// the state to echo.
pub(crate) fn input_required(
    key: &str,
    params: ElicitRequestParams,
    handle: String,
) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    let request = InputRequest::Elicitation(ElicitRequest::new(params));
    requests.insert(key.to_owned(), request);
    InputRequiredResult::new(Some(requests), Some(handle))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(result: ToolResult<Asked>) -> String {
        match result {
            Err(error) => error.to_string(),
            Ok(_) => panic!("accepted"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_handle_works_once_for_the_same_call_until_it_expires() {
        Caller::test("a")
            .scope(async {
                let questions = Questions::default();
                let args = json!({"pane": "%1", "text": "rm -rf x"});
                let handle = questions.ask("send_keys", &args, Asked::Approval).unwrap();
                assert_eq!(handle.len(), 2 * HANDLE_BYTES);
                assert!(questions.take(&handle, "send_keys", &args).is_ok());
                assert!(
                    refused(questions.take(&handle, "send_keys", &args)).contains("already used")
                );

                let handle = questions.ask("send_keys", &args, Asked::Approval).unwrap();
                let other = json!({"pane": "%1", "text": "rm -rf /"});
                assert!(
                    refused(questions.take(&handle, "send_keys", &other))
                        .contains("other arguments")
                );
                // Spent by the refused use.
                assert!(refused(questions.take(&handle, "send_keys", &args)).contains("unknown"));

                let handle = questions.ask("send_keys", &args, Asked::Approval).unwrap();
                assert!(
                    refused(questions.take(&handle, "paste_text", &args))
                        .contains("other arguments")
                );

                let handle = questions.ask("send_keys", &args, Asked::Approval).unwrap();
                tokio::time::advance(QUESTION_TTL).await;
                assert!(refused(questions.take(&handle, "send_keys", &args)).contains("expired"));

                assert!(refused(questions.take("made-up", "send_keys", &args)).contains("unknown"));
            })
            .await;
    }

    #[tokio::test(start_paused = true)]
    async fn only_the_caller_asked_may_answer() {
        let questions = Questions::default();
        let args = json!({"pane": "%1", "text": "rm -rf x"});
        let (a, b) = (Caller::test("a"), Caller::test("b"));
        let ask = || questions.ask("send_keys", &args, Asked::Approval).unwrap();
        let handle = a.clone().scope(async { ask() }).await;
        let take = |caller: Caller| {
            let handle = handle.clone();
            let args = args.clone();
            let questions = &questions;
            caller.scope(async move { questions.take(&handle, "send_keys", &args) })
        };
        let stolen = refused(take(b).await);
        let never = refused(
            a.clone()
                .scope(async { questions.take("made-up", "send_keys", &args) })
                .await,
        );
        assert_eq!(
            stolen, never,
            "the same answer as for a handle that never was"
        );
        // Not spent by the other caller's try.
        assert!(take(a).await.is_ok());
    }

    #[test]
    fn answers_are_read_from_the_responses() {
        let continuation = Continuation {
            responses: Some(
                [(
                    "approve".to_owned(),
                    json!({"action": "accept", "content": {"approve": true}}),
                )]
                .into(),
            ),
            state: Some("h".into()),
        };
        let answer = continuation.answer("approve").unwrap();
        assert_eq!(answer.content, Some(json!({"approve": true})));
        assert!(continuation.answer("secret").is_err());
        let bad = Continuation {
            responses: Some([("approve".to_owned(), json!({"action": "maybe"}))].into()),
            state: None,
        };
        assert!(bad.answer("approve").is_err());
    }
}
