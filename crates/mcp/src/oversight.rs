//! A person in the loop: what every tool call goes through besides its
//! handler. Before it, the scope check and the person's approval
//! ([`admit`]); after it, the audit line ([`Oversight::begin`] and
//! [`Pending::finish`]).

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use serde_json::Value;
use termpilot_control::TargetKind;
use termpilot_tmux::gate::Permit;

use crate::approval::{self, Confirm};
use crate::audit::{self, Approval, AuditLog, Record, Typed};
use crate::catalog::Spec;
use crate::error::ToolResult;
use crate::scope::Scope;
use crate::server::{CallContext, TermpilotServer};

/// The operator's limits: scope, approvals and audit log. The default
/// limits nothing and logs nothing.
#[derive(Debug, Default)]
pub struct Oversight {
    /// Where each call is recorded, if anywhere.
    pub audit: Option<AuditLog>,
    /// Text that needs the person's approval.
    pub confirm: Confirm,
    /// The sessions tools may see and touch.
    pub scope: Scope,
}

/// Argument fields naming a target, and what kind of target.
const TARGET_FIELDS: [(&str, TargetKind); 3] = [
    ("pane", TargetKind::Pane),
    ("window", TargetKind::Window),
    ("session", TargetKind::Session),
];

/// The targets a call names: its own, and (`with_items`) its operations' or
/// steps'.
fn targets(arguments: &Value, with_items: bool) -> Vec<(TargetKind, String)> {
    let mut items = vec![arguments];
    for list in ["operations", "steps"].into_iter().filter(|_| with_items) {
        if let Some(more) = arguments.get(list).and_then(Value::as_array) {
            items.extend(more);
        }
    }
    let mut out = Vec::new();
    for item in items {
        for (field, kind) in TARGET_FIELDS {
            if let Some(target) = item.get(field).and_then(Value::as_str) {
                out.push((kind, target.to_owned()));
            }
        }
    }
    out
}

/// Checks a call against the scope, then asks the person when it would type
/// (or start a new pane with) a line that needs approval. `Ok` gives the
/// permit the call's handler runs under: the engine's input gate lets
/// through only what it allows. `Err` refuses the call.
pub(crate) async fn admit(
    server: &TermpilotServer,
    spec: &Spec,
    arguments: &Value,
    call: &CallContext,
) -> ToolResult<Permit> {
    let oversight = &server.oversight;
    let tool = spec.name;
    if !oversight.scope.is_open() {
        (spec.admit)(&oversight.scope, arguments)?;
        // A batch's own operations are checked as they resolve their panes
        // (a pane outside fails its operation, as a missing one does).
        for (kind, target) in targets(arguments, false) {
            let located = crate::address::located(server, &target).await?;
            oversight
                .scope
                .check(&located.engine, kind, located.target)
                .await?;
        }
    }
    let permit = oversight.confirm.permit();
    if oversight.confirm.is_empty() {
        return Ok(permit);
    }
    let pieces = approval::pieces(tool, arguments);
    let judgement = approval::judge(server, &oversight.confirm, &pieces).await;
    if judgement.is_empty() {
        return Ok(permit);
    }
    let (result, answer) = approval::approve(&judgement, server, call, tool, arguments).await;
    call.record_approval(answer);
    result.map(|()| judgement.approved(&permit))
}

/// An audit line being made: what is known when the call starts. Dropped
/// without [`Pending::finish`] (the call's future was dropped midway), it
/// still writes its line, with the outcome "abandoned".
pub(crate) struct Pending {
    oversight: Arc<Oversight>,
    written: bool,
    started: Instant,
    client: Option<audit::Client>,
    transport: &'static str,
    tool: String,
    targets: Vec<String>,
    typed: Vec<Typed>,
}

impl Oversight {
    /// Starts the audit line of a call, when there is an audit log.
    pub(crate) fn begin(
        self: &Arc<Self>,
        tool: &str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Option<Pending> {
        let log = self.audit.as_ref()?;
        // From initialize, or from the request itself (protocol 2026-07-28).
        let client = context.client_info().map(|info| audit::Client {
            name: info.name,
            version: info.version,
        });
        let transport = if context
            .extensions
            .get::<hyper::http::request::Parts>()
            .is_some()
        {
            "http"
        } else {
            "stdio"
        };
        let typed = approval::pieces(tool, arguments)
            .iter()
            .map(|piece| Typed::new(&piece.pane, &piece.text, log.payloads()))
            .collect();
        Some(Pending {
            oversight: self.clone(),
            written: false,
            started: Instant::now(),
            client,
            transport,
            tool: tool.to_owned(),
            targets: targets(arguments, true)
                .into_iter()
                .map(|(_, t)| t)
                .collect(),
            typed,
        })
    }
}

impl Oversight {
    /// The audit record of a call of `tool` ([`Oversight::begin`]), or the
    /// reason it is refused because the audit log is required
    /// (`--audit-required`) and cannot take its line; the refusal is
    /// recorded as such.
    pub(crate) fn begin_admitted(
        self: &Arc<Self>,
        tool: &str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Pending>, String> {
        let audit = self.begin(tool, arguments, context);
        match self.audit.as_ref().map_or(Ok(()), AuditLog::admits) {
            Ok(()) => Ok(audit),
            Err(problem) => {
                if let Some(audit) = audit {
                    audit.refused();
                }
                Err(problem)
            }
        }
    }

    /// The result, with what is wrong with the audit log now (if anything)
    /// in its `_meta`, as `termpilot/audit`.
    pub(crate) fn note_audit_problem(&self, mut result: CallToolResult) -> CallToolResult {
        if let Some(problem) = self.audit.as_ref().and_then(AuditLog::problem) {
            let meta = result.meta.get_or_insert_with(Default::default);
            meta.0
                .insert("termpilot/audit".to_owned(), Value::String(problem));
        }
        result
    }
}

impl Pending {
    /// Writes the line of a call refused because the audit log failed (it
    /// is queued all the same: it is how a log made writable again is
    /// noticed).
    pub(crate) fn refused(mut self) {
        let panes = self.targets.clone();
        self.write("refused".to_owned(), panes, Approval::default());
    }

    /// The targets, and the pane of the result when it names another.
    fn panes(&self, result: Result<&Value, ()>) -> Vec<String> {
        let mut panes = self.targets.clone();
        let made = result
            .ok()
            .and_then(|r| r.get("pane"))
            .and_then(Value::as_str);
        if let Some(pane) = made
            && !panes.iter().any(|p| p == pane)
        {
            panes.push(pane.to_owned());
        }
        panes
    }

    /// Writes the call's line: its outcome (the structured result, or an
    /// error) and the person's approval.
    pub(crate) fn finish(mut self, result: Result<&Value, ()>, approval: Approval) {
        self.write(audit::outcome(result), self.panes(result), approval);
    }

    fn write(&mut self, outcome: String, panes: Vec<String>, approval: Approval) {
        self.written = true;
        let Some(log) = &self.oversight.audit else {
            return;
        };
        log.write(&Record {
            time: audit::rfc3339(SystemTime::now()),
            client: self.client.take(),
            transport: self.transport,
            tool: std::mem::take(&mut self.tool),
            panes,
            outcome,
            duration_ms: self.started.elapsed().as_millis() as u64,
            approval,
            typed: std::mem::take(&mut self.typed),
        });
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.written {
            let panes = self.targets.clone();
            self.write("abandoned".to_owned(), panes, Approval::default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn targets_of_calls_and_batches() {
        let args = json!({"pane": "%1"});
        let owned = |v: Vec<(TargetKind, &str)>| -> Vec<(TargetKind, String)> {
            v.into_iter().map(|(k, t)| (k, t.to_owned())).collect()
        };
        assert_eq!(targets(&args, true), owned(vec![(TargetKind::Pane, "%1")]));
        let args = json!({"session": "work", "window": "work:1"});
        assert_eq!(
            targets(&args, true),
            owned(vec![
                (TargetKind::Window, "work:1"),
                (TargetKind::Session, "work")
            ])
        );
        let args = json!({"steps": [{"op": "capture_pane", "pane": "%2"}, {"op": "wait_for_idle", "pane": "w:0"}]});
        assert_eq!(
            targets(&args, true),
            owned(vec![(TargetKind::Pane, "%2"), (TargetKind::Pane, "w:0")])
        );
        let args = json!({"operations": [{"pane": "%3", "text": "x"}]});
        assert_eq!(targets(&args, true), owned(vec![(TargetKind::Pane, "%3")]));
        assert!(targets(&json!({}), true).is_empty());
    }

    #[test]
    fn a_call_dropped_midway_still_gets_its_line() {
        let dir = std::env::temp_dir().join(format!("termpilot-pending-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        let path = dir.join("audit.log");
        let oversight = Arc::new(Oversight {
            audit: Some(AuditLog::open(&path, false).expect("opens")),
            ..Oversight::default()
        });
        let pending = |tool: &str| Pending {
            oversight: oversight.clone(),
            written: false,
            started: Instant::now(),
            client: None,
            transport: "stdio",
            tool: tool.to_owned(),
            targets: vec!["%1".to_owned()],
            typed: Vec::new(),
        };
        drop(pending("wait_for_text"));
        let result = json!({"outcome": "matched", "pane": "%1"});
        pending("wait_for_idle").finish(Ok(&result), Approval::default());
        let log = oversight.audit.as_ref().expect("a log");
        assert!(log.flush(std::time::Duration::from_secs(10)), "written");
        let text = std::fs::read_to_string(&path).expect("readable");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["tool"], "wait_for_text");
        assert_eq!(lines[0]["outcome"], "abandoned");
        assert_eq!(lines[1]["outcome"], "matched");
        assert_eq!(lines[1]["panes"], json!(["%1"]));
        std::fs::remove_dir_all(dir).ok();
    }
}
