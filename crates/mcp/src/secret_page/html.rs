//! The pages' HTML (the form, notices) and the headers every answer
//! carries.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};

use super::About;

/// The policy of every answer: nothing may load, run or frame it, and the
/// form may post only back to where it came from.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

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
pub(super) fn form(about: &About, left: Duration) -> String {
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

pub(super) fn notice(title: &str, text: &str) -> String {
    document(
        title,
        &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)),
    )
}

pub(super) fn refusal(status: StatusCode, why: &str) -> Response<Full<Bytes>> {
    answer(status, notice("Not accepted", why))
}

/// An HTML answer with the headers every answer carries.
pub(super) fn answer(status: StatusCode, html: String) -> Response<Full<Bytes>> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::about;
    use super::*;

    #[test]
    fn the_form_escapes_what_the_terminal_shows() {
        let html = form(&about(), Duration::from_secs(299));
        assert!(html.contains("Password for &lt;admin&gt;: "), "{html}");
        assert!(html.contains("type=\"password\"") && html.contains("autocomplete=\"off\""));
        assert!(html.contains("5 more minute"), "{html}");
        assert!(!html.contains("<script") && !html.contains("src="));
    }
}
