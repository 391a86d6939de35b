//! `capture_pane` with `format` `cast`: what the pane printed, as much as
//! its journal still holds, written as an asciicast v3 recording (what
//! `asciinema play` replays) to the output directory, linked from the result;
//! with a marker for each tool call that touched the pane and the input it
//! typed (see `notes`).
//!
//! The recording shows what the text shows: `run_command`'s wrapper is
//! hidden and secrets are redacted in its output before it is written
//! (nothing secret reaches the disk). Both work on text, so output events
//! that a wrapper's echo or a secret straddles are merged into one first:
//! the time of the first stands for them.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::model::{ContentBlock, Resource};
use termpilot_cast::{Event, Header, Writer};

use crate::address::{Pane, pane};
use crate::catalog::Outcome;
use crate::error::{ToolError, ToolResult};
use crate::notes::Noted;
use crate::server::TermpilotServer;
use crate::tools::capture::{CapturePaneParams, captured, scrollback};

/// `capture_pane` with `format: "cast"`: the text result, with the
/// recording's link after it and a sentence about it before.
pub(crate) async fn capture_recording(
    server: &TermpilotServer,
    params: CapturePaneParams,
) -> Outcome {
    let pane = pane(server, &params.pane).await?;
    let scrollback = scrollback(params.scrollback);
    let capture = pane.engine.capture(pane.id, scrollback).await?;
    let mut reply = captured(server, &pane.host, capture, scrollback, params.max_tokens)?;
    let (link, summary) = export_recording(server, &pane).await?;
    reply.text = format!("{summary}\n{}", reply.text);
    let mut done = reply.done()?;
    done.content.push(link);
    Ok(done)
}

/// Writes the recording of `pane` and returns a link to it and the sentence
/// that says what it holds.
pub(crate) async fn export_recording(
    server: &TermpilotServer,
    pane: &Pane,
) -> ToolResult<(ContentBlock, String)> {
    let recorded = recording(server, pane).await?;
    let dir = {
        // A std Mutex, held for this one read.
        let store = server.store.lock().unwrap_or_else(|e| e.into_inner());
        store.dir().to_path_buf()
    };
    let path = dir.join(file_name(pane.id.0));
    std::fs::write(&path, &recorded.text).map_err(|e| {
        ToolError::Failed(format!(
            "cannot write the recording {}: {e}",
            path.display()
        ))
    })?;
    let summary = format!(
        "Recording of {pane} ({} output events, {} tool calls, over {:.1} s, {} bytes) \
         written to {}; `asciinema play` replays it.",
        recorded.outputs,
        recorded.markers,
        recorded.length.as_secs_f64(),
        recorded.text.len(),
        path.display()
    );
    let link = Resource::new(format!("file://{}", path.display()), "recording.cast")
        .with_mime_type("application/x-asciicast")
        .with_size(recorded.text.len() as u64);
    Ok((ContentBlock::resource_link(link), summary))
}

/// A pane's recording, and what it holds.
pub(crate) struct Recorded {
    /// The asciicast v3 text.
    pub(crate) text: String,
    /// Output events.
    pub(crate) outputs: usize,
    /// Markers: the tool calls that touched the pane.
    pub(crate) markers: usize,
    /// From the first event to the last.
    pub(crate) length: Duration,
}

/// The recording of `pane` as much as its journal holds: output shown as
/// results show it, the tool calls' markers and input, its exit status.
pub(crate) async fn recording(server: &TermpilotServer, pane: &Pane) -> ToolResult<Recorded> {
    let styled = pane.engine.capture_styled(pane.id).await?;
    let timed = pane.engine.read_journal(pane.id, |journal| {
        journal.timed_output(journal.start(), journal.end())
    });
    let qualified = pane.host.qualify(pane.id);
    let mut events: Vec<(Instant, Event)> = shown_events(server, timed)
        .into_iter()
        .map(|(at, text)| (at, Event::Output(text.into_bytes())))
        .collect();
    let outputs = events.len();
    for note in server.notes.of(&qualified) {
        let event = match note.what {
            Noted::Marker(text) => Event::Marker(server.redact_text(&text)),
            Noted::Input(text) => Event::Input(server.redact_text(&text)),
        };
        events.push((note.at, event));
    }
    // Stable: a call's marker stays before its input.
    events.sort_by_key(|(at, _)| *at);
    if let Some(status) = styled.exit_status {
        let last = events.last().map_or_else(Instant::now, |(at, _)| *at);
        events.push((last, Event::Exit(status)));
    }
    let start = events.first().map_or_else(Instant::now, |(at, _)| *at);
    let began = SystemTime::now() - start.elapsed();
    let header = Header {
        term_type: Some("xterm-256color".to_owned()),
        timestamp: began.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs()),
        title: Some(qualified),
        ..Header::new(styled.width, styled.height)
    };
    let mut writer = Writer::new(&header);
    for (at, event) in &events {
        writer.push(at.duration_since(start), event);
    }
    let length = events
        .last()
        .map_or(Duration::ZERO, |(at, _)| at.duration_since(start));
    let markers = events
        .iter()
        .filter(|(_, e)| matches!(e, Event::Marker(_)))
        .count();
    Ok(Recorded {
        text: writer.finish(),
        outputs,
        markers,
        length,
    })
}

/// A file name no other recording of the pane takes.
fn file_name(pane: u32) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!("recording-pane{pane}-{}.cast", now.as_millis())
}

/// The output events as results show text: wrappers hidden, secrets
/// redacted, events merged where either straddles two of them (and all
/// into one if the events still show less than the whole, say a secret
/// printed over three events).
fn shown_events(
    server: &TermpilotServer,
    timed: Vec<(Instant, Vec<u8>)>,
) -> Vec<(Instant, String)> {
    let shown = |bytes: &[u8]| -> String {
        let text = String::from_utf8_lossy(bytes);
        server.redact_text(&termpilot_shell::hide_wrappers(&text))
    };
    let mut merged: Vec<(Instant, Vec<u8>)> = Vec::with_capacity(timed.len());
    for (at, bytes) in timed {
        if let Some((_, last)) = merged.last_mut() {
            let apart = shown(last) + &shown(&bytes);
            let together = [last.as_slice(), &bytes].concat();
            if shown(&together) != apart {
                *last = together;
                continue;
            }
        }
        merged.push((at, bytes));
    }
    let events: Vec<(Instant, String)> = merged
        .iter()
        .map(|(at, bytes)| (*at, shown(bytes)))
        .filter(|(_, text)| !text.is_empty())
        .collect();
    let everything = shown(
        &merged
            .iter()
            .flat_map(|(_, b)| b.clone())
            .collect::<Vec<u8>>(),
    );
    if events
        .iter()
        .map(|(_, text)| text.as_str())
        .collect::<String>()
        == everything
    {
        return events;
    }
    merged
        .first()
        .map(|(at, _)| (*at, everything))
        .into_iter()
        .collect()
}
