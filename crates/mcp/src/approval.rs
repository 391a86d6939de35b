//! Approvals: before a call types text matching a `--confirm` pattern, the
//! person is asked through MCP elicitation (form mode, one boolean
//! `approve`). Only the client's answer, which comes from the person, lets
//! the text through: no tool argument can. Under protocol 2026-07-28 the
//! question goes out as an input-required result and the answer comes back
//! with the retried call, tied to it by a handle kept server-side (see
//! [`crate::questions`]).

use regex::Regex;
use rmcp::RoleServer;
use rmcp::model::{
    BooleanSchema, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, ServerRequest,
};
use rmcp::service::Peer;
use serde_json::Value;
use termpilot_tmux::PaneScope;

use crate::audit::Approval;
use crate::error::{ToolError, ToolResult};
use crate::questions::{self, Asked};
use crate::server::{CallContext, TermpilotServer};

/// The patterns of text that needs the person's approval.
#[derive(Debug, Clone, Default)]
pub struct Confirm {
    patterns: Vec<Regex>,
}

impl Confirm {
    /// Compiles the patterns; empty ones are ignored.
    pub fn new<S: AsRef<str>>(sources: &[S]) -> Result<Confirm, regex::Error> {
        let patterns = sources
            .iter()
            .map(AsRef::as_ref)
            .filter(|s| !s.is_empty())
            .map(Regex::new)
            .collect::<Result<_, _>>()?;
        Ok(Confirm { patterns })
    }

    /// Whether no text needs approval.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    fn first_match(&self, text: &str) -> Option<&Regex> {
        self.patterns.iter().find(|p| p.is_match(text))
    }
}

/// A piece of text a call would type into a pane, as the pane would get it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Piece {
    /// The pane target, as the caller wrote it.
    pub(crate) pane: String,
    pub(crate) text: String,
}

/// The text a call of `tool` with these (schema-checked) arguments would
/// type, piece by piece. Key names (`keys`) are not text; `enter` is a newline.
pub(crate) fn pieces(tool: &str, arguments: &Value) -> Vec<Piece> {
    crate::catalog::find(tool).map_or_else(Vec::new, |spec| (spec.typed)(arguments))
}

impl Piece {
    /// The piece a call with these arguments types into its `pane`: `text`,
    /// then a newline for Enter; none when that is empty.
    pub(crate) fn of(arguments: &Value, text: &str, enter: bool) -> Vec<Piece> {
        let text = format!("{text}{}", if enter { "\n" } else { "" });
        if text.is_empty() {
            return Vec::new();
        }
        let pane = Piece::field(arguments, "pane").to_owned();
        vec![Piece { pane, text }]
    }

    /// A string argument, empty when absent.
    pub(crate) fn field<'a>(arguments: &'a Value, name: &str) -> &'a str {
        arguments.get(name).and_then(Value::as_str).unwrap_or("")
    }

    /// A boolean argument.
    pub(crate) fn flag(arguments: &Value, name: &str) -> Option<bool> {
        arguments.get(name).and_then(Value::as_bool)
    }
}

/// The key of the approval question in an input-required result.
const APPROVE: &str = "approve";

/// Asks the person about the text a call of `tool` with `arguments` would
/// type, when any of it matches a pattern: all of it in one question, through
/// `elicitation/create` or, under protocol 2026-07-28, an input-required
/// result answered by the call that comes back. `Ok` when nothing matches or
/// the person approved.
pub(crate) async fn approve(
    confirm: &Confirm,
    server: &TermpilotServer,
    call: &CallContext,
    tool: &str,
    arguments: &Value,
) -> (ToolResult<()>, Approval) {
    let pieces = pieces(tool, arguments);
    let matched: Vec<(&Piece, &Regex)> = pieces
        .iter()
        .filter_map(|piece| confirm.first_match(&piece.text).map(|p| (piece, p)))
        .collect();
    let Some((_, first)) = matched.first() else {
        return (Ok(()), Approval::default());
    };
    let patterns = matched
        .iter()
        .map(|(_, p)| format!("/{}/", p.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    if call.stateless() && call.continuation().state.is_some() {
        return answered(server, call, tool, arguments, &patterns);
    }
    if !call.elicits(false) {
        let refusal = format!(
            "refused: this input matches the pattern /{}/ (set with --confirm), which needs the \
             person's approval, and approvals need a client that supports elicitation; this \
             client did not declare the elicitation capability. Nothing was typed.",
            first.as_str()
        );
        let approval = Approval {
            asked: false,
            answer: Some("unsupported"),
        };
        return (Err(ToolError::Refused(refusal)), approval);
    }
    let message = question(server, &matched).await;
    if call.stateless() {
        let asked = form(message).map_err(ToolError::Failed).and_then(|params| {
            let handle = server.questions.ask(tool, arguments, Asked::Approval)?;
            let input = questions::input_required(APPROVE, params, handle);
            Err(ToolError::NeedsInput(Box::new(input)))
        });
        let approval = Approval {
            asked: true,
            answer: Some("pending"),
        };
        return (asked, approval);
    }
    let cancelled = call.cancellation();
    let answer = tokio::select! {
        answer = ask(call.peer(), message) => answer,
        () = cancelled.cancelled() => Err("cancelled by the client".to_owned()),
    };
    match answer {
        Ok(answer) => decided(answer, &patterns),
        Err(e) => (
            Err(ToolError::refused(format!(
                "the person's approval was needed (pattern {patterns}) but the question \
                 failed: {e}. Nothing was typed."
            ))),
            Approval {
                asked: true,
                answer: Some("failed"),
            },
        ),
    }
}

/// The person's answer that a call under protocol 2026-07-28 brings back,
/// to the question its `requestState` names.
fn answered(
    server: &TermpilotServer,
    call: &CallContext,
    tool: &str,
    arguments: &Value,
    patterns: &str,
) -> (ToolResult<()>, Approval) {
    let continuation = call.continuation();
    let state = continuation.state.as_deref().unwrap_or_default();
    let answer = server
        .questions
        .take(state, tool, arguments)
        .and_then(|asked| match asked {
            Asked::Approval => continuation.answer(APPROVE).map(|r| Answer::of(&r)),
            Asked::Secret(_) => Err(ToolError::refused(
                "the requestState is for another question (a secret), not this approval. \
                 Nothing was typed.",
            )),
        });
    match answer {
        Ok(answer) => decided(answer, patterns),
        Err(error) => (
            Err(error),
            Approval {
                asked: true,
                answer: Some("invalid"),
            },
        ),
    }
}

/// The call's fate, and the audit's record, given the person's answer.
fn decided(answer: Answer, patterns: &str) -> (ToolResult<()>, Approval) {
    let (result, answer) = match answer {
        Answer::Approved => (Ok(()), "approve"),
        Answer::Declined => (Err(declined(patterns)), "decline"),
        Answer::Cancelled => (Err(declined(patterns)), "cancel"),
    };
    let approval = Approval {
        asked: true,
        answer: Some(answer),
    };
    (result, approval)
}

fn declined(patterns: &str) -> ToolError {
    ToolError::refused(format!(
        "the person declined: nothing was typed. The input matches {patterns} (set with \
         --confirm), which needs the person's approval."
    ))
}

enum Answer {
    Approved,
    Declined,
    Cancelled,
}

impl Answer {
    /// Only an accepted form with `approve: true` approves.
    fn of(result: &ElicitResult) -> Answer {
        match result.action {
            ElicitationAction::Accept => {
                let approved = result
                    .content
                    .as_ref()
                    .and_then(|c| c.get(APPROVE))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if approved {
                    Answer::Approved
                } else {
                    Answer::Declined
                }
            }
            ElicitationAction::Cancel => Answer::Cancelled,
            // Decline, and any answer a later protocol may add: not an approval.
            _ => Answer::Declined,
        }
    }
}

/// The approval question as a form with one boolean.
fn form(message: String) -> Result<ElicitRequestParams, String> {
    let schema = ElicitationSchema::builder()
        .required_bool_with(APPROVE, |b: BooleanSchema| {
            b.title("Approve")
                .description("true to type the text into the pane, false to refuse")
        })
        .build()
        .map_err(str::to_owned)?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

async fn ask(peer: &Peer<RoleServer>, message: String) -> Result<Answer, String> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(form(message)?));
    let response = peer
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let ClientResult::ElicitResult(result) = response else {
        return Err("the client answered with something other than an elicitation result".into());
    };
    Ok(Answer::of(&result))
}

/// The question: each pane (with its session, program and host) and the
/// exact text it would get, with secrets hidden (a program or session name
/// may contain one, and the question reaches the client).
async fn question(server: &TermpilotServer, matched: &[(&Piece, &Regex)]) -> String {
    let mut message = if matched.len() == 1 {
        "An AI agent wants to type this into a terminal. Approve?\n".to_owned()
    } else {
        format!(
            "An AI agent wants to type {} inputs that need approval. Approve them all?\n",
            matched.len()
        )
    };
    for (piece, pattern) in matched {
        let (named, target) = crate::address::split(server, &piece.pane);
        // This machine by its hostname; another by the name it was given.
        let host = if named == crate::address::Host::local() {
            host_name()
        } else {
            format!("{} (a --host)", named.name())
        };
        let resolved = match named.engine(server).await {
            Ok(engine) => match crate::address::any_pane(&engine, target).await {
                Ok(id) => engine
                    .list_panes(&PaneScope::All)
                    .await
                    .unwrap_or_default()
                    .into_iter()
                    .find(|p| p.id == id),
                Err(_) => None,
            },
            Err(_) => None,
        };
        let place = match resolved {
            Some(p) => format!(
                "pane {} (session {}, window {}, running {}, on host {host})",
                named.qualify(p.id),
                p.session_name,
                p.window_index,
                p.current_command
            ),
            None => format!("pane {} (on host {host})", piece.pane),
        };
        message.push_str(&format!(
            "\nInto {place}, matching /{}/:\n{}\n",
            pattern.as_str(),
            shown(&piece.text)
        ));
    }
    server.redact_text(&message)
}

/// The text as the person should read it: control characters made visible,
/// a final newline shown as the Enter it is.
fn shown(text: &str) -> String {
    let (body, enter) = match text.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (text, false),
    };
    let mut out = String::from("    ");
    for c in body.chars() {
        match c {
            '\n' => out.push_str("\n    "),
            c if c.is_control() => out.push_str(&c.escape_default().to_string()),
            c => out.push(c),
        }
    }
    if enter {
        out.push_str("\n    [Enter]");
    }
    out
}

/// This machine's host name.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "this host".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn piece(pane: &str, text: &str) -> Piece {
        Piece {
            pane: pane.to_owned(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn send_keys_text_gets_enter_by_default() {
        let args = json!({"pane": "%1", "text": "rm -rf x", "keys": ["C-c"]});
        assert_eq!(pieces("send_keys", &args), vec![piece("%1", "rm -rf x\n")]);
        let args = json!({"pane": "%1", "text": "ls", "enter": false});
        assert_eq!(pieces("send_keys", &args), vec![piece("%1", "ls")]);
        // Key names are not text.
        let args = json!({"pane": "%1", "keys": ["C-c"]});
        assert!(pieces("send_keys", &args).is_empty());
    }

    #[test]
    fn paste_and_run_command() {
        let args = json!({"pane": "w:0", "text": "a\nb", "enter": true});
        assert_eq!(pieces("paste_text", &args), vec![piece("w:0", "a\nb\n")]);
        let args = json!({"pane": "%2", "text": "a"});
        assert_eq!(pieces("paste_text", &args), vec![piece("%2", "a")]);
        let args = json!({"pane": "%2", "command": "make"});
        assert_eq!(pieces("run_command", &args), vec![piece("%2", "make\n")]);
        assert!(pieces("capture_pane", &json!({"pane": "%2"})).is_empty());
    }

    #[test]
    fn batches_give_every_piece() {
        let args = json!({"operations": [
            {"pane": "%1", "text": "one"},
            {"pane": "%2", "keys": ["Enter"]},
            {"pane": "%3", "text": "two", "enter": false},
        ]});
        assert_eq!(
            pieces("send_keys_batch", &args),
            vec![piece("%1", "one\n"), piece("%3", "two")]
        );
        let args = json!({"steps": [
            {"op": "send_keys", "pane": "%1", "text": "a"},
            {"op": "wait_for_idle", "pane": "%1"},
            {"op": "run_command", "pane": "%1", "command": "b"},
            {"op": "paste_text", "pane": "%1", "text": "c", "enter": true},
        ]});
        assert_eq!(
            pieces("run_batch", &args),
            vec![piece("%1", "a\n"), piece("%1", "b\n"), piece("%1", "c\n")]
        );
    }

    #[test]
    fn patterns_see_the_newline_of_enter() {
        let confirm = Confirm::new(&["^reboot$", ""]).expect("valid");
        assert!(confirm.first_match("reboot").is_some());
        let multi = Confirm::new(&["(?m)^reboot$"]).expect("valid");
        assert!(multi.first_match("reboot\n").is_some());
        let enter = Confirm::new(&["yes\\n"]).expect("valid");
        assert!(enter.first_match("yes\n").is_some());
        assert!(enter.first_match("yes").is_none());
        assert!(Confirm::new(&["("]).is_err());
        assert!(Confirm::new(&[""]).expect("valid").is_empty());
    }

    #[test]
    fn shown_text_marks_enter_and_controls() {
        assert_eq!(shown("ls -l\n"), "    ls -l\n    [Enter]");
        assert_eq!(shown("a\tb"), "    a\\tb");
    }
}
