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
