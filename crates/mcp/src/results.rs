//! Tool results: the `structuredContent` of each tool, published as its
//! `outputSchema`.

use schemars::JsonSchema;
use serde::Serialize;
use termpilot_tmux::{Created, Killed, PaneInfo, SessionInfo};

/// Result of `list_sessions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionList {
    /// The sessions of the tmux server.
    pub sessions: Vec<SessionEntry>,
}

/// One session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionEntry {
    /// Session id, e.g. "$0".
    pub id: String,
    /// Session name.
    pub name: String,
    /// Number of windows.
    pub windows: u32,
    /// Terminals attached by people (termpilot's own connections not counted).
    pub attached: u32,
    /// Creation time, seconds since the Unix epoch.
    pub created: u64,
}

impl From<SessionInfo> for SessionEntry {
    fn from(info: SessionInfo) -> Self {
        SessionEntry {
            id: info.id.to_string(),
            name: info.name,
            windows: info.windows,
            attached: info.attached,
            created: info.created,
        }
    }
}

/// Result of `list_panes`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaneList {
    /// The panes, in session, window and pane order.
    pub panes: Vec<PaneEntry>,
}

/// One pane.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaneEntry {
    /// Pane id, e.g. "%3": the stable way to address the pane.
    pub id: String,
    /// Session id.
    pub session: String,
    /// Session name.
    pub session_name: String,
    /// Window id, e.g. "@1".
    pub window: String,
    /// Window index in the session.
    pub window_index: u32,
    /// Window name.
    pub window_name: String,
    /// Pane index in the window.
    pub index: u32,
    /// Pane title.
    pub title: String,
    /// Program in the foreground of the pane, e.g. "bash" or "vim".
    pub current_command: String,
    /// Current working directory.
    pub cwd: String,
    /// Pid of the pane's first process.
    pub pid: Option<u32>,
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// Active pane of the active window.
    pub active: bool,
    /// The pane's program exited.
    pub dead: bool,
    /// In copy mode or another tmux mode.
    pub in_mode: bool,
    /// A full-screen program (vim, less, htop) is on the alternate screen.
    pub alternate_screen: bool,
    /// Set while a person holds the pane (termpilot attach): who and since when. Input
    /// to the pane is refused until they hand it back.
    pub held_by: Option<String>,
}

impl From<PaneInfo> for PaneEntry {
    fn from(info: PaneInfo) -> Self {
        PaneEntry {
            id: info.id.to_string(),
            session: info.session.to_string(),
            session_name: info.session_name,
            window: info.window.to_string(),
            window_index: info.window_index,
            window_name: info.window_name,
            index: info.index,
            title: info.title,
            current_command: info.current_command,
            cwd: info.cwd,
            pid: info.pid,
            width: info.width,
            height: info.height,
            active: info.active,
            dead: info.dead,
            in_mode: info.in_mode,
            alternate_screen: info.alternate_screen,
            held_by: info.held_by,
        }
    }
}

/// Result of `create_session`, `create_window` and `split_pane`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CreatedEntry {
    /// Session id.
    pub session: String,
    /// Session name.
    pub session_name: String,
    /// Window id.
    pub window: String,
    /// Window index.
    pub window_index: u32,
    /// The new pane's id: pass it as `pane` to the other tools.
    pub pane: String,
}

impl From<Created> for CreatedEntry {
    fn from(created: Created) -> Self {
        CreatedEntry {
            session: created.session.to_string(),
            session_name: created.session_name,
            window: created.window.to_string(),
            window_index: created.window_index,
            pane: created.pane.to_string(),
        }
    }
}

/// Result of the kill tools.
#[derive(Debug, Serialize, JsonSchema)]
pub struct KilledEntry {
    /// Session the killed panes were in.
    pub session: String,
    /// Windows removed.
    pub windows: Vec<String>,
    /// Panes removed.
    pub panes: Vec<String>,
}

impl From<Killed> for KilledEntry {
    fn from(killed: Killed) -> Self {
        KilledEntry {
            session: killed.session.to_string(),
            windows: killed.windows.iter().map(ToString::to_string).collect(),
            panes: killed.panes.iter().map(ToString::to_string).collect(),
        }
    }
}

/// Result of `send_keys` and `paste_text`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SentEntry {
    /// The pane id the input went to.
    pub pane: String,
    /// Position in the pane's output from just before the input. Give it as
    /// `since` to a later wait or read so output the input caused is never missed.
    pub cursor: String,
}

/// Result of `capture_pane`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CaptureEntry {
    /// The pane id.
    pub pane: String,
    /// The pane's text: control sequences removed, wrapped lines joined, trailing blank
    /// lines dropped; the middle elided when over budget.
    pub text: String,
    /// Whether part of the text was left out.
    pub truncated: bool,
    /// Lines in the full capture.
    pub total_lines: usize,
    /// Lines left out of `text`.
    pub omitted_lines: usize,
    /// Bytes left out of `text`.
    pub omitted_bytes: usize,
    /// Id under which the full text is kept when it was cut, for `read_output`.
    pub output_id: Option<String>,
    /// Position in the pane's output at the moment of the capture.
    pub cursor: String,
    /// A full-screen program is on the alternate screen (the capture shows its screen).
    pub alternate_screen: bool,
    /// The pane is in copy mode or another tmux mode.
    pub in_mode: bool,
    /// Lines of history the pane holds above the screen.
    pub history_size: u64,
    /// The scrollback asked for reaches the top of tmux's history, which is full (tmux drops
    /// the oldest tenth at its limit): earlier lines may be gone (`text`'s first line says
    /// so; capture_since reads them from an earlier cursor).
    pub history_truncated: bool,
}

/// Result of `wait_for_text` and `wait_for_idle`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WaitEntry {
    /// The pane id.
    pub pane: String,
    /// "matched", "stopped", "timeout", "pane_exited", "server_exited" (the tmux server
    /// went away), "lost" (output the wait needed was dropped), "idle" (wait_for_idle),
    /// "cancelled_by_user" (a person at the pane cancelled the wait with termpilot attach),
    /// or "awaiting_input" (the program waits for input: answer with send_keys,
    /// type_secret when secret, or ask your person).
    pub outcome: String,
    /// The matched text.
    pub matched: Option<String>,
    /// The whole line the match is on.
    pub line: Option<String>,
    /// Which pattern (or stop pattern) matched, counted from 0.
    pub pattern_index: Option<usize>,
    /// The match was on the screen when the wait started (include_screen).
    pub on_screen: bool,
    /// Seconds the wait took.
    pub elapsed_s: f64,
    /// Cursor just after the matched line (or after what was read): pass it as `since`
    /// to continue from here.
    pub cursor: String,
    /// Bytes of output between the baseline and the cursor that were lost.
    pub lost_bytes: u64,
    /// The last lines of output since the wait's baseline; for a full-screen
    /// program (alternate_screen), the last lines of its screen.
    pub tail: String,
    /// A full-screen program is on the alternate screen (matching sees the text it draws,
    /// which may be split by cursor movement; prefer include_screen there).
    pub alternate_screen: bool,
    /// The pane is in copy mode: the program keeps running and printing, but the screen
    /// shown is frozen.
    pub in_mode: bool,
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

/// Result of `wait_for_channel` and `signal_channel`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChannelEntry {
    /// The channel.
    pub channel: String,
    /// "signalled", "timeout", "server_exited", or "sent" (signal_channel).
    pub outcome: String,
    /// Seconds the call took.
    pub elapsed_s: f64,
}

/// Result of `run_command` and `wait_for_command`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CommandEntry {
    /// The pane id.
    pub pane: String,
    /// The exit code; null while the command is still running, or when it
    /// was interrupted.
    pub exit_code: Option<i32>,
    /// The command did not finish in time; it keeps running.
    pub timed_out: bool,
    /// The command ended without reporting its exit code, as after a C-c: its
    /// shell is idle at its prompt again, or took another run_command.
    pub interrupted: bool,
    /// Give this to wait_for_command to pick up a command that timed out.
    pub command_id: Option<String>,
    /// The command's own output (no prompt, no echoed command line), cut to budget.
    pub output: String,
    /// Whether output was left out.
    pub truncated: bool,
    /// Lines of output in full.
    pub total_lines: usize,
    /// Id of the full output when it was cut, for read_output.
    pub output_id: Option<String>,
    /// Bytes of the command's output that are gone because it printed more
    /// than the pane's journal keeps (`--journal-mb`): the output then holds
    /// its head and its tail, with a line between them saying how much is lost.
    pub lost_bytes: u64,
    /// Seconds since the command was typed.
    pub elapsed_s: f64,
    /// Cursor just after the command's output.
    pub cursor: String,
    /// The command waits for input (it keeps running; answer it with send_keys or
    /// type_secret, then call wait_for_command with command_id).
    pub awaiting_input: bool,
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

/// Result of `capture_since`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SinceEntry {
    /// The pane id.
    pub pane: String,
    /// Output after the cursor, control sequences removed, cut to budget.
    pub text: String,
    /// Whether part of it was left out.
    pub truncated: bool,
    /// Lines in full.
    pub total_lines: usize,
    /// Lines left out.
    pub omitted_lines: usize,
    /// Bytes left out.
    pub omitted_bytes: usize,
    /// Id of the full text when cut, for read_output.
    pub output_id: Option<String>,
    /// Bytes of output after the cursor that the journal no longer holds.
    pub lost_bytes: u64,
    /// Cursor after this output: pass it next time to get only what is new.
    pub cursor: String,
}

/// Result of `read_output`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PageEntry {
    /// The output id.
    pub output_id: String,
    /// The lines shown ("N:line" when grep was given).
    pub text: String,
    /// Line number (from 1) of the first line shown.
    pub first_line: usize,
    /// Lines shown.
    pub lines: usize,
    /// Lines in the whole output.
    pub total_lines: usize,
    /// Lines after the last one shown.
    pub remaining_lines: usize,
    /// Offset for the next page, if any.
    pub next_offset: Option<usize>,
    /// With grep: how many lines matched in all.
    pub matching_lines: Option<usize>,
}

/// One operation's outcome in `send_keys_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OpEntry {
    /// The operation's index in the batch, from 0.
    pub index: usize,
    /// The pane id it went to (the target as given, if that named no pane).
    pub pane: String,
    /// Whether it was sent.
    pub ok: bool,
    /// Why it failed, or why it was not sent.
    pub error: Option<String>,
    /// Seconds from the start of its chain to its last reply.
    pub elapsed_s: f64,
    /// Cursor from just before its input (null if not sent).
    pub cursor: Option<String>,
}

/// Result of `send_keys_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BatchEntry {
    /// One entry per operation, in order.
    pub results: Vec<OpEntry>,
    /// Operations sent.
    pub succeeded: usize,
    /// Operations that failed.
    pub failed: usize,
    /// Operations not sent (after a failure in stop mode, or after cancellation).
    pub skipped: usize,
    /// Index of the operation the batch stopped at, if it stopped early.
    pub stopped_at: Option<usize>,
    /// Seconds the whole batch took.
    pub elapsed_s: f64,
}

/// One step's outcome in `run_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StepEntry {
    /// The step's index, from 0.
    pub index: usize,
    /// The step's tool.
    pub op: String,
    /// Whether it succeeded (a wait that timed out still succeeded: see its outcome).
    pub ok: bool,
    /// Why it failed, or why it did not run.
    pub error: Option<String>,
    /// The step's result, exactly as the single tool returns it.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub result: Option<serde_json::Value>,
}

/// Result of `run_batch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunBatchEntry {
    /// One entry per step, in order.
    pub steps: Vec<StepEntry>,
    /// Steps that succeeded.
    pub succeeded: usize,
    /// Steps that failed.
    pub failed: usize,
    /// Steps that did not run.
    pub skipped: usize,
    /// Index of the step the batch stopped at, if it stopped early.
    pub stopped_at: Option<usize>,
    /// Seconds the whole batch took.
    pub elapsed_s: f64,
}
