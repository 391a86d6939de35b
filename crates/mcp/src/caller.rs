//! Who a tool call comes from, so that what it leaves behind (kept outputs,
//! questions waiting for the person's answer) serves only that caller.
//!
//! Over stdio there is one caller. Over HTTP, a client that sent `initialize`
//! is its HTTP session (`Mcp-Session-Id`, which the transport checks); a
//! request of protocol 2026-07-28 has no session, so stateless callers are
//! told apart by their bearer token only: callers sharing the token share
//! what they leave behind (but never with a session).
//!
//! The caller is set for the duration of a call ([`Caller::scope`]) and read
//! where outputs are kept or questions asked ([`Caller::current`]).

use std::future::Future;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use sha2::{Digest, Sha256};

/// The caller of a tool call, as an opaque tag (never shown to anyone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller(String);

tokio::task_local! {
    static CALLER: Caller;
}

impl Caller {
    /// The caller of the request in `context`.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Caller {
        let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() else {
            return Caller("stdio".to_owned());
        };
        let header = |name: &str| {
            let mut values = parts.headers.get_all(name).iter();
            match (values.next(), values.next()) {
                (Some(value), None) => Some(value.as_bytes()),
                _ => None,
            }
        };
        // A digest, so that the tag never holds a credential itself.
        let tag = |kind: &str, value: &[u8]| {
            let digest = Sha256::new()
                .chain_update(kind.as_bytes())
                .chain_update(value)
                .finalize();
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            Caller(format!("{kind} {hex}"))
        };
        match header("mcp-session-id") {
            Some(session) => tag("session", session),
            None => tag("stateless", header("authorization").unwrap_or_default()),
        }
    }

    /// Runs `call` as this caller's.
    pub(crate) async fn scope<F: Future>(self, call: F) -> F::Output {
        CALLER.scope(self, call).await
    }

    /// The caller of the call running now. Outside a call (which does not
    /// happen), a caller of its own, whom nothing else matches.
    pub(crate) fn current() -> Caller {
        CALLER.try_with(Caller::clone).unwrap_or_else(|_| {
            Caller(format!(
                "none {}",
                crate::random::hex_token(16).unwrap_or_default()
            ))
        })
    }

    /// A caller named `tag`, for tests.
    #[cfg(test)]
    pub(crate) fn test(tag: &str) -> Caller {
        Caller(tag.to_owned())
    }

    /// The tag, for stores keyed by owner.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_caller_is_known_inside_its_call_only() {
        let inside = Caller("session a".to_owned())
            .scope(async { Caller::current() })
            .await;
        assert_eq!(inside.as_str(), "session a");
        let outside = Caller::current();
        assert!(outside.as_str().starts_with("none "), "{outside:?}");
        assert_ne!(outside, Caller::current(), "no two outsiders match");
    }
}
