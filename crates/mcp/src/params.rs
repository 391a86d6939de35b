//! Tool arguments as the caller sends them. The bounds written here are
//! published in each tool's `inputSchema` and enforced at run time by
//! validating the arguments against that same schema (see `validate`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
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
    /// Only panes of this session (a name such as "work" or an id such as "$1").
    #[schemars(length(min = 1, max = 256))]
    pub session: Option<String>,
    /// Only panes of this window (a target such as "work:1" or an id such as "@3").
    #[schemars(length(min = 1, max = 256))]
    pub window: Option<String>,
}

/// Arguments of `create_session`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSessionParams {
    /// Session name; tmux picks one ("0", "1", ...) when absent. Must be unique.
    #[schemars(length(min = 1, max = 128))]
    pub name: Option<String>,
    /// Shell command to run instead of an interactive shell; the pane closes when it exits.
    #[schemars(length(min = 1, max = 16384))]
    pub command: Option<String>,
    /// Working directory (absolute path).
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// Environment variables for the session, e.g. {"RUST_LOG": "debug"}.
    pub env: Option<BTreeMap<String, String>>,
    /// Width in cells (default 160).
    #[schemars(range(min = 10, max = 1000))]
    pub width: Option<u16>,
    /// Height in cells (default 48).
    #[schemars(range(min = 5, max = 500))]
    pub height: Option<u16>,
}

/// Arguments of `create_window`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWindowParams {
    /// Session to add the window to (name or id such as "$1"); "work:5" picks index 5.
    #[schemars(length(min = 1, max = 256))]
    pub session: String,
    /// Window name.
    #[schemars(length(min = 1, max = 128))]
    pub name: Option<String>,
    /// Shell command to run instead of an interactive shell.
    #[schemars(length(min = 1, max = 16384))]
    pub command: Option<String>,
    /// Working directory (absolute path).
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// Environment variables for the window's pane.
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
    /// Pane to split: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Where the new pane goes (default "right").
    #[serde(default)]
    pub direction: Direction,
    /// Size of the new pane: cells ("20") or a percentage ("30%"). Default: half.
    #[schemars(regex(pattern = r"^[0-9]{1,4}%?$"))]
    pub size: Option<String>,
    /// Shell command to run instead of an interactive shell.
    #[schemars(length(min = 1, max = 16384))]
    pub command: Option<String>,
    /// Working directory (absolute path).
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// Environment variables for the new pane.
    pub env: Option<BTreeMap<String, String>>,
}

/// Arguments of `kill_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillSessionParams {
    /// Session to kill (name or id such as "$1").
    #[schemars(length(min = 1, max = 256))]
    pub session: String,
}

/// Arguments of `kill_window`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillWindowParams {
    /// Window to kill (a target such as "work:1" or an id such as "@3").
    #[schemars(length(min = 1, max = 256))]
    pub window: String,
}

/// Arguments of `kill_pane`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillPaneParams {
    /// Pane to kill: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
}

/// Arguments of `send_keys`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysParams {
    /// Pane to type into: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Literal text, typed exactly as given (every byte, including ; $ ` ' " # ~ and tabs).
    #[schemars(length(max = 65536))]
    pub text: Option<String>,
    /// tmux key names pressed after the text, e.g. ["C-c"], ["Up", "Enter"], ["M-x"], ["F5"].
    #[schemars(length(max = 256))]
    pub keys: Option<Vec<KeyName>>,
    /// Press Enter at the end. Default: true when `text` is given, false otherwise.
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
    /// Pane to paste into: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Text to paste, newlines included, exactly as given.
    #[schemars(length(min = 1, max = 1048576))]
    pub text: String,
    /// Wrap in bracketed-paste markers when the program asked for them (default true),
    /// so shells and editors treat the text as pasted rather than typed. A bracketed
    /// paste refuses text containing ESC[200~ or ESC[201~.
    #[serde(default = "yes")]
    pub bracketed: bool,
    /// Press Enter after the paste (default false).
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
    /// Pane to read: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Lines of history above the screen to include, or "all". Default: the visible screen only.
    pub scrollback: Option<ScrollbackArg>,
    /// Most tokens of text to return (default 2000); the middle of longer text is elided.
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
    /// Pane to watch: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Text to wait for, or a list of alternatives. Matched within one line of output.
    pub pattern: OneOrMany,
    /// Treat the patterns as regular expressions (Rust regex syntax). Default false.
    #[serde(default)]
    pub regex: bool,
    /// Case-sensitive matching. Default true.
    #[serde(default = "yes")]
    pub match_case: bool,
    /// Cursor to scan from (from send_keys, paste_text, capture_pane or an earlier wait).
    /// Default: the moment this call starts. Pass the cursor send_keys returned so output
    /// that came before this call is not missed.
    #[schemars(length(min = 1, max = 64))]
    pub since: Option<String>,
    /// Patterns that end the wait as a failure (outcome "stopped"), e.g. "error:".
    pub stop: Option<OneOrMany>,
    /// Also match what the screen shows when the wait starts. Default false.
    #[serde(default)]
    pub include_screen: bool,
    /// Seconds to wait (default 30; capped by the server's ceiling).
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
    /// Most tokens of output to return in the tail (default 300).
    #[schemars(range(min = 50, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `wait_for_idle`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForIdleParams {
    /// Pane to watch: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Milliseconds without output that count as idle (default 500).
    #[schemars(range(min = 10, max = 600000))]
    pub quiet_ms: Option<u64>,
    /// Seconds to wait at most (default 30; capped by the server's ceiling).
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
}

/// Arguments of `wait_for_channel`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForChannelParams {
    /// Channel name, as used with `tmux wait-for -S NAME` (e.g. from a script in a pane).
    #[schemars(length(min = 1, max = 128))]
    pub channel: String,
    /// Seconds to wait (default 30; capped by the server's ceiling).
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
}

/// Arguments of `signal_channel`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalChannelParams {
    /// Channel name to signal.
    #[schemars(length(min = 1, max = 128))]
    pub channel: String,
}

/// Arguments of `run_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandParams {
    /// Pane whose shell runs the command: a pane id such as "%3" or a target.
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// The command line, as you would type it at the prompt (pipes, &&, cd, export all work).
    #[schemars(length(min = 1, max = 16384))]
    pub command: String,
    /// Seconds to wait for it to finish (default 30; capped by the server's ceiling). On
    /// timeout it keeps running; pick it up with wait_for_command.
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
    /// Most tokens of output to return (default 2000).
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `wait_for_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForCommandParams {
    /// The `command_id` a timed-out run_command returned.
    #[schemars(length(min = 1, max = 64))]
    pub command_id: String,
    /// Seconds to wait (default 30; capped by the server's ceiling).
    #[schemars(range(min = 0.001, max = 86400.0))]
    pub timeout_s: Option<f64>,
    /// Most tokens of output to return (default 2000).
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `capture_since`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureSinceParams {
    /// Pane to read: a pane id such as "%3" or a target such as "work:1.0".
    #[schemars(length(min = 1, max = 256))]
    pub pane: String,
    /// Cursor from an earlier call on this pane; output after it is returned.
    #[schemars(length(min = 1, max = 64))]
    pub cursor: String,
    /// Most tokens of text to return (default 2000).
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}

/// Arguments of `read_output`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadOutputParams {
    /// The id a cut result named (e.g. "o7").
    #[schemars(length(min = 2, max = 24))]
    pub output_id: String,
    /// Lines to skip from the start (0 = first line); negative counts back from the end.
    #[schemars(range(min = -100000000, max = 100000000))]
    pub offset: Option<i64>,
    /// Lines to return (default 200).
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<usize>,
    /// Only lines matching this regular expression, with their line numbers.
    #[schemars(length(min = 1, max = 1024))]
    pub grep: Option<String>,
    /// Most tokens of text to return (default 2000).
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
    /// 1 to 100 operations, run in this order; each has the arguments of send_keys. All
    /// `text` together may hold at most 1 MiB.
    #[schemars(length(min = 1, max = 100))]
    pub operations: Vec<SendKeysParams>,
    /// "stop" (default): at the first failure, nothing after it is sent. "continue": every
    /// operation runs and reports for itself.
    #[serde(default)]
    pub on_error: OnError,
}

/// One step of `run_batch`: `op` names the tool, the other fields are that tool's
/// arguments. In `since` (wait_for_text) and `cursor` (capture_since), "$prev" means the
/// cursor of the latest earlier step that returned one, and "$N" the cursor of step N
/// (counted from 0).
#[derive(Debug, Deserialize, JsonSchema)]
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

/// Arguments of `run_batch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunBatchParams {
    /// 1 to 100 steps, run in this order. Consecutive send_keys/paste_text steps go to
    /// tmux as one pipelined chain; waits and captures run between them. All `text`
    /// together may hold at most 1 MiB.
    #[schemars(length(min = 1, max = 100))]
    pub steps: Vec<BatchStep>,
    /// "stop" (default): the first failing step ends the batch. "continue": later steps
    /// still run.
    #[serde(default)]
    pub on_error: OnError,
    /// Token budget for all returned text together (default 4000), shared among the steps
    /// that return text.
    #[schemars(range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
}
