//! The MCP surface of termpilot: tool definitions, argument validation and
//! dispatch to the tmux engine.
//!
//! Layout:
//! - [`toolset`]: groups of tools an operator enables.
//! - `catalog`: what a tool is (name, description, annotations, argument and
//!   result types, handler) and the table of every tool.
//! - `tools`: the tools, one module per family (sessions, lifecycle, input,
//!   capture, picture, waits, channels, commands, batch, run_batch,
//!   secrets); each tool declared once, its types' doc comments becoming
//!   its published schemas.
//!   A tool parses its arguments into the engine's types and shows the
//!   engine's typed results; it reads no tmux text.
//!   A tool that also works as a `run_batch` step implements
//!   `tools::batch_step::StepTool` in its module, and `run_batch` lists it
//!   on one line (`step_tools!`); arguments shared by several tools (the
//!   pane, the host, timeouts, budgets) are declared once
//!   (`tools::params::tool_params!`, `pane_params!`).
//! - `address`: the one place where targets and cursors are read from
//!   arguments, and cursors written into results.
//! - `error`: why a call failed (`ToolError`), the engine's errors included.
//! - `budget`: every text a tool returns cut to the caller's token budget,
//!   the full text kept for `read_output`.
//! - `awaiting`: how a program waiting for input shows in wait and command
//!   results.
//! - `schema`: those schemas in the portable subset of JSON Schema.
//! - `validate`: arguments checked against the published schemas.
//! - [`server`]: the server's settings and state, running one published
//!   tool, the rmcp `ServerHandler` (`server::handler`), and what a call
//!   carries from its request (`CallContext`: the client, cancellation,
//!   progress notifications while its work runs).
//! - `progress`: the progress values of one request (one total, values
//!   that only increase, a batch step's progress kept inside its step).
//! - `jsonrpc`: every incoming message checked, malformed ones answered.
//! - `stdio`: serving over stdin/stdout, one message per line.
//! - [`http`]: serving over streamable HTTP, with a bearer token and limits.
//! - [`oversight`]: a person in the loop: scope ([`scope`]), approvals
//!   through elicitation (`approval`) and the audit log (`audit`).
//! - `caller`: who a call comes from (stdio, an HTTP session, a stateless
//!   token), so that kept outputs and questions serve only that caller.
//! - `questions`: what the person was asked through an input-required
//!   result (protocol 2026-07-28), kept until the call that answers it.
//! - [`secrets`]: the secrets the person configures (`--secret`), typed by
//!   `type_secret` and redacted from every result.
//! - `secret_page`: the loopback page where the person types a secret the
//!   agent asked for by a name that is not configured (URL elicitation):
//!   the pages, their listener, request checks, the form and its HTML.
//! - `random`: unguessable tokens from the kernel, for secret pages and
//!   questions.
//! - `resources`: panes as MCP resources (screen, picture, recording),
//!   read as `capture_pane` reads them, and subscriptions to their output.
//! - `recorder`: every pane's recording written while the server runs
//!   (`serve --record DIR`); `notes`: what each call did to a pane, marked
//!   in its recording.
//! - `tasks`: long calls (commands, waits, batches) run as MCP tasks
//!   (`io.modelcontextprotocol/tasks`, and the `tasks` of protocol
//!   2025-11-25) for clients that ask for them.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use termpilot_mcp::{ServerOptions, TermpilotServer};
//! use termpilot_tmux::{Engine, EngineConfig};
//! let engine = Engine::connect(EngineConfig::default()).await?;
//! let server = TermpilotServer::new(engine, ServerOptions::default())?;
//! termpilot_mcp::serve_stdio(server).await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod address;
mod approval;
mod audit;
mod awaiting;
mod budget;
mod caller;
mod catalog;
mod error;
pub mod http;
mod jsonrpc;
mod notes;
pub mod oversight;
mod progress;
mod questions;
mod random;
mod recorder;
mod resources;
mod schema;
pub mod scope;
mod secret_page;
pub mod secrets;
pub mod server;
mod stdio;
mod tasks;
mod tools;
pub mod toolset;
mod validate;

pub use approval::Confirm;
pub use audit::{AuditError, AuditFlusher, AuditLog};
pub use oversight::Oversight;
pub use recorder::RecordOptions;
pub use scope::Scope;
pub use server::{ServerOptions, TermpilotServer};
pub use tasks::{DEFAULT_MAX_TASKS, TOOLS as TASK_TOOLS};

/// The server's instructions, sent once in `initialize`: the rules every tool
/// shares (targets, cursors, budgets, timeouts).
pub const INSTRUCTIONS: &str = catalog::INSTRUCTIONS;
pub use toolset::{Toolset, Toolsets, UnknownToolset};

/// Serves MCP over stdin/stdout until the client closes the connection.
///
/// Both protocol generations are served: a client that starts with
/// `initialize` (2025-11-25 and before), and one that sends each request
/// with its protocol version in `_meta` (2026-07-28, no `initialize`).
pub async fn serve_stdio(server: TermpilotServer) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt;
    let (transport, writing) = stdio::LineTransport::new(tokio::io::stdin(), tokio::io::stdout());
    let running = server
        .serve(transport)
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    // The last replies are written before returning.
    let _ = writing.await;
    Ok(())
}
