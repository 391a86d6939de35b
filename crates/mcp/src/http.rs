//! Serving MCP over streamable HTTP.
//!
//! Meant for one machine: the listening address is the caller's choice
//! (loopback by default in the `termpilot` command), every request must
//! carry the bearer token, and the `Host` and `Origin` headers are checked so
//! that a web page the user visits cannot reach the server through the
//! browser (DNS rebinding, cross-site requests). Requests without an
//! `Origin` header (MCP clients, not browsers) need only the token; a
//! request naming `Host` or `Origin` twice is refused.
//!
//! Both protocol generations are served on the same path: clients that start
//! with `initialize` get an HTTP session (`Mcp-Session-Id`, 2025-11-25 and
//! before), and requests carrying `MCP-Protocol-Version: 2026-07-28` stand
//! alone, without a session (their answer is plain JSON when no progress
//! notification comes first).
//!
//! Resources are bounded ([`HttpLimits`]): connections, HTTP sessions (a new
//! one over the cap is refused with 503, never evicting another), the time
//! to send a request's headers, and the idle time after which a session is
//! closed. Every request body is checked as in [`crate::jsonrpc`], and a
//! request id still in flight in its session is refused.
//!
//! A session's SSE streams can be resumed: every event has an id, a call's
//! stream starts with a priming event (an id and `retry`), and a client
//! whose stream was cut reconnects with GET and `Last-Event-ID` to get the
//! events it missed, the call's answer included, even after the call ended
//! ([`events`]).

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN, RETRY_AFTER, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use crate::TermpilotServer;
use crate::jsonrpc::{self, Refusal};

mod events;
mod sessions;

use sessions::Sessions;

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

/// Host names always accepted in the `Host` header.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Browser origins always accepted in the `Origin` header (any port).
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// The largest request body accepted, in bytes.
const MAX_BODY_BYTES: usize = crate::stdio::MAX_MESSAGE_BYTES;

/// The header naming a request's HTTP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// How the HTTP transport is reached and guarded.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The bearer token every request must carry (`Authorization: Bearer
    /// TOKEN`).
    pub token: String,
    /// Host names accepted in the `Host` header besides the loopback ones
    /// (needed when listening on another address).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides the loopback ones, such as
    /// `https://app.example.com:443`; `:*` matches any port.
    pub allowed_origins: Vec<String>,
    /// Caps and timeouts.
    pub limits: HttpLimits,
}

/// The resources HTTP clients may hold.
#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// The most HTTP sessions open at once; an `initialize` over the cap gets
    /// 503 Service Unavailable with a JSON-RPC error.
    pub max_sessions: usize,
    /// The most connections open at once; one over the cap gets 503 and is
    /// closed.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers (also the
    /// longest an idle keep-alive connection stays open).
    pub header_timeout: Duration,
    /// A session with no traffic for this long is closed.
    pub session_idle: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_sessions: 64,
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            session_idle: Duration::from_secs(300),
        }
    }
}

/// Serves MCP on `listener` at [`MCP_PATH`] until `shutdown` is cancelled.
/// Each HTTP session gets its own MCP session over the same engine.
pub async fn serve_http(
    server: TermpilotServer,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let limits = options.limits.clone();
    let gate = Arc::new(Gate::new(server, options, &shutdown));
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors and the like: not fatal to the server.
                    tracing::warn!(%error, "cannot accept an HTTP connection");
                    continue;
                }
            },
            () = shutdown.cancelled() => return Ok(()),
        };
        // Small answers go out at once instead of waiting for an ACK of the
        // previous segment (Nagle's algorithm): 40 ms saved per call.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%peer, %error, "cannot set TCP_NODELAY");
        }
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tracing::debug!(%peer, max = limits.max_connections, "too many HTTP connections");
            tokio::spawn(turn_away(stream));
            continue;
        };
        let gate = gate.clone();
        let service = hyper::service::service_fn(move |request| gate.clone().handle(request));
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                served = connection => if let Err(error) = served {
                    tracing::debug!(%peer, %error, "HTTP connection ended");
                },
                () = shutdown.cancelled() => {}
            }
            drop(permit);
        });
    }
}

/// Answers a connection over the cap with 503 and closes it.
async fn turn_away(mut stream: tokio::net::TcpStream) {
    let body = "termpilot: too many HTTP connections; retry later\n";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let written = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    });
    let _ = written.await;
}

type Mcp = StreamableHttpService<TermpilotServer, Sessions>;

/// Ids of requests in flight, by session: (session id, request id as JSON).
type InFlight = Arc<Mutex<HashSet<(String, String)>>>;

/// Everything a request passes through before rmcp answers it.
struct Gate {
    mcp: Mcp,
    sessions: Arc<Sessions>,
    token: Box<str>,
    max_sessions: usize,
    /// Held while a session is created, so the cap holds under concurrency.
    creating: tokio::sync::Mutex<()>,
    in_flight: InFlight,
}

impl Gate {
    fn new(server: TermpilotServer, options: HttpOptions, shutdown: &CancellationToken) -> Gate {
        let hosts = LOOPBACK_HOSTS
            .into_iter()
            .map(String::from)
            .chain(options.allowed_hosts);
        let origins = LOOPBACK_ORIGINS
            .into_iter()
            .map(String::from)
            .chain(options.allowed_origins);
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            // Stateless (2026-07-28) answers as one JSON body when they can.
            .with_json_response(true)
            .with_cancellation_token(shutdown.child_token());
        let idle = options.limits.session_idle;
        let events = Arc::new(events::Events::new(idle));
        let mut sessions = LocalSessionManager::default().with_event_store(events);
        sessions.session_config.keep_alive = Some(idle);
        let sessions = Arc::new(Sessions(sessions));
        Gate {
            mcp: StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config),
            sessions,
            token: options.token.into(),
            max_sessions: options.limits.max_sessions,
            creating: tokio::sync::Mutex::new(()),
            in_flight: Arc::default(),
        }
    }

    /// One request: refused without the token, else checked and answered by
    /// MCP.
    async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
    ) -> Result<Response<BoxBody>, Infallible> {
        if let Some(refusal) = refuse(&request, &self.token) {
            return Ok(refusal);
        }
        if request.method() != Method::POST {
            let deleting = request.method() == Method::DELETE;
            let mut response = self.mcp.clone().call(request).await?;
            // The session is closed by the time rmcp answers a DELETE with
            // 202 Accepted; clients expect 200 or 204 for that.
            if deleting && response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return Ok(response);
        }
        let (parts, body) = request.into_parts();
        let body = match Limited::new(body, MAX_BODY_BYTES).collect().await {
            Ok(body) => body.to_bytes(),
            Err(error) => {
                let too_large = error.is::<http_body_util::LengthLimitError>();
                let (status, text) = if too_large {
                    (
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!("a request body may be at most {MAX_BODY_BYTES} bytes\n"),
                    )
                } else {
                    (
                        StatusCode::BAD_REQUEST,
                        format!("cannot read the request body: {error}\n"),
                    )
                };
                return Ok(plain(status, text));
            }
        };
        let message = match jsonrpc::check(&body) {
            Ok(message) => message,
            Err(refusal) => return Ok(json_error(StatusCode::BAD_REQUEST, &refusal)),
        };
        // rmcp reads the body again: it gets the message as checked.
        let body = crate::tasks::renamed(&message).unwrap_or(body);
        let session = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let request = Request::from_parts(parts, Full::new(body));
        let Some(session) = session else {
            if is_initialize(&message) {
                return Ok(self.open_session(request, &message).await);
            }
            // A stateless request (2026-07-28) stands alone.
            return self.mcp.clone().call(request).await;
        };
        if let Some(id) = jsonrpc::cancelled_id(&message) {
            // A cancelled request may get no answer: its id is free again.
            lock(&self.in_flight).remove(&(session.clone(), id.to_string()));
        }
        let Some(id) = jsonrpc::request_id(&message) else {
            return self.mcp.clone().call(request).await;
        };
        let key = (session, id.to_string());
        if !lock(&self.in_flight).insert(key.clone()) {
            return Ok(json_error(StatusCode::BAD_REQUEST, &jsonrpc::duplicate(id)));
        }
        let response = self.mcp.clone().call(request).await?;
        // The id stays taken until the answer has been sent (or the client
        // has gone): the body holds the key and frees it when dropped.
        let release = Release {
            in_flight: self.in_flight.clone(),
            key,
        };
        Ok(response.map(|body| {
            body.map_frame(move |frame| {
                let _held = &release;
                frame
            })
            .boxed()
        }))
    }

    /// An `initialize` without a session: a new session, unless the cap is
    /// reached.
    async fn open_session(
        &self,
        request: Request<Full<Bytes>>,
        message: &ClientJsonRpcMessage,
    ) -> Response<BoxBody> {
        let _creating = self.creating.lock().await;
        let open = self.sessions.0.sessions.read().await.len();
        if open >= self.max_sessions {
            tracing::debug!(open, max = self.max_sessions, "HTTP session cap reached");
            let refusal = Refusal {
                id: jsonrpc::request_id(message).unwrap_or(Value::Null),
                code: SERVER_BUSY,
                message: format!(
                    "too many HTTP sessions ({open}, the most this server keeps; \
                     --http-max-sessions): end one with DELETE, or wait for an idle one to \
                     expire; requests with MCP-Protocol-Version 2026-07-28 need no session"
                ),
            };
            let mut response = json_error(StatusCode::SERVICE_UNAVAILABLE, &refusal);
            response
                .headers_mut()
                .insert(RETRY_AFTER, "5".parse().expect("a valid header"));
            return response;
        }
        match self.mcp.clone().call(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}

/// The JSON-RPC error code of a refusal for lack of room (implementation
/// defined, in the server error range).
const SERVER_BUSY: i32 = -32000;

/// Frees a request id when the response carrying its answer is dropped.
struct Release {
    in_flight: InFlight,
    key: (String, String),
}

impl Drop for Release {
    fn drop(&mut self) {
        lock(&self.in_flight).remove(&self.key);
    }
}

fn lock(in_flight: &InFlight) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
    in_flight.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(request)
        if matches!(request.request, ClientRequest::InitializeRequest(_)))
}

/// Binds `address` for [`serve_http`], saying which address failed.
pub async fn bind(address: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(address).await.map_err(|error| {
        std::io::Error::new(error.kind(), format!("cannot listen on {address}: {error}"))
    })
}

/// The answer to a request that may not reach MCP: a wrong path, or a
/// missing or wrong token.
fn refuse<B>(request: &Request<B>, token: &str) -> Option<Response<BoxBody>> {
    if request.uri().path() != MCP_PATH {
        return Some(plain(
            StatusCode::NOT_FOUND,
            format!("termpilot serves MCP at {MCP_PATH}\n"),
        ));
    }
    // Which of two values would be checked depends on the reader: refuse both.
    for name in [HOST, ORIGIN] {
        if request.headers().get_all(&name).iter().nth(1).is_some() {
            return Some(plain(
                StatusCode::BAD_REQUEST,
                format!("the {name} header may appear only once\n"),
            ));
        }
    }
    let presented = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match presented {
        Some(presented) if same_secret(presented.trim().as_bytes(), token.as_bytes()) => None,
        _ => {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "a bearer token is required: Authorization: Bearer TOKEN (see termpilot serve \
                 --help)\n"
                    .into(),
            );
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, "Bearer".parse().expect("a valid header"));
            Some(response)
        }
    }
}

type BoxBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// A JSON-RPC error as an HTTP answer.
fn json_error(status: StatusCode, refusal: &Refusal) -> Response<BoxBody> {
    let mut response = Response::new(Full::new(Bytes::from(refusal.to_json())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        "application/json".parse().expect("a valid header"),
    );
    response
}

fn plain(status: StatusCode, text: String) -> Response<BoxBody> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        "text/plain; charset=utf-8".parse().expect("a valid header"),
    );
    response
}

/// Compares secrets in time that depends only on their lengths.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_host_or_origin_header_is_refused() {
        for (name, first, second) in [
            (HOST, "127.0.0.1", "evil.example"),
            (HOST, "127.0.0.1", "127.0.0.1"),
            (ORIGIN, "http://localhost:1", "https://evil.example"),
        ] {
            let request = Request::builder()
                .uri("/mcp")
                .header(AUTHORIZATION, "Bearer t")
                .header(&name, first)
                .header(&name, second)
                .body(())
                .unwrap();
            let status = refuse(&request, "t").map(|r| r.status());
            assert_eq!(
                status,
                Some(StatusCode::BAD_REQUEST),
                "{name}: {first}, {second}"
            );
        }
        let once = Request::builder()
            .uri("/mcp")
            .header(AUTHORIZATION, "Bearer t")
            .header(HOST, "127.0.0.1")
            .body(())
            .unwrap();
        assert!(refuse(&once, "t").is_none());
    }

    fn request(path: &str, authorization: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().uri(path);
        if let Some(value) = authorization {
            builder = builder.header(AUTHORIZATION, value);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn only_the_token_on_the_mcp_path_gets_through() {
        let token = "s3cret";
        assert!(refuse(&request("/mcp", Some("Bearer s3cret")), token).is_none());
        let status = |r: Request<()>| refuse(&r, token).map(|r| r.status());
        assert_eq!(
            status(request("/mcp", None)),
            Some(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            status(request("/mcp", Some("Bearer s3cre"))),
            Some(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            status(request("/mcp", Some("Basic s3cret"))),
            Some(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            status(request("/other", Some("Bearer s3cret"))),
            Some(StatusCode::NOT_FOUND)
        );
    }

    #[test]
    fn compares_secrets_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        assert!(!same_secret(b"", b"a"));
    }
}
