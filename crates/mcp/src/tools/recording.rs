//! A pane's recording: what it printed, as much of it as its journal still
//! holds, as asciicast v3 (what `asciinema play` replays), with a marker for
//! each tool call that touched the pane and the input it typed (see
//! `notes`), its resizes (where tmux said the layout changed) and its exit
//! status. `export_recording`, the `recording.cast` resource and
//! `serve --record` write it.
//!
//! The recording shows what the text shows: `run_command`'s wrapper is
//! hidden and secrets are redacted in its output before it is written
//! (nothing secret reaches the disk). Both work on text, so output events
//! that a wrapper's echo or a secret straddles are merged into one first:
//! the time of the first stands for them.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use termpilot_cast::{Event, Header, Writer};
use termpilot_journal::Journal;

use crate::address::Pane;
use crate::error::ToolResult;
use crate::notes::Noted;
use crate::server::TermpilotServer;

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

/// Which part of a pane's journal a recording covers: offsets `from` to
/// `to` (each `None` for as far as the journal reaches).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span {
    pub(crate) from: Option<u64>,
    pub(crate) to: Option<u64>,
}

/// What a recording takes from the journal, read under one snapshot.
struct Held {
    output: Vec<(Instant, Vec<u8>)>,
    /// The size at the start, when the journal knows it.
    initial: Option<(u16, u16)>,
    resizes: Vec<(Instant, u16, u16)>,
    /// When the output just before the span arrived: earlier calls are not
    /// the span's.
    after: Option<Instant>,
    /// When the output just after the span arrived: later calls are not
    /// the span's.
    before: Option<Instant>,
}

impl Held {
    fn read(journal: &Journal, span: Span) -> Held {
        let (start, end) = (journal.start(), journal.end());
        let from = span.from.unwrap_or(start).clamp(start, end);
        let to = span.to.unwrap_or(end).clamp(from, end);
        let arrived = |offset: u64| {
            let piece = journal.timed_output(offset, offset + 1);
            piece.first().map(|(at, _)| *at)
        };
        let sizes = journal.sizes(from, to);
        Held {
            output: journal.timed_output(from, to),
            initial: sizes.as_ref().map(|s| s.initial),
            resizes: sizes
                .map(|s| s.changes.iter().map(|r| (r.at, r.cols, r.rows)).collect())
                .unwrap_or_default(),
            after: (from > start).then(|| arrived(from - 1)).flatten(),
            before: (to < end).then(|| arrived(to)).flatten(),
        }
    }

    /// Whether a tool call at `at` falls within the span.
    fn covers(&self, at: Instant) -> bool {
        self.after.is_none_or(|after| at > after) && self.before.is_none_or(|before| at < before)
    }
}

/// The recording of `span` of `pane`'s journal: output shown as results
/// show it, the pane's resizes, the tool calls' markers and input, and its
/// exit status when the span reaches the end.
pub(crate) async fn recording(
    server: &TermpilotServer,
    pane: &Pane,
    span: Span,
) -> ToolResult<Recorded> {
    let styled = pane.engine.capture_styled(pane.id).await?;
    let mut held = pane
        .engine
        .read_journal(pane.id, |journal| Held::read(journal, span));
    let qualified = pane.host.qualify(pane.id);
    // Resizes first: one at the same time as output came before it.
    let mut events: Vec<(Instant, Event)> = held
        .resizes
        .iter()
        .map(|&(at, cols, rows)| (at, Event::Resize(cols, rows)))
        .collect();
    let shown = shown_events(server, std::mem::take(&mut held.output));
    let outputs = shown.len();
    events.extend(
        shown
            .into_iter()
            .map(|(at, text)| (at, Event::Output(text.into_bytes()))),
    );
    for note in server.notes.of(&qualified) {
        if !held.covers(note.at) {
            continue;
        }
        let event = match note.what {
            Noted::Marker(text) => Event::Marker(server.redact_text(&text)),
            Noted::Input(text) => Event::Input(server.redact_text(&text)),
        };
        events.push((note.at, event));
    }
    // Stable: a call's marker stays before its input.
    events.sort_by_key(|(at, _)| *at);
    let now = (styled.width, styled.height);
    let initial = held.initial.unwrap_or(now);
    if span.to.is_none() {
        let last = events.last().map_or_else(Instant::now, |(at, _)| *at);
        let size = held.resizes.last().map_or(initial, |&(_, c, r)| (c, r));
        // A change tmux did not tell (or not yet): the screen is this size now.
        if size != now {
            events.push((last, Event::Resize(now.0, now.1)));
        }
        if let Some(status) = styled.exit_status {
            events.push((last, Event::Exit(status)));
        }
    }
    let start = events.first().map_or_else(Instant::now, |(at, _)| *at);
    let began = SystemTime::now() - start.elapsed();
    let header = Header {
        term_type: Some("xterm-256color".to_owned()),
        timestamp: began.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs()),
        title: Some(qualified),
        ..Header::new(initial.0, initial.1)
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
