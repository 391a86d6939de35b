//! The loopback listener: connections accepted a few at a time, each
//! request answered by the pages' decision, a submission read and handed on.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::html::{answer, notice, refusal};
use super::origin::{from_own_page, single};
use super::submission::{acceptable, form_field, wipe_bytes};
use super::{GONE, PersonSecret, SecretPages, Verdict, lock};

/// The largest submission accepted.
const MAX_BODY_BYTES: usize = 16 << 10;

/// Connections served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 16;

/// How long a browser may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

impl SecretPages {
    pub(super) async fn listen(self: Arc<Self>) -> std::io::Result<SocketAddr> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let address = listener.local_addr()?;
        tracing::debug!(%address, "secret pages listening");
        tokio::spawn(self.serve(listener, address.port()));
        Ok(address)
    }

    async fn serve(self: Arc<Self>, listener: TcpListener, port: u16) {
        let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        loop {
            let Ok(permit) = connections.clone().acquire_owned().await else {
                return;
            };
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::debug!(%error, "cannot accept a secret page connection");
                    continue;
                }
            };
            let pages = self.clone();
            let service =
                hyper::service::service_fn(move |request| pages.clone().handle(request, port));
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%error, "secret page connection ended");
                }
                drop(permit);
            });
        }
    }

    async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
        port: u16,
    ) -> Result<Response<Full<Bytes>>, Infallible> {
        let host = single(request.headers(), HOST);
        let verdict = lock(&self.pages).decide(
            request.method(),
            request.uri().path(),
            host,
            port,
            Instant::now(),
        );
        Ok(match verdict {
            Verdict::Show(html) => answer(StatusCode::OK, html),
            Verdict::Take(token) => self.take(token, request, port).await,
            Verdict::Refuse(status, why) => answer(status, notice("Not available", why)),
        })
    }

    /// A submission to an open page.
    async fn take(
        &self,
        token: String,
        request: Request<Incoming>,
        port: u16,
    ) -> Response<Full<Bytes>> {
        if !from_own_page(request.headers(), port) {
            return refusal(
                StatusCode::FORBIDDEN,
                "This page accepts only its own form.",
            );
        }
        let form = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        if !form {
            return refusal(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Send the form (application/x-www-form-urlencoded).",
            );
        }
        let body = match Limited::new(request.into_body(), MAX_BODY_BYTES)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(_) => return refusal(StatusCode::PAYLOAD_TOO_LARGE, "That is too long."),
        };
        let value = form_field(&body, "secret");
        wipe_bytes(body);
        let value = match value.map(PersonSecret) {
            Some(value) if acceptable(&value.0) => value,
            _ => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "The secret may not be empty or contain control characters such as a line \
                     break. Go back and type it again.",
                );
            }
        };
        match self.deliver(&token, value, Instant::now()) {
            Ok(()) => answer(
                StatusCode::OK,
                notice(
                    "Received",
                    "termpilot types it into the terminal and forgets it. You can close this page.",
                ),
            ),
            Err(()) => refusal(StatusCode::GONE, GONE),
        }
    }
}
