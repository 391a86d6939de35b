//! The MCP server: publishes the enabled tools and dispatches calls to the
//! engine. Thin by design: validate, call the engine, map the result.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::Serialize;
use serde_json::Value;
use termpilot_journal::Cursor;
use termpilot_tmux::{Engine, PaneId};

use crate::catalog::{self, Spec};
use crate::handlers;
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
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            toolsets: Toolsets::default(),
            default_max_tokens: 2_000,
            max_tokens_ceiling: 20_000,
        }
    }
}

/// The termpilot MCP server.
#[derive(Clone)]
pub struct TermpilotServer {
    pub(crate) engine: Engine,
    pub(crate) options: Arc<ServerOptions>,
    validators: Arc<Validators>,
}

impl TermpilotServer {
    /// A server over a connected engine.
    pub fn new(engine: Engine, options: ServerOptions) -> Self {
        TermpilotServer {
            engine,
            options: Arc::new(options),
            validators: Arc::new(Validators::new()),
        }
    }

    /// The tools this server publishes.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        catalog::enabled(&self.options.toolsets)
            .into_iter()
            .map(Spec::tool)
            .collect()
    }

    /// A cursor string for a position in a pane's journal.
    pub(crate) fn cursor(&self, pane: PaneId, offset: u64) -> String {
        Cursor {
            epoch: self.engine.epoch(),
            pane: pane.0,
            offset,
        }
        .to_string()
    }

    async fn call(&self, name: &str, arguments: Value) -> Result<Done, String> {
        let Some(spec) = catalog::find(name) else {
            return Err(format!(
                "unknown tool {name:?}; call tools/list to see the tools"
            ));
        };
        if !self.options.toolsets.contains(spec.toolset) {
            return Err(format!(
                "tool {name} is in the {} toolset, which this server does not enable; \
                 start termpilot with --toolsets {},{}",
                spec.toolset, self.options.toolsets, spec.toolset
            ));
        }
        self.validators.check(name, &arguments)?;
        handlers::dispatch(self, name, arguments).await
    }
}

/// A successful tool result: structured content and its short text form.
pub(crate) struct Done {
    pub(crate) structured: Value,
    pub(crate) text: String,
}

impl Done {
    pub(crate) fn new<T: Serialize>(value: &T, text: String) -> Result<Done, String> {
        let structured =
            serde_json::to_value(value).map_err(|e| format!("cannot encode the result: {e}"))?;
        Ok(Done { structured, text })
    }
}

impl ServerHandler for TermpilotServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("termpilot", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "termpilot gives you real terminals in tmux. Find panes with list_panes (or make \
                 one with create_session), type with send_keys, read with capture_pane. Pane ids \
                 look like %3. send_keys returns a cursor: output after it was caused by your input.",
            )
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let started = std::time::Instant::now();
        let outcome = self.call(&request.name, arguments).await;
        tracing::debug!(tool = %request.name, elapsed_us = started.elapsed().as_micros() as u64, ok = outcome.is_ok(), "tool call");
        let result = match outcome {
            Ok(done) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(done.text)]);
                result.structured_content = Some(done.structured);
                result
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(result.into())
    }
}
