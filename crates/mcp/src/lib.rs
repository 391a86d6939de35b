//! The MCP surface of termpilot: tool definitions, argument validation and
//! dispatch to the tmux engine.
//!
//! Layout:
//! - [`toolset`]: groups of tools an operator enables.
//! - `catalog`: every tool's name, description, annotations and schemas.
//! - [`params`] and [`results`]: argument and result types (their doc
//!   comments become the published schemas).
//! - `validate`: arguments checked against the published schemas.
//! - `handlers`: one function per tool.
//! - [`server`]: the rmcp `ServerHandler`.
//! - `jsonrpc`: every incoming message checked, malformed ones answered.
//! - `stdio`: serving over stdin/stdout, one message per line.
//! - [`http`]: serving over streamable HTTP, with a bearer token and limits.
//! - [`oversight`]: a person in the loop: scope ([`scope`]), approvals
//!   through elicitation (`approval`) and the audit log (`audit`).
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

mod approval;
mod audit;
mod awaiting;
mod batches;
mod budget;
mod catalog;
mod handlers;
pub mod http;
mod jsonrpc;
pub mod oversight;
pub mod params;
mod progress;
pub mod results;
pub mod scope;
pub mod secrets;
pub mod server;
mod stdio;
pub mod toolset;
mod validate;
mod waits;

pub use approval::Confirm;
pub use audit::{AuditError, AuditLog};
pub use oversight::Oversight;
pub use scope::Scope;
pub use server::{ServerOptions, TermpilotServer};

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
