//! `capture_pane` with `format` `png` or `svg`: the screen as a person sees
//! it, colours and cursor included, next to the usual text result.
//!
//! The picture shows what the text shows: `run_command`'s wrapper is
//! hidden and secrets are redacted in its rows before it is drawn (a row
//! that changes loses its colours), since the redaction of results works
//! on text and cannot reach into pixels.

use std::borrow::Cow;

use base64::Engine as _;
use rmcp::model::{ContentBlock, ResourceContents};
use schemars::JsonSchema;
use serde::Deserialize;
use termpilot_screen::{Cursor, Screen};
use termpilot_tmux::{Capture, Scrollback, StyledCapture};

use crate::address::pane;
use crate::catalog::Outcome;
use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;
use crate::tools::capture::{CapturePaneParams, captured};

// The picture `capture_pane` adds to its text. No doc comment: it would be
// the argument's description, which the default tool list has no room for.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CaptureFormat {
    /// A PNG image.
    Png,
    /// An SVG image.
    Svg,
}

/// `capture_pane` for a picture `format`: the text result (screen only)
/// with the picture after its short text.
pub(crate) async fn capture_picture(
    server: &TermpilotServer,
    params: CapturePaneParams,
    format: CaptureFormat,
) -> Outcome {
    if params.scrollback.is_some() {
        return Err(ToolError::refused(
            "a picture shows the screen only: leave out `scrollback`, or ask for text",
        ));
    }
    let pane = pane(server, &params.pane).await?;
    let styled = pane.engine.capture_styled(pane.id).await?;
    let screen = shown_screen(server, &styled)?;
    let mut lines = screen.lines().to_vec();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let capture = Capture {
        pane: styled.pane,
        lines,
        cursor: styled.cursor,
        alternate_screen: styled.alternate_screen,
        in_mode: styled.in_mode,
        history_size: styled.history_size,
        history_limit: styled.history_limit,
    };
    let mut reply = captured(
        server,
        &pane.host,
        capture,
        Scrollback::None,
        params.max_tokens,
    )?;
    let qualified = pane.host.qualify(styled.pane);
    let (block, size) = picture(&screen, format, &qualified)?;
    reply.text = summary(&screen, &styled, format, &qualified, &size);
    let mut done = reply.done()?;
    done.content.push(block);
    Ok(done)
}

/// The screen to draw: tmux's cells, wrappers hidden and secrets redacted.
fn shown_screen(server: &TermpilotServer, styled: &StyledCapture) -> ToolResult<Screen> {
    let cursor = Cursor {
        row: styled.cursor_y,
        col: styled.cursor_x,
        visible: styled.cursor_visible,
    };
    let (width, height) = (styled.width, styled.height);
    Screen::from_capture(&styled.lines, width, height, cursor, |text| {
        shown(server, text)
    })
    .map_err(|e| ToolError::Failed(format!("cannot draw the pane: {e}")))
}

/// `text` as results show it: wrappers hidden, secrets redacted.
fn shown<'a>(server: &TermpilotServer, text: &'a str) -> Cow<'a, str> {
    let hidden = termpilot_shell::hide_wrappers(text);
    let redacted = server.redact_text(&hidden);
    match redacted == text {
        true => Cow::Borrowed(text),
        false => Cow::Owned(redacted),
    }
}

/// The picture's content block, and its size for the summary.
fn picture(
    screen: &Screen,
    format: CaptureFormat,
    pane: &str,
) -> ToolResult<(ContentBlock, String)> {
    match format {
        CaptureFormat::Png => {
            let image = screen.image();
            let png = image
                .png()
                .map_err(|e| ToolError::Failed(format!("cannot draw the pane: {e}")))?;
            let size = format!(
                "{}x{} px, {} bytes",
                image.width(),
                image.height(),
                png.len()
            );
            let data = base64::engine::general_purpose::STANDARD.encode(png);
            Ok((ContentBlock::image(data, "image/png"), size))
        }
        CaptureFormat::Svg => {
            let svg = screen.svg();
            let size = format!("{} bytes", svg.len());
            let resource = ResourceContents::TextResourceContents {
                uri: format!("termpilot://pane/{pane}/screen.svg"),
                mime_type: Some("image/svg+xml".to_owned()),
                text: svg,
                meta: None,
            };
            Ok((ContentBlock::resource(resource), size))
        }
    }
}

/// The short text beside the picture: what it shows and where the cursor
/// is (counted from 1, as a person would).
fn summary(
    screen: &Screen,
    styled: &StyledCapture,
    format: CaptureFormat,
    pane: &str,
    size: &str,
) -> String {
    let kind = match format {
        CaptureFormat::Png => "PNG",
        CaptureFormat::Svg => "SVG",
    };
    let cursor = screen.cursor();
    let shown = match cursor.visible {
        true => "",
        false => ", hidden",
    };
    let mut text = format!(
        "{kind} of {pane}'s screen ({}x{} cells, {size}); cursor at line {}, column {}{shown}.",
        screen.cols(),
        screen.rows(),
        cursor.row + 1,
        cursor.col + 1
    );
    if (screen.cols(), screen.rows()) != (styled.width, styled.height) {
        text.push_str(&format!(
            " The pane is {}x{}: the picture is cut to its top left.",
            styled.width, styled.height
        ));
    }
    if styled.alternate_screen {
        text.push_str(" A full-screen program is on the alternate screen.");
    }
    if styled.in_mode {
        text.push_str(" The pane is in copy mode.");
    }
    text.push_str(" Its text is in the structured result.");
    text
}
