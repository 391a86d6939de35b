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
    /// Runs arbitrary commands: anything can happen.
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
        name: "capture_since",
        title: "Read new output",
        description: "Return only what a pane printed after a cursor (from send_keys, \
            capture_pane, a wait or an earlier capture_since), control sequences removed and cut \
            to a token budget, plus the next cursor. Use it to follow a program without reading \
            the same screen twice; says how much was lost if the journal dropped old output.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<CaptureSinceParams>,
        output: output::<SinceEntry>,
    },
    Spec {
        name: "read_output",
        title: "Page through kept output",
        description: "Read a page of a full output that another tool cut to fit its budget (the \
            elision line names the id, e.g. o7, and the offset of the omitted lines). `offset` \
            skips lines (negative counts from the end), `grep` returns only matching lines with \
            their numbers. Use it instead of re-capturing with a huge budget.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<ReadOutputParams>,
        output: output::<PageEntry>,
    },
    Spec {
        name: "wait_for_text",
        title: "Wait for text in a pane",
        description: "Wait until a pane prints a text (or regex) — every byte after the baseline \
            is scanned, so output that scrolls past is never missed. Pass `since` = the cursor \
            send_keys returned. The echo of what termpilot typed does not count. `stop` patterns \
            end the wait early as a failure (e.g. \"error\"). A timeout is a normal outcome, \
            not an error. For commands in a shell, run_command is simpler.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForTextParams>,
        output: output::<WaitEntry>,
    },
    Spec {
        name: "wait_for_idle",
        title: "Wait for a pane to go quiet",
        description: "Wait until a pane has printed nothing for `quiet_ms`. Use it when you do \
            not know what a program will print last (an installer, a REPL redrawing); prefer \
            wait_for_text when you know the text to expect.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForIdleParams>,
        output: output::<WaitEntry>,
    },
    Spec {
        name: "wait_for_channel",
        title: "Wait for a tmux channel",
        description: "Wait until a tmux wait-for channel is signalled, e.g. by `make; tmux \
            wait-for -S built` typed into a pane. Tells a signal apart from the tmux server \
            exiting. Does not block other tools while it waits.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForChannelParams>,
        output: output::<ChannelEntry>,
    },
    Spec {
        name: "signal_channel",
        title: "Signal a tmux channel",
        description: "Signal a tmux wait-for channel, waking whoever waits on it (a script in a \
            pane, or wait_for_channel). With nobody waiting, the next waiter is woken at once.",
        toolset: Toolset::Input,
        effect: Effect::Writes,
        input: input::<SignalChannelParams>,
        output: output::<ChannelEntry>,
    },
    Spec {
        name: "run_command",
        title: "Run a shell command",
        description: "Run a command line in a pane's own shell (cd and export persist) and return \
            its exit code and only its own output (no prompt, no echoed command), cut to a \
            budget. Needs a shell at its prompt; for a REPL or a full-screen program use \
            send_keys and wait_for_text. On timeout the command keeps running and the result \
            carries a command_id for wait_for_command. It counts as finished only once the \
            shell has the terminal back, so a program cannot fake its end. An output larger \
            than the pane's journal keeps its head and tail, and lost_bytes says how much is \
            gone. Screens and captures show the command line as typed, without the markers \
            termpilot wraps around it.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<RunCommandParams>,
        output: output::<CommandEntry>,
    },
    Spec {
        name: "wait_for_command",
        title: "Wait for a running command",
        description: "Keep waiting for a command that run_command left running after its \
            timeout; returns its exit code and output once it finishes. A command interrupted \
            with C-c never reports an exit code: once its shell is idle at its prompt again \
            (or the next run_command in that pane starts), this returns it as interrupted.",
        toolset: Toolset::ReadOnly,
        effect: Effect::Reads,
        input: input::<WaitForCommandParams>,
        output: output::<CommandEntry>,
    },
    Spec {
        name: "send_keys",
        title: "Type into a pane",
        description: "Type literal `text` into a pane exactly as given (quotes, ;, $, #{}, tabs \
            and Unicode arrive unchanged), then press the tmux `keys` named (\"C-c\", \"Up\", \
            \"M-x\", \"F5\", ...), then Enter (by default when text is given). Returns a cursor \
            from just before the input. For multi-line or very long text use paste_text.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<SendKeysParams>,
        output: output::<SentEntry>,
    },
    Spec {
        name: "paste_text",
        title: "Paste text into a pane",
        description: "Paste text into a pane as a terminal paste (bracketed when the program \
            asked for it), newlines included and nothing interpreted. Use it for multi-line \
            input such as a script or a file's content; use send_keys for a command line or \
            key presses. A shell that takes bracketed pastes (bash 5.1+, zsh) only inserts \
            the text, newlines and all, and runs nothing until Enter: set enter to run it. \
            A bracketed paste refuses text containing ESC[201~ or ESC[200~ (the paste's own \
            delimiters), which would end it early and type the rest as keys. \
            Returns a cursor from just before the paste.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<PasteTextParams>,
        output: output::<SentEntry>,
    },
    Spec {
        name: "send_keys_batch",
        title: "Type into panes, many at once",
        description: "Send up to 100 send_keys operations (any panes, in order) in one call, \
            written to tmux as one pipelined chain: far faster than separate calls. Use it when \
            you already know all the input, e.g. filling several panes or a form; use single \
            send_keys when each input depends on what the last one printed. on_error \"stop\" \
            (default) sends nothing after the first failure; \"continue\" runs every operation \
            and reports each. Everything is validated (key names, panes) before anything is sent.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<SendKeysBatchParams>,
        output: output::<BatchEntry>,
    },
    Spec {
        name: "run_batch",
        title: "Run a pipeline of steps",
        description: "Run up to 100 steps in one call: send_keys, paste_text, wait_for_text, \
            wait_for_idle, capture_pane, capture_since, run_command (`op` names the tool; the \
            other fields are its arguments, and each result has that tool's shape). A step's \
            `since`/`cursor` may be \"$prev\" (the latest earlier cursor) or \"$N\" (step N's). \
            Good for send-wait-capture sequences whose steps you know in advance; use single \
            calls when you must look at a result before deciding the next step. on_error as in \
            send_keys_batch; all text shares one token budget.",
        toolset: Toolset::Input,
        effect: Effect::Runs,
        input: input::<RunBatchParams>,
        output: output::<RunBatchEntry>,
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
