//! A minimal MCP client over the stdio of a `termpilot serve` child process:
//! one JSON-RPC message per line each way, requests answered in order.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// How long any one answer may take before the benchmark gives up, so a hung
/// server fails the run instead of stalling it.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The protocol revision the benchmark speaks.
const PROTOCOL_VERSION: &str = "2025-06-18";

pub struct McpClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// Reused for every line read, so the timed loop does not allocate a fresh buffer.
    line: String,
}

impl McpClient {
    /// Starts `termpilot serve -L socket --tmux-config tmux_conf`; its
    /// stderr (warnings only) goes to ours.
    pub fn spawn(binary: &Path, socket: &str, tmux_conf: &Path) -> anyhow::Result<McpClient> {
        McpClient::spawn_with(binary, socket, tmux_conf, &[])
    }

    /// [`McpClient::spawn`] with `extra` arguments after those of `serve`
    /// (`--host NAME=ssh:DEST`).
    pub fn spawn_with(
        binary: &Path,
        socket: &str,
        tmux_conf: &Path,
        extra: &[&OsStr],
    ) -> anyhow::Result<McpClient> {
        let mut child = tokio::process::Command::new(binary)
            .args(["serve", "-L", socket, "--tmux-config"])
            .arg(tmux_conf)
            .args(extra)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let stdin = child.stdin.take().context("stdin is piped")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout is piped")?);
        Ok(McpClient {
            child,
            stdin,
            stdout,
            next_id: 0,
            line: String::new(),
        })
    }

    /// The handshake: `initialize`, then `notifications/initialized`.
    pub async fn initialize(&mut self) -> anyhow::Result<()> {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": { "name": "termpilot-latency-bench", "version": "0" },
        });
        let result = self.request("initialize", params).await?;
        ensure!(
            result.get("serverInfo").is_some(),
            "initialize without serverInfo: {result}"
        );
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await
    }

    /// Calls a tool, failing when the tool reports an error.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        self.call_tool_within(name, arguments, ANSWER_TIMEOUT).await
    }

    /// [`McpClient::call_tool`] for a tool that may take longer than the
    /// usual answer timeout (a wait), giving up after `timeout`.
    pub async fn call_tool_within(
        &mut self,
        name: &str,
        arguments: Value,
        timeout: Duration,
    ) -> anyhow::Result<Value> {
        let params = json!({ "name": name, "arguments": arguments });
        let result = self.request_within("tools/call", params, timeout).await?;
        if result.get("isError") == Some(&Value::Bool(true)) {
            bail!("tool {name} failed: {result}");
        }
        Ok(result)
    }

    /// Sends a request without waiting for its answer, which later reads
    /// skip; returns its id.
    pub async fn start_request(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send(&message).await?;
        Ok(id)
    }

    /// Sends a request and returns the `result` of its answer.
    pub async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.request_within(method, params, ANSWER_TIMEOUT).await
    }

    async fn request_within(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send(&message).await?;
        tokio::time::timeout(timeout, self.answer(id))
            .await
            .with_context(|| format!("no answer to {method} within {timeout:?}"))?
    }

    async fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.stdin.write_all(&line).await?;
        Ok(())
    }

    /// Reads messages until the answer to `id`, skipping the server's own
    /// notifications and requests.
    async fn answer(&mut self, id: u64) -> anyhow::Result<Value> {
        loop {
            self.line.clear();
            let read = self.stdout.read_line(&mut self.line).await?;
            ensure!(read > 0, "termpilot closed its stdout");
            let mut message: Value = serde_json::from_str(&self.line)
                .with_context(|| format!("not JSON: {}", self.line.trim_end()))?;
            if message.get("id").and_then(Value::as_u64) != Some(id)
                || message.get("method").is_some()
            {
                continue;
            }
            if let Some(error) = message.get("error") {
                bail!("request {id} failed: {error}");
            }
            return Ok(message["result"].take());
        }
    }

    /// Closes stdin, which ends the server, and waits for it to exit.
    pub async fn close(self) -> anyhow::Result<()> {
        let McpClient {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
            Ok(status) => {
                status?;
                Ok(())
            }
            Err(_) => {
                child.kill().await?;
                bail!("termpilot did not exit after stdin closed")
            }
        }
    }
}
