//! Tasks as protocol 2025-11-25 has them (experimental there): the client
//! adds `task` to the params of a `tools/call` and gets `{"task": …}` back
//! at once; it polls `tasks/get`, reads the result with `tasks/result`
//! (which waits for the task to end, and is where the task's questions
//! reach the client: `elicitation/create` requests tied to the task by
//! `_meta["io.modelcontextprotocol/related-task"]`), lists tasks with
//! `tasks/list` and cancels one with `tasks/cancel`. They are the same
//! tasks as the 2026-07-28 extension's, in the same store, run the same
//! way; only the wire differs.
//!
//! rmcp 3.9 knows only the 2026-07-28 extension: its `tools/call` params
//! drop `task`, its `Tool` has no `execution`, its capabilities no `tasks`,
//! and it refuses `tasks/get` from a client that did not declare the
//! extension. So [`crate::jsonrpc`] gives these requests names of their own
//! before rmcp reads them ([`rename`]): a `tools/call` with `task`, and
//! `tasks/get`, `tasks/cancel` and `tools/list` of a session opened with
//! `initialize` (a 2026-07-28 request names its version in `_meta`). rmcp
//! passes them, as it passes `tasks/result` and `tasks/list`, to
//! [`answer`]; and [`announce`] adds the `tasks` capability to the
//! `initialize` answer. A session whose client declared the 2026-07-28
//! extension keeps its answers.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ClientResult, CustomNotification,
    CustomRequest, CustomResult, DetailedTask, ErrorCode, InputRequest, InputResponses,
    RequestParamsMeta, ServerJsonRpcMessage, ServerNotification, ServerRequest, ServerResult, Task,
    TaskPayload,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::{INTERRUPT_GRACE, TOOLS};
use crate::server::TermpilotServer;

/// The method of the notification of a task's new status.
const STATUS: &str = "notifications/tasks/status";

/// The `_meta` key tying a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The `tasks` capability: `tasks/list`, `tasks/cancel`, and `tools/call`
/// as a task.
fn capability() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
}

/// How often `tasks/result` and `tasks/cancel` look at the task they wait
/// for.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// How many tasks one `tasks/list` answer holds.
const PAGE: usize = 50;

/// What renamed requests are called: this, then the protocol's name.
const PREFIX: &str = "termpilot/2025-11-25/";

/// The `_meta` key of a 2026-07-28 request's protocol version.
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Gives a raw message the name rmcp passes on to [`answer`] when it is a
/// 2025-11-25 task request rmcp would answer its own way (see the module's
/// doc). A `tools/call`'s `task` asks for a task whatever the session; the
/// client's `ttl` is not kept: a task lives as long as [`super::Tasks`]
/// keeps it, which every answer states (the spec lets the server choose).
pub(crate) fn rename(message: &mut Value) {
    let Some(method) = message["method"].as_str() else {
        return;
    };
    let params = &message["params"];
    let in_session = params["_meta"][PROTOCOL_VERSION].is_null();
    let renamed = match method {
        "tools/call" => params["task"].is_object(),
        "tasks/get" | "tasks/cancel" | "tools/list" => in_session,
        _ => false,
    };
    if renamed {
        message["method"] = json!(format!("{PREFIX}{method}"));
    }
}

/// The `initialize` answer with the `tasks` capability added (rmcp's
/// capabilities have no place for it); any other message as it is.
pub(crate) fn announce(message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    let ServerJsonRpcMessage::Response(mut response) = message else {
        return message;
    };
    if let ServerResult::InitializeResult(result) = &response.result
        && let Ok(mut value) = serde_json::to_value(result)
    {
        value["capabilities"]["tasks"] = capability();
        response.result = ServerResult::CustomResult(CustomResult::new(value));
    }
    ServerJsonRpcMessage::Response(response)
}

/// The message as bytes when [`rename`] renamed it (which the bytes it
/// came in do not show).
pub(crate) fn renamed(message: &ClientJsonRpcMessage) -> Option<bytes::Bytes> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CustomRequest(custom) = &request.request else {
        return None;
    };
    if !custom.method.starts_with(PREFIX) {
        return None;
    }
    serde_json::to_vec(message).ok().map(bytes::Bytes::from)
}

/// Answers the requests rmcp does not know (`on_custom_request`): the
/// 2025-11-25 task requests, under their own names or [`rename`]d.
pub(crate) async fn answer(
    server: &TermpilotServer,
    request: CustomRequest,
    context: RequestContext<RoleServer>,
) -> Result<CustomResult, McpError> {
    let method = request
        .method
        .strip_prefix(PREFIX)
        .unwrap_or(&request.method);
    let params = request.params.clone().unwrap_or(json!({}));
    let result = match method {
        "tools/call" => {
            let call = serde_json::from_value(params).map_err(|e| {
                McpError::invalid_params(format!("Invalid params for tools/call: {e}"), None)
            })?;
            server.call_as_task(call, &context)?
        }
        "tools/list" => tools(server, &context),
        "tasks/get" if polled(&context) => wire(&server.tasks.get(&task_id(&params)?)?.task),
        "tasks/get" => to_value(server.tasks.get(&task_id(&params)?)?),
        "tasks/cancel" if polled(&context) => server.cancel_polled(&task_id(&params)?).await?,
        "tasks/cancel" => {
            server.tasks.cancel(&task_id(&params)?)?;
            json!({"resultType": "complete"})
        }
        "tasks/result" => server.task_result(&task_id(&params)?, &context).await?,
        "tasks/list" => server.list_tasks(&params)?,
        _ => {
            let message = format!("Method not found: {}", request.method);
            return Err(McpError::new(ErrorCode::METHOD_NOT_FOUND, message, None));
        }
    };
    Ok(CustomResult::new(result))
}

/// Whether the client speaks tasks as protocol 2025-11-25 has them: it did
/// not declare the 2026-07-28 extension.
fn polled(context: &RequestContext<RoleServer>) -> bool {
    !context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// The tools list of a session, with `execution.taskSupport` on every tool
/// for a client of 2025-11-25 tasks: `optional` for [`TOOLS`], `forbidden`
/// for the rest.
fn tools(server: &TermpilotServer, context: &RequestContext<RoleServer>) -> Value {
    let tools = server.tools();
    let mut value = json!({"tools": tools});
    if polled(context) {
        for tool in value["tools"].as_array_mut().into_iter().flatten() {
            let support = match TOOLS.contains(&tool["name"].as_str().unwrap_or_default()) {
                true => "optional",
                false => "forbidden",
            };
            tool["execution"] = json!({"taskSupport": support});
        }
    }
    value
}

fn to_value<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

impl TermpilotServer {
    /// A `tools/call` with `task`: the task, or the plain result saying
    /// why it could not start.
    fn call_as_task(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        self.published(&request.name)?;
        if !TOOLS.contains(&&*request.name) {
            let message = format!(
                "{} does not run as a task (its execution.taskSupport is forbidden); call it \
                 without \"task\". These do: {}",
                request.name,
                TOOLS.join(", ")
            );
            return Err(McpError::new(ErrorCode::METHOD_NOT_FOUND, message, None));
        }
        Ok(match self.spawn_task(request, context) {
            Ok(task) => {
                let statuses = self
                    .clone()
                    .tell_statuses(task.task_id.clone(), context.peer.clone());
                tokio::spawn(statuses);
                json!({"task": seed(&task)})
            }
            Err(refused) => Value::Object(as_2025(object(to_value(refused)))),
        })
    }

    /// Sends `notifications/tasks/status` with the whole task each time its
    /// status changes, until it ends (or expires). The spec makes these
    /// optional for the server and tells clients to poll anyway.
    async fn tell_statuses(self, id: String, peer: Peer<RoleServer>) {
        let mut told = "working".to_owned();
        while let Ok(task) = self.tasks.get(&id).map(|got| got.task) {
            let now = status(&task);
            if now != told {
                let notification = CustomNotification::new(STATUS, Some(wire(&task)));
                let sent = peer
                    .send_notification(ServerNotification::CustomNotification(notification))
                    .await;
                if let Err(e) = sent {
                    tracing::debug!(error = %e, "task status notification not sent");
                }
                told = now;
            }
            if task.status().is_terminal() {
                return;
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }

    /// `tasks/result`: waits for the task to end and returns what the call
    /// returned, the task's questions asked meanwhile as `elicitation/create`
    /// requests on this request.
    async fn task_result(
        &self,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        let mut asked = HashSet::new();
        loop {
            let task = self.tasks.get(id)?.task;
            let message = task.task.status_message.clone().unwrap_or_default();
            match task.payload {
                TaskPayload::Completed { result } => return Ok(related(result, id)),
                TaskPayload::Failed { error } => {
                    return Err(serde_json::from_value(Value::Object(error)).unwrap_or_else(
                        |_| McpError::internal_error(format!("the task failed: {message}"), None),
                    ));
                }
                TaskPayload::Cancelled => {
                    let said =
                        json!({"content": [{"type": "text", "text": message}], "isError": true});
                    return Ok(related(object(said), id));
                }
                TaskPayload::InputRequired { input_requests } => {
                    for (key, request) in input_requests {
                        if asked.insert(key.clone()) {
                            let answer = tokio::select! {
                                answer = ask(context, id, request) => answer,
                                () = context.ct.cancelled() => return Err(gave_up()),
                            };
                            self.tasks
                                .update(id, InputResponses::from([(key, answer)]))?;
                        }
                    }
                }
                _ => {}
            }
            tokio::select! {
                () = tokio::time::sleep(LOOK_EVERY) => {}
                () = context.ct.cancelled() => return Err(gave_up()),
            }
        }
    }

    /// `tasks/cancel`: refused for a task that has ended; otherwise stops
    /// the task and answers once it has stopped (a `run_command` gets its
    /// C-c and some seconds to return to the prompt).
    async fn cancel_polled(&self, id: &str) -> Result<Value, McpError> {
        let task = self.tasks.get(id)?.task;
        if task.status().is_terminal() {
            return Err(McpError::invalid_params(
                format!(
                    "task {id} has already ended ({}); tasks/result reads its result",
                    status(&task)
                ),
                None,
            ));
        }
        self.tasks.cancel(id)?;
        let deadline = Instant::now() + INTERRUPT_GRACE * 2;
        loop {
            let task = self.tasks.get(id)?.task;
            if task.status().is_terminal() || Instant::now() >= deadline {
                return Ok(wire(&task));
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }

    /// `tasks/list`: every task kept, oldest first, [`PAGE`] at a time; the
    /// cursor is where the next page starts.
    fn list_tasks(&self, params: &Value) -> Result<Value, McpError> {
        let cursor = params.get("cursor").filter(|cursor| !cursor.is_null());
        let start = match cursor {
            None => 0,
            Some(cursor) => cursor
                .as_str()
                .and_then(|cursor| cursor.parse::<usize>().ok())
                .ok_or_else(|| {
                    McpError::invalid_params(
                        "unknown cursor: pass the nextCursor of the last tasks/list, or none",
                        None,
                    )
                })?,
        };
        let ids = self.tasks.kept();
        let tasks: Vec<Value> = ids
            .iter()
            .skip(start)
            .take(PAGE)
            .filter_map(|id| self.tasks.get(id).ok())
            .map(|task| wire(&task.task))
            .collect();
        let mut answer = json!({"tasks": tasks});
        if start + PAGE < ids.len() {
            answer["nextCursor"] = json!((start + PAGE).to_string());
        }
        Ok(answer)
    }
}

/// Asks the client `request` (an elicitation) as a request of its own tied
/// to the task; its answer, or one that declines when the client cannot be
/// asked (the task then goes on as after a refusal).
async fn ask(context: &RequestContext<RoleServer>, id: &str, request: InputRequest) -> Value {
    let declined = json!({"action": "cancel"});
    let InputRequest::Elicitation(mut request) = request else {
        return declined;
    };
    request
        .params
        .meta_mut()
        .get_or_insert_with(Default::default)
        .insert(RELATED_TASK.to_owned(), json!({"taskId": id}));
    match context
        .peer
        .send_request(ServerRequest::ElicitRequest(request))
        .await
    {
        Ok(ClientResult::ElicitResult(answer)) => serde_json::to_value(answer).unwrap_or(declined),
        Ok(_) | Err(_) => declined,
    }
}

/// The answer to a `tasks/result` the client cancelled (which it will not
/// read): the task goes on.
fn gave_up() -> McpError {
    McpError::invalid_request("tasks/result cancelled; the task goes on", None)
}

/// The `taskId` of a `tasks/…` request.
fn task_id(params: &Value) -> Result<String, McpError> {
    let id = params["taskId"].as_str().map(str::to_owned);
    id.ok_or_else(|| McpError::invalid_params("params.taskId must be a string", None))
}

/// A task as protocol 2025-11-25 writes it; a call that ended with an
/// error is `failed` there (`completed` on 2026-07-28).
fn wire(task: &DetailedTask) -> Value {
    let mut value = seed(&task.task);
    value["status"] = json!(status(task));
    value
}

/// The status a 2025-11-25 client sees.
fn status(task: &DetailedTask) -> String {
    match &task.payload {
        TaskPayload::Completed { result } if result.get("isError") == Some(&json!(true)) => {
            "failed".to_owned()
        }
        _ => serde_json::to_value(task.status())
            .ok()
            .and_then(|status| status.as_str().map(str::to_owned))
            .unwrap_or_default(),
    }
}

/// The task's fields under their 2025-11-25 names.
fn seed(task: &Task) -> Value {
    let mut value = json!({
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": task.ttl_ms,
    });
    if let Some(message) = &task.status_message {
        value["statusMessage"] = json!(message);
    }
    if let Some(every) = task.poll_interval_ms {
        value["pollInterval"] = json!(every);
    }
    value
}

/// The call's result with `_meta` naming its task, as `tasks/result` must.
fn related(result: Map<String, Value>, id: &str) -> Value {
    let mut result = as_2025(result);
    let meta = result.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(RELATED_TASK.to_owned(), json!({"taskId": id}));
    }
    Value::Object(result)
}

/// A result as protocol 2025-11-25 has it: without the `resultType` of
/// 2026-07-28 (rmcp takes it away from its own answers to older clients).
fn as_2025(mut result: Map<String, Value>) -> Map<String, Value> {
    result.remove("resultType");
    result
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(payload: TaskPayload) -> DetailedTask {
        let task = Task::new(
            "t1",
            rmcp::model::TaskStatus::Working,
            "2026-11-26T00:00:00Z",
            "2026-11-26T00:00:01Z",
        )
        .with_ttl_ms(60_000)
        .with_poll_interval_ms(1_000)
        .with_status_message("run_command: working for 3 s");
        DetailedTask::new(task, payload)
    }

    #[test]
    fn a_task_has_the_2025_names_and_an_error_result_is_failed() {
        let working = wire(&task(TaskPayload::Working));
        assert_eq!(
            working,
            json!({"taskId": "t1", "status": "working", "createdAt": "2026-11-26T00:00:00Z",
                "lastUpdatedAt": "2026-11-26T00:00:01Z", "ttl": 60_000, "pollInterval": 1_000,
                "statusMessage": "run_command: working for 3 s"})
        );
        let error = object(json!({"content": [], "isError": true}));
        assert_eq!(
            wire(&task(TaskPayload::Completed { result: error }))["status"],
            "failed"
        );
        let fine = object(json!({"content": [], "isError": false}));
        assert_eq!(
            wire(&task(TaskPayload::Completed { result: fine }))["status"],
            "completed"
        );
        assert_eq!(wire(&task(TaskPayload::Cancelled))["status"], "cancelled");
    }

    #[test]
    fn a_task_result_names_its_task() {
        let result = json!({"content": [], "resultType": "complete", "_meta": {"other": 1}});
        let result = related(object(result), "t1");
        assert_eq!(result["_meta"][RELATED_TASK]["taskId"], "t1");
        assert!(result.get("resultType").is_none(), "{result}");
        assert_eq!(result["_meta"]["other"], 1);
    }

    #[test]
    fn only_2025_task_requests_are_renamed() {
        let renamed = |mut message: Value| {
            rename(&mut message);
            message["method"].as_str().unwrap().to_owned()
        };
        let call = json!({"method": "tools/call", "params": {"name": "x", "task": {"ttl": 5}}});
        assert_eq!(renamed(call), "termpilot/2025-11-25/tools/call");
        let plain = json!({"method": "tools/call", "params": {"name": "x"}});
        assert_eq!(renamed(plain), "tools/call");
        let get = json!({"method": "tasks/get", "params": {"taskId": "t"}});
        assert_eq!(renamed(get), "termpilot/2025-11-25/tasks/get");
        let meta = json!({PROTOCOL_VERSION: "2026-07-28"});
        let get = json!({"method": "tasks/get", "params": {"taskId": "t", "_meta": meta}});
        assert_eq!(renamed(get), "tasks/get");
        let list = json!({"method": "tools/list"});
        assert_eq!(renamed(list), "termpilot/2025-11-25/tools/list");
        assert_eq!(renamed(json!({"method": "ping"})), "ping");
    }
}
