//! `termpilot serve --record DIR`: every pane's recording written to
//! `DIR/<session>-<pane>.cast` while the server runs.
//!
//! The file is the pane's recording as `export_recording` makes it (wrappers hidden, secrets redacted, a marker per tool call),
//! rewritten whole (to a temporary file, then renamed over the old one, so a
//! reader never sees half a file) when the pane printed or a call touched
//! it. A rewrite costs time in proportion to the journal, so after one that
//! took `t` the next waits at least `10 t`: recording takes at most about a
//! tenth of a core. A file over the size bound loses its oldest events, and
//! a marker says how many. Panes outside the scope are not recorded; a
//! pane that is gone keeps its last file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use termpilot_tmux::PaneScope;

use crate::address::{Host, Pane};
use crate::server::TermpilotServer;
use crate::tools::recording::{Span, recording};

/// How often the panes are looked at.
const TICK: Duration = Duration::from_secs(1);

/// After a rewrite that took `t`, the pane waits this many times `t`.
const BACKOFF: u32 = 10;

/// Where recordings go and how big each may grow.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The directory of the recordings (made if missing).
    pub dir: PathBuf,
    /// The most bytes of one pane's recording.
    pub max_bytes: u64,
}

/// What was last written for a pane.
struct Written {
    /// The journal's end and the number of notes then.
    seen: (u64, usize),
    /// Not rewritten before this.
    next: Instant,
}

impl TermpilotServer {
    /// Records every pane in scope of the local host to `options.dir`
    /// while the server runs (a task of its own). Fails when the directory
    /// cannot be made.
    pub fn record(&self, options: RecordOptions) -> std::io::Result<()> {
        std::fs::create_dir_all(&options.dir)?;
        let server = self.clone();
        tokio::spawn(async move { record(server, options).await });
        Ok(())
    }
}

async fn record(server: TermpilotServer, options: RecordOptions) {
    let engine = server.local_engine();
    let mut written: HashMap<PathBuf, Written> = HashMap::new();
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let panes = match engine.list_panes(&PaneScope::All).await {
            Ok(panes) => panes,
            Err(e) => {
                tracing::debug!(error = %e, "recorder: cannot list the panes");
                continue;
            }
        };
        let scope = &server.oversight.scope;
        for info in panes.iter().filter(|p| scope.allows(&p.session_name)) {
            let path = options.dir.join(file_name(&info.session_name, info.id.0));
            let id = info.id.to_string();
            let seen = (engine.journal_end(info.id), server.notes.of(&id).len());
            if let Some(last) = written.get(&path)
                && (last.seen == seen || last.next > Instant::now())
            {
                continue;
            }
            let started = Instant::now();
            let pane = Pane {
                host: Host::local(),
                engine: engine.clone(),
                id: info.id,
            };
            if let Err(e) = write(&server, &pane, &path, options.max_bytes).await {
                tracing::warn!(error = %e, path = %path.display(), "recorder: cannot write");
            }
            let took = started.elapsed();
            written.insert(
                path,
                Written {
                    seen,
                    next: Instant::now() + took * BACKOFF,
                },
            );
        }
    }
}

/// `<session>-<pane>.cast`, the pane's number without its `%`, and any
/// character of the session's name that does not belong in a file name
/// written `_`.
pub(crate) fn file_name(session: &str, pane: u32) -> String {
    let session: String = session
        .chars()
        .map(|c| match c.is_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    let session = session.trim_start_matches('.');
    format!("{session}-{pane}.cast")
}

async fn write(
    server: &TermpilotServer,
    pane: &Pane,
    path: &Path,
    max_bytes: u64,
) -> std::io::Result<()> {
    let recorded = recording(server, pane, Span::default())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let text = bounded(&recorded.text, max_bytes);
    let partial = path.with_extension("cast.partial");
    std::fs::write(&partial, text.as_bytes())?;
    std::fs::rename(&partial, path)
}

/// The recording cut to `max_bytes`: its header, a marker saying how many
/// of the oldest events were dropped, and the newest events that fit.
fn bounded(text: &str, max_bytes: u64) -> String {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    if text.len() <= max {
        return text.to_owned();
    }
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let events: Vec<&str> = lines.collect();
    let mut kept = 0;
    // Room for the header and the marker.
    let mut size = header.len() + 120;
    for line in events.iter().rev() {
        if size + line.len() + 1 > max {
            break;
        }
        size += line.len() + 1;
        kept += 1;
    }
    let dropped = events.len() - kept;
    let marker = serde_json::json!([
        0.0,
        "m",
        format!(
            "[termpilot: {dropped} earlier events dropped to keep this file under {max_bytes} bytes]"
        )
    ]);
    let mut out = format!("{header}\n{marker}\n");
    for line in &events[dropped..] {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_over_the_bound_keeps_its_newest_events_and_says_so() {
        let mut text = String::from("{\"version\":3}\n");
        for i in 0..1000 {
            text.push_str(&format!("[0.1,\"o\",\"line {i:04}\\r\\n\"]\n"));
        }
        assert_eq!(bounded(&text, 1 << 20), text);
        let cut = bounded(&text, 2_000);
        assert!(cut.len() <= 2_000, "{}", cut.len());
        let lines: Vec<&str> = cut.lines().collect();
        assert_eq!(lines[0], "{\"version\":3}");
        assert!(lines[1].contains("earlier events dropped"), "{}", lines[1]);
        let dropped: usize = lines[1]
            .split("termpilot: ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert_eq!(dropped + lines.len() - 2, 1000);
        assert!(lines.last().unwrap().contains("line 0999"));
    }

    #[test]
    fn file_names_are_session_and_pane_number() {
        assert_eq!(file_name("work", 3), "work-3.cast");
        assert_eq!(file_name("../etc/x y", 3), "_etc_x_y-3.cast");
        assert_eq!(file_name(".hidden", 12), "hidden-12.cast");
    }
}
