//! Serving MCP over streamable HTTP.
//!
//! Meant for one machine: the listening address is the caller's choice
//! (loopback by default in the `termpilot` command), every request must
//! carry the bearer token, and the `Host` and `Origin` headers are checked so
//! that a web page the user visits cannot reach the server through the
//! browser (DNS rebinding, cross-site requests). Requests without an
//! `Origin` header (MCP clients, not browsers) need only the token.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use crate::TermpilotServer;

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

/// Host names always accepted in the `Host` header.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Browser origins always accepted in the `Origin` header (any port).
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

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
}

/// Serves MCP on `listener` at [`MCP_PATH`] until `shutdown` is cancelled.
/// Each HTTP session gets its own MCP session over the same engine.
pub async fn serve_http(
    server: TermpilotServer,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let mcp = mcp_service(
        server,
        options.allowed_hosts,
        options.allowed_origins,
        &shutdown,
    );
    let token: Arc<str> = options.token.into();
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
        let (mcp, token) = (mcp.clone(), token.clone());
        let service =
            hyper::service::service_fn(move |request| guarded(mcp.clone(), token.clone(), request));
        let connection = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(stream), service);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                served = connection => if let Err(error) = served {
                    tracing::debug!(%peer, %error, "HTTP connection ended");
                },
                () = shutdown.cancelled() => {}
            }
        });
    }
}

type Mcp = StreamableHttpService<TermpilotServer, LocalSessionManager>;

/// rmcp's streamable HTTP service over clones of `server`, with the `Host`
/// and `Origin` checks.
fn mcp_service(
    server: TermpilotServer,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    shutdown: &CancellationToken,
) -> Mcp {
    let hosts = LOOPBACK_HOSTS
        .into_iter()
        .map(String::from)
        .chain(allowed_hosts);
    let origins = LOOPBACK_ORIGINS
        .into_iter()
        .map(String::from)
        .chain(allowed_origins);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_cancellation_token(shutdown.child_token());
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// One request: refused without the token, else answered by MCP.
async fn guarded(
    mut mcp: Mcp,
    token: Arc<str>,
    request: Request<Incoming>,
) -> Result<Response<BoxBody>, Infallible> {
    if let Some(refusal) = refuse(&request, &token) {
        return Ok(refusal);
    }
    let deleting = request.method() == Method::DELETE;
    let mut response = mcp.call(request).await?;
    // The session is closed by the time rmcp answers a DELETE with 202
    // Accepted; clients expect 200 or 204 for that.
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    Ok(response)
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
