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
//!
//! - this file: the pages (open, closed, expired), the answer each request
//!   gets ([`Pages::decide`]) and the value handed to the waiting call.
//! - `listener`: the loopback HTTP listener and a submission's handling.
//! - `origin`: whether a request names the listener and comes from the
//!   page's own form (`Host`, `Origin`, `Sec-Fetch-Site`).
//! - `submission`: the submitted form read, its value checked, the body
//!   wiped.
//! - `html`: the pages' HTML and the headers of every answer.

mod html;
mod listener;
mod origin;
mod submission;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::{Method, StatusCode};
use tokio::sync::{OnceCell, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use html::form;
use origin::own_host;

/// How long a page stays usable after it opens.
pub(crate) const PAGE_TTL: Duration = Duration::from_secs(300);

/// Shortens [`PAGE_TTL`], for tests.
const TTL_VARIABLE: &str = "TERMPILOT_TEST_SECRET_PAGE_TTL_MS";

/// Where pages live; the rest of the path is the page's token.
const PATH_PREFIX: &str = "/secret/";

/// Random bytes in a page's path (256 bits).
const TOKEN_BYTES: usize = 32;

/// How long a closed page's path is remembered (answered 410, not 404).
const CLOSED_KEPT: Duration = Duration::from_secs(3600);

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

fn lock(pages: &Mutex<Pages>) -> std::sync::MutexGuard<'_, Pages> {
    pages.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 4321;

    pub(super) fn about() -> About {
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
    fn a_secret_hides_in_debug() {
        assert_eq!(
            format!("{:?}", PersonSecret("x".into())),
            "[secret typed by the person]"
        );
    }
}
