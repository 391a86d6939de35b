//! The MCP server: publishes the enabled tools and dispatches calls to the
//! engine. Thin by design: validate, call the engine, map the result.
//!
//! - this file: the server's settings ([`ServerOptions`]) and state
//!   ([`TermpilotServer`]), and running one published tool.
//! - `handler`: the rmcp `ServerHandler` (tools, resources, tasks) and how
//!   a call's result goes out (secrets hidden, audited).
//! - `reply`: a tool's successful result before it goes out (`Done`,
//!   `Reply`).
//! - `call`: what a call carries from its request (`CallContext`): the
//!   client, cancellation, approval, answers to earlier questions.
//! - `running`: running a call's work under that context: progress
//!   notifications, cancellation, a batch's steps.

mod call;
mod handler;
mod reply;
mod running;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use serde_json::Value;
use termpilot_render::OutputStore;
use termpilot_tmux::{Engine, HostOptions, Hosts, LOCAL};

pub(crate) use call::CallContext;
pub(crate) use handler::audit_refused;
pub(crate) use reply::{Done, Reply};

use crate::catalog::{self, Spec};
use crate::error::{ToolError, ToolResult};
use crate::oversight::{self, Oversight};
use crate::questions::Questions;
use crate::secret_page::SecretPages;
use crate::toolset::Toolsets;
use crate::validate::Validators;

/// Server-wide settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Which toolsets are published.
    pub toolsets: Toolsets,
    /// Token budget of a content-returning tool when the caller gives none.
    pub default_max_tokens: u32,
    /// The most tokens a caller may ask for.
    pub max_tokens_ceiling: u32,
    /// The longest any wait may last, in seconds; longer requests are clamped.
    pub max_wait_s: f64,
    /// Where cut outputs are kept (`None`: a fresh private temporary directory).
    pub output_dir: Option<PathBuf>,
    /// The most bytes of kept outputs; the oldest are evicted first.
    pub kept_output_bytes: u64,
    /// Keep the output directory when the server exits.
    pub keep_outputs: bool,
    /// Secrets `type_secret` may type, redacted from every result.
    pub secrets: crate::secrets::Secrets,
    /// The most calls running as tasks at once (see [`crate::tasks`]).
    pub max_tasks: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            toolsets: Toolsets::default(),
            default_max_tokens: 2_000,
            max_tokens_ceiling: 20_000,
            max_wait_s: 3_600.0,
            output_dir: None,
            kept_output_bytes: 256 << 20,
            keep_outputs: false,
            secrets: crate::secrets::Secrets::default(),
            max_tasks: crate::tasks::DEFAULT_MAX_TASKS,
        }
    }
}

/// The termpilot MCP server.
#[derive(Clone)]
pub struct TermpilotServer {
    /// Every host, the local one first and connected; others connect on
    /// first use. The one owner of each host's engine: a call reaches an
    /// engine through the host its target names (`address::Host::engine`).
    pub(crate) hosts: Arc<Hosts>,
    pub(crate) options: Arc<ServerOptions>,
    validators: Arc<Validators>,
    /// Full texts of cut results. A std `Mutex`: each use is one short file
    /// write or read, never an `.await`.
    pub(crate) store: Arc<Mutex<OutputStore>>,
    /// Scope, approvals and audit log.
    pub(crate) oversight: Arc<Oversight>,
    /// Questions asked through input-required results, awaiting the call
    /// that brings the answer (shared by every session and request).
    pub(crate) questions: Arc<Questions>,
    /// Pages where the person types secrets.
    pub(crate) pages: Arc<SecretPages>,
    /// Calls running as tasks, and finished ones until their TTL ends
    /// (shared by every session, so a client may poll from a new one).
    pub(crate) tasks: Arc<crate::tasks::Tasks>,
    /// What each call did to a pane, for its recording.
    pub(crate) notes: Arc<crate::notes::Notes>,
    /// Clients' subscriptions to pane resources.
    pub(crate) subscriptions: Arc<crate::resources::Subscriptions>,
}

impl TermpilotServer {
    /// A server over a connected engine. Fails when the directory for kept
    /// outputs cannot be made.
    pub fn new(
        engine: Engine,
        options: ServerOptions,
    ) -> Result<Self, termpilot_render::StoreError> {
        let store = OutputStore::new(
            options.output_dir.clone(),
            options.kept_output_bytes,
            options.keep_outputs,
        )?;
        let hosts = Hosts::new(engine.config().clone(), &[], &HostOptions::default())
            .expect("no hosts to refuse")
            .with_local(engine);
        let tasks = crate::tasks::Tasks::new(&options);
        let server = TermpilotServer {
            hosts: Arc::new(hosts),
            options: Arc::new(options),
            validators: Arc::new(Validators::new()),
            store: Arc::new(Mutex::new(store)),
            oversight: Arc::new(Oversight::default()),
            questions: Arc::default(),
            pages: Arc::new(SecretPages::new()),
            tasks: Arc::new(tasks),
            notes: Arc::default(),
            subscriptions: Arc::default(),
        };
        server.install_secrets();
        Ok(server)
    }

    /// The same server with hosts besides the local one (see
    /// [`termpilot_tmux::Hosts`]); the local host keeps the engine this
    /// server was made with.
    pub fn with_hosts(mut self, hosts: Hosts) -> Self {
        self.hosts = Arc::new(hosts.with_local(self.local_engine()));
        self
    }

    /// The local host's engine, for what only the local host does (the
    /// resources, the recorder, the redactor every host shares).
    pub(crate) fn local_engine(&self) -> Engine {
        (self.hosts.connected(LOCAL)).expect("the local host is connected from the start")
    }

    /// The same server with the operator's scope, approvals and audit log.
    pub fn with_oversight(mut self, oversight: Oversight) -> Self {
        self.oversight = Arc::new(oversight);
        self
    }

    /// A wait's duration: the caller's (default 30 s), capped by the ceiling.
    pub(crate) fn wait_time(&self, requested: Option<f64>) -> Duration {
        let seconds = requested.unwrap_or(30.0).min(self.options.max_wait_s);
        Duration::from_secs_f64(seconds.max(0.001))
    }

    /// The tools this server publishes.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        catalog::enabled(&self.options.toolsets)
            .into_iter()
            .map(Spec::tool)
            .collect()
    }

    /// Checks that `name` is a tool this server publishes: anything else is
    /// a protocol error (invalid params), not a tool result.
    pub(crate) fn published(&self, name: &str) -> Result<(), McpError> {
        let Some(spec) = catalog::find(name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool: {name} (tools/list shows the tools)"),
                None,
            ));
        };
        if !self.options.toolsets.contains(spec.toolset) {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool: {name} (it is in the {} toolset, which this server does not \
                     enable; start termpilot with --toolsets {},{})",
                    spec.toolset, self.options.toolsets, spec.toolset
                ),
                None,
            ));
        }
        Ok(())
    }

    /// Runs a published tool: invalid arguments and failures are tool
    /// errors (`isError` results), which the model can read and act on.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Value,
        call: &CallContext,
    ) -> ToolResult<Done> {
        let arguments = crate::validate::nulls_as_absent(arguments);
        self.validators
            .check(name, &arguments)
            .map_err(ToolError::Refused)?;
        let spec = catalog::find(name)
            .ok_or_else(|| ToolError::Refused(format!("unknown tool: {name}")))?;
        let permit = oversight::admit(self, spec, &arguments, call).await?;
        permit.scope((spec.handler)(self, arguments, call)).await
    }
}
