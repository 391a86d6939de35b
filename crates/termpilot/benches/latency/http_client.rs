//! A minimal MCP client for `termpilot serve --http`: HTTP/1.1 on one
//! keep-alive connection, each request written at once, each answer read
//! whole (by length or chunks) before the next request.
//!
//! Two ways to talk: a session (`initialize`, then `Mcp-Session-Id` on every
//! request, answers as event streams) or stateless 2026-07-28 requests
//! (version, method and name in headers and `_meta`, answers as JSON).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Child;

/// How long any one answer may take before the benchmark gives up.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The bearer token the benchmark gives the server.
const TOKEN: &str = "termpilot-latency-bench";

/// How requests are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// `initialize` first (2025-06-18), then the session's id on each request.
    Session,
    /// Every request stands alone (2026-07-28).
    Stateless,
}

pub struct HttpClient {
    child: Child,
    connection: BufReader<TcpStream>,
    host: String,
    mode: Mode,
    session: Option<String>,
    next_id: u64,
}

impl HttpClient {
    /// Starts `termpilot serve --http 127.0.0.1:0` and connects to the
    /// address it announces on stderr.
    pub async fn spawn(
        binary: &Path,
        socket: &str,
        tmux_conf: &Path,
        mode: Mode,
    ) -> anyhow::Result<HttpClient> {
        let mut child = tokio::process::Command::new(binary)
            .args([
                "serve",
                "-L",
                socket,
                "--http",
                "127.0.0.1:0",
                "--tmux-config",
            ])
            .arg(tmux_conf)
            .env("TERMPILOT_HTTP_TOKEN", TOKEN)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let mut stderr = BufReader::new(child.stderr.take().context("stderr is piped")?).lines();
        let announced = tokio::time::timeout(ANSWER_TIMEOUT, async {
            while let Some(line) = stderr.next_line().await? {
                if let Some(url) = line.split("serving MCP at http://").nth(1) {
                    return Ok(url.trim_end_matches("/mcp").to_owned());
                }
            }
            bail!("termpilot serve --http ended without announcing its address")
        });
        let host = announced.await.context("no address announced in time")??;
        // The rest of stderr (warnings only) is passed on.
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                eprintln!("{line}");
            }
        });
        let stream = TcpStream::connect(&host).await?;
        stream.set_nodelay(true)?;
        Ok(HttpClient {
            child,
            connection: BufReader::new(stream),
            host,
            mode,
            session: None,
            next_id: 0,
        })
    }

    /// The session's handshake (a stateless client has none).
    pub async fn initialize(&mut self) -> anyhow::Result<()> {
        if self.mode == Mode::Stateless {
            return Ok(());
        }
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "termpilot-latency-bench", "version": "0" },
        });
        let result = self.request("initialize", params).await?;
        ensure!(
            result.get("serverInfo").is_some(),
            "initialize without serverInfo: {result}"
        );
        let notification = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let (status, _) = self
            .exchange(&notification, "notifications/initialized", None)
            .await?;
        ensure!(status == 202, "notifications/initialized answered {status}");
        Ok(())
    }

    /// Calls a tool, failing when the tool reports an error.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        let params = json!({ "name": name, "arguments": arguments });
        let result = self.request_named("tools/call", params, Some(name)).await?;
        if result.get("isError") == Some(&Value::Bool(true)) {
            bail!("tool {name} failed: {result}");
        }
        Ok(result)
    }

    /// Sends a request and returns the `result` of its answer.
    pub async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.request_named(method, params, None).await
    }

    async fn request_named(
        &mut self,
        method: &str,
        mut params: Value,
        name: Option<&str>,
    ) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        if self.mode == Mode::Stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let (status, body) =
            tokio::time::timeout(ANSWER_TIMEOUT, self.exchange(&message, method, name))
                .await
                .with_context(|| format!("no answer to {method} within {ANSWER_TIMEOUT:?}"))??;
        ensure!(
            status == 200,
            "{method} answered HTTP {status}: {}",
            String::from_utf8_lossy(&body)
        );
        let mut answer = answer_in(&body, id)?;
        if let Some(error) = answer.get("error") {
            bail!("request {id} failed: {error}");
        }
        Ok(answer["result"].take())
    }

    /// Writes one request and reads its whole response: status and body.
    async fn exchange(
        &mut self,
        message: &Value,
        method: &str,
        name: Option<&str>,
    ) -> anyhow::Result<(u16, Vec<u8>)> {
        let body = serde_json::to_vec(message)?;
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n",
            self.host,
            body.len()
        );
        match self.mode {
            Mode::Session => {
                if let Some(session) = &self.session {
                    head.push_str(&format!(
                        "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
                    ));
                }
            }
            Mode::Stateless => {
                head.push_str(&format!(
                    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
                ));
                if let Some(name) = name {
                    head.push_str(&format!("Mcp-Name: {name}\r\n"));
                }
            }
        }
        head.push_str("\r\n");
        let mut request = head.into_bytes();
        request.extend_from_slice(&body);
        self.connection.get_mut().write_all(&request).await?;
        self.read_response().await
    }

    async fn read_response(&mut self) -> anyhow::Result<(u16, Vec<u8>)> {
        let mut line = String::new();
        self.connection.read_line(&mut line).await?;
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .with_context(|| format!("not an HTTP status line: {line:?}"))?;
        let (mut length, mut chunked) = (0usize, false);
        loop {
            line.clear();
            ensure!(
                self.connection.read_line(&mut line).await? > 0,
                "the connection closed"
            );
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else {
                bail!("not a header: {header:?}");
            };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse()?,
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => self.session = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if !chunked {
            body.resize(length, 0);
            self.connection.read_exact(&mut body).await?;
            return Ok((status, body));
        }
        loop {
            line.clear();
            self.connection.read_line(&mut line).await?;
            let size = usize::from_str_radix(line.trim_end().split(';').next().unwrap_or(""), 16)
                .with_context(|| format!("not a chunk size: {line:?}"))?;
            let start = body.len();
            body.resize(start + size, 0);
            self.connection.read_exact(&mut body[start..]).await?;
            line.clear();
            self.connection.read_line(&mut line).await?;
            if size == 0 {
                return Ok((status, body));
            }
        }
    }

    /// Ends the session (if any) and the server.
    pub async fn close(mut self) -> anyhow::Result<()> {
        self.child.kill().await?;
        Ok(())
    }
}

/// The message answering `id` in a JSON body or an event stream.
fn answer_in(body: &[u8], id: u64) -> anyhow::Result<Value> {
    let text = std::str::from_utf8(body)?;
    let candidates: Vec<&str> = if text.trim_start().starts_with('{') {
        vec![text]
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .collect()
    };
    for candidate in candidates {
        let message: Value = serde_json::from_str(candidate)?;
        if message.get("id").and_then(Value::as_u64) == Some(id) {
            return Ok(message);
        }
    }
    bail!("no answer to request {id} in {text:?}")
}
