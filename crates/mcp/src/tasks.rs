//! Long calls as MCP tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663, protocol 2026-07-28; and the experimental tasks of protocol
//! 2025-11-25, whose wire [`v2025`] speaks over the same tasks).
//!
//! A client that declares the extension in a request's capabilities (or, on
//! 2025-11-25, puts `task` in the call's params) gets a task instead of a
//! result when it calls one of [`TOOLS`]: the call returns at once with the
//! task's id, and the work goes on in the server.
//! `tasks/get` reports `working` with a status message (how long, and the
//! pane's last line), then `completed` with the result the plain call would
//! have returned; `tasks/cancel` stops the wait (and presses C-c in the
//! pane of a `run_command`), and the task ends `cancelled` with a status
//! message saying what happened.
//!
//! A question the call has for the person (an approval, a secret typed on
//! the secret page) makes the task `input_required`, as does a program that
//! waits for input in a `run_command`: the client answers through
//! `tasks/update`, termpilot types the answer (the same approval and secret
//! rules as `send_keys` and `type_secret`: a hidden prompt is answered by
//! the person on the secret page, never through the client) and the task
//! goes on waiting for the command.
//!
//! A task's progress goes out on the progress token of the request that
//! started it, one total for its whole life ([`progress`]).
//!
//! Tasks belong to the server, not to a session: over HTTP a client that
//! reconnects (with the same bearer token) polls the same task. They are
//! bounded: at most `--max-tasks` run at once, and a task lives for the
//! longest wait plus [`RETENTION`], its result kept for as long again after
//! it ends.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    GetTaskResult, InputRequest, InputResponses, ProgressToken, StringSchema, Task,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::{ToolError, ToolResult};
use crate::oversight::Pending;
use crate::questions::Continuation;
use crate::server::{CallContext, Done, ServerOptions, TermpilotServer};

mod progress;
mod v2025;

use progress::Progress;
pub(crate) use v2025::{announce, answer, rename, renamed};

/// The tools whose calls may run as tasks: the ones that wait.
pub const TOOLS: [&str; 6] = [
    "run_command",
    "wait_for_command",
    "wait_for_text",
    "wait_for_idle",
    "wait_for_channel",
    "run_batch",
];

/// How many tasks may run at once unless the operator says otherwise.
pub const DEFAULT_MAX_TASKS: usize = 32;

/// How long a task is kept beyond the longest wait.
const RETENTION: Duration = Duration::from_secs(15 * 60);

/// How many tasks are kept (running or finished) for each that may run.
const KEPT_PER_RUNNING: usize = 8;

/// How often a client is asked to poll.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How often a running task's status message is brought up to date.
const STATUS_EVERY: Duration = Duration::from_secs(1);

/// How long a cancelled `run_command` gets, after its C-c, to return to
/// its prompt before the wait is given up.
const INTERRUPT_GRACE: Duration = Duration::from_secs(10);

/// The secret name `type_secret` is called with when the person answers a
/// hidden prompt during a task. It has a space, which no configured secret's
/// name may have, so the person is always asked: nothing is typed that
/// nobody chose for this prompt.
const SECRET_NAME: &str = "hidden prompt";

/// The server's tasks.
pub(crate) struct Tasks {
    manager: TaskManager,
    max: usize,
    ttl: Duration,
    /// The ids of the tasks kept (running, or finished and not yet
    /// expired), oldest first; held while a task is counted and started, so
    /// that two calls at once cannot both take the last place. A std
    /// `Mutex`: nothing inside awaits.
    kept: Mutex<VecDeque<String>>,
}

impl Tasks {
    /// An empty store for a server with these options.
    pub(crate) fn new(options: &ServerOptions) -> Tasks {
        Tasks {
            manager: TaskManager::new(),
            max: options.max_tasks,
            ttl: Duration::from_secs_f64(options.max_wait_s) + RETENTION,
            kept: Mutex::default(),
        }
    }

    /// Whether one more task may start: fewer than the most running, and
    /// fewer kept than [`KEPT_PER_RUNNING`] times that (finished tasks keep
    /// their results until they expire). Forgets the expired ones.
    fn room(&self, kept: &mut VecDeque<String>) -> Result<(), String> {
        kept.retain(|id| self.manager.get_task(id).is_ok());
        if self.manager.running_task_count() >= self.max {
            return Err(format!(
                "{} tasks already run, the most this server allows (--max-tasks); wait for one \
                 to end, cancel one with tasks/cancel, or call without tasks",
                self.max
            ));
        }
        if kept.len() >= self.max * KEPT_PER_RUNNING {
            return Err(format!(
                "{} tasks are kept with their results, the most this server allows \
                 ({KEPT_PER_RUNNING} times --max-tasks); the oldest expires {} min after it \
                 ended, or call without tasks",
                kept.len(),
                self.ttl.as_secs() / 60
            ));
        }
        Ok(())
    }

    /// `tasks/get`.
    pub(crate) fn get(&self, id: &str) -> Result<GetTaskResult, McpError> {
        self.manager.get_task(id).map(GetTaskResult::new)
    }

    /// `tasks/update`: the client's answers to the task's input requests.
    pub(crate) fn update(&self, id: &str, responses: InputResponses) -> Result<(), McpError> {
        self.manager.update_task(id, responses)
    }

    /// `tasks/cancel`.
    pub(crate) fn cancel(&self, id: &str) -> Result<(), McpError> {
        self.manager.cancel_task(id)
    }

    /// The ids of the tasks kept, oldest first.
    fn kept(&self) -> Vec<String> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|id| self.manager.get_task(id).is_ok());
        kept.iter().cloned().collect()
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").field("max", &self.max).finish()
    }
}

/// Whether this call is to run as a task: a tool that waits, called by a
/// client that declared the tasks extension, and not the retry of an
/// input-required result (which finishes as a plain call).
pub(crate) fn wanted(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> bool {
    TOOLS.contains(&&*request.name)
        && request.request_state.is_none()
        && request.input_responses.is_none()
        && context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// A call running as a task: what it needs besides the server.
struct Job {
    name: String,
    arguments: Value,
    call: CallContext,
    audit: Option<Pending>,
    /// The request that started the task: who asked, over which transport,
    /// for the audit lines of what the task types on its own.
    context: RequestContext<RoleServer>,
    /// The pane the call works in, when its arguments name one.
    pane: Option<String>,
    /// Input requests asked so far (their keys are unique over the task).
    asked: usize,
    /// Who started the task: what its calls keep (outputs, questions) is
    /// theirs, as it would be for the plain call.
    caller: crate::caller::Caller,
    /// The progress token of the request that started the task: it stays
    /// valid for the task's life (protocol 2025-11-25 says so), and the
    /// task's progress goes out on it (see [`TermpilotServer::report_status`]).
    progress: Option<ProgressToken>,
    /// The total of every progress notification: the longest the call may
    /// wait.
    total: Duration,
}

impl TermpilotServer {
    /// Starts the call as a task and returns the task (protocol
    /// 2026-07-28).
    pub(crate) fn start_task(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        match self.spawn_task(request, context) {
            Ok(task) => CallToolResponse::Task(CreateTaskResult::new(task)),
            Err(refused) => refused.into(),
        }
    }

    /// Starts the call as a task, or says why it cannot start (too many
    /// tasks, the audit log down) as the call's result.
    pub(crate) fn spawn_task(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Task, CallToolResult> {
        let tasks = &self.tasks;
        let mut kept = tasks.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(message) = tasks.room(&mut kept) {
            return Err(CallToolResult::error(vec![ContentBlock::text(message)]));
        }
        let name = request.name.to_string();
        let progress = request
            .meta
            .as_ref()
            .and_then(|meta| meta.get_progress_token());
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let audit = match self.oversight.begin_admitted(&name, &arguments, context) {
            Ok(audit) => audit,
            Err(problem) => return Err(crate::server::audit_refused(&problem)),
        };
        let job = Job {
            audit,
            call: CallContext::detached(
                context.peer.clone(),
                context.client_capabilities(),
                CancellationToken::new(),
            ),
            pane: arguments["pane"].as_str().map(str::to_owned),
            progress: progress.or_else(|| context.meta.get_progress_token()),
            total: self.longest(&name, &arguments),
            context: context.clone(),
            name,
            arguments,
            asked: 0,
            caller: crate::caller::Caller::of(context),
        };
        let options = TaskOptions::new()
            .with_ttl_ms(tasks.ttl.as_millis() as u64)
            .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64)
            .with_status_message(format!("{}: started", job.name));
        let server = self.clone();
        let task = tasks
            .manager
            .spawn(options, move |task| Box::pin(server.run_task(job, task)));
        kept.push_back(task.task_id.clone());
        Ok(task)
    }

    /// The longest the call may wait: its `timeout_s` (capped by
    /// `--max-wait-s`), or for a batch, whose steps wait one after another,
    /// `--max-wait-s` itself. The total of the task's progress.
    fn longest(&self, name: &str, arguments: &Value) -> Duration {
        match name {
            "run_batch" => Duration::from_secs_f64(self.options.max_wait_s),
            _ => self.wait_time(arguments["timeout_s"].as_f64()),
        }
    }

    /// Runs the job to its end: its result, or `cancelled`.
    async fn run_task(self, mut job: Job, task: TaskContext) -> Result<CallToolResult, TaskExit> {
        let started = Instant::now();
        // Aborted when the job ends, or when the task is dropped (its TTL).
        let _stop = AbortOnDrop(tokio::spawn(
            self.clone().stop_on_cancel(&job, task.clone()),
        ));
        let status = self.clone().report_status(&job, task.clone());
        let caller = job.caller.clone();
        let outcome = tokio::select! {
            outcome = caller.scope(self.work(&mut job, &task)) => outcome,
            never = status => match never {},
        };
        let result = self.settle(outcome, job.audit.take(), &job.call);
        let message = match task.is_cancel_requested() {
            true => cancelled(&job.name, &result),
            false => {
                let how = match result.is_error {
                    Some(true) => "ended with an error",
                    _ => "done",
                };
                let seconds = started.elapsed().as_secs_f64();
                format!("{}: {how} after {seconds:.1} s", job.name)
            }
        };
        task.set_status_message(message.clone());
        let progress = Progress::new(job.progress.clone(), job.call.peer().clone(), job.total);
        if let Some(progress) = progress {
            progress.done(message).await;
        }
        match task.is_cancel_requested() {
            true => Err(TaskExit::Cancelled),
            false => Ok(result),
        }
    }

    /// The call, its questions answered through the task, and a program
    /// that waits for input in a command answered through the task too.
    async fn work(&self, job: &mut Job, task: &TaskContext) -> ToolResult<Done> {
        let (name, arguments) = (job.name.clone(), job.arguments.clone());
        let mut outcome = self
            .answering(&name, arguments, &mut job.call, &mut job.asked, task)
            .await;
        while let Ok(done) = &outcome {
            let Some(waiting) = Waiting::of(&done.structured) else {
                break;
            };
            let answered = match task.is_cancel_requested() {
                true => Ok(false),
                false => self.answer_program(&waiting, job, task).await,
            };
            if task.is_cancel_requested() {
                return self.after_interrupt(&waiting, job).await;
            }
            if !answered? {
                break;
            }
            let again = json!({
                "command_id": waiting.command_id,
                "timeout_s": job.arguments.get("timeout_s"),
                "max_tokens": job.arguments.get("max_tokens"),
                "input_settle_ms": job.arguments.get("input_settle_ms"),
            });
            outcome = self
                .answering(
                    "wait_for_command",
                    again,
                    &mut job.call,
                    &mut job.asked,
                    task,
                )
                .await;
        }
        outcome
    }

    /// What became of a command that waited for input when its task was
    /// cancelled: the C-c of a `run_command` ends it, which a short wait
    /// for the command shows.
    async fn after_interrupt(&self, waiting: &Waiting, job: &Job) -> ToolResult<Done> {
        let arguments = json!({
            "command_id": waiting.command_id,
            "timeout_s": INTERRUPT_GRACE.as_secs_f64(),
            "max_tokens": job.arguments.get("max_tokens"),
        });
        let arguments = crate::validate::nulls_as_absent(arguments);
        let call = CallContext::detached(job.call.peer().clone(), None, CancellationToken::new());
        self.call("wait_for_command", arguments, &call).await
    }

    /// Calls tool `name`; each question it asks the person becomes an input
    /// request of the task, and the call is made again with the answers.
    async fn answering(
        &self,
        name: &str,
        arguments: Value,
        call: &mut CallContext,
        asked: &mut usize,
        task: &TaskContext,
    ) -> ToolResult<Done> {
        call.answer_with(Continuation::default());
        loop {
            let arguments = crate::validate::nulls_as_absent(arguments.clone());
            let input = match self.call(name, arguments, call).await {
                Err(ToolError::NeedsInput(input)) => input,
                outcome => return outcome,
            };
            let mut responses = InputResponses::new();
            for (key, request) in input.input_requests.unwrap_or_default() {
                responses.insert(key, ask(asked, task, request).await?);
            }
            call.answer_with(Continuation {
                responses: Some(responses),
                state: input.request_state,
            });
        }
    }

    /// Answers a program waiting for input through the task: a hidden
    /// prompt by the person on the secret page (`type_secret`), any other
    /// by the client's answer (typed as `send_keys` would). False when the
    /// answer is to leave it waiting.
    async fn answer_program(
        &self,
        waiting: &Waiting,
        job: &mut Job,
        task: &TaskContext,
    ) -> ToolResult<bool> {
        if waiting.secret {
            let arguments = json!({"pane": waiting.pane, "name": SECRET_NAME, "enter": true});
            return Ok(self.typing("type_secret", arguments, job, task).await);
        }
        let answer = ask(&mut job.asked, task, waiting.question()?).await?;
        let answer: ElicitResult = serde_json::from_value(answer)
            .map_err(|e| ToolError::refused(format!("the answer is no elicitation result: {e}")))?;
        let text = match (&answer.action, &answer.content) {
            (ElicitationAction::Accept, Some(content)) => content["answer"].as_str(),
            _ => None,
        };
        let Some(text) = text else {
            return Ok(false);
        };
        let arguments = json!({"pane": waiting.pane, "text": text, "enter": true});
        Ok(self.typing("send_keys", arguments, job, task).await)
    }

    /// Types into a pane on the task's own account (an answer to a
    /// program), as a call of its own: its own approval, its own audit
    /// line. Whether it was typed.
    async fn typing(
        &self,
        name: &str,
        arguments: Value,
        job: &mut Job,
        task: &TaskContext,
    ) -> bool {
        let audit = self.oversight.begin(name, &arguments, &job.context);
        let mut call = CallContext::detached(
            job.context.peer.clone(),
            job.context.client_capabilities(),
            job.call.cancellation(),
        );
        let outcome = self
            .answering(name, arguments, &mut call, &mut job.asked, task)
            .await;
        self.settle(outcome, audit, &call).is_error != Some(true)
    }

    /// Waits for `tasks/cancel`, then stops the job: a `run_command` by
    /// pressing C-c in its pane (the wait then sees the command end,
    /// interrupted), and any job, or one whose command does not stop, by
    /// ending its wait.
    fn stop_on_cancel(
        self,
        job: &Job,
        task: TaskContext,
    ) -> impl Future<Output = ()> + Send + 'static {
        let (name, pane) = (job.name.clone(), job.pane.clone());
        let stop = job.call.cancellation();
        let context = job.context.clone();
        async move {
            task.cancelled().await;
            // `cancelled` also returns when the task is gone.
            if !task.is_cancel_requested() {
                return;
            }
            if let (Some(pane), "run_command") = (pane, name.as_str()) {
                let interrupt = json!({"pane": pane, "keys": ["C-c"]});
                let audit = self.oversight.begin("send_keys", &interrupt, &context);
                let call = CallContext::detached(context.peer, None, CancellationToken::new());
                // A task of its own: the command may end at the C-c before
                // this call returns, and ending the job (which aborts this
                // future) must not abandon the C-c's own call and audit line.
                let server = self.clone();
                let typed = tokio::spawn(async move {
                    let outcome = server.call("send_keys", interrupt, &call).await;
                    server.settle(outcome, audit, &call).is_error != Some(true)
                });
                if typed.await.unwrap_or(false) {
                    tokio::time::sleep(INTERRUPT_GRACE).await;
                }
            }
            stop.cancel();
        }
    }

    /// Keeps the task's status message up to date: how long it has run,
    /// and the last line of its pane; the same goes out as the task's
    /// progress when its request gave a progress token. Never returns.
    fn report_status(
        self,
        job: &Job,
        task: TaskContext,
    ) -> impl Future<Output = std::convert::Infallible> + Send + 'static {
        let (name, pane) = (job.name.clone(), job.pane.clone());
        let call = CallContext::detached(job.call.peer().clone(), None, CancellationToken::new());
        let mut progress = Progress::new(job.progress.clone(), job.call.peer().clone(), job.total);
        async move {
            let started = Instant::now();
            loop {
                tokio::time::sleep(STATUS_EVERY).await;
                let seconds = started.elapsed().as_secs_f64();
                let mut message = format!("{name}: working for {seconds:.0} s");
                if let Some(line) = self.last_line(pane.as_deref(), &call).await {
                    message.push_str(&format!("; last line: {line}"));
                }
                task.set_status_message(message.clone());
                if let Some(progress) = &mut progress {
                    progress.working(started.elapsed(), message).await;
                }
            }
        }
    }

    /// The last line with text on the pane's screen, secrets hidden.
    async fn last_line(&self, pane: Option<&str>, call: &CallContext) -> Option<String> {
        let arguments = json!({"pane": pane?, "max_tokens": 200});
        let screen = self.call("capture_pane", arguments, call).await;
        let screen = self.redact_outcome(screen).ok()?;
        let text = screen.structured["text"].as_str()?;
        let line = text.lines().rev().find(|line| !line.trim().is_empty())?;
        Some(line.trim_end().chars().take(200).collect())
    }
}

/// A spawned piece of a task, stopped when the task's future ends or is
/// dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Asks the client `request` as the task's next input request, and waits
/// for its answer (`tasks/update`).
async fn ask(asked: &mut usize, task: &TaskContext, request: InputRequest) -> ToolResult<Value> {
    *asked += 1;
    let key = format!("question-{asked}");
    task.request_input(key, request).await.map_err(|_| {
        ToolError::refused("the task was cancelled while it waited for an answer; nothing typed")
    })
}

/// A command waiting for input, from a `run_command` or `wait_for_command`
/// result.
struct Waiting {
    pane: String,
    command_id: String,
    prompt: String,
    program: String,
    secret: bool,
}

impl Waiting {
    fn of(result: &Value) -> Option<Waiting> {
        if result["awaiting_input"] != true {
            return None;
        }
        Some(Waiting {
            pane: result["pane"].as_str()?.to_owned(),
            command_id: result["command_id"].as_str()?.to_owned(),
            prompt: result["prompt"].as_str().unwrap_or_default().to_owned(),
            program: result["program"]
                .as_str()
                .unwrap_or("the command")
                .to_owned(),
            secret: result["secret"] == true,
        })
    }

    /// The question for the client: what to type at the prompt.
    fn question(&self) -> ToolResult<InputRequest> {
        let schema = ElicitationSchema::builder()
            .required_string_with("answer", |s: StringSchema| {
                s.title("Answer")
                    .description("the text termpilot types at the prompt, then Enter")
            })
            .build()
            .map_err(|e| ToolError::Failed(format!("cannot build the question: {e}")))?;
        let message = format!(
            "{} in pane {} waits for input at {:?}. What should termpilot type?",
            self.program, self.pane, self.prompt
        );
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        Ok(InputRequest::Elicitation(ElicitRequest::new(params)))
    }
}

/// The status message of a cancelled task: what the call had done.
fn cancelled(name: &str, result: &CallToolResult) -> String {
    let said = result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.lines().next().unwrap_or_default().to_owned())
        .unwrap_or_default();
    match result.structured_content.as_ref() {
        Some(entry) if entry["interrupted"] == true => format!(
            "cancelled: termpilot pressed C-c and the command stopped (interrupted after {:.1} \
             s)",
            entry["elapsed_s"].as_f64().unwrap_or_default()
        ),
        Some(entry) if name == "run_command" && entry["exit_code"].is_number() => {
            format!("cancelled, but the command had ended first: {said}")
        }
        _ if name == "run_command" => format!(
            "cancelled: termpilot pressed C-c, but the command did not return to the prompt \
             within {} s; it may still run ({said})",
            INTERRUPT_GRACE.as_secs()
        ),
        _ => format!("cancelled: the {name} call stopped ({said})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(entry: Value) -> CallToolResult {
        let mut result = CallToolResult::success(vec![ContentBlock::text("exit code 0\nout")]);
        result.structured_content = Some(entry);
        result
    }

    #[test]
    fn only_a_command_waiting_for_input_is_answered() {
        let waiting = json!({"awaiting_input": true, "pane": "%3", "command_id": "tp1",
            "prompt": "Name? ", "program": "read", "secret": false});
        let found = Waiting::of(&waiting).expect("a command waiting");
        assert_eq!(
            (found.pane.as_str(), found.command_id.as_str()),
            ("%3", "tp1")
        );
        assert!(!found.secret);
        let secret =
            json!({"awaiting_input": true, "pane": "%3", "command_id": "tp1", "secret": true});
        assert!(Waiting::of(&secret).unwrap().secret);
        // A wait's awaiting_input has no command to go back to.
        assert!(Waiting::of(&json!({"awaiting_input": true, "pane": "%3"})).is_none());
        assert!(
            Waiting::of(&json!({"awaiting_input": false, "pane": "%3", "command_id": "x"}))
                .is_none()
        );
    }

    #[test]
    fn the_question_names_the_prompt_and_asks_for_one_answer() {
        let waiting = Waiting::of(&json!({"awaiting_input": true, "pane": "%3",
            "command_id": "tp1", "prompt": "Continue? [y/N] ", "program": "apt"}))
        .unwrap();
        let InputRequest::Elicitation(request) = waiting.question().unwrap() else {
            panic!("not an elicitation");
        };
        let asked = serde_json::to_value(&request.params).unwrap();
        let message = asked["message"].as_str().unwrap();
        assert!(message.contains("apt in pane %3") && message.contains("Continue? [y/N]"));
        assert_eq!(asked["requestedSchema"]["required"], json!(["answer"]));
    }

    #[test]
    fn a_cancelled_task_says_what_happened_to_its_command() {
        let stopped = result(json!({"interrupted": true, "elapsed_s": 2.5}));
        assert!(cancelled("run_command", &stopped).contains("pressed C-c and the command stopped"));
        let ended = result(json!({"interrupted": false, "exit_code": 0}));
        assert!(cancelled("run_command", &ended).contains("had ended first: exit code 0"));
        let stuck = CallToolResult::error(vec![ContentBlock::text("cancelled")]);
        assert!(cancelled("run_command", &stuck).contains("may still run"));
        assert!(cancelled("wait_for_text", &stuck).contains("wait_for_text call stopped"));
    }
}
