//! The tool catalog: what a tool is ([`Tool`]), and the table of every tool
//! termpilot has ([`SPECS`]), in the order `tools/list` publishes them.
//!
//! A tool's name, description, argument and result types and handler are
//! declared together, once, in its family's module under `tools`; this table
//! only lists the tools.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Tool as PublishedTool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::approval::Piece;
use crate::error::ToolResult;
use crate::schema::{input, output};
use crate::scope::Scope;
use crate::server::{CallContext, Done, TermpilotServer};
use crate::tools::{
    batch, capture, channels, commands, export_recording, input as typing, lifecycle, run_batch,
    secrets, sessions, waits,
};
use crate::toolset::{Toolset, Toolsets};
use crate::validate::parse;

/// What the server tells a client once, at initialisation: how to start, and
/// the rules every tool shares, so that no tool description repeats them.
pub(crate) const INSTRUCTIONS: &str = "termpilot gives you real terminals in tmux. Find panes \
    with list_panes (or make one with create_session), type with send_keys, read with \
    capture_pane. Rules shared by all tools:\n\
    - Targets: `pane` is a pane id such as %3 (stable; from list_panes or a create tool) or \
    session:window.pane such as work:1.0; `session` an exact name or id ($1); `window` \
    session:window (work:1) or id (@3). Relative or special targets (., -, +, {next}, ^) are \
    refused. On another host (list_sessions shows each entry's `host`) every id and target \
    starts with the host's name: build/%3, build/work:1.0.\n\
    - Cursors: send_keys, paste_text, captures and waits return a `cursor`, a position in the \
    pane's output. Pass it as `since` to a wait or as `cursor` to capture_since to get exactly \
    the output after it, even what scrolled past.\n\
    - Budgets: text is cut to `max_tokens` (first and last lines kept, one line says what was \
    left out); a cut result has an `output_id` to page through with read_output, instead of \
    asking again with a huge budget.\n\
    - Timeouts: `timeout_s` is capped by the server's ceiling; a timeout is a normal outcome, \
    not an error.\n\
    - Input: waits and run_command end early with outcome awaiting_input when the pane's \
    program waits for input (a prompt, [Y/n], a REPL, a pager, an editor); `prompt` shows the \
    question, `secret: true` a password prompt, \"keys\" a program reading single keys, \
    \"screen\" a full-screen program shown as its screen. Answer with send_keys, type_secret \
    (secret prompts), or ask your person; then wait_for_command picks a run_command up again, \
    or give send_keys or type_secret a wait (send_keys: {\"for\": \"command\"}; type_secret: \"command\") \
    to answer and get what comes next in one call. \
    A command's later results show only output after what an awaiting_input result showed; \
    a full-screen program's drawing is left out of output (a line names it).\n\
    - run_command types its line inside a small wrapper; captures and tails show the line as \
    typed, without it.";

/// How a tool call ends: its result, or an error the caller can act on.
pub(crate) type Outcome = ToolResult<Done>;

/// How a tool affects the world, for its annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Only reads.
    Reads,
    /// Changes something; repeating it changes it again.
    Writes,
    /// Destroys something.
    Destroys,
    /// Runs arbitrary commands (typed input, or a new pane's `command`):
    /// anything can happen.
    Runs,
}

/// One tool: everything published about it, and what it does.
pub(crate) trait Tool {
    /// The name clients call it by.
    const NAME: &'static str;
    /// A short human-readable title.
    const TITLE: &'static str;
    /// When to use it and when not to.
    const DESCRIPTION: &'static str;
    /// The toolset that publishes it.
    const TOOLSET: Toolset;
    /// How it affects the world.
    const EFFECT: Effect;
    /// Its arguments; their doc comments and bounds make the input schema.
    type Params: DeserializeOwned + JsonSchema + Send;
    /// Its structured result; its doc comments make the output schema.
    type Output: JsonSchema;

    /// Runs the tool with checked arguments.
    fn call(
        server: &TermpilotServer,
        params: Self::Params,
        call: &CallContext,
    ) -> impl Future<Output = Outcome> + Send;

    /// The text a call with these (schema-checked) arguments would type,
    /// for approvals and the audit log; most tools type nothing.
    fn typed(_arguments: &Value) -> Vec<Piece> {
        Vec::new()
    }

    /// Arguments the call passes on to other tools (a batch's steps), each
    /// checked against that tool's schema.
    fn nested(_arguments: &Value) -> Vec<Nested> {
        Vec::new()
    }

    /// Refuses a call that the operator's scope does not allow, beyond its
    /// targets (which are checked for every tool).
    fn admit(_scope: &Scope, _arguments: &Value) -> ToolResult<()> {
        Ok(())
    }
}

/// Arguments a call hands on to another tool, such as a batch step's.
pub(crate) struct Nested {
    /// Where they are in the call's arguments ("steps.3.").
    pub(crate) prefix: String,
    /// The tool they are for, as the caller named it.
    pub(crate) tool: String,
    /// The arguments.
    pub(crate) arguments: Value,
}

type Handler = for<'a> fn(
    &'a TermpilotServer,
    Value,
    &'a CallContext,
) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// One tool's entry in the table: its published description and its hooks.
pub(crate) struct Spec {
    pub(crate) name: &'static str,
    title: &'static str,
    description: &'static str,
    pub(crate) toolset: Toolset,
    effect: Effect,
    input: fn() -> Arc<JsonObject>,
    output: fn() -> Arc<JsonObject>,
    pub(crate) handler: Handler,
    pub(crate) typed: fn(&Value) -> Vec<Piece>,
    pub(crate) nested: fn(&Value) -> Vec<Nested>,
    pub(crate) admit: fn(&Scope, &Value) -> ToolResult<()>,
}

/// The table entry of tool `T`.
const fn spec<T: Tool>() -> Spec {
    Spec {
        name: T::NAME,
        title: T::TITLE,
        description: T::DESCRIPTION,
        toolset: T::TOOLSET,
        effect: T::EFFECT,
        input: input::<T::Params>,
        output: output::<T::Output>,
        handler: handle::<T>,
        typed: T::typed,
        nested: T::nested,
        admit: T::admit,
    }
}

/// Parses the arguments into `T`'s parameters and runs `T`.
fn handle<'a, T: Tool>(
    server: &'a TermpilotServer,
    arguments: Value,
    call: &'a CallContext,
) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>> {
    Box::pin(async move {
        let params: T::Params = parse(T::NAME, arguments)?;
        T::call(server, params, call).await
    })
}

/// Every tool termpilot has, enabled or not, in the order they are published.
pub(crate) const SPECS: &[Spec] = &[
    spec::<sessions::ListSessions>(),
    spec::<sessions::ListPanes>(),
    spec::<capture::CapturePane>(),
    spec::<capture::CaptureSince>(),
    spec::<capture::ReadOutput>(),
    spec::<export_recording::ExportRecording>(),
    spec::<waits::WaitForText>(),
    spec::<waits::WaitForIdle>(),
    spec::<channels::WaitForChannel>(),
    spec::<channels::SignalChannel>(),
    spec::<commands::RunCommand>(),
    spec::<commands::WaitForCommand>(),
    spec::<typing::SendKeys>(),
    spec::<secrets::TypeSecret>(),
    spec::<typing::PasteText>(),
    spec::<batch::SendKeysBatch>(),
    spec::<run_batch::RunBatch>(),
    spec::<lifecycle::CreateSession>(),
    spec::<lifecycle::CreateWindow>(),
    spec::<lifecycle::SplitPane>(),
    spec::<lifecycle::KillSession>(),
    spec::<lifecycle::KillWindow>(),
    spec::<lifecycle::KillPane>(),
];

/// Every tool as published, built once.
static TOOLS: LazyLock<Vec<PublishedTool>> =
    LazyLock::new(|| SPECS.iter().map(Spec::build).collect());

impl Spec {
    /// The tool as published in `tools/list`.
    pub(crate) fn tool(&self) -> PublishedTool {
        TOOLS
            .iter()
            .find(|tool| tool.name == self.name)
            .expect("every spec is built")
            .clone()
    }

    fn build(&self) -> PublishedTool {
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(self.effect == Effect::Reads)
            .destructive(matches!(self.effect, Effect::Destroys | Effect::Runs))
            .idempotent(self.effect == Effect::Reads)
            .open_world(self.effect == Effect::Runs);
        PublishedTool::new(self.name, self.description, (self.input)())
            .with_title(self.title)
            .with_raw_output_schema((self.output)())
            .with_annotations(annotations)
    }
}

/// The tools a server publishes, given its toolsets.
pub(crate) fn enabled(toolsets: &Toolsets) -> Vec<&'static Spec> {
    SPECS
        .iter()
        .filter(|spec| toolsets.contains(spec.toolset))
        .collect()
}

/// Looks a tool up by name among all tools, enabled or not.
pub(crate) fn find(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|spec| spec.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_that_run_a_command_say_so() {
        for spec in SPECS {
            let tool = spec.tool();
            let runs_command = tool
                .input_schema
                .get("properties")
                .and_then(|p| p.get("command"))
                .is_some();
            let annotations = tool.annotations.expect("every tool has annotations");
            if runs_command {
                assert_eq!(annotations.open_world_hint, Some(true), "{}", spec.name);
                assert_eq!(annotations.destructive_hint, Some(true), "{}", spec.name);
            }
        }
        for name in [
            "create_session",
            "create_window",
            "split_pane",
            "run_command",
        ] {
            let annotations = find(name).unwrap().tool().annotations.unwrap();
            assert_eq!(annotations.open_world_hint, Some(true), "{name}");
        }
    }
}
