//! Whether a request names the listener (`Host`, against DNS rebinding)
//! and whether a submission comes from the page's own form (`Origin`,
//! `Sec-Fetch-Site`, against other pages posting to it).

use hyper::header::ORIGIN;

/// Whether a `Host` header names this listener.
pub(super) fn own_host(host: &str, port: u16) -> bool {
    let Some((name, given)) = host.rsplit_once(':') else {
        return false;
    };
    given == port.to_string() && (name == "127.0.0.1" || name.eq_ignore_ascii_case("localhost"))
}

/// Whether a submission may come from the page's own form: a browser says
/// `Sec-Fetch-Site: same-origin` for it (and `Origin: null`, under the
/// page's referrer policy); a client that is not a browser sends neither.
pub(super) fn from_own_page(headers: &hyper::HeaderMap, port: u16) -> bool {
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
pub(super) fn single(headers: &hyper::HeaderMap, name: hyper::header::HeaderName) -> Option<&str> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => value.to_str().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use super::*;

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
}
