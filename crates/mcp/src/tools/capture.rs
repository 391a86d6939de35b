//! Reading panes: `capture_pane`, `capture_since`, and `read_output` for the
//! full text of a cut result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_tmux::{Capture, Cursor, PaneId, PlannedStep, Scrollback, Since, WorkKind};

use super::batch_step::{
    HandsCursor, PlannedBatchStep, StepPlace, StepSummary, StepTool, summary_of,
};
use super::params::{pane_params, tool_params};
use crate::address::{Host, pane};
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::server::{CallContext, Done, Reply, TermpilotServer};
use crate::tools::picture::{CaptureFormat, capture_picture};
use crate::toolset::Toolset;

/// `capture_pane`.
pub(crate) struct CapturePane;

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

pane_params! {
    /// Arguments of `capture_pane`.
    pub struct CapturePaneParams {
        /// Lines above the screen, or "all".
        pub scrollback: Option<ScrollbackArg>,
        ..max_tokens(2000),
        // No description: the tool's names it, and the default tool list is at its cap.
        pub format: Option<CaptureFormat>,
    }
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

impl Tool for CapturePane {
    const NAME: &'static str = "capture_pane";
    const TITLE: &'static str = "Read a pane's screen";
    // Following output after input (capture_since, a wait from a cursor) is
    // in the server instructions' "Cursors" rule.
    const DESCRIPTION: &'static str =
        "A pane's screen; `scrollback` adds history; `format` an image.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = CapturePaneParams;
    type Output = CaptureEntry;

    async fn call(server: &TermpilotServer, params: CapturePaneParams, _: &CallContext) -> Outcome {
        capture_pane(server, params).await
    }
}

impl StepTool for CapturePane {
    type StepParams = CapturePaneParams;

    fn target(params: &CapturePaneParams) -> &str {
        &params.pane
    }

    /// A picture or a recording refuses the whole batch.
    async fn plan<'a>(
        params: CapturePaneParams,
        at: &StepPlace<'a>,
    ) -> ToolResult<PlannedBatchStep<'a>> {
        if params.format.is_some() {
            return Err(ToolError::refused(format!(
                "{}: a batch returns text only; call capture_pane for a picture",
                at.field("format")
            )));
        }
        let scrollback = scrollback(params.scrollback);
        let tokens = at.text_budget(params.max_tokens);
        Ok(at.job(
            params.pane,
            None,
            (WorkKind::Capture, None),
            move |engine, pane, _| engine.capture(pane, scrollback),
            move |server, host, _, capture| captured(server, host, capture, scrollback, tokens),
        ))
    }
}

impl StepSummary for CaptureEntry {
    fn summary(&self) -> String {
        summary_of(&[], &self.text, &self.cursor)
    }
}

impl HandsCursor for Capture {
    fn cursor(&self) -> Cursor {
        self.cursor
    }
}

pub(crate) async fn capture_pane(server: &TermpilotServer, params: CapturePaneParams) -> Outcome {
    if let Some(format) = params.format {
        return capture_picture(server, params, format).await;
    }
    let pane = pane(server, &params.pane).await?;
    let scrollback = scrollback(params.scrollback);
    let capture = pane.engine.capture(pane.id, scrollback).await?;
    captured(server, &pane.host, capture, scrollback, params.max_tokens)?.done()
}

/// How much history a `scrollback` argument asks for.
pub(crate) fn scrollback(argument: Option<ScrollbackArg>) -> Scrollback {
    match argument {
        None => Scrollback::None,
        Some(ScrollbackArg::Lines(0)) => Scrollback::None,
        Some(ScrollbackArg::Lines(n)) => Scrollback::Lines(n),
        Some(ScrollbackArg::All(_)) => Scrollback::All,
    }
}

/// The result of `capture_pane`: the capture cut to `max_tokens`.
pub(crate) fn captured(
    server: &TermpilotServer,
    host: &Host,
    capture: Capture,
    scrollback: Scrollback,
    max_tokens: Option<u32>,
) -> ToolResult<Reply<CaptureEntry>> {
    let budget = server.budget(max_tokens, None);
    // Asked for more history than tmux holds, and tmux's history is full:
    // lines above it are gone from the pane, which the text says first.
    let reaches_top = match scrollback {
        Scrollback::None => false,
        Scrollback::Lines(n) => u64::from(n) > capture.history_size,
        Scrollback::All => true,
    };
    let history_truncated = reaches_top && capture.history_full();
    let mut screen = capture.lines.join("\n");
    if history_truncated {
        screen = format!(
            "[tmux's history of this pane is full ({} lines): earlier lines may be gone; \
             capture_since from an earlier cursor reads them while the journal holds them]\n{screen}",
            capture.history_limit
        );
    }
    let rendered = server.fit_text(&screen, &budget)?;
    let entry = CaptureEntry {
        pane: host.qualify(capture.pane),
        text: rendered.text.clone(),
        truncated: rendered.truncated,
        total_lines: rendered.total_lines,
        omitted_lines: rendered.omitted_lines,
        omitted_bytes: rendered.omitted_bytes,
        output_id: rendered.output_id.clone(),
        cursor: host.qualify(capture.cursor),
        alternate_screen: capture.alternate_screen,
        in_mode: capture.in_mode,
        history_size: capture.history_size,
        history_truncated,
    };
    let mut notes = Vec::new();
    if capture.alternate_screen {
        notes.push("full-screen program on the alternate screen");
    }
    if capture.in_mode {
        notes.push("pane in copy mode");
    }
    let header = if notes.is_empty() {
        String::new()
    } else {
        format!("[{}]\n", notes.join("; "))
    };
    let text = format!("{header}{}", rendered.text);
    Ok(Reply { entry, text })
}

/// `capture_since`.
pub(crate) struct CaptureSince;

pane_params! {
    /// Arguments of `capture_since`.
    pub struct CaptureSinceParams {
        /// Cursor from an earlier call on this pane.
        #[schemars(length(min = 1, max = 64))]
        pub cursor: String,
        ..max_tokens(2000),
    }
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

impl Tool for CaptureSince {
    const NAME: &'static str = "capture_since";
    const TITLE: &'static str = "Read new output";
    const DESCRIPTION: &'static str = "Return what a pane printed after `cursor` (control \
        sequences removed) and the next cursor; says how much the journal lost.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = CaptureSinceParams;
    type Output = SinceEntry;

    async fn call(
        server: &TermpilotServer,
        params: CaptureSinceParams,
        _: &CallContext,
    ) -> Outcome {
        capture_since(server, params).await
    }
}

impl StepTool for CaptureSince {
    type StepParams = CaptureSinceParams;

    fn target(params: &CaptureSinceParams) -> &str {
        &params.pane
    }

    async fn plan<'a>(
        params: CaptureSinceParams,
        at: &StepPlace<'a>,
    ) -> ToolResult<PlannedBatchStep<'a>> {
        let since = match at.cursor(&params.cursor) {
            Ok(since) => since,
            Err(error) => return Ok(PlannedStep::Refused(error.into_engine())),
        };
        let tokens = at.text_budget(params.max_tokens);
        Ok(at.job(
            params.pane,
            Some(since),
            (WorkKind::CaptureSince, None),
            |engine, pane, since| async move {
                let since = since.ok_or_else(|| {
                    termpilot_tmux::Error::InvalidArgument("capture_since needs a cursor".into())
                })?;
                engine.read_since(pane, since).await
            },
            move |server, host, pane, read| read_since(server, host, pane, read, tokens),
        ))
    }
}

impl StepSummary for SinceEntry {
    fn summary(&self) -> String {
        summary_of(&[], &self.text, &self.cursor)
    }
}

impl HandsCursor for Since {
    fn cursor(&self) -> Cursor {
        self.cursor
    }
}

pub(crate) async fn capture_since(server: &TermpilotServer, params: CaptureSinceParams) -> Outcome {
    let pane = pane(server, &params.pane).await?;
    let since = pane.cursor(server, &params.cursor)?;
    let read = pane.engine.read_since(pane.id, since).await?;
    read_since(server, &pane.host, pane.id, read, params.max_tokens)?.done()
}

/// The result of `capture_since`: what was read, cut to `max_tokens`.
pub(crate) fn read_since(
    server: &TermpilotServer,
    host: &Host,
    pane: PaneId,
    read: Since,
    max_tokens: Option<u32>,
) -> ToolResult<Reply<SinceEntry>> {
    let budget = server.budget(max_tokens, None);
    let fitted = server.fit_text(&read.text, &budget)?;
    let lost = read.lost_bytes;
    let entry = SinceEntry {
        pane: host.qualify(pane),
        text: fitted.text.clone(),
        truncated: fitted.truncated,
        total_lines: fitted.total_lines,
        omitted_lines: fitted.omitted_lines,
        omitted_bytes: fitted.omitted_bytes,
        output_id: fitted.output_id.clone(),
        lost_bytes: lost,
        cursor: host.qualify(read.cursor),
    };
    let lost_note = if lost > 0 {
        format!("[{lost} bytes of output after the cursor were lost: the journal dropped them]\n")
    } else {
        String::new()
    };
    let text = format!("{lost_note}{}\n[cursor {}]", fitted.text, entry.cursor);
    Ok(Reply { entry, text })
}

/// `read_output`.
pub(crate) struct ReadOutput;

tool_params! {
    /// Arguments of `read_output`.
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
        ..max_tokens(2000),
    }
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

impl Tool for ReadOutput {
    const NAME: &'static str = "read_output";
    const TITLE: &'static str = "Page through kept output";
    const DESCRIPTION: &'static str = "Page through the full text of a cut result, or grep it.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = ReadOutputParams;
    type Output = PageEntry;

    async fn call(server: &TermpilotServer, params: ReadOutputParams, _: &CallContext) -> Outcome {
        read_output(server, params)
    }
}

fn read_output(server: &TermpilotServer, params: ReadOutputParams) -> Outcome {
    let grep = match &params.grep {
        Some(source) => Some(
            regex::Regex::new(source)
                .map_err(|e| ToolError::refused(format!("grep: invalid regex: {e}")))?,
        ),
        None => None,
    };
    let page = {
        let store = server.store.lock().unwrap_or_else(|e| e.into_inner());
        store
            .page_for(
                &params.output_id,
                crate::caller::Caller::current().as_str(),
                params.offset.unwrap_or(0),
                params.limit.unwrap_or(200),
                grep.as_ref(),
            )
            .map_err(|e| ToolError::refused(e.to_string()))?
    };
    let budget = server.budget(params.max_tokens, None);
    let rendered = termpilot_render::render(&page.text(), &budget, None);
    let entry = PageEntry {
        output_id: params.output_id.clone(),
        text: rendered.text.clone(),
        first_line: page.first_line,
        lines: page.lines.len(),
        total_lines: page.total_lines,
        remaining_lines: page.remaining_lines,
        next_offset: page.next_offset,
        matching_lines: page.matching_lines,
    };
    Done::new(&entry, format!("{}\n{}", page.header(), rendered.text))
}
