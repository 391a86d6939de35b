//! Approvals: before a call would submit a line matching a `--confirm`
//! pattern into a pane, leave one typed there, or start a new pane with a
//! matching command, the person is asked through MCP elicitation (form mode,
//! one boolean `approve`). What the call would type is read from its typed
//! parameters ([`Piece`]s), turned into the bytes the terminal gets, and
//! judged by the engine's input gate ([`termpilot_tmux::gate`]) against the
//! line each pane already holds; the [`Permit`] the call then runs under
//! lets through only what the person approved. Only the client's answer,
//! which comes from the person, approves: no tool argument can. Under
//! protocol 2026-07-28 the question goes out as an input-required result and
//! the answer comes back with the retried call, tied to it by a handle kept
//! server-side (see [`crate::questions`]).

use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;
use rmcp::RoleServer;
use rmcp::model::{
    BooleanSchema, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, ServerRequest,
};
use rmcp::service::Peer;
use serde_json::Value;
use termpilot_tmux::gate::{Judged, Line, Permit};
use termpilot_tmux::{Engine, PaneId, PaneScope};

use crate::address::Host;

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

    /// The first pattern a line matches, as typed or with the newline that
    /// submits it (so `^reboot$` and `reboot\n` both catch it).
    fn matching(&self, line: &str) -> Option<&Regex> {
        self.first_match(line)
            .or_else(|| self.first_match(&format!("{line}\n")))
    }

    /// The engine's permit for one call: lines matching a pattern need the
    /// person's approval; none approved yet.
    pub(crate) fn permit(&self) -> Permit {
        let confirm = self.clone();
        Permit::new(Arc::new(move |line: &str| confirm.matching(line).is_some()))
    }
}

/// A piece of input a call would give a pane, for the gate and the audit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Piece {
    /// The pane target as the caller wrote it; for a new pane, where it
    /// goes (a session, a pane to split, a host, or nothing).
    pub(crate) pane: String,
    /// The text as the audit records it: what is typed (Enter as a
    /// newline), or the new pane's command or environment variable.
    pub(crate) text: String,
    /// What the gate judges.
    pub(crate) input: Typing,
}

/// What a piece gives its pane.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Typing {
    /// Bytes as the terminal receives them.
    Keys(Vec<u8>),
    /// A new pane's command or environment variable, judged whole: its
    /// readings (`KEY=value` and `value` for a variable).
    Spawn(Vec<String>),
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
        let pane = Piece::field(arguments, "pane");
        Piece::keys(pane, termpilot_tmux::gate::paste_bytes(text, enter))
    }

    /// The piece typing `bytes` into `pane`; none when they are empty.
    pub(crate) fn keys(pane: &str, bytes: Vec<u8>) -> Vec<Piece> {
        if bytes.is_empty() {
            return Vec::new();
        }
        let text = String::from_utf8_lossy(&bytes).replace('\r', "\n");
        vec![Piece {
            pane: pane.to_owned(),
            text,
            input: Typing::Keys(bytes),
        }]
    }

    /// The pieces of a new pane's `command` and environment, going to
    /// `place`.
    pub(crate) fn spawn<'a>(
        place: &str,
        command: Option<&str>,
        env: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Vec<Piece> {
        let assignments = env
            .into_iter()
            .map(|(key, value)| (format!("{key}={value}"), vec![value.clone()]));
        command
            .map(|command| (command.to_owned(), Vec::new()))
            .into_iter()
            .chain(assignments)
            .map(|(text, mut readings)| {
                readings.insert(0, text.clone());
                Piece {
                    pane: place.to_owned(),
                    text,
                    input: Typing::Spawn(readings),
                }
            })
            .collect()
    }

    /// A string argument, empty when absent.
    pub(crate) fn field<'a>(arguments: &'a Value, name: &str) -> &'a str {
        arguments.get(name).and_then(Value::as_str).unwrap_or("")
    }
}

/// The key of the approval question in an input-required result.
const APPROVE: &str = "approve";

/// Where a line that needs approval goes.
enum Place {
    /// A pane, resolved once for the whole call.
    Pane(Host, Engine, PaneId),
    /// A pane target that names no pane (the call will fail on it).
    Unresolved(String),
    /// A new pane: where it goes, as the caller wrote it.
    New(String),
}

/// A line a call would submit, leave typed, or start a new pane with, that
/// matches a pattern.
struct Matched {
    place: Place,
    line: String,
    how: How,
    pattern: Regex,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    Submitted,
    LeftTyped,
    Started,
}

/// What a call would type that needs the person's approval, and what the
/// engine lets through once they approve.
pub(crate) struct Judgement {
    matched: Vec<Matched>,
}

impl Judgement {
    /// Whether nothing needs approval.
    pub(crate) fn is_empty(&self) -> bool {
        self.matched.is_empty()
    }

    /// The permit of a call the person approved: matching input may reach
    /// the panes shown, and new panes may start with matching commands.
    pub(crate) fn approved(&self, base: &Permit) -> Permit {
        let panes: Vec<(&Engine, PaneId)> = self
            .matched
            .iter()
            .filter_map(|m| match &m.place {
                Place::Pane(_, engine, id) => Some((engine, *id)),
                _ => None,
            })
            .collect();
        let spawns = self.matched.iter().any(|m| m.how == How::Started);
        base.approving(&panes, spawns)
    }
}

/// The input a call would type on one host's panes, in order.
struct HostInput {
    host: Host,
    engine: Engine,
    inputs: Vec<(PaneId, Vec<u8>)>,
}

/// Judges the pieces a call would type, on each pane as the lines typed
/// before add up (see [`termpilot_tmux::gate`]), and each new pane's
/// command whole. Each pane target is resolved once.
pub(crate) async fn judge(
    server: &TermpilotServer,
    confirm: &Confirm,
    pieces: &[Piece],
) -> Judgement {
    let mut matched = Vec::new();
    let mut hosts: Vec<HostInput> = Vec::new();
    let mut resolved: HashMap<&str, Option<(Host, Engine, PaneId)>> = HashMap::new();
    for piece in pieces {
        let bytes = match &piece.input {
            Typing::Spawn(readings) => {
                matched.extend(spawn_match(confirm, &piece.pane, readings));
                continue;
            }
            Typing::Keys(bytes) => bytes.clone(),
        };
        if !resolved.contains_key(piece.pane.as_str()) {
            let target = resolve(server, &piece.pane).await;
            resolved.insert(&piece.pane, target);
        }
        let Some((host, engine, id)) = resolved[piece.pane.as_str()].clone() else {
            matched.extend(alone(confirm, &piece.pane, &bytes));
            continue;
        };
        match hosts.iter_mut().find(|h| h.host == host) {
            Some(on) => on.inputs.push((id, bytes)),
            None => hosts.push(HostInput {
                host,
                engine,
                inputs: vec![(id, bytes)],
            }),
        }
    }
    for on in hosts {
        for judged in on.engine.preview_input(&on.inputs) {
            let place = Place::Pane(on.host.clone(), on.engine.clone(), judged.pane);
            matched.extend(matching(confirm, &judged, place));
        }
    }
    Judgement { matched }
}

/// A new pane's command or variable, when one of its readings matches.
fn spawn_match(confirm: &Confirm, place: &str, readings: &[String]) -> Option<Matched> {
    let (line, pattern) = readings
        .iter()
        .find_map(|r| confirm.matching(r).map(|p| (r, p)))?;
    Some(Matched {
        place: Place::New(place.to_owned()),
        line: line.clone(),
        how: How::Started,
        pattern: pattern.clone(),
    })
}

/// What input for a target that names no pane would type, judged on its
/// own (the call fails on it, but the person is still asked first).
fn alone(confirm: &Confirm, target: &str, bytes: &[u8]) -> Vec<Matched> {
    let mut line = Line::new();
    let submitted = line.feed(bytes).into_iter().map(|r| (r, true));
    let left = [(line.readings(), false)];
    submitted
        .chain(left)
        .filter(|(readings, _)| !readings.is_empty())
        .filter_map(|(readings, submitted)| {
            let judged = Judged {
                pane: PaneId(0),
                readings,
                submitted,
            };
            matching(confirm, &judged, Place::Unresolved(target.to_owned()))
        })
        .collect()
}

/// The host, engine and pane a pane target names, if it names one.
async fn resolve(server: &TermpilotServer, target: &str) -> Option<(Host, Engine, PaneId)> {
    let located = crate::address::located(server, target).await.ok()?;
    let id = crate::address::any_pane(&located.engine, located.target)
        .await
        .ok()?;
    Some((located.host, located.engine, id))
}

/// The line judged, when one of its readings matches a pattern.
fn matching(confirm: &Confirm, judged: &Judged, place: Place) -> Option<Matched> {
    let (line, pattern) = judged
        .readings
        .iter()
        .find_map(|r| confirm.matching(r).map(|p| (r, p)))?;
    Some(Matched {
        place,
        line: line.clone(),
        how: if judged.submitted {
            How::Submitted
        } else {
            How::LeftTyped
        },
        pattern: pattern.clone(),
    })
}

/// Asks the person about what a call of `tool` with `arguments` would type
/// that needs approval (`judgement`, not empty): all of it in one question,
/// through `elicitation/create` or, under protocol 2026-07-28, an
/// input-required result answered by the call that comes back. `Ok` when
/// the person approved.
pub(crate) async fn approve(
    judgement: &Judgement,
    server: &TermpilotServer,
    call: &CallContext,
    tool: &str,
    arguments: &Value,
) -> (ToolResult<()>, Approval) {
    let matched = &judgement.matched;
    let Some(first) = matched.first() else {
        return (Ok(()), Approval::default());
    };
    let mut patterns: Vec<String> = Vec::new();
    for m in matched {
        let shown = format!("/{}/", m.pattern.as_str());
        if !patterns.contains(&shown) {
            patterns.push(shown);
        }
    }
    let patterns = patterns.join(", ");
    if call.stateless() && call.continuation().state.is_some() {
        return answered(server, call, tool, arguments, &patterns);
    }
    if !call.elicits(false) {
        let refusal = format!(
            "refused: this input matches the pattern /{}/ (set with --confirm), which needs the \
             person's approval, and approvals need a client that supports elicitation; this \
             client did not declare the elicitation capability. Nothing was typed.",
            first.pattern.as_str()
        );
        let approval = Approval {
            asked: false,
            answer: Some("unsupported"),
        };
        return (Err(ToolError::Refused(refusal)), approval);
    }
    let message = question(server, matched).await;
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
/// exact line it would get, and each new pane's command, with secrets hidden
/// (a program or session name may contain one, and the question reaches the
/// client).
async fn question(server: &TermpilotServer, matched: &[Matched]) -> String {
    let mut message = if matched.len() == 1 {
        "An AI agent wants to type this into a terminal. Approve?\n".to_owned()
    } else {
        format!(
            "An AI agent wants to type {} inputs that need approval. Approve them all?\n",
            matched.len()
        )
    };
    for m in matched {
        let place = match &m.place {
            Place::Pane(host, engine, id) => pane_place(host, engine, *id).await,
            Place::Unresolved(target) => format!("pane {target}"),
            Place::New(at) if at.is_empty() => "a new session".to_owned(),
            Place::New(at) => format!("a new pane (at {at})"),
        };
        let (what, enter) = match m.how {
            How::Submitted => ("the line it submits", "\n"),
            How::LeftTyped => ("the line it leaves typed (not submitted yet)", ""),
            How::Started => ("the command or environment it starts with", ""),
        };
        message.push_str(&format!(
            "\nInto {place}, {what}, matching /{}/:\n{}\n",
            m.pattern.as_str(),
            shown(&format!("{}{enter}", m.line))
        ));
    }
    server.redact_text(&message)
}

/// A pane with its session, window, program and host.
async fn pane_place(host: &Host, engine: &Engine, id: PaneId) -> String {
    // This machine by its hostname; another by the name it was given.
    let machine = if *host == Host::local() {
        host_name()
    } else {
        format!("{} (a --host)", host.name())
    };
    let panes = engine.list_panes(&PaneScope::All).await.unwrap_or_default();
    match panes.into_iter().find(|p| p.id == id) {
        Some(p) => format!(
            "pane {} (session {}, window {}, running {}, on host {machine})",
            host.qualify(p.id),
            p.session_name,
            p.window_index,
            p.current_command
        ),
        None => format!("pane {} (on host {machine})", host.qualify(id)),
    }
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
        // A final newline is the Enter key.
        let bytes = match text.strip_suffix('\n') {
            Some(body) => format!("{body}\r"),
            None => text.to_owned(),
        };
        Piece::keys(pane, bytes.into_bytes()).remove(0)
    }

    #[test]
    fn send_keys_text_gets_enter_by_default() {
        let args = json!({"pane": "%1", "text": "rm -rf x", "keys": ["C-c"]});
        assert_eq!(
            pieces("send_keys", &args),
            vec![piece("%1", "rm -rf x\u{3}\n")]
        );
        let args = json!({"pane": "%1", "text": "ls", "enter": false});
        assert_eq!(pieces("send_keys", &args), vec![piece("%1", "ls")]);
        // Key names are the bytes they send.
        let args = json!({"pane": "%1", "keys": ["r", "m", "Space", "-", "r", "f", "0x0d"]});
        assert_eq!(pieces("send_keys", &args), vec![piece("%1", "rm -rf\n")]);
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
            vec![piece("%1", "one\n"), piece("%2", "\n"), piece("%3", "two")]
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
    fn new_panes_commands_and_environment_are_pieces() {
        let args = json!({"name": "a", "command": "rm -rf x", "env": {"K": "v"}});
        let found = pieces("create_session", &args);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].input, Typing::Spawn(vec!["rm -rf x".to_owned()]));
        assert_eq!(
            found[1].input,
            Typing::Spawn(vec!["K=v".to_owned(), "v".to_owned()])
        );
        let args = json!({"session": "s:7", "command": "reboot"});
        assert_eq!(pieces("create_window", &args)[0].pane, "s:7");
        let args = json!({"pane": "%1", "command": "reboot"});
        assert_eq!(pieces("split_pane", &args)[0].text, "reboot");
    }

    #[test]
    fn a_line_matches_with_or_without_its_newline() {
        let confirm = Confirm::new(&["^reboot$", "^halt\\n"]).expect("valid");
        assert!(confirm.matching("reboot").is_some());
        assert!(confirm.matching("halt").is_some());
        assert!(confirm.matching("halting").is_none());
        let permit = confirm.permit();
        assert!(permit.needs_approval("reboot") && !permit.needs_approval("ls"));
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
