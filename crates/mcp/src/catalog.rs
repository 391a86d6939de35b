//! The tool catalog: every tool's name, title, description, annotations,
//! toolset and schemas, in one table.

use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use crate::params::*;
use crate::results::*;
use crate::toolset::{Toolset, Toolsets};

/// What the server tells a client once, at initialisation: how to start, and
/// the rules every tool shares, so that no tool description repeats them.
pub(crate) const INSTRUCTIONS: &str = "termpilot gives you real terminals in tmux. Find panes \
    with list_panes (or make one with create_session), type with send_keys, read with \
    capture_pane. Rules shared by all tools:\n\
    - Targets: `pane` is a pane id such as %3 (stable; from list_panes or a create tool) or \
    session:window.pane such as work:1.0; `session` an exact name or id ($1); `window` \
    session:window (work:1) or id (@3). Relative or special targets (., -, +, {next}, ^) are \
    refused.\n\
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
    question, `secret: true` a password prompt. Answer with send_keys, type_secret (secret \
    prompts), or ask your person; then wait_for_command picks a run_command up again.";

/// How a tool affects the world, for its annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
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

/// One tool's static description.
pub(crate) struct Spec {
    pub(crate) name: &'static str,
    title: &'static str,
    description: &'static str,
    pub(crate) toolset: Toolset,
    effect: Effect,
    input: fn() -> Arc<JsonObject>,
    output: fn() -> Arc<JsonObject>,
}

fn input<T: JsonSchema>() -> Arc<JsonObject> {
    schema_for::<T>(Side::Input)
}

fn output<T: JsonSchema>() -> Arc<JsonObject> {
    schema_for::<T>(Side::Output)
}

/// Which way a schema describes data: what a tool accepts, or what it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

/// A type's schema in the portable subset every client reads alike: JSON Schema
/// 2020-12 without `$schema`, `$ref` or `$defs`, without `type` arrays, with only
/// standard `format`s, and with `properties` on every object schema.
fn schema_for<T: JsonSchema>(side: Side) -> Arc<JsonObject> {
    let mut settings = match side {
        Side::Input => SchemaSettings::draft2020_12(),
        Side::Output => SchemaSettings::draft2020_12().for_serialize(),
    };
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).expect("a schema serialises");
    let Value::Object(root) = &mut value else {
        panic!(
            "the schema of {} is not an object",
            std::any::type_name::<T>()
        );
    };
    // The tool's description says what the arguments and the result are for.
    root.remove("title");
    root.remove("description");
    portable(&mut value, side);
    let Value::Object(root) = value else {
        unreachable!("still an object")
    };
    Arc::new(root)
}

/// The `format` values JSON Schema 2020-12 defines; schemars adds others
/// (`uint32`, `int64`, ...) that validators warn about.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Rewrites a schema and its subschemas into the portable subset.
///
/// A nullable type (`["integer", "null"]`, or `anyOf` with a `null` branch)
/// becomes, in an input, the plain type: an optional argument is one that is
/// not required, never one that may be null. In an output, where absent
/// values are written as null, it becomes `anyOf: [{type: X}, {type: null}]`.
fn portable(schema: &mut Value, side: Side) {
    let Value::Object(object) = schema else {
        return;
    };
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = object.get_mut(key) {
            children
                .values_mut()
                .for_each(|child| portable(child, side));
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = object.get_mut(key) {
            portable(child, side);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            children.iter_mut().for_each(|child| portable(child, side));
        }
    }
    drop_null_branch(object, side);
    split_type_array(object, side);
    consts_to_enum(object);
    if side == Side::Input {
        terse_parts(object);
    }
    if let Some(Value::String(format)) = object.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        if format.starts_with('u') && !object.contains_key("minimum") {
            object.insert("minimum".into(), 0.into());
        }
        object.remove("format");
    }
    if object.get("type") == Some(&Value::from("object")) && !object.contains_key("properties") {
        object.insert("properties".into(), Value::Object(Map::new()));
    }
}

/// Turns a `oneOf` of string constants (what schemars makes of an enum whose
/// variants have doc comments) into a plain `enum`.
fn consts_to_enum(object: &mut JsonObject) {
    let Some(Value::Array(branches)) = object.get("oneOf") else {
        return;
    };
    let plain = |branch: &Value| {
        branch.get("const").is_some_and(Value::is_string)
            && branch.as_object().is_some_and(|b| {
                b.keys()
                    .all(|k| matches!(k.as_str(), "const" | "type" | "description"))
            })
    };
    if !branches.iter().all(plain) {
        return;
    }
    let values: Vec<Value> = branches.iter().map(|b| b["const"].clone()).collect();
    object.remove("oneOf");
    object.insert("type".into(), "string".into());
    object.insert("enum".into(), Value::Array(values));
}

/// Drops, from an input schema, the descriptions of the parts of an argument
/// (an array's items, the branches of an `anyOf`): the argument's own
/// description covers them, and an agent reads every word of the tool list.
/// Batch steps are the arguments of single tools, described there.
fn terse_parts(object: &mut JsonObject) {
    if let Some(items) = object.get_mut("items") {
        drop_descriptions(items);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get_mut(key) {
            branches.iter_mut().for_each(drop_descriptions);
        }
    }
}

/// Removes every `description` in a schema and its subschemas.
fn drop_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.get("description").is_some_and(Value::is_string) {
                object.remove("description");
            }
            object.values_mut().for_each(drop_descriptions);
        }
        Value::Array(list) => list.iter_mut().for_each(drop_descriptions),
        _ => {}
    }
}

fn is_null_type(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::from("null"))
}

/// In an input, removes the `null` branch of an `anyOf`/`oneOf`, and merges a
/// lone remaining branch into the schema.
fn drop_null_branch(object: &mut JsonObject, side: Side) {
    if side != Side::Input {
        return;
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = object.get_mut(key) else {
            continue;
        };
        branches.retain(|branch| !is_null_type(branch));
        if branches.len() == 1 {
            let Some(Value::Object(only)) = branches.pop() else {
                continue;
            };
            object.remove(key);
            for (name, value) in only {
                // The outer schema's own words (its description) win.
                object.entry(name).or_insert(value);
            }
        }
    }
}

/// Replaces `type: [X, "null"]` as the module says.
fn split_type_array(object: &mut JsonObject, side: Side) {
    let Some(Value::Array(types)) = object.get("type") else {
        return;
    };
    let real: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    let nullable = real.len() < types.len();
    let [only] = real.as_slice() else {
        panic!("a schema accepts several types: {types:?}; use anyOf");
    };
    let only = only.clone();
    if side == Side::Input || !nullable {
        object.insert("type".into(), only);
        return;
    }
    // The words about the value stay outside; what constrains it moves into
    // the non-null branch.
    let mut branch = Map::new();
    branch.insert("type".into(), only);
    let keys: Vec<String> = object.keys().cloned().collect();
    for key in keys {
        if !matches!(key.as_str(), "type" | "description" | "title" | "default") {
            let value = object.remove(&key).expect("listed");
            branch.insert(key, value);
        }
    }
    object.remove("type");
    let mut branch = Value::Object(branch);
    portable(&mut branch, side);
    let null = serde_json::json!({"type": "null"});
    object.insert("anyOf".into(), Value::Array(vec![branch, null]));
}

/// Every tool termpilot has, enabled or not.
pub(crate) const SPECS: &[Spec] = &[
    Spec {
        name: "list_sessions",
        title: "List tmux sessions",
        description: "List tmux sessions with their window count and attached clients.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<NoParams>,
        output: output::<SessionList>,
    },
    Spec {
        name: "list_panes",
        title: "List panes",
        description: "List panes (all, or one session's or window's) with id, size, cwd, foreground \
            program, and whether a full-screen program or copy mode is active.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<ListPanesParams>,
        output: output::<PaneList>,
    },
    Spec {
        name: "capture_pane",
        title: "Read a pane's screen",
        description: "Return a pane's screen, or with `scrollback` its history too. To follow output \
            after input, use capture_since or a wait with the cursor instead.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<CapturePaneParams>,
        output: output::<CaptureEntry>,
    },
    Spec {
        name: "capture_since",
        title: "Read new output",
        description: "Return only what a pane printed after `cursor`, control sequences removed, \
            with the next cursor; says how much was lost if the journal dropped old output.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<CaptureSinceParams>,
        output: output::<SinceEntry>,
    },
    Spec {
        name: "read_output",
        title: "Page through kept output",
        description: "Page through the full text of a cut result. `offset` skips lines \
            (negative: from the end); `grep` returns only matching lines, numbered.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<ReadOutputParams>,
        output: output::<PageEntry>,
    },
    Spec {
        name: "wait_for_text",
        title: "Wait for text in a pane",
        description: "Wait until a pane prints a text or regex. Every byte after `since` is \
            scanned, so output that scrolled past is not missed; the echo of what termpilot \
            typed does not count. For shell commands, run_command is simpler.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForTextParams>,
        output: output::<WaitEntry>,
    },
    Spec {
        name: "wait_for_idle",
        title: "Wait for a pane to go quiet",
        description: "Wait until a pane prints nothing for `quiet_ms`, when you cannot know what \
            it prints last (an installer, a redrawing REPL); else prefer wait_for_text.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForIdleParams>,
        output: output::<WaitEntry>,
    },
    Spec {
        name: "wait_for_channel",
        title: "Wait for a tmux channel",
        description: "Wait until a tmux wait-for channel is signalled, e.g. by `make; tmux \
            wait-for -S built` typed in a pane. Tells a signal from the tmux server exiting.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForChannelParams>,
        output: output::<ChannelEntry>,
    },
    Spec {
        name: "signal_channel",
        title: "Signal a tmux channel",
        description: "Signal a tmux wait-for channel, waking its waiters (a script in a pane, or \
            wait_for_channel); with none, the next waiter wakes at once.",
        toolset: Toolset::Input,
        effect: Effect::Writes,
        input: input::<SignalChannelParams>,
        output: output::<ChannelEntry>,
    },
    Spec {
        name: "run_command",
        title: "Run a shell command",
        description: "Run a command line in a pane's shell (cd and export persist); return its exit \
            code and its own output (no prompt, no echo). Needs a shell at its prompt; for a \
            REPL or full-screen program use send_keys. On timeout it keeps running: pass the \
            result's command_id to wait_for_command. It ends only once the shell has the \
            terminal back (a program cannot fake it); an output larger than the journal keeps \
            head and tail (lost_bytes). Captures show the line as typed, without termpilot's \
            markers.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<RunCommandParams>,
        output: output::<CommandEntry>,
    },
    Spec {
        name: "wait_for_command",
        title: "Wait for a running command",
        description: "Keep waiting for a command run_command left running (after a timeout or \
            awaiting_input); return its exit code and output. One interrupted with C-c returns \
            as interrupted once its shell is idle at its prompt again.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForCommandParams>,
        output: output::<CommandEntry>,
    },
    Spec {
        name: "send_keys",
        title: "Type into a pane",
        description: "Type literal `text` exactly as given (quotes, ;, $, tabs, Unicode unchanged), \
            then press the tmux `keys` named (\"C-c\", \"Up\", \"M-x\", \"F5\"), then Enter \
            (by default when text is given). For multi-line or long text use paste_text.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<SendKeysParams>,
        output: output::<SentEntry>,
    },
    Spec {
        name: "type_secret",
        title: "Type a configured secret",
        description: "Type a secret the person configured (termpilot serve --secret NAME=...) \
            into a pane whose program waits for it with echo off (a wait or run_command ended \
            with outcome awaiting_input and secret: true), then Enter. You never see the value, \
            and results show [secret NAME] wherever a program prints it. Refused when the pane \
            is not at a hidden prompt or the name is unknown (the error lists the names).",
        toolset: Toolset::Input,
        effect: Effect::Writes,
        input: input::<crate::secrets::TypeSecretParams>,
        output: output::<crate::secrets::SecretTypedEntry>,
    },
    Spec {
        name: "paste_text",
        title: "Paste text into a pane",
        description: "Paste text as a terminal paste (bracketed when the program asked for it), \
            newlines included, nothing interpreted: for scripts and file contents. A shell \
            taking bracketed pastes runs nothing until Enter: set enter to run it. A bracketed \
            paste refuses text containing ESC[200~ or ESC[201~ (it would end the paste early).",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<PasteTextParams>,
        output: output::<SentEntry>,
    },
    Spec {
        name: "send_keys_batch",
        title: "Type into panes, many at once",
        description: "Run up to 100 send_keys operations (any panes, in order) as one \
            pipelined tmux chain: far faster than separate calls when you know all the input. \
            Key names and sizes are checked before anything is sent; a missing pane fails its \
            own operation. on_error stop: nothing is sent after a failure; continue: every \
            operation runs and reports.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<SendKeysBatchParams>,
        output: output::<BatchEntry>,
    },
    Spec {
        name: "run_batch",
        title: "Run a pipeline of steps",
        description: "Run up to 100 steps in one call, each {\"op\": tool, ...its arguments} for \
            send_keys, paste_text, wait_for_text, wait_for_idle, capture_pane, capture_since or \
            run_command; each result has that tool's shape. A step's since/cursor may be \
            \"$prev\" (the latest earlier cursor) or \"$N\" (step N's, from 0). For sequences \
            known in advance. on_error as in send_keys_batch.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<RunBatchParams>,
        output: output::<RunBatchEntry>,
    },
    Spec {
        name: "create_session",
        title: "Create a session",
        description: "Create a detached tmux session running a shell or `command` (it can do \
            anything a shell can); return its first pane's id. The name is kept exactly or \
            refused. To add a terminal beside others, use create_window or split_pane.",
        toolset: Toolset::Lifecycle,
        effect: Effect::Runs,
        input: input::<CreateSessionParams>,
        output: output::<CreatedEntry>,
    },
    Spec {
        name: "create_window",
        title: "Create a window",
        description: "Add a window (a separate full-size terminal) to a session without \
            switching to it, running a shell or `command` (run as given); return its pane id.",
        toolset: Toolset::Lifecycle,
        effect: Effect::Runs,
        input: input::<CreateWindowParams>,
        output: output::<CreatedEntry>,
    },
    Spec {
        name: "split_pane",
        title: "Split a pane",
        description: "Split a pane; the new one goes right, left, below or above, and the old one \
            shrinks (its program sees a resize). `command` runs as given. Return the new pane's id.",
        toolset: Toolset::Lifecycle,
        effect: Effect::Runs,
        input: input::<SplitPaneParams>,
        output: output::<CreatedEntry>,
    },
    Spec {
        name: "kill_session",
        title: "Kill a session",
        description: "Kill a session and every program in it. Irreversible. Refused for the \
            session termpilot itself runs in. To stop one program, send C-c with send_keys \
            instead.",
        toolset: Toolset::Destructive,
        effect: Effect::Destroys,
        input: input::<KillSessionParams>,
        output: output::<KilledEntry>,
    },
    Spec {
        name: "kill_window",
        title: "Kill a window",
        description: "Kill a window and every program in its panes. Irreversible. Refused for \
            the window termpilot itself runs in.",
        toolset: Toolset::Destructive,
        effect: Effect::Destroys,
        input: input::<KillWindowParams>,
        output: output::<KilledEntry>,
    },
    Spec {
        name: "kill_pane",
        title: "Kill a pane",
        description: "Kill one pane and the program in it (the window closes with its last \
            pane). Irreversible. Refused for the pane termpilot itself runs in.",
        toolset: Toolset::Destructive,
        effect: Effect::Destroys,
        input: input::<KillPaneParams>,
        output: output::<KilledEntry>,
    },
];

/// Every tool as published, built once.
static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| SPECS.iter().map(Spec::build).collect());

impl Spec {
    /// The tool as published in `tools/list`.
    pub(crate) fn tool(&self) -> Tool {
        TOOLS
            .iter()
            .find(|tool| tool.name == self.name)
            .expect("every spec is built")
            .clone()
    }

    fn build(&self) -> Tool {
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(self.effect == Effect::Reads)
            .destructive(matches!(self.effect, Effect::Destroys | Effect::Runs))
            .idempotent(self.effect == Effect::Reads)
            .open_world(self.effect == Effect::Runs);
        Tool::new(self.name, self.description, (self.input)())
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
