//! The MCP server: publishes the enabled tools and dispatches calls to the
//! engine. Thin by design: validate, call the engine, map the result.

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ContentBlock, GetTaskParams, GetTaskResult, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::Serialize;
use serde_json::Value;
use termpilot_render::OutputStore;
use termpilot_tmux::{Engine, Error, HostOptions, Hosts, StepWork};
use tokio_util::sync::CancellationToken;

use crate::catalog::{self, Spec};
use crate::error::{ToolError, ToolResult};
use crate::oversight::{self, Oversight};
use crate::progress::{Gate, Step};
use crate::questions::{Continuation, Questions};
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
    /// The engine of the local host.
    pub(crate) engine: Engine,
    /// Every host, the local one first; others connect on first use.
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
            .with_local(engine.clone());
        let tasks = crate::tasks::Tasks::new(&options);
        let server = TermpilotServer {
            engine,
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
    /// [`termpilot_tmux::Hosts`]); the local host stays this server's engine.
    pub fn with_hosts(mut self, hosts: Hosts) -> Self {
        self.hosts = Arc::new(hosts.with_local(self.engine.clone()));
        self
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
    fn published(&self, name: &str) -> Result<(), McpError> {
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

/// A successful tool result: structured content and its short text form.
pub(crate) struct Done {
    pub(crate) structured: Value,
    pub(crate) text: String,
    /// Content after the text (a picture of a screen).
    pub(crate) content: Vec<ContentBlock>,
}

/// A tool's result before it is encoded: its structured content, typed,
/// and its short text form.
pub(crate) struct Reply<T> {
    pub(crate) entry: T,
    pub(crate) text: String,
}

impl<T: Serialize> Reply<T> {
    /// The result as it goes out.
    pub(crate) fn done(self) -> ToolResult<Done> {
        Done::new(&self.entry, self.text)
    }
}

impl Done {
    pub(crate) fn new<T: Serialize>(value: &T, text: String) -> ToolResult<Done> {
        let structured = serde_json::to_value(value)
            .map_err(|e| ToolError::Failed(format!("cannot encode the result: {e}")))?;
        Ok(Done {
            structured,
            text,
            content: Vec::new(),
        })
    }
}

impl ServerHandler for TermpilotServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("termpilot", env!("CARGO_PKG_VERSION")))
            .with_instructions(catalog::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.published(&request.name)?;
        if crate::tasks::wanted(&request, &context) {
            return Ok(self.start_task(request, &context));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let started = std::time::Instant::now();
        let audit = match self
            .oversight
            .begin_admitted(&request.name, &arguments, &context)
        {
            Ok(audit) => audit,
            Err(problem) => return Ok(audit_refused(&problem).into()),
        };
        let stateless = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        let call = CallContext {
            token: context.meta.get_progress_token(),
            peer: context.peer.clone(),
            cancelled: context.ct.clone(),
            gate: Mutex::default(),
            step: Mutex::default(),
            approval: Mutex::default(),
            stateless,
            capabilities: context.client_capabilities(),
            continuation: Continuation {
                responses: request.input_responses,
                state: request.request_state,
            },
        };
        let noted = arguments.clone();
        let caller = crate::caller::Caller::of(&context);
        let outcome = caller
            .scope(self.call(&request.name, arguments, &call))
            .await;
        if let Ok(done) = &outcome {
            let id = context.id.to_string();
            self.notes
                .record(&request.name, &noted, &id, Some(&done.structured));
        }
        call.settle_before_response().await;
        if let Err(ToolError::NeedsInput(input)) = outcome {
            if let Some(audit) = audit {
                let pending = serde_json::json!({"outcome": "input_required"});
                audit.finish(Ok(&pending), lock(&call.approval).clone());
            }
            return Ok(CallToolResponse::InputRequired(
                self.redact_question(*input),
            ));
        }
        let result = self.settle(outcome, audit, &call);
        tracing::debug!(tool = %request.name, elapsed_us = started.elapsed().as_micros() as u64, ok = result.is_error != Some(true), "tool call");
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        crate::resources::list(self).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(crate::resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let contents = crate::resources::read(self, &request.uri, &context).await?;
        Ok(ReadResourceResult::new(contents).into())
    }

    #[allow(deprecated, reason = "protocol 2025-11-25 clients subscribe this way")]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::resources::subscribe(self, &request.uri, &context).await
    }

    #[allow(
        deprecated,
        reason = "protocol 2025-11-25 clients unsubscribe this way"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::resources::unsubscribe(self, &request.uri, &context);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(crate::resources::accepted_filter(requested))
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        crate::resources::listen(self, subscription).await;
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.tasks.get(&request.task_id)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.update(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel(&request.task_id)
    }
}

impl TermpilotServer {
    /// The result of a call as it goes out, secrets hidden, noted in the
    /// audit log.
    pub(crate) fn settle(
        &self,
        outcome: ToolResult<Done>,
        audit: Option<oversight::Pending>,
        call: &CallContext,
    ) -> CallToolResult {
        let outcome = self.redact_outcome(outcome);
        if let Some(audit) = audit {
            let approval = lock(&call.approval).clone();
            audit.finish(
                outcome.as_ref().map(|d| &d.structured).map_err(|_| ()),
                approval,
            );
        }
        let result = match outcome {
            Ok(done) => {
                let mut blocks = vec![ContentBlock::text(done.text)];
                blocks.extend(done.content);
                let mut result = CallToolResult::success(blocks);
                result.structured_content = Some(done.structured);
                result
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        self.oversight.note_audit_problem(result)
    }
}

/// The result of a call refused because the audit log cannot be written
/// and the server runs with `--audit-required`.
pub(crate) fn audit_refused(problem: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "refused: {problem}, and this server runs with --audit-required; ask the operator \
         to fix the audit log"
    ))])
}

/// What a long call needs from its request: progress reporting and
/// cancellation.
pub(crate) struct CallContext {
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
    cancelled: CancellationToken,
    /// Which progress notifications go out (one increasing value). A std
    /// `Mutex`: held for a read and a write, never across an `.await`.
    gate: Mutex<Gate>,
    /// The batch step running now, if any: its own progress is reported
    /// inside it, on the batch's count. A std `Mutex`, as `gate`.
    step: Mutex<Option<Step>>,
    /// Whether the person was asked about this call, and their answer.
    approval: Mutex<crate::audit::Approval>,
    /// The request is of protocol 2026-07-28 or later, which has no
    /// requests from server to client: the person is asked through
    /// input-required results instead of `elicitation/create`.
    stateless: bool,
    /// What the client can do, as this request (2026-07-28) or its session
    /// declared it.
    capabilities: Option<ClientCapabilities>,
    /// The answers this call brings to an earlier input-required result.
    continuation: Continuation,
}

impl CallContext {
    /// The context of a call that runs as a task, after its request was
    /// answered: no progress token (the request is over), protocol
    /// 2026-07-28 (questions go out as the task's input requests), and a
    /// cancellation of its own, which `tasks/cancel` triggers.
    pub(crate) fn detached(
        peer: Peer<RoleServer>,
        capabilities: Option<ClientCapabilities>,
        cancelled: CancellationToken,
    ) -> CallContext {
        CallContext {
            token: None,
            peer,
            cancelled,
            gate: Mutex::default(),
            step: Mutex::default(),
            approval: Mutex::default(),
            stateless: true,
            capabilities,
            continuation: Continuation::default(),
        }
    }

    /// Gives the call the answers to its last question (or none).
    pub(crate) fn answer_with(&mut self, continuation: Continuation) {
        self.continuation = continuation;
    }

    /// Runs `work`, sending a progress notification every second when the
    /// client asked for progress (and, if it sent any, one that reaches the
    /// total when the work is done), and stopping at once when the client
    /// cancels (dropping `work`, which leaves nothing running).
    pub(crate) async fn run<F: Future>(
        &self,
        what: &str,
        total: Duration,
        work: F,
    ) -> Result<F::Output, Error> {
        tokio::pin!(work);
        let started = tokio::time::Instant::now();
        let mut ticker =
            tokio::time::interval_at(started + Duration::from_secs(1), Duration::from_secs(1));
        let mut reported = false;
        loop {
            tokio::select! {
                output = &mut work => {
                    if reported {
                        self.finished(what, started, total).await;
                    }
                    return Ok(output);
                }
                () = self.cancelled.cancelled() => return Err(Error::Cancelled { what: what.to_owned() }),
                _ = ticker.tick(), if self.token.is_some() => {
                    self.progress(what, started, total).await;
                    reported = true;
                }
            }
        }
    }

    /// Runs the engine's `work` as [`CallContext::run`] does, saying what it
    /// does as the engine describes it; work without a time limit (a
    /// capture) just runs.
    pub(crate) async fn run_work<T>(
        &self,
        host: &crate::address::Host,
        work: StepWork,
        run: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        match work.limit {
            Some(limit) => {
                let what = work.describe(&host.qualify(work.pane));
                self.run(&what, limit, run).await?
            }
            None => run.await,
        }
    }

    /// Waits, when a progress notification went out a moment ago, so that
    /// the response does not arrive in the same read as it (see
    /// [`crate::progress::SETTLE_BEFORE_RESPONSE`]).
    async fn settle_before_response(&self) {
        let Some(sent) = lock(&self.gate).last_sent() else {
            return;
        };
        let ready = sent + crate::progress::SETTLE_BEFORE_RESPONSE;
        if ready > tokio::time::Instant::now() {
            tokio::time::sleep_until(ready).await;
        }
    }

    /// The client this call came from.
    pub(crate) fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// Notes the person's answer about this call, for the audit log.
    pub(crate) fn record_approval(&self, approval: crate::audit::Approval) {
        *lock(&self.approval) = approval;
    }

    /// Whether the person must be asked through input-required results
    /// (protocol 2026-07-28) rather than `elicitation/create`.
    pub(crate) fn stateless(&self) -> bool {
        self.stateless
    }

    /// The answers this call brings to an earlier input-required result.
    pub(crate) fn continuation(&self) -> &Continuation {
        &self.continuation
    }

    /// Whether the client declared elicitation in URL mode (`url`) or in
    /// form mode (a bare `elicitation` capability means form mode).
    pub(crate) fn elicits(&self, url: bool) -> bool {
        let capability = self
            .capabilities
            .as_ref()
            .and_then(|c| c.elicitation.as_ref());
        match capability {
            Some(capability) if url => capability.url.is_some(),
            Some(capability) => capability.form.is_some() || capability.url.is_none(),
            None => false,
        }
    }

    /// The request's cancellation token.
    pub(crate) fn cancellation(&self) -> CancellationToken {
        self.cancelled.clone()
    }

    /// Whether the client cancelled the request.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }

    /// Runs `work` as step `index` of a batch of `total` steps: progress it
    /// reports on its own stays between `index` and `index + 1` of `total`.
    pub(crate) async fn in_step<F: Future>(
        &self,
        index: usize,
        total: usize,
        work: F,
    ) -> F::Output {
        *lock(&self.step) = Some(Step { index, total });
        let output = work.await;
        *lock(&self.step) = None;
        output
    }

    /// Reports `done` of `total` items, at most every 100 ms (and always the
    /// last one), when the client asked for progress.
    pub(crate) async fn count(&self, what: &str, done: usize, total: usize) {
        let message = format!("{what}: {done} of {total}");
        self.notify(done as f64, total as f64, message).await;
    }

    /// Runs `work` (which honours cancellation itself, between items) and
    /// reports the count it publishes on `done`.
    pub(crate) async fn run_counted<F: Future>(
        &self,
        what: &str,
        total: usize,
        mut done: tokio::sync::watch::Receiver<usize>,
        work: F,
    ) -> F::Output {
        tokio::pin!(work);
        loop {
            tokio::select! {
                output = &mut work => {
                    // The last count may have come with the result itself.
                    if done.has_changed().unwrap_or(false) {
                        let count = *done.borrow_and_update();
                        self.count(what, count, total).await;
                    }
                    return output;
                }
                changed = done.changed() => {
                    if changed.is_ok() {
                        let count = *done.borrow_and_update();
                        self.count(what, count, total).await;
                    } else {
                        return work.await;
                    }
                }
            }
        }
    }

    async fn progress(&self, what: &str, started: tokio::time::Instant, total: Duration) {
        let elapsed = started.elapsed();
        let message = format!(
            "{what}: {:.0} s of at most {:.0} s",
            elapsed.as_secs_f64(),
            total.as_secs_f64()
        );
        let step = *lock(&self.step);
        match step {
            None => {
                let value = elapsed.min(total).as_secs_f64();
                self.notify(value, total.as_secs_f64(), message).await
            }
            Some(step) => {
                let message = format!("step {} of {}: {message}", step.index + 1, step.total);
                let value = step.value(elapsed, total);
                self.notify(value, step.total as f64, message).await
            }
        }
    }

    /// The last notification of work that reported its progress: the total.
    /// A batch step leaves that to the batch, which then counts the step.
    async fn finished(&self, what: &str, started: tokio::time::Instant, total: Duration) {
        if lock(&self.step).is_some() {
            return;
        }
        let message = format!(
            "{what}: done after {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let total = total.as_secs_f64();
        self.notify(total, total, message).await;
    }

    /// Sends a progress notification when the client asked for progress and
    /// the gate lets the value through.
    async fn notify(&self, value: f64, total: f64, message: String) {
        let Some(token) = self.token.clone() else {
            return;
        };
        if !lock(&self.gate).admit(tokio::time::Instant::now(), value, total) {
            return;
        }
        let param = ProgressNotificationParam::new(token, value)
            .with_total(total)
            .with_message(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "progress notification not sent");
        }
    }
}

/// Locks a std `Mutex` of this module, whose holders never panic midway.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
