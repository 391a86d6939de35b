//! How a program waiting for input shows in wait and command results.

use std::time::Duration;

use termpilot_tmux::{AwaitingInput, DEFAULT_INPUT_SETTLE};

/// The settle time a call asked for (`input_settle_ms`), or the default.
pub(crate) fn settle(input_settle_ms: Option<u64>) -> Duration {
    input_settle_ms.map_or(DEFAULT_INPUT_SETTLE, Duration::from_millis)
}

/// The fields results carry for outcome "awaiting_input", flattened into
/// each (command and wait results), absent otherwise.
#[derive(Debug, Default, serde::Serialize, schemars::JsonSchema)]
pub struct InputFields {
    /// For "awaiting_input": the prompt's line as the screen shows it (e.g. "Password: ").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// For "awaiting_input": the terminal does not echo (a password prompt); answer with
    /// type_secret, or ask your person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<bool>,
    /// For "awaiting_input": the terminal reads a whole line (Enter sends it); false for
    /// programs that read single keys (REPLs with line editing, pagers, editors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_mode: Option<bool>,
    /// For "awaiting_input": the name of the program that reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

impl InputFields {
    pub(crate) fn new(input: Option<&AwaitingInput>) -> Self {
        let Some(input) = input else {
            return InputFields::default();
        };
        InputFields {
            prompt: Some(input.prompt.clone()),
            secret: Some(input.secret),
            line_mode: Some(input.line_mode),
            program: Some(input.program.clone()),
        }
    }
}

/// What waits, in few words for the text rendering: the program, and how
/// it reads when that is not a line (the server's instructions say how to
/// answer each); `screen` when a full-screen program is shown as its screen.
pub(crate) fn describe(input: &AwaitingInput, screen: bool) -> String {
    let mut how = vec![input.program.as_str()];
    if input.secret {
        how.push("secret: use type_secret");
    } else if !input.line_mode {
        how.push("keys");
    }
    if screen {
        how.push("screen");
    }
    format!("({})", how.join(", "))
}
