//! The rmcp `ServerHandler`: tools, resources and tasks, and how a call's
//! result goes out (secrets hidden, noted in the audit log).

use std::sync::Mutex;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CustomRequest, CustomResult, GetTaskParams, GetTaskResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

use super::call::lock;
use super::{CallContext, Done, TermpilotServer};
use crate::catalog;
use crate::error::{ToolError, ToolResult};
use crate::oversight;
use crate::questions::Continuation;

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
            throttle: Mutex::default(),
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
                .record(&request.name, &noted, &id, Some(&done.structured), started);
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

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        crate::tasks::answer(self, request, context).await
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
