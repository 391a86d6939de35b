//! A person in the loop: what every tool call goes through besides its
//! handler. Before it, the scope check and the person's approval
//! ([`admit`]); after it, the audit line ([`Oversight::begin`] and
//! [`Pending::finish`]).

use std::time::{Instant, SystemTime};

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::Value;

use crate::approval::{self, Confirm};
use crate::audit::{self, Approval, AuditLog, Record, Typed};
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
const TARGET_FIELDS: [(&str, &str); 3] = [
    ("pane", "pane"),
    ("window", "window"),
    ("session", "session"),
];

/// The targets a call names: its own, and (`with_items`) its operations' or
/// steps'.
fn targets(arguments: &Value, with_items: bool) -> Vec<(&'static str, String)> {
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
/// text that needs approval. `Err` refuses the call.
pub(crate) async fn admit(
    server: &TermpilotServer,
    tool: &str,
    arguments: &Value,
    call: &CallContext,
) -> Result<(), String> {
    let oversight = &server.oversight;
    if !oversight.scope.is_open() {
        if tool == "create_session" {
            let name = arguments.get("name").and_then(Value::as_str);
            oversight.scope.check_new_session(name)?;
        }
        // A batch's own operations are checked as they resolve their panes
        // (a pane outside fails its operation, as a missing one does).
        for (kind, target) in targets(arguments, false) {
            oversight
                .scope
                .check(&server.engine, tool, kind, &target)
                .await?;
        }
    }
    if oversight.confirm.is_empty() {
        return Ok(());
    }
    let pieces = approval::pieces(tool, arguments);
    let (result, answer) = approval::approve(
        &oversight.confirm,
        &server.engine,
        call.peer(),
        &call.cancellation(),
        &pieces,
    )
    .await;
    call.record_approval(answer);
    result
}

/// An audit line being made: what is known when the call starts.
pub(crate) struct Pending {
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
        &self,
        tool: &str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Option<Pending> {
        let log = self.audit.as_ref()?;
        let client = context.peer.peer_info().map(|info| audit::Client {
            name: info.client_info.name.clone(),
            version: info.client_info.version.clone(),
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

impl Pending {
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
    pub(crate) fn finish(
        self,
        oversight: &Oversight,
        result: Result<&Value, ()>,
        approval: Approval,
    ) {
        let Some(log) = &oversight.audit else {
            return;
        };
        let panes = self.panes(result);
        log.write(&Record {
            time: audit::rfc3339(SystemTime::now()),
            client: self.client,
            transport: self.transport,
            tool: self.tool,
            panes,
            outcome: audit::outcome(result),
            duration_ms: self.started.elapsed().as_millis() as u64,
            approval,
            typed: self.typed,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn targets_of_calls_and_batches() {
        let args = json!({"pane": "%1"});
        let owned = |v: Vec<(&'static str, &str)>| -> Vec<(&'static str, String)> {
            v.into_iter().map(|(k, t)| (k, t.to_owned())).collect()
        };
        assert_eq!(targets(&args, true), owned(vec![("pane", "%1")]));
        let args = json!({"session": "work", "window": "work:1"});
        assert_eq!(
            targets(&args, true),
            owned(vec![("window", "work:1"), ("session", "work")])
        );
        let args = json!({"steps": [{"op": "capture_pane", "pane": "%2"}, {"op": "wait_for_idle", "pane": "w:0"}]});
        assert_eq!(
            targets(&args, true),
            owned(vec![("pane", "%2"), ("pane", "w:0")])
        );
        let args = json!({"operations": [{"pane": "%3", "text": "x"}]});
        assert_eq!(targets(&args, true), owned(vec![("pane", "%3")]));
        assert!(targets(&json!({}), true).is_empty());
    }
}
