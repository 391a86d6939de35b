//! The tool catalog: every tool's name, title, description, annotations,
//! toolset and schemas, in one table.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;

use crate::params::*;
use crate::results::*;
use crate::toolset::{Toolset, Toolsets};

/// How a tool affects the world, for its annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Only reads.
    Reads,
    /// Changes something; repeating it changes it again.
    Writes,
    /// Destroys something.
    Destroys,
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

fn input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_type::<T>()
}

fn output<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_output::<T>()
}

/// Every tool termpilot has, enabled or not.
pub(crate) const SPECS: &[Spec] = &[
    Spec {
        name: "list_sessions",
        title: "List tmux sessions",
        description: "List the sessions of termpilot's tmux server with their window count and \
            how many people are attached. Use it to find a session to work in; use list_panes to \
            find the panes to type into.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<NoParams>,
        output: output::<SessionList>,
    },
    Spec {
        name: "list_panes",
        title: "List panes",
        description: "List panes (all, or those of one session or window) with their id, size, \
            working directory, the program in the foreground, and whether a full-screen program \
            or copy mode is active. Pane ids (\"%3\") are the stable way to address panes in \
            every other tool.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<ListPanesParams>,
        output: output::<PaneList>,
    },
    Spec {
        name: "capture_pane",
        title: "Read a pane's screen",
        description: "Return the text of a pane: the visible screen, or with `scrollback` some or \
            all of its history. Long text is cut to a token budget (first and last lines kept, \
            one line says what was left out). Use it to look at a screen once; to follow a \
            program's output after you typed something, use the cursor that send_keys returned.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<CapturePaneParams>,
        output: output::<CaptureEntry>,
    },
    Spec {
        name: "send_keys",
        title: "Type into a pane",
        description: "Type literal `text` into a pane exactly as given (quotes, ;, $, #{}, tabs \
            and Unicode arrive unchanged), then press the tmux `keys` named (\"C-c\", \"Up\", \
            \"M-x\", \"F5\", ...), then Enter (by default when text is given). Returns a cursor \
            from just before the input. For multi-line or very long text use paste_text.",
        toolset: Toolset::Input,
        effect: Effect::Writes,
        input: input::<SendKeysParams>,
        output: output::<SentEntry>,
    },
    Spec {
        name: "paste_text",
        title: "Paste text into a pane",
        description: "Paste text into a pane as a terminal paste (bracketed when the program \
            asked for it), newlines included and nothing interpreted. Use it for multi-line \
            input such as a script or a file's content; use send_keys for a command line or \
            key presses. Returns a cursor from just before the paste.",
        toolset: Toolset::Input,
        effect: Effect::Writes,
        input: input::<PasteTextParams>,
        output: output::<SentEntry>,
    },
    Spec {
        name: "create_session",
        title: "Create a session",
        description: "Create a new tmux session (detached, sized `width`x`height`) running a \
            shell or `command`, and return its first pane's id. Use it to get a fresh terminal; \
            to add a terminal beside existing ones use create_window or split_pane.",
        toolset: Toolset::Lifecycle,
        effect: Effect::Writes,
        input: input::<CreateSessionParams>,
        output: output::<CreatedEntry>,
    },
    Spec {
        name: "create_window",
        title: "Create a window",
        description: "Add a window to a session without switching to it, running a shell or \
            `command`, and return its pane id. Use it for a separate full-size terminal in the \
            same session; use split_pane to see two programs side by side.",
        toolset: Toolset::Lifecycle,
        effect: Effect::Writes,
        input: input::<CreateWindowParams>,
        output: output::<CreatedEntry>,
    },
    Spec {
        name: "split_pane",
        title: "Split a pane",
        description: "Split a pane in two and return the new pane's id; the new pane goes \
            right, left, below or above. The existing pane shrinks, so programs in it see a \
            resize. Prefer create_window when the programs need not be seen together.",
        toolset: Toolset::Lifecycle,
        effect: Effect::Writes,
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

impl Spec {
    /// The tool as published in `tools/list`.
    pub(crate) fn tool(&self) -> Tool {
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(self.effect == Effect::Reads)
            .destructive(self.effect == Effect::Destroys)
            .idempotent(self.effect == Effect::Reads)
            .open_world(false);
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
