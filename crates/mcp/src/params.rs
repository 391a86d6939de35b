//! Tool arguments as the caller sends them. The bounds written here are
//! published in each tool's `inputSchema` and enforced at run time by
//! validating the arguments against that same schema (see `validate`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;

/// Longest pane, window or session target accepted.
pub const MAX_TARGET: usize = 256;
/// Longest `send_keys` text; longer input belongs in `paste_text`.
pub const MAX_TEXT: usize = 65_536;
/// Longest `paste_text` text.
pub const MAX_PASTE: usize = 1_048_576;
/// Most key names in one `send_keys` call.
pub const MAX_KEYS: usize = 256;
/// Most environment variables given to a new session, window or pane.
pub const MAX_ENV: usize = 64;

/// No arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Arguments of `list_panes`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPanesParams {
    /// Only this session's panes (exact name or id).
    #[schemars(length(min = 1, max = 256))]
    pub session: Option<String>,
    /// Only this window's panes ("work:1" or id "@3").
    #[schemars(length(min = 1, max = 256))]
    pub window: Option<String>,
}

/// Arguments of `create_session`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSessionParams {
    /// Unique name, kept exactly (default: tmux picks one). Refused: : . $ \ and control
    /// characters, and a first character among - + = ~ ! ^ { @ %.
    #[schemars(length(min = 1, max = 128))]
    pub name: Option<String>,
    /// Run this instead of a shell; the pane closes when it exits.
    #[schemars(length(min = 1, max = 16384))]
    pub command: Option<String>,
    /// Working directory (absolute).
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// Environment variables.
    pub env: Option<BTreeMap<String, String>>,
    /// Columns (default 160).
    #[schemars(range(min = 10, max = 1000))]
    pub width: Option<u16>,
    /// Rows (default 48).
    #[schemars(range(min = 5, max = 500))]
    pub height: Option<u16>,
}

/// Arguments of `create_window`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWindowParams {
    /// Session name or id; "work:5" picks window index 5.
    #[schemars(length(min = 1, max = 256))]
    pub session: String,
    /// Window name, kept exactly as given; refused as for session names, and a number (even
    /// after spaces), which would read as a window index.
    #[schemars(length(min = 1, max = 128))]
    pub name: Option<String>,
    /// Run this instead of a shell; the pane closes when it exits.
    #[schemars(length(min = 1, max = 16384))]
    pub command: Option<String>,
    /// Working directory (absolute).
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// Environment variables.
    pub env: Option<BTreeMap<String, String>>,
}

/// Where `split_pane` puts the new pane.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Right of the pane (side by side).
    #[default]
    Right,
    /// Left of the pane.
    Left,
    /// Below the pane (stacked).
    Below,
    /// Above the pane.
    Above,
}

/// Arguments of `split_pane`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitPaneParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Default right.
    #[serde(default)]
    pub direction: Direction,
    /// Cells ("20") or percent ("30%"); default half.
    #[schemars(regex(pattern = r"^[0-9]{1,4}%?$"))]
    pub size: Option<String>,
    /// Run this instead of a shell; the pane closes when it exits.
    #[schemars(length(min = 1, max = 16384))]
    pub command: Option<String>,
    /// Working directory (absolute).
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// Environment variables.
    pub env: Option<BTreeMap<String, String>>,
}

/// Arguments of `kill_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillSessionParams {
    /// Session to kill: its exact name, such as "work", or its id, such as "$1".
    #[schemars(length(min = 1, max = 256))]
    pub session: String,
}

/// Arguments of `kill_window`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillWindowParams {
    /// Window to kill: session:window, such as "work:1", or its id, such as "@3".
    #[schemars(length(min = 1, max = 256))]
    pub window: String,
}

/// Arguments of `kill_pane`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillPaneParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
}

/// Arguments of `send_keys`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Literal text, typed exactly as given.
    #[schemars(length(max = 65536))]
    pub text: Option<String>,
    /// tmux key names pressed after the text.
    #[schemars(length(max = 256))]
    pub keys: Option<Vec<KeyName>>,
    /// Press Enter at the end (default: when text is given).
    pub enter: Option<bool>,
}

/// One tmux key name, such as "Enter", "C-c", "M-x", "F5", "Up" or a single character.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct KeyName(#[schemars(length(min = 1, max = 32))] pub String);

/// Arguments of `paste_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PasteTextParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Text to paste, exactly as given.
    #[schemars(length(min = 1, max = 1048576))]
    pub text: String,
    /// Bracketed-paste markers when the program asked for them; refuses text containing
    /// ESC[200~ or ESC[201~.
    #[serde(default = "yes")]
    pub bracketed: bool,
    /// Press Enter after the paste.
    #[serde(default)]
    pub enter: bool,
}

fn yes() -> bool {
    true
}

/// How much history `capture_pane` includes above the visible screen.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ScrollbackArg {
    /// This many lines above the screen.
    Lines(#[schemars(range(min = 0, max = 10000000))] u32),
    /// All the history the pane holds.
    All(AllHistory),
}

/// The word "all".
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum AllHistory {
    /// All history.
    #[serde(rename = "all")]
    All,
}

/// Arguments of `capture_pane`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapturePaneParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Lines of history above the screen, or "all" (default: screen only).
    pub scrollback: Option<ScrollbackArg>,
    /// Default 2000.
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// One pattern or several.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single pattern.
    One(#[schemars(length(min = 1, max = 1024))] String),
    /// Several patterns; any of them counts.
    Many(#[schemars(length(min = 1, max = 32))] Vec<PatternText>),
}

/// One pattern.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct PatternText(#[schemars(length(min = 1, max = 1024))] pub String);

impl OneOrMany {
    /// The patterns as a list.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(text) => vec![text],
            OneOrMany::Many(list) => list.into_iter().map(|p| p.0).collect(),
        }
    }
}

/// Arguments of `wait_for_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForTextParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Text, or a list of alternatives; matched within one line.
    pub pattern: OneOrMany,
    /// Patterns are Rust regexes.
    #[serde(default)]
    pub regex: bool,
    /// Case-sensitive.
    #[serde(default = "yes")]
    pub match_case: bool,
    /// Cursor to scan from (default: now); pass the one send_keys returned.
    #[schemars(length(min = 1, max = 64))]
    pub since: Option<String>,
    /// Patterns that end the wait as "stopped", e.g. "error:".
    pub stop: Option<OneOrMany>,
    /// Also match the screen as it is when the wait starts.
    #[serde(default)]
    pub include_screen: bool,
    /// Default 30.
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
    /// Quiet ms after which a program reading its terminal ends the wait as awaiting_input
    /// (default 300; 0: off).
    #[schemars(range(min = 0, max = 600000))]
    pub input_settle_ms: Option<u64>,
    /// Budget of the returned tail (default 300).
    #[schemars(range(min = 50, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `wait_for_idle`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForIdleParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Milliseconds of silence (default 500).
    #[schemars(range(min = 10, max = 600000))]
    pub quiet_ms: Option<u64>,
    /// Default 30.
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
    /// Quiet ms after which a program reading its terminal ends the wait as awaiting_input
    /// (default 300; 0: off).
    #[schemars(range(min = 0, max = 600000))]
    pub input_settle_ms: Option<u64>,
}

/// Arguments of `wait_for_channel`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForChannelParams {
    /// Channel name (tmux wait-for -S NAME).
    #[schemars(length(min = 1, max = 128))]
    pub channel: String,
    /// Default 30.
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
}

/// Arguments of `signal_channel`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalChannelParams {
    /// Channel name.
    #[schemars(length(min = 1, max = 128))]
    pub channel: String,
}

/// Arguments of `run_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Command line, as typed at the prompt.
    #[schemars(length(min = 1, max = 16384))]
    pub command: String,
    /// Default 30.
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
    /// Quiet ms after which a program reading its terminal ends the wait as awaiting_input
    /// (default 300; 0: off).
    #[schemars(range(min = 0, max = 600000))]
    pub input_settle_ms: Option<u64>,
    /// Default 2000.
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `wait_for_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForCommandParams {
    /// From a timed-out run_command.
    #[schemars(length(min = 1, max = 64))]
    pub command_id: String,
    /// Default 30.
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
    /// Quiet ms after which a program reading its terminal ends the wait as awaiting_input
    /// (default 300; 0: off).
    #[schemars(range(min = 0, max = 600000))]
    pub input_settle_ms: Option<u64>,
    /// Default 2000.
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `capture_since`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureSinceParams {
    /// Pane id ("%3") or target ("work:1.0").
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Cursor from an earlier call on this pane.
    #[schemars(length(min = 1, max = 64))]
    pub cursor: String,
    /// Default 2000.
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `read_output`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadOutputParams {
    /// A cut result's output_id.
    #[schemars(length(min = 2, max = 24))]
    pub output_id: String,
    /// Lines to skip; negative counts from the end.
    #[schemars(range(min = -100000000, max = 100000000))]
    pub offset: Option<i64>,
    /// Lines to return (default 200).
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<usize>,
    /// Regex: only matching lines, numbered.
    #[schemars(length(min = 1, max = 1024))]
    pub grep: Option<String>,
    /// Default 2000.
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// What a batch does when an operation fails.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Stop at the first failure: nothing after it is sent (default).
    #[default]
    Stop,
    /// Run every operation; each reports for itself.
    Continue,
}

/// Most operations in one batch.
pub const MAX_BATCH: usize = 100;
/// Most bytes of text in one batch, all operations together.
pub const MAX_BATCH_TEXT: usize = 1_048_576;

/// Arguments of `send_keys_batch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysBatchParams {
    /// send_keys arguments, in order; all text at most 1 MiB.
    #[schemars(length(min = 1, max = 100))]
    pub operations: Vec<SendKeysParams>,
    /// Default stop.
    #[serde(default)]
    pub on_error: OnError,
}

/// One step of `run_batch`: `op` names the tool, the other fields are that tool's
/// arguments. In `since` (wait_for_text) and `cursor` (capture_since), "$prev" means the
/// cursor of the latest earlier step that returned one, and "$N" the cursor of step N
/// (counted from 0).
///
/// Its published schema only names the tools (one `oneOf` variant per `op`): a step's
/// arguments are those of its tool, published once in that tool's schema and checked
/// against it at run time.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum BatchStep {
    /// Arguments of send_keys.
    SendKeys(SendKeysParams),
    /// Arguments of paste_text.
    PasteText(PasteTextParams),
    /// Arguments of wait_for_text.
    WaitForText(WaitForTextParams),
    /// Arguments of wait_for_idle.
    WaitForIdle(WaitForIdleParams),
    /// Arguments of capture_pane.
    CapturePane(CapturePaneParams),
    /// Arguments of capture_since.
    CaptureSince(CaptureSinceParams),
    /// Arguments of run_command.
    RunCommand(RunCommandParams),
}

impl BatchStep {
    /// The tools a step may call, as `op` names them.
    pub const OPS: [&'static str; 7] = [
        "send_keys",
        "paste_text",
        "wait_for_text",
        "wait_for_idle",
        "capture_pane",
        "capture_since",
        "run_command",
    ];
}

impl JsonSchema for BatchStep {
    fn schema_name() -> Cow<'static, str> {
        "BatchStep".into()
    }

    /// One variant per tool, tagged by `op` as serde reads it.
    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let variants: Vec<Schema> = BatchStep::OPS
            .iter()
            .map(|op| {
                json_schema!({
                    "type": "object",
                    "properties": {"op": {"type": "string", "const": op}},
                    "required": ["op"]
                })
            })
            .collect();
        json_schema!({ "oneOf": variants })
    }
}

/// Arguments of `run_batch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunBatchParams {
    /// Steps in order; all text at most 1 MiB.
    #[schemars(length(min = 1, max = 100))]
    pub steps: Vec<BatchStep>,
    /// Default stop.
    #[serde(default)]
    pub on_error: OnError,
    /// Budget shared by all returned text (default 4000).
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}
