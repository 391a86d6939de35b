//! Typing into panes: `send_keys` and `paste_text`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use termpilot_tmux::{Cursor, Input, Key, Keystrokes, PaneId};

use crate::address::{Host, pane};
use crate::approval::Piece;
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::server::{CallContext, Reply, TermpilotServer};
use crate::toolset::Toolset;

use super::batch_step::{PlannedBatchStep, StepPlace, StepSummary, StepTool, summary_of};
use super::params::pane_params;
use super::then_wait::{self, InputWait};

/// Longest `send_keys` text; longer input belongs in `paste_text`.
#[cfg(test)]
pub const MAX_TEXT: usize = 65_536;

/// Result of `send_keys` and `paste_text`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SentEntry {
    /// The pane id the input went to.
    pub pane: String,
    /// Position in the pane's output from before the input: `since` for a later wait or
    /// read.
    pub cursor: String,
    /// The result of `wait`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<serde_json::Map<String, Value>>,
}

/// The result of a tool that typed into `pane`.
pub(crate) fn sent(host: &Host, pane: PaneId, cursor: Cursor) -> Reply<SentEntry> {
    let entry = SentEntry {
        pane: host.qualify(pane),
        cursor: host.qualify(cursor),
        wait: None,
    };
    let text = format!("sent; cursor {}", entry.cursor);
    Reply { entry, text }
}

/// Refuses text with a NUL character, naming its field.
pub(crate) fn refuse_nul(field: &str, text: &str) -> ToolResult<()> {
    if text.contains('\0') {
        return Err(ToolError::refused(format!(
            "{field} contains a NUL character, which tmux cannot carry in text; \
             send it as a key instead: keys: [\"C-@\"]"
        )));
    }
    Ok(())
}

/// `send_keys`.
pub(crate) struct SendKeys;

pane_params! {
    /// Arguments of `send_keys` as a batch takes them: the keys.
    pub struct SendKeysParams {
        /// Literal text, typed exactly as given.
        #[schemars(length(max = 65536))]
        pub text: Option<String>,
        /// tmux key names pressed after the text.
        #[schemars(length(max = 256))]
        pub keys: Option<Vec<KeyName>>,
        /// Press Enter at the end.
        pub enter: Option<bool>,
    }

    /// Arguments of the `send_keys` tool: [`SendKeysParams`] and what to wait
    /// for after them.
    pub struct SendKeysCall with {
        pub wait: Option<InputWait>,
    }
}

/// One tmux key name, such as "Enter", "C-c", "M-x", "F5", "Up" or a single character.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct KeyName(#[schemars(length(min = 1, max = 32))] pub String);

impl Tool for SendKeys {
    const NAME: &'static str = "send_keys";
    const TITLE: &'static str = "Type into a pane";
    const DESCRIPTION: &'static str = "Type `text` exactly as given, then press tmux `keys` \
        (\"C-c\", \"Up\", \"M-x\"), then Enter (default with text). Multi-line text: \
        paste_text.";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Runs;
    type Params = SendKeysCall;
    type Output = SentEntry;

    async fn call(server: &TermpilotServer, call: SendKeysCall, context: &CallContext) -> Outcome {
        let (params, wait) = call.split();
        then_wait::check(wait.as_ref())?;
        let input = checked_input(&params, "")?;
        let pane = pane(server, &params.pane).await?;
        let cursor = pane.engine.send_input(pane.id, &input).await?;
        let sent = sent(&pane.host, pane.id, cursor);
        then_wait::then_wait(server, context, &pane, cursor, wait, sent).await
    }

    /// Text, keys and Enter as the bytes the terminal gets: key names
    /// and hex keys spell input as text does.
    fn typed(arguments: &Value) -> Vec<Piece> {
        // A batch's step comes without `wait`, the tool's call with or
        // without it.
        let params = match SendKeysCall::deserialize(arguments) {
            Ok(call) => call.split().0,
            Err(_) => return Vec::new(),
        };
        match checked_input(&params, "") {
            Ok(input) => Piece::keys(&params.pane, termpilot_tmux::gate::input_bytes(&input)),
            // Refused before anything is typed.
            Err(_) => Vec::new(),
        }
    }
}

impl StepTool for SendKeys {
    type StepParams = SendKeysParams;
    const RETURNS_TEXT: bool = false;

    fn target(params: &SendKeysParams) -> &str {
        &params.pane
    }

    fn typed_len(params: &SendKeysParams) -> usize {
        params.text.as_ref().map_or(0, String::len)
    }

    /// Bad keystrokes refuse the whole batch.
    async fn plan<'a>(
        params: SendKeysParams,
        at: &StepPlace<'a>,
    ) -> ToolResult<PlannedBatchStep<'a>> {
        let keys = Keystrokes::Type(checked_input(&params, &at.prefix())?);
        at.keys(&params.pane, keys).await
    }
}

impl StepSummary for SentEntry {
    fn summary(&self) -> String {
        summary_of(&[], "", &self.cursor)
    }
}

/// The keystrokes of send_keys arguments, checked; errors name the field
/// after `prefix` (e.g. "operations[3].").
pub(crate) fn checked_input(params: &SendKeysParams, prefix: &str) -> ToolResult<Input> {
    let keys = validate_keys(params.keys.as_deref().unwrap_or_default(), prefix)?;
    let text = params.text.clone().filter(|t| !t.is_empty());
    if let Some(text) = &text {
        refuse_nul(&format!("{prefix}text"), text)?;
    }
    let enter = params.enter.unwrap_or(text.is_some());
    if text.is_none() && keys.is_empty() && !enter {
        let at = prefix.trim_end_matches('.');
        let at = if at.is_empty() {
            String::new()
        } else {
            format!("{at}: ")
        };
        return Err(ToolError::refused(format!(
            "{at}nothing to send: give `text`, `keys`, or `enter: true`"
        )));
    }
    Ok(Input { text, keys, enter })
}

/// Checks every key name, naming the first bad one by its index.
fn validate_keys(keys: &[KeyName], prefix: &str) -> ToolResult<Vec<Key>> {
    keys.iter()
        .enumerate()
        .map(|(i, KeyName(name))| match termpilot_keys::parse_key(name) {
            Ok(key) => Ok(key),
            Err(e) => Err(ToolError::refused(format!(
                "{prefix}keys[{i}]: {e}; to type text literally, use `text` instead of `keys`"
            ))),
        })
        .collect()
}

/// `paste_text`.
pub(crate) struct PasteText;

pane_params! {
    /// Arguments of `paste_text` as a batch takes them: the paste.
    pub struct PasteTextParams {
        /// Text to paste, exactly as given.
        #[schemars(length(min = 1, max = 1048576))]
        pub text: String,
        /// Markers when the program asked for them; refuses text with ESC[200~ or ESC[201~.
        #[serde(default = "yes")]
        pub bracketed: bool,
        /// Press Enter after the paste.
        #[serde(default)]
        pub enter: bool,
    }

    /// Arguments of the `paste_text` tool: [`PasteTextParams`] and what to
    /// wait for after the paste.
    pub struct PasteTextCall with {
        /// Then wait, as send_keys's wait.for.
        pub wait: Option<PasteWait>,
    }
}

/// What `paste_text` waits for after the paste.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum PasteWait {
    Command,
    Idle,
}

impl PasteWait {
    /// The same wait as `send_keys` takes it.
    pub(crate) fn as_input_wait(self) -> InputWait {
        let what = match self {
            PasteWait::Command => then_wait::WaitFor::Command,
            PasteWait::Idle => then_wait::WaitFor::Idle,
        };
        InputWait {
            what,
            pattern: None,
            timeout_s: None,
        }
    }
}

fn yes() -> bool {
    true
}

impl Tool for PasteText {
    const NAME: &'static str = "paste_text";
    const TITLE: &'static str = "Paste text into a pane";
    const DESCRIPTION: &'static str = "Paste text as a terminal paste (bracketed if the \
        program asked), nothing interpreted; a shell runs nothing until Enter: set enter.";
    const TOOLSET: Toolset = Toolset::Input;
    const EFFECT: Effect = Effect::Runs;
    type Params = PasteTextCall;
    type Output = SentEntry;

    async fn call(server: &TermpilotServer, call: PasteTextCall, context: &CallContext) -> Outcome {
        let (params, wait) = call.split();
        refuse_nul("text", &params.text)?;
        let pane = pane(server, &params.pane).await?;
        let cursor = pane
            .engine
            .paste(pane.id, &params.text, params.bracketed, params.enter)
            .await?;
        let sent = sent(&pane.host, pane.id, cursor);
        let wait = wait.map(PasteWait::as_input_wait);
        then_wait::then_wait(server, context, &pane, cursor, wait, sent).await
    }

    fn typed(arguments: &Value) -> Vec<Piece> {
        let params = match PasteTextCall::deserialize(arguments) {
            Ok(call) => call.split().0,
            Err(_) => return Vec::new(),
        };
        let bytes = termpilot_tmux::gate::paste_bytes(&params.text, params.enter);
        Piece::keys(&params.pane, bytes)
    }
}

impl StepTool for PasteText {
    type StepParams = PasteTextParams;
    const RETURNS_TEXT: bool = false;

    fn target(params: &PasteTextParams) -> &str {
        &params.pane
    }

    fn typed_len(params: &PasteTextParams) -> usize {
        params.text.len()
    }

    /// Text with a NUL refuses the whole batch.
    async fn plan<'a>(
        params: PasteTextParams,
        at: &StepPlace<'a>,
    ) -> ToolResult<PlannedBatchStep<'a>> {
        refuse_nul(&at.field("text"), &params.text)?;
        let keys = Keystrokes::Paste {
            text: params.text,
            bracketed: params.bracketed,
            enter: params.enter,
        };
        at.keys(&params.pane, keys).await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_call_that_waits_after_typing_still_says_what_it_types() {
        let keys = json!({"pane": "%1", "text": "make", "wait": {"for": "command"}});
        let typed = SendKeys::typed(&keys);
        assert_eq!(typed.len(), 1, "{typed:?}");
        assert_eq!(
            (typed[0].pane.as_str(), typed[0].text.as_str()),
            ("%1", "make\n")
        );
        let paste = json!({"pane": "%1", "text": "ls", "enter": true, "wait": "idle"});
        let typed = PasteText::typed(&paste);
        assert_eq!(typed.len(), 1, "{typed:?}");
        assert_eq!(typed[0].text, "ls\n");
    }
}
