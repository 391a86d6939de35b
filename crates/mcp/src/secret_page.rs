//! Secret pages: where the person types a secret that termpilot then types
//! into a pane, so that it never passes through the MCP client or the model
//! (URL-mode elicitation).
//!
//! A page lives on a loopback listener (127.0.0.1, a port the kernel picks)
//! started on first use, at a path of 256 random bits. It is single use (the
//! first accepted submission closes it: later requests get 410 Gone) and
//! expires [`PAGE_TTL`] after it opens (410 Gone too). A path that never was
//! a page gets 404. The `Host` header must name the listener as
//! `127.0.0.1:PORT` or `localhost:PORT` (421 otherwise, 400 when missing or
//! repeated), which keeps out web pages reaching it through DNS rebinding. A
//! submission a browser made from another page is refused (403): browsers
//! say where a request comes from in `Sec-Fetch-Site`, which no page can set,
//! and the form's own post says `same-origin`. Its `Origin` is `null` (the
//! page's `Referrer-Policy: no-referrer` hides it), so `Origin: null` is
//! taken only with `Sec-Fetch-Site: same-origin` (another site's page with
//! the same policy sends `null` too, with `cross-site`); any other `Origin`
//! must be the listener's own. A request with neither header (not from a
//! browser) is taken as before: the page's path is its credential.
//!
//! `GET` shows a minimal form (one password field, no scripts, nothing
//! loaded from elsewhere, a strict Content-Security-Policy, nothing cached);
//! `POST` (`application/x-www-form-urlencoded`, field `secret`) hands the
//! value to the tool call waiting for it ([`Opened::receive`]). The value is
//! never logged; the buffers termpilot holds it in are overwritten when
//! dropped ([`PersonSecret`]).
//!
//! For tests only, the environment variable `TERMPILOT_TEST_SECRET_PAGE_TTL_MS`
//! shortens the expiry (it cannot lengthen it).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HOST, HeaderValue, ORIGIN};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{OnceCell, Semaphore, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long a page stays usable after it opens.
pub(crate) const PAGE_TTL: Duration = Duration::from_secs(300);

/// Shortens [`PAGE_TTL`], for tests.
const TTL_VARIABLE: &str = "TERMPILOT_TEST_SECRET_PAGE_TTL_MS";

/// Where pages live; the rest of the path is the page's token.
const PATH_PREFIX: &str = "/secret/";

/// Random bytes in a page's path (256 bits).
const TOKEN_BYTES: usize = 32;

/// The largest submission accepted.
const MAX_BODY_BYTES: usize = 16 << 10;

/// Connections served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 16;

/// How long a browser may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a closed page's path is remembered (answered 410, not 404).
const CLOSED_KEPT: Duration = Duration::from_secs(3600);

/// The policy of every answer: nothing may load, run or frame it, and the
/// form may post only back to where it came from.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// A secret the person typed. Its `Debug` never shows it, and its buffer is
/// overwritten when it is dropped.
pub(crate) struct PersonSecret(String);

impl PersonSecret {
    /// Takes the value out, for typing; the caller wipes it with [`wipe`].
    pub(crate) fn take(mut self) -> String {
        std::mem::take(&mut self.0)
    }
}

impl std::fmt::Debug for PersonSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[secret typed by the person]")
    }
}

impl Drop for PersonSecret {
    fn drop(&mut self) {
        wipe(std::mem::take(&mut self.0));
    }
}

/// Overwrites a string's bytes before freeing them.
pub(crate) fn wipe(text: String) {
    let mut bytes = text.into_bytes();
    bytes.fill(0);
    std::hint::black_box(&bytes);
}

/// What a page tells the person: which secret, and for which prompt.
#[derive(Debug, Clone)]
pub(crate) struct About {
    pub(crate) name: String,
    pub(crate) pane: String,
    pub(crate) program: String,
    pub(crate) prompt: String,
}

/// The pages, and the listener serving them once one has opened.
pub(crate) struct SecretPages {
    ttl: Duration,
    address: OnceCell<SocketAddr>,
    /// A std `Mutex`: held for map look-ups, never across an `.await`.
    pages: Mutex<Pages>,
}

impl std::fmt::Debug for SecretPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretPages")
            .field("address", &self.address.get())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Pages {
    open: HashMap<String, Page>,
    /// Tokens of pages used, expired or withdrawn, and when they closed.
    closed: HashMap<String, Instant>,
}

struct Page {
    about: About,
    expires: Instant,
    /// Where the submitted value goes; taken by the first submission.
    value: Option<oneshot::Sender<PersonSecret>>,
}

/// An open page, held by the call waiting for its value; dropping it closes
/// the page.
pub(crate) struct Opened {
    pages: Arc<SecretPages>,
    token: String,
    url: String,
    expires: Instant,
    value: oneshot::Receiver<PersonSecret>,
}

/// Why no value came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoValue {
    /// The page expired first.
    Expired,
    /// The client cancelled the call.
    Cancelled,
}

impl Opened {
    /// The page's address, for the person's browser.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// When the page stops working.
    pub(crate) fn expires(&self) -> Instant {
        self.expires
    }

    /// Waits for the person's submission, until the page expires or the call
    /// is cancelled.
    pub(crate) async fn receive(
        &mut self,
        cancelled: &CancellationToken,
    ) -> Result<PersonSecret, NoValue> {
        tokio::select! {
            value = &mut self.value => value.map_err(|_| NoValue::Expired),
            () = tokio::time::sleep_until(self.expires) => Err(NoValue::Expired),
            () = cancelled.cancelled() => Err(NoValue::Cancelled),
        }
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.pages.close(&self.token, Instant::now());
    }
}

impl SecretPages {
    /// No pages yet; the listener starts with the first.
    pub(crate) fn new() -> SecretPages {
        let shorter = std::env::var(TTL_VARIABLE)
            .ok()
            .and_then(|ms| ms.parse::<u64>().ok())
            .map(Duration::from_millis);
        SecretPages {
            ttl: shorter.map_or(PAGE_TTL, |ttl| ttl.min(PAGE_TTL)),
            address: OnceCell::new(),
            pages: Mutex::default(),
        }
    }

    /// Opens a page asking for the secret `about` describes, starting the
    /// listener if it is not running.
    pub(crate) async fn open(self: &Arc<Self>, about: About) -> Result<Opened, String> {
        let address = self
            .address
            .get_or_try_init(|| self.clone().listen())
            .await
            .map_err(|e| format!("cannot open a page for the person on 127.0.0.1: {e}"))?;
        let token = crate::random::hex_token(TOKEN_BYTES)
            .ok_or("cannot read /dev/urandom to make the page's address")?;
        let (sender, value) = oneshot::channel();
        let expires = Instant::now() + self.ttl;
        let page = Page {
            about,
            expires,
            value: Some(sender),
        };
        lock(&self.pages).open.insert(token.clone(), page);
        Ok(Opened {
            pages: self.clone(),
            url: format!("http://127.0.0.1:{}{PATH_PREFIX}{token}", address.port()),
            token,
            expires,
            value,
        })
    }

    fn close(&self, token: &str, now: Instant) {
        let mut pages = lock(&self.pages);
        pages.open.remove(token);
        pages.closed.insert(token.to_owned(), now);
        pages
            .closed
            .retain(|_, closed| now.saturating_duration_since(*closed) < CLOSED_KEPT);
    }

    async fn listen(self: Arc<Self>) -> std::io::Result<SocketAddr> {
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

    /// Hands a submitted value to the waiting call and closes the page;
    /// `Err` when the page closed or expired meanwhile.
    fn deliver(&self, token: &str, value: PersonSecret, now: Instant) -> Result<(), ()> {
        let sender = {
            let mut pages = lock(&self.pages);
            let page = pages.open.get_mut(token).filter(|p| now < p.expires);
            let sender = page.and_then(|p| p.value.take()).ok_or(())?;
            pages.open.remove(token);
            pages.closed.insert(token.to_owned(), now);
            sender
        };
        sender.send(value).map_err(drop)
    }
}

/// What a request to the page listener gets.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// The form, as HTML.
    Show(String),
    /// A submission to the page of this token.
    Take(String),
    /// Refused, with the status and the reason shown.
    Refuse(StatusCode, &'static str),
}

const GONE: &str = "This page was used or has expired. Ask the agent to try again.";

impl Pages {
    /// The answer to `method path` with this `Host` header (`None` when
    /// missing or repeated) on the listener's `port`, at `now`.
    fn decide(
        &self,
        method: &Method,
        path: &str,
        host: Option<&str>,
        port: u16,
        now: Instant,
    ) -> Verdict {
        let Some(host) = host else {
            return Verdict::Refuse(StatusCode::BAD_REQUEST, "One Host header is needed.");
        };
        if !own_host(host, port) {
            return Verdict::Refuse(
                StatusCode::MISDIRECTED_REQUEST,
                "This page is served only as 127.0.0.1 or localhost.",
            );
        }
        let token = path.strip_prefix(PATH_PREFIX).unwrap_or_default();
        let Some(page) = self.open.get(token) else {
            return match self.closed.contains_key(token) && !token.is_empty() {
                true => Verdict::Refuse(StatusCode::GONE, GONE),
                false => Verdict::Refuse(StatusCode::NOT_FOUND, "There is no page here."),
            };
        };
        if now >= page.expires || page.value.is_none() {
            return Verdict::Refuse(StatusCode::GONE, GONE);
        }
        match *method {
            Method::GET => Verdict::Show(form(&page.about, page.expires - now)),
            Method::POST => Verdict::Take(token.to_owned()),
            _ => Verdict::Refuse(StatusCode::METHOD_NOT_ALLOWED, "Use the form."),
        }
    }
}

/// Whether a `Host` header names this listener.
fn own_host(host: &str, port: u16) -> bool {
    let Some((name, given)) = host.rsplit_once(':') else {
        return false;
    };
    given == port.to_string() && (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost"))
}

/// Whether a submission may come from the page's own form: a browser says
/// `Sec-Fetch-Site: same-origin` for it (and `Origin: null`, under the
/// page's referrer policy); a client that is not a browser sends neither.
fn from_own_page(headers: &hyper::HeaderMap, port: u16) -> bool {
    let once = |name: &str| headers.get_all(name).iter().count() <= 1;
    if !once("origin") || !once("sec-fetch-site") {
        return false;
    }
    let fetch_site = single(headers, SEC_FETCH_SITE);
    if fetch_site.is_some_and(|site| site != "same-origin") {
        return false;
    }
    match single(headers, ORIGIN) {
        None => true,
        Some("null") => fetch_site == Some("same-origin"),
        Some(origin) => same_origin(origin, port),
    }
}

/// The header in which browsers say which site a request comes from.
const SEC_FETCH_SITE: hyper::header::HeaderName =
    hyper::header::HeaderName::from_static("sec-fetch-site");

/// Whether an `Origin` header is this listener's own.
fn same_origin(origin: &str, port: u16) -> bool {
    origin
        .strip_prefix("http://")
        .is_some_and(|host| own_host(host, port))
}

/// A header's value when it appears exactly once.
fn single(headers: &hyper::HeaderMap, name: hyper::header::HeaderName) -> Option<&str> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => value.to_str().ok(),
        _ => None,
    }
}

/// A value a password prompt can take as typed: not empty, one line.
fn acceptable(value: &str) -> bool {
    !value.is_empty() && !value.chars().any(char::is_control)
}

/// The value of `name` in a urlencoded form (`+` is a space); `None` when
/// absent or not UTF-8.
fn form_field(body: &[u8], name: &str) -> Option<String> {
    body.split(|&b| b == b'&').find_map(|pair| {
        let (key, value) = match pair.iter().position(|&b| b == b'=') {
            Some(at) => (&pair[..at], &pair[at + 1..]),
            None => (pair, &[][..]),
        };
        (percent_decode(key)? == name.as_bytes())
            .then(|| String::from_utf8(percent_decode(value)?).ok())?
    })
}

fn percent_decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text.iter();
    while let Some(&b) = rest.next() {
        out.push(match b {
            b'+' => b' ',
            b'%' => {
                let high = (*rest.next()? as char).to_digit(16)?;
                let low = (*rest.next()? as char).to_digit(16)?;
                (high * 16 + low) as u8
            }
            b => b,
        });
    }
    Some(out)
}

/// Overwrites a request body when this is its only copy.
fn wipe_bytes(body: Bytes) {
    if let Ok(mut bytes) = body.try_into_mut() {
        bytes.fill(0);
        std::hint::black_box(&bytes);
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:3em auto;\
                     padding:0 1em}input{font:inherit;width:100%;padding:.4em;box-sizing:\
                     border-box}button{font:inherit;margin-top:1em;padding:.4em 1.2em}";

fn document(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>termpilot: {title}</title><style>{STYLE}</style></head><body>{body}</body></html>"
    )
}

/// The form asking for the secret.
fn form(about: &About, left: Duration) -> String {
    let minutes = left.as_secs().div_ceil(60).max(1);
    let body = format!(
        "<h1>Type the secret {name}</h1>\
         <p>An AI agent using termpilot asks for the secret <b>{name}</b>. \
         Pane {pane}, running <code>{program}</code>, waits at the hidden prompt \
         <code>{prompt}</code>.</p>\
         <p>termpilot types what you enter here into that pane, then forgets it. \
         The agent never sees it.</p>\
         <form method=\"post\" autocomplete=\"off\">\
         <label for=\"secret\">{name}</label>\
         <input id=\"secret\" name=\"secret\" type=\"password\" autocomplete=\"off\" \
         autofocus required>\
         <button type=\"submit\">Type it into the pane</button></form>\
         <p>This page works once, for at most {minutes} more minute(s).</p>",
        name = escape(&about.name),
        pane = escape(&about.pane),
        program = escape(&about.program),
        prompt = escape(&about.prompt),
    );
    document("type a secret", &body)
}

fn notice(title: &str, text: &str) -> String {
    document(
        title,
        &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)),
    )
}

fn refusal(status: StatusCode, why: &str) -> Response<Full<Bytes>> {
    answer(status, notice("Not accepted", why))
}

/// An HTML answer with the headers every answer carries.
fn answer(status: StatusCode, html: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(html)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in [
        (CONTENT_TYPE, "text/html; charset=utf-8"),
        (CACHE_CONTROL, "no-store"),
        (hyper::header::PRAGMA, "no-cache"),
        (hyper::header::CONTENT_SECURITY_POLICY, CSP),
        (hyper::header::X_FRAME_OPTIONS, "DENY"),
        (hyper::header::REFERRER_POLICY, "no-referrer"),
        (hyper::header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn lock(pages: &Mutex<Pages>) -> std::sync::MutexGuard<'_, Pages> {
    pages.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 4321;

    fn about() -> About {
        About {
            name: "db".into(),
            pane: "%3".into(),
            program: "psql".into(),
            prompt: "Password for <admin>: ".into(),
        }
    }

    fn pages_with(token: &str, expires: Instant) -> (Pages, oneshot::Receiver<PersonSecret>) {
        let (sender, receiver) = oneshot::channel();
        let mut pages = Pages::default();
        let page = Page {
            about: about(),
            expires,
            value: Some(sender),
        };
        pages.open.insert(token.to_owned(), page);
        (pages, receiver)
    }

    fn status(verdict: Verdict) -> StatusCode {
        match verdict {
            Verdict::Show(_) | Verdict::Take(_) => StatusCode::OK,
            Verdict::Refuse(status, _) => status,
        }
    }

    #[test]
    fn only_an_open_page_at_its_own_host_answers() {
        let now = Instant::now();
        let (pages, _value) = pages_with("abc", now + PAGE_TTL);
        let host = Some("127.0.0.1:4321");
        let decide = |method: &Method, path: &str, host: Option<&str>| {
            pages.decide(method, path, host, PORT, now)
        };
        assert!(matches!(
            decide(&Method::GET, "/secret/abc", host),
            Verdict::Show(_)
        ));
        let localhost = Some("LocalHost:4321");
        assert!(matches!(
            decide(&Method::GET, "/secret/abc", localhost),
            Verdict::Show(_)
        ));
        assert_eq!(
            decide(&Method::POST, "/secret/abc", host),
            Verdict::Take("abc".into())
        );
        let cases = [
            (Method::GET, "/secret/abd", host, StatusCode::NOT_FOUND),
            (Method::GET, "/secret/", host, StatusCode::NOT_FOUND),
            (Method::GET, "/abc", host, StatusCode::NOT_FOUND),
            (Method::GET, "/secret/abc/x", host, StatusCode::NOT_FOUND),
            (
                Method::PUT,
                "/secret/abc",
                host,
                StatusCode::METHOD_NOT_ALLOWED,
            ),
            (Method::GET, "/secret/abc", None, StatusCode::BAD_REQUEST),
            (
                Method::GET,
                "/secret/abc",
                Some("evil.example:4321"),
                StatusCode::MISDIRECTED_REQUEST,
            ),
            (
                Method::GET,
                "/secret/abc",
                Some("127.0.0.1:4322"),
                StatusCode::MISDIRECTED_REQUEST,
            ),
            (
                Method::GET,
                "/secret/abc",
                Some("127.0.0.1"),
                StatusCode::MISDIRECTED_REQUEST,
            ),
            (
                Method::POST,
                "/secret/abc",
                Some("[::1]:4321"),
                StatusCode::MISDIRECTED_REQUEST,
            ),
        ];
        for (method, path, host, expected) in cases {
            assert_eq!(
                status(decide(&method, path, host)),
                expected,
                "{method} {path} {host:?}"
            );
        }
    }

    #[test]
    fn a_page_expires() {
        let now = Instant::now();
        let (pages, _value) = pages_with("abc", now + PAGE_TTL);
        let host = Some("127.0.0.1:4321");
        let just_before = now + PAGE_TTL - Duration::from_millis(1);
        assert!(matches!(
            pages.decide(&Method::GET, "/secret/abc", host, PORT, just_before),
            Verdict::Show(_)
        ));
        for method in [Method::GET, Method::POST] {
            let verdict = pages.decide(&method, "/secret/abc", host, PORT, now + PAGE_TTL);
            assert_eq!(status(verdict), StatusCode::GONE);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_is_used_once_then_gone() {
        let pages = Arc::new(SecretPages::new());
        let now = Instant::now();
        let (sender, mut receiver) = oneshot::channel();
        let page = Page {
            about: about(),
            expires: now + PAGE_TTL,
            value: Some(sender),
        };
        lock(&pages.pages).open.insert("abc".into(), page);
        let value = || PersonSecret("hunter2".into());
        assert_eq!(pages.deliver("abc", value(), now), Ok(()));
        assert_eq!(receiver.try_recv().expect("delivered").0, "hunter2");
        assert_eq!(pages.deliver("abc", value(), now), Err(()));
        let host = Some("127.0.0.1:4321");
        for method in [Method::GET, Method::POST] {
            let verdict = lock(&pages.pages).decide(&method, "/secret/abc", host, PORT, now);
            assert_eq!(status(verdict), StatusCode::GONE);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_call_ends_when_the_page_expires_or_it_is_cancelled() {
        let pages = Arc::new(SecretPages::new());
        let mut opened = pages.open(about()).await.expect("opens");
        let port = pages.address.get().expect("listening").port();
        let prefix = format!("http://127.0.0.1:{port}{PATH_PREFIX}");
        let token = opened.url().strip_prefix(&prefix).expect("url").to_owned();
        assert_eq!(token.len(), 2 * TOKEN_BYTES);
        let host = format!("127.0.0.1:{port}");
        let gone = |token: &str| {
            let path = format!("{PATH_PREFIX}{token}");
            let verdict =
                lock(&pages.pages).decide(&Method::GET, &path, Some(&host), port, Instant::now());
            status(verdict) == StatusCode::GONE
        };
        assert!(!gone(&token));
        let cancelled = CancellationToken::new();
        // Paused time runs ahead to the expiry: nothing was submitted.
        assert_eq!(
            opened.receive(&cancelled).await.unwrap_err(),
            NoValue::Expired
        );
        assert!(gone(&token));
        let mut second = pages.open(about()).await.expect("opens");
        let token = second.url().strip_prefix(&prefix).expect("url").to_owned();
        cancelled.cancel();
        assert_eq!(
            second.receive(&cancelled).await.unwrap_err(),
            NoValue::Cancelled
        );
        // A page its call let go of is gone too.
        assert!(!gone(&token));
        drop(second);
        assert!(gone(&token));
    }

    #[test]
    fn forms_are_decoded_and_values_checked() {
        assert_eq!(
            form_field(b"secret=a%2Bb+c%26", "secret").as_deref(),
            Some("a+b c&")
        );
        assert_eq!(
            form_field(b"x=1&secret=%C3%A9", "secret").as_deref(),
            Some("é")
        );
        assert_eq!(form_field(b"secret", "secret").as_deref(), Some(""));
        assert_eq!(form_field(b"other=1", "secret"), None);
        assert_eq!(form_field(b"secret=%FF", "secret"), None);
        assert_eq!(form_field(b"secret=%4", "secret"), None);
        assert!(acceptable("hunter 2"));
        assert!(!acceptable(""));
        assert!(!acceptable("two\nlines"));
        assert!(!acceptable("tab\there"));
    }

    #[test]
    fn hosts_and_origins() {
        assert!(own_host("127.0.0.1:80", 80));
        assert!(own_host("localhost:80", 80));
        assert!(!own_host("localhost.evil:80", 80));
        assert!(!own_host("127.0.0.1:8080", 80));
        assert!(same_origin("http://127.0.0.1:80", 80));
        assert!(!same_origin("https://127.0.0.1:80", 80));
        assert!(!same_origin("http://evil.example", 80));
        assert!(!same_origin("null", 80));
    }

    #[test]
    fn a_browser_post_is_taken_only_from_the_page_itself() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = hyper::HeaderMap::new();
            for (name, value) in pairs {
                map.append(*name, HeaderValue::from_static(value));
            }
            map
        };
        let own = |pairs| from_own_page(&headers(pairs), 80);
        // What Chromium sends for the form of a no-referrer page.
        assert!(own(&[
            ("origin", "null"),
            ("sec-fetch-site", "same-origin")
        ]));
        assert!(own(&[("origin", "http://127.0.0.1:80")]));
        assert!(own(&[]), "not a browser: the path is the credential");
        // Another site's page, with or without its own no-referrer policy.
        assert!(!own(&[
            ("origin", "null"),
            ("sec-fetch-site", "cross-site")
        ]));
        assert!(!own(&[("origin", "null"), ("sec-fetch-site", "same-site")]));
        assert!(!own(&[
            ("origin", "http://evil.example"),
            ("sec-fetch-site", "cross-site")
        ]));
        assert!(!own(&[("origin", "http://evil.example")]));
        assert!(!own(&[("origin", "null")]));
        assert!(!own(&[("sec-fetch-site", "cross-site")]));
        assert!(!own(&[
            ("origin", "http://127.0.0.1:80"),
            ("sec-fetch-site", "none")
        ]));
        assert!(!own(&[
            ("origin", "null"),
            ("origin", "null"),
            ("sec-fetch-site", "same-origin")
        ]));
    }

    #[test]
    fn the_form_escapes_what_the_terminal_shows() {
        let html = form(&about(), Duration::from_secs(299));
        assert!(html.contains("Password for &lt;admin&gt;: "), "{html}");
        assert!(html.contains("type=\"password\"") && html.contains("autocomplete=\"off\""));
        assert!(html.contains("5 more minute"), "{html}");
        assert!(!html.contains("<script") && !html.contains("src="));
    }

    #[test]
    fn a_secret_hides_in_debug() {
        assert_eq!(
            format!("{:?}", PersonSecret("x".into())),
            "[secret typed by the person]"
        );
    }
}
