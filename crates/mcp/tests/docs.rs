//! `docs/tools.md` is generated from the published tool list, so the
//! reference cannot drift from what clients see. When a tool changes, this
//! test fails; regenerate the file with
//! `UPDATE_DOCS=1 cargo test -p termpilot-mcp --test docs`.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Map, Value};
use termpilot_mcp::{DEFAULT_MAX_TASKS, INSTRUCTIONS, TASK_TOOLS, Toolset, Toolsets};

fn docs_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.md")
}

/// The toolset that publishes `tool`.
fn toolset_of(tool: &str) -> String {
    for set in [
        Toolset::ReadOnly,
        Toolset::Input,
        Toolset::Lifecycle,
        Toolset::Destructive,
    ] {
        let only = Toolsets::parse(&set.to_string()).expect("a toolset's own name parses");
        if only.tools().iter().any(|t| t.name == tool) {
            return set.to_string();
        }
    }
    "?".into()
}

/// A schema's type in a few words: `string`, `integer`, `array of string`,
/// `string or array of string`, `"stop" or "continue"`.
fn type_of(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        return names.join(" or ");
    }
    if let Some(value) = schema.get("const") {
        return format!("`{value}`");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let names: Vec<String> = options.iter().map(type_of).collect();
            return names.join(" or ");
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => match schema.get("items") {
            Some(items) => format!("array of {}", type_of(items)),
            None => "array".into(),
        },
        Some(name) => name.into(),
        None => "any".into(),
    }
}

/// The bounds a schema enforces, as `1..=256 chars`, `0..=3600`, `1..=100 items`.
fn bounds_of(schema: &Value) -> String {
    let range = |low: &str, high: &str, unit: &str| {
        let low = schema.get(low).map(Value::to_string);
        let high = schema.get(high).map(Value::to_string);
        match (low, high) {
            (None, None) => None,
            (low, high) => Some(format!(
                "{}..={}{unit}",
                low.unwrap_or_default(),
                high.unwrap_or_default()
            )),
        }
    };
    [
        range("minLength", "maxLength", " chars"),
        range("minimum", "maximum", ""),
        range("minItems", "maxItems", " items"),
        schema
            .get("pattern")
            .map(|p| format!("pattern `{}`", p.as_str().unwrap_or(""))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
}

fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// A table of an object schema's properties.
fn properties_table(out: &mut String, schema: &Map<String, Value>, with_required: bool) {
    let properties = schema.get("properties").and_then(Value::as_object);
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        out.push_str("None.\n");
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if with_required {
        out.push_str("| argument | type | required | bounds | meaning |\n|---|---|---|---|---|\n");
    } else {
        out.push_str("| field | type | meaning |\n|---|---|---|\n");
    }
    for (name, property) in properties {
        let kind = one_line(&type_of(property));
        let meaning = one_line(
            property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        if with_required {
            let needed = if required.contains(&name.as_str()) {
                "yes"
            } else {
                "no"
            };
            let bounds = one_line(&bounds_of(property));
            writeln!(
                out,
                "| `{name}` | {kind} | {needed} | {bounds} | {meaning} |"
            )
            .unwrap();
        } else {
            writeln!(out, "| `{name}` | {kind} | {meaning} |").unwrap();
        }
    }
}

fn annotations_of(tool: &rmcp::model::Tool) -> String {
    let Some(a) = &tool.annotations else {
        return String::new();
    };
    let flag = |name: &str, value: Option<bool>| value.map(|v| format!("`{name}: {v}`"));
    [
        flag("readOnlyHint", a.read_only_hint),
        flag("destructiveHint", a.destructive_hint),
        flag("idempotentHint", a.idempotent_hint),
        flag("openWorldHint", a.open_world_hint),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
}

/// Which tools run as MCP tasks, and how a client uses them.
fn tasks_section(out: &mut String) {
    let tools: Vec<String> = TASK_TOOLS.iter().map(|t| format!("`{t}`")).collect();
    writeln!(
        out,
        "\n## Long calls as tasks\n\n\
         {} run as MCP tasks, in either flavour of the protocol: the call returns a task at \
         once and the work goes on in the server. Other tools, and calls that do not ask for \
         a task, get the plain result. Both flavours share one store of tasks.\n\n\
         Protocol 2026-07-28 (extension `io.modelcontextprotocol/tasks`): the request declares \
         the extension in its client capabilities \
         (`_meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions`).\n\n\
         - The call returns `resultType: \"task\"`, a `taskId`, `ttlMs` and `pollIntervalMs` \
         (1 s).\n\
         - `tasks/get` reports `working` with a `statusMessage` (how long it has run and the \
         pane's last line), then `completed` with `result`, the result the plain call returns.\n\
         - A question for the person (an approval, a secret typed on the secret page) and a \
         program waiting for input in a `run_command` or `wait_for_command` make the task \
         `input_required`, with `inputRequests` (elicitations); answer with `tasks/update` and \
         `inputResponses`.\n\n\
         Protocol 2025-11-25 (experimental there): the server declares the `tasks` capability \
         (`list`, `cancel`, `requests.tools.call`) and each tool its \
         `execution.taskSupport` in `tools/list` (`optional` for these, `forbidden` for the \
         rest; asking for a task of those is error -32601).\n\n\
         - The client adds `\"task\": {{}}` to the params of `tools/call` and gets \
         `{{\"task\": {{taskId, status, ttl, pollInterval, ...}}}}`; termpilot keeps its own \
         `ttl`, which the answer states.\n\
         - `tasks/get` reports the status as above (a call that ended with `isError` is \
         `failed`); `tasks/result` waits for the end and returns the call's result, with \
         `_meta[\"io.modelcontextprotocol/related-task\"]`; `tasks/list` lists the tasks kept.\n\
         - When the task is `input_required`, its questions reach the client as \
         `elicitation/create` requests tied to the task (`related-task` in `_meta`) while the \
         client waits on `tasks/result`.\n\n\
         In both, a form answer `{{\"answer\": TEXT}}` to a program's prompt is typed followed \
         by Enter (approval rules apply); a hidden prompt is answered by the person on the \
         secret page (URL mode), never through the client's answer. Declining a program's \
         prompt ends the task with the awaiting_input result (the command keeps waiting; its \
         `command_id` picks it up).\n\n\
         - `tasks/cancel` ends the wait; for `run_command` termpilot first presses C-c in the \
         pane. The task ends `cancelled`; its `statusMessage` says what became of the command \
         (on 2025-11-25 the answer is the task, once it has stopped).\n\
         - A call that gives a `progressToken` gets the task's progress on it for the task's \
         life: seconds of the longest the call may wait (its `timeout_s`; `--max-wait-s` for \
         `run_batch`) as one `total`, values that only increase, the total when the task ends.\n\
         - Tasks belong to the server, not to a connection: over HTTP any request with the \
         bearer token can poll a task. At most `--max-tasks` (default {}) run at once; a task \
         lives for the longest wait (`--max-wait-s`) plus 15 minutes, and its result is kept \
         as long again after it ends; at most 8 times `--max-tasks` are kept, running or \
         finished.",
        tools.join(", "),
        DEFAULT_MAX_TASKS
    )
    .unwrap();
}

fn render() -> String {
    let mut out = String::new();
    out.push_str(
        "# termpilot tools\n\n\
         Generated from the published tool list by `crates/mcp/tests/docs.rs`; do not edit by \
         hand. Regenerate with `UPDATE_DOCS=1 cargo test -p termpilot-mcp --test docs`.\n\n\
         ## Rules every tool shares\n\n\
         The server sends these instructions once, in `initialize`:\n\n",
    );
    for line in INSTRUCTIONS.lines() {
        writeln!(out, "> {line}").unwrap();
    }
    out.push_str(
        "\n## Errors\n\n\
         - A mistake the caller can fix (an argument outside its bounds, a missing pane, an \
         unknown key name, a refused target) is a tool result with `isError: true` and a \
         message saying what was wrong and what to do next.\n\
         - A tool the server does not publish (unknown, or in a toolset that is off) is a \
         JSON-RPC error -32602 (`unknown tool: NAME`); malformed JSON is -32700 with \
         `id: null`; a request that is not valid JSON-RPC is -32600.\n\
         - A wait that times out is a normal result (`outcome: \"timeout\"`), not an error.\n",
    );
    tasks_section(&mut out);
    out.push_str("\n## Tools\n\n| tool | toolset | title |\n|---|---|---|\n");
    let tools = Toolsets::parse("all").expect("all parses").tools();
    for tool in &tools {
        let title = tool.title.as_deref().unwrap_or("");
        writeln!(
            out,
            "| [`{0}`](#{0}) | {1} | {title} |",
            tool.name,
            toolset_of(&tool.name)
        )
        .unwrap();
    }
    for tool in &tools {
        writeln!(out, "\n### {}\n", tool.name).unwrap();
        if let Some(description) = &tool.description {
            writeln!(out, "{}\n", one_line(description)).unwrap();
        }
        writeln!(
            out,
            "Toolset: {}. Annotations: {}.\n",
            toolset_of(&tool.name),
            annotations_of(tool)
        )
        .unwrap();
        out.push_str("Arguments:\n\n");
        properties_table(&mut out, &tool.input_schema, true);
        out.push_str("\nResult (`structuredContent`):\n\n");
        match &tool.output_schema {
            Some(schema) => properties_table(&mut out, schema, false),
            None => out.push_str("None.\n"),
        }
    }
    out
}

#[test]
fn docs_tools_md_matches_the_published_tools() {
    let fresh = render();
    let path = docs_path();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &fresh).expect("docs/tools.md is writable");
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == fresh,
        "docs/tools.md is out of date with the published tools: regenerate it with \
         `UPDATE_DOCS=1 cargo test -p termpilot-mcp --test docs`"
    );
}
