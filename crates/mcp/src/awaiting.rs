//! How a program waiting for input shows in wait and command results.

use std::time::Duration;

use termpilot_tmux::{AwaitingInput, DEFAULT_INPUT_SETTLE};

/// The settle time a call asked for (`input_settle_ms`), or the default.
pub(crate) fn settle(input_settle_ms: Option<u64>) -> Duration {
    input_settle_ms.map_or(DEFAULT_INPUT_SETTLE, Duration::from_millis)
}

/// The fields results carry for outcome "awaiting_input".
#[derive(Default)]
pub(crate) struct InputFields {
    pub(crate) prompt: Option<String>,
    pub(crate) secret: Option<bool>,
    pub(crate) line_mode: Option<bool>,
    pub(crate) program: Option<String>,
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

/// One sentence for the text rendering: what waits, and how to answer.
pub(crate) fn describe(input: &AwaitingInput) -> String {
    let how = if input.secret {
        "a hidden (password) prompt: answer with type_secret, or ask your person"
    } else if input.line_mode {
        "it reads a line: answer with send_keys (text, enter)"
    } else {
        "it reads keys: answer with send_keys"
    };
    format!(
        ": {} waits for input at '{}' ({how})",
        input.program, input.prompt
    )
}
