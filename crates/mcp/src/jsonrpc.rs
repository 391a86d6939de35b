//! Checks every incoming JSON-RPC message before rmcp sees it, so that each
//! malformed one gets the reply JSON-RPC prescribes instead of none: a parse
//! error (-32700, `id: null`) for bytes that are not JSON, an invalid request
//! (-32600, with the id when it could be read) for JSON that is not a
//! message, and invalid params (-32602) for a known method whose parameters
//! do not fit it (rmcp would take it for an unknown method).
//!
//! serde_json stops at 128 levels of nesting, so deeply nested input is a
//! parse error, never a stack overflow.

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest};
use serde::Serialize;
use serde_json::Value;

/// JSON-RPC's error codes used here.
pub(crate) const PARSE_ERROR: i32 = -32700;
pub(crate) const INVALID_REQUEST: i32 = -32600;
pub(crate) const INVALID_PARAMS: i32 = -32602;

/// Methods of the protocol whose parameters rmcp parses into a type: a
/// request naming one of them that rmcp could not parse had bad parameters.
const TYPED_METHODS: [&str; 21] = [
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// A message refused before it reached rmcp, and the error to answer with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// The request's id when it could be read (`null` otherwise).
    pub(crate) id: Value,
    pub(crate) code: i32,
    pub(crate) message: String,
}

impl Refusal {
    fn new(id: Value, code: i32, message: String) -> Refusal {
        Refusal { id, code, message }
    }

    /// The JSON-RPC error response, serialized.
    pub(crate) fn to_json(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Reply<'a> {
            jsonrpc: &'static str,
            id: &'a Value,
            error: Error<'a>,
        }
        #[derive(Serialize)]
        struct Error<'a> {
            code: i32,
            message: &'a str,
        }
        let reply = Reply {
            jsonrpc: "2.0",
            id: &self.id,
            error: Error {
                code: self.code,
                message: &self.message,
            },
        };
        serde_json::to_vec(&reply).expect("a reply serializes")
    }
}

/// The message in `bytes`, or why it is refused.
pub(crate) fn check(bytes: &[u8]) -> Result<ClientJsonRpcMessage, Refusal> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        Refusal::new(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: the message is not valid UTF-8 ({error})"),
        )
    })?;
    let mut value: Value = serde_json::from_str(text)
        .map_err(|error| Refusal::new(Value::Null, PARSE_ERROR, format!("Parse error: {error}")))?;
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "batches are not supported; send one JSON object per message"
        } else {
            "a message is a JSON object"
        };
        return Err(Refusal::new(
            Value::Null,
            INVALID_REQUEST,
            format!("Invalid Request: {what}"),
        ));
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    crate::tasks::rename(&mut value);
    let message: ClientJsonRpcMessage = serde_json::from_value(value).map_err(|error| {
        Refusal::new(
            id.clone(),
            INVALID_REQUEST,
            format!(
                "Invalid Request: not a JSON-RPC 2.0 request, notification or response \
                 ({error}); a request needs \"jsonrpc\": \"2.0\", an \"id\" (string or \
                 integer), a \"method\" and, if any, \"params\" as an object"
            ),
        )
    })?;
    if let ClientJsonRpcMessage::Request(request) = &message
        && let ClientRequest::CustomRequest(custom) = &request.request
        && TYPED_METHODS.contains(&custom.method.as_str())
    {
        let method = method.unwrap_or_default();
        let detail = if method == "tools/call" {
            "params needs \"name\" (a string) and, if any, \"arguments\" as an object"
        } else {
            "its params do not have the shape the protocol gives them"
        };
        return Err(Refusal::new(
            id,
            INVALID_PARAMS,
            format!("Invalid params for {method}: {detail}"),
        ));
    }
    Ok(message)
}

/// The id of a request, as JSON, for matching duplicates.
pub(crate) fn request_id(message: &ClientJsonRpcMessage) -> Option<Value> {
    match message {
        ClientJsonRpcMessage::Request(request) => serde_json::to_value(&request.id).ok(),
        _ => None,
    }
}

/// The request a `notifications/cancelled` message cancels.
pub(crate) fn cancelled_id(message: &ClientJsonRpcMessage) -> Option<Value> {
    match message {
        ClientJsonRpcMessage::Notification(notification) => match &notification.notification {
            ClientNotification::CancelledNotification(cancelled) => cancelled
                .params
                .request_id
                .as_ref()
                .and_then(|id| serde_json::to_value(id).ok()),
            _ => None,
        },
        _ => None,
    }
}

/// The refusal of a request whose id is still in flight.
pub(crate) fn duplicate(id: Value) -> Refusal {
    let message = format!(
        "Invalid Request: request id {id} is already in use by a request still in flight; \
         give every request its own id"
    );
    Refusal::new(id, INVALID_REQUEST, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(bytes: &[u8]) -> Refusal {
        check(bytes).expect_err("refused")
    }

    #[test]
    fn bytes_that_are_not_json_are_parse_errors_with_a_null_id() {
        for bytes in [
            &b"{\"jsonrpc\":"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
            b"",
            b"not json",
        ] {
            let refusal = refused(bytes);
            assert_eq!((refusal.code, &refusal.id), (PARSE_ERROR, &Value::Null));
        }
    }

    #[test]
    fn deep_nesting_is_a_parse_error_not_a_crash() {
        for bytes in ["[".repeat(100_000), "{\"a\":".repeat(100_000)] {
            let refusal = refused(bytes.as_bytes());
            assert_eq!(refusal.code, PARSE_ERROR);
            assert!(refusal.message.contains("recursion"), "{}", refusal.message);
        }
    }

    #[test]
    fn invalid_requests_keep_the_id_they_carry() {
        let refusal = refused(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":5}"#);
        assert_eq!((refusal.code, refusal.id), (INVALID_REQUEST, json!(7)));
        let refusal = refused(br#"{"id":"a","method":"ping"}"#);
        assert_eq!((refusal.code, refusal.id), (INVALID_REQUEST, json!("a")));
        let refusal = refused(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!((refusal.code, refusal.id), (INVALID_REQUEST, Value::Null));
        let refusal = refused(br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#);
        assert_eq!((refusal.code, refusal.id), (INVALID_REQUEST, Value::Null));
    }

    #[test]
    fn arguments_that_are_not_an_object_are_invalid_params() {
        let refusal = refused(
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_panes","arguments":[]}}"#,
        );
        assert_eq!((refusal.code, refusal.id), (INVALID_PARAMS, json!(9)));
        assert!(refusal.message.contains("arguments"), "{}", refusal.message);
        let refusal = refused(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{}}"#);
        assert_eq!(refusal.code, INVALID_PARAMS);
    }

    #[test]
    fn good_messages_pass_and_unknown_methods_are_left_to_rmcp() {
        for bytes in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#[..],
            br#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#,
        ] {
            assert!(check(bytes).is_ok(), "{}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn ids_of_requests_and_cancellations_are_read() {
        let request = check(br#"{"jsonrpc":"2.0","id":"r1","method":"ping"}"#).unwrap();
        assert_eq!(request_id(&request), Some(json!("r1")));
        let cancel = check(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
        )
        .unwrap();
        assert_eq!(cancelled_id(&cancel), Some(json!(4)));
        assert_eq!(request_id(&cancel), None);
    }

    #[test]
    fn refusals_are_json_rpc_errors() {
        let reply: Value = serde_json::from_slice(&duplicate(json!(3)).to_json()).unwrap();
        assert_eq!(reply["jsonrpc"], "2.0");
        assert_eq!(reply["id"], 3);
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);
    }
}
