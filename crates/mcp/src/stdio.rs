//! MCP over stdin/stdout: one JSON-RPC message per line.
//!
//! termpilot reads the lines itself rather than through rmcp's stdio
//! transport, which drops a line it cannot decode without a reply. Each line
//! goes through [`jsonrpc::check`]: malformed ones are answered here (parse
//! error, invalid request, invalid params), good ones go on to rmcp. A
//! request whose id is still in flight is refused too, since its answer
//! could not be told from the first one's.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::jsonrpc::{self, Refusal};

/// The longest message accepted, in bytes (as over HTTP).
pub(crate) const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Ids of requests in flight, as JSON text.
type InFlight = Arc<Mutex<HashSet<String>>>;

/// A line-delimited JSON-RPC transport over a reader and a writer.
pub(crate) struct LineTransport<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Unbounded, so that [`Transport::send`] queues a message at once, in
    /// the order rmcp calls it: rmcp runs the returned futures concurrently,
    /// and a progress notification must not overtake the response after it.
    out: mpsc::UnboundedSender<Vec<u8>>,
    in_flight: InFlight,
}

/// One line read, or the news that it was too long to keep.
enum Line {
    Message,
    TooLong,
}

impl<R: AsyncRead + Unpin + Send + 'static> LineTransport<R> {
    /// The transport, and the task writing its output: await the task after
    /// the service ends so that the last replies are flushed.
    pub(crate) fn new<W: AsyncWrite + Unpin + Send + 'static>(
        reader: R,
        mut writer: W,
    ) -> (Self, JoinHandle<()>) {
        let (out, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
        let writing = tokio::spawn(async move {
            while let Some(line) = lines.recv().await {
                // One write per message: the line and its newline together.
                let written = async {
                    writer.write_all(&line).await?;
                    writer.flush().await
                };
                if let Err(error) = written.await {
                    tracing::debug!(%error, "cannot write to the client");
                    return;
                }
            }
        });
        let transport = LineTransport {
            reader: BufReader::new(reader),
            line: Vec::new(),
            out,
            in_flight: Arc::default(),
        };
        (transport, writing)
    }

    /// Reads the next line into `self.line`; `None` at the end of input.
    async fn read_line(&mut self) -> std::io::Result<Option<Line>> {
        self.line.clear();
        let mut too_long = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                // The end of input; a last line without a newline still counts.
                return Ok(match (too_long, self.line.is_empty()) {
                    (true, _) => Some(Line::TooLong),
                    (false, true) => None,
                    (false, false) => Some(Line::Message),
                });
            }
            let (taken, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(end) => (end, true),
                None => (available.len(), false),
            };
            if !too_long {
                self.line.extend_from_slice(&available[..taken]);
                if self.line.len() > MAX_MESSAGE_BYTES {
                    too_long = true;
                    self.line = Vec::new();
                }
            }
            self.reader.consume(taken + usize::from(complete));
            if complete {
                return Ok(Some(if too_long {
                    Line::TooLong
                } else {
                    Line::Message
                }));
            }
        }
    }
}

/// Answers a refused message.
async fn reply(out: &mpsc::UnboundedSender<Vec<u8>>, refusal: Refusal) {
    tracing::debug!(code = refusal.code, message = %refusal.message, "message refused");
    let mut line = refusal.to_json();
    line.push(b'\n');
    // A closed writer means the client is gone; the read side ends soon.
    let _ = out.send(line);
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            ServerJsonRpcMessage::Response(response) => serde_json::to_value(&response.id).ok(),
            ServerJsonRpcMessage::Error(error) => error
                .id
                .as_ref()
                .and_then(|id| serde_json::to_value(id).ok()),
            _ => None,
        };
        if let Some(id) = answered {
            lock(&self.in_flight).remove(&id.to_string());
        }
        let item = crate::tasks::announce(item);
        let queued = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out.send(line).map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "output closed")
                })
            });
        std::future::ready(queued)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let line = match self.read_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(error) => {
                    tracing::warn!(%error, "cannot read from the client");
                    return None;
                }
            };
            if let Line::TooLong = line {
                reply(
                    &self.out,
                    Refusal {
                        id: Value::Null,
                        code: jsonrpc::INVALID_REQUEST,
                        message: format!(
                            "Invalid Request: a message may be at most {MAX_MESSAGE_BYTES} bytes"
                        ),
                    },
                )
                .await;
                continue;
            }
            let bytes = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message = match jsonrpc::check(bytes) {
                Ok(message) => message,
                Err(refusal) => {
                    reply(&self.out, refusal).await;
                    continue;
                }
            };
            if let Some(id) = jsonrpc::cancelled_id(&message) {
                // A cancelled request gets no answer: its id is free again.
                lock(&self.in_flight).remove(&id.to_string());
            }
            if let Some(id) = jsonrpc::request_id(&message) {
                let fresh = lock(&self.in_flight).insert(id.to_string());
                if !fresh {
                    reply(&self.out, jsonrpc::duplicate(id)).await;
                    continue;
                }
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn lock(in_flight: &InFlight) -> std::sync::MutexGuard<'_, HashSet<String>> {
    in_flight.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Feeds `input` to a transport and returns the messages passed on and
    /// the replies written.
    async fn run(input: &[u8]) -> (Vec<ClientJsonRpcMessage>, Vec<Value>) {
        let (mut client, server_out) = tokio::io::duplex(1 << 20);
        let (mut transport, writing) =
            LineTransport::new(std::io::Cursor::new(input.to_vec()), server_out);
        let mut passed = Vec::new();
        while let Some(message) = transport.receive().await {
            passed.push(message);
        }
        drop(transport);
        writing.await.unwrap();
        let mut written = String::new();
        client.read_to_string(&mut written).await.unwrap();
        let replies = written
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (passed, replies)
    }

    #[tokio::test]
    async fn malformed_lines_are_answered_and_good_ones_passed_on() {
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"jsonrpc\":\n");
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n");
        input.extend_from_slice("[".repeat(100_000).as_bytes());
        input.extend_from_slice(b"\n\n");
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n");
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
        input.extend_from_slice(
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":1}",
        );
        let (passed, replies) = run(&input).await;
        assert_eq!(passed.len(), 1, "{passed:?}");
        let codes: Vec<_> = replies
            .iter()
            .map(|r| (r["id"].clone(), r["error"]["code"].as_i64().unwrap()))
            .collect();
        assert_eq!(
            codes,
            [
                (Value::Null, -32700),
                (Value::Null, -32700),
                (Value::Null, -32700),
                (serde_json::json!(2), -32600),
                (serde_json::json!(3), -32600),
            ]
        );
    }

    #[tokio::test]
    async fn an_over_long_line_is_refused_and_the_next_one_read() {
        let mut input = vec![b'x'; MAX_MESSAGE_BYTES + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
        let (passed, replies) = run(&input).await;
        assert_eq!(passed.len(), 1);
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0]["error"]["code"], -32600);
    }
}
