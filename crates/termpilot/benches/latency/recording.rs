//! Part 12: what showing what happened costs (issue 23).
//!
//! - Recording: `seq 1 1000000` followed to its end (part 5's command and
//!   wait) by a `termpilot serve` without `--record` and by one with it, one
//!   run each: the time inside the pane and until `wait_for_text` returns,
//!   as a ratio; and how long after the flood's end the recording file holds
//!   it.
//! - Pictures: a 200x50 screen of coloured text drawn as a PNG in-process
//!   (`termpilot_screen`: rasterise and encode), and through
//!   `capture_pane {"format": "png"}` on a 200x50 pane showing the same
//!   text; the PNG's size.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use termpilot_screen::Screen;

use crate::flood::run_followed;
use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::{Summary, time_async, time_blocking};
use crate::{TERMPILOT, client_runtime, create_pane, run_tmux};

/// The picture's size in cells.
const COLS: u16 = 200;
const ROWS: u16 = 50;
const PNG_RUNS: usize = 20;
const PNG_WARMUP: usize = 3;
/// Bounds the wait for the recording file to catch up.
const FILE_TIMEOUT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(100);

/// One followed flood: inside the pane, until the wait returned, and (when
/// recorded) until the file held the flood's last line.
struct Flood {
    in_pane: Duration,
    until_result: Duration,
    file_caught_up: Option<Duration>,
}

pub fn recording(server: &PrivateServer) -> anyhow::Result<Section> {
    let dir = tempfile::tempdir()?;
    let record = [OsStr::new("--record"), dir.path().as_os_str()];
    let (plain, recorded, mcp_png, png_bytes) = client_runtime()?.block_on(async {
        let plain = flood(server, &[], "P", None).await?;
        let recorded = flood(server, &record, "R", Some(dir.path())).await?;
        let (mcp_png, png_bytes) = png_through_mcp(server).await?;
        anyhow::Ok((plain, recorded, mcp_png, png_bytes))
    })?;
    let (render, rendered_bytes) = png_in_process()?;
    let one = |d: Duration| Summary::of(vec![d]);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    let mut section = Section::new("12. Recordings and pictures")
        .row(
            "record_off_in_pane",
            "flood, no --record: in the pane",
            one(plain.in_pane),
        )
        .row(
            "record_on_in_pane",
            "flood, --record: in the pane",
            one(recorded.in_pane),
        )
        .row(
            "record_off_result",
            "flood, no --record: to the wait's result",
            one(plain.until_result),
        )
        .row(
            "record_on_result",
            "flood, --record: to the wait's result",
            one(recorded.until_result),
        )
        .ratio(
            "record_on_vs_off_in_pane",
            "--record vs none, in the pane: times slower",
            ratio(recorded.in_pane, plain.in_pane),
        )
        .ratio(
            "record_on_vs_off_result",
            "--record vs none, to the result: times slower",
            ratio(recorded.until_result, plain.until_result),
        );
    if let Some(caught_up) = recorded.file_caught_up {
        section = section.row(
            "record_file_lag",
            "--record: file holds the flood, after its end",
            one(caught_up),
        );
    }
    Ok(section
        .row(
            "png_render_200x50",
            "PNG of 200x50 cells, in-process",
            render,
        )
        .row(
            "png_capture_200x50",
            "capture_pane png of a 200x50 pane",
            mcp_png,
        )
        .note(format!(
            "PNG of 200x50 cells: {rendered_bytes} bytes in-process, {png_bytes} bytes from \
             capture_pane; the floods are one run each"
        )))
}

/// Follows one flood in a pane of a server started with `extra`; with a
/// recording `dir`, also waits for its file to hold the flood's end.
async fn flood(
    server: &PrivateServer,
    extra: &[&OsStr],
    tag: &str,
    dir: Option<&Path>,
) -> anyhow::Result<Flood> {
    let mut client =
        McpClient::spawn_with(Path::new(TERMPILOT), server.name(), server.config(), extra)?;
    client.initialize().await?;
    let session = format!("bench-record-{tag}");
    let pane = create_pane(
        &mut client,
        json!({"name": session, "width": 160, "height": 48}),
    )
    .await?;
    let started = Instant::now();
    let in_pane = run_followed(&mut client, &pane, tag).await?;
    let until_result = started.elapsed();
    let file_caught_up = match dir {
        Some(dir) => {
            let path = dir.join(format!("{session}-{}.cast", pane.trim_start_matches('%')));
            Some(file_holds(&path, &format!("DUR-{tag} ")).await? + until_result - in_pane)
        }
        None => None,
    };
    run_tmux(server, &["kill-session", "-t", &session])?;
    client.close().await?;
    Ok(Flood {
        in_pane,
        until_result,
        file_caught_up,
    })
}

/// How long until the file at `path` holds `text` followed by a digit (the
/// result line; the echoed command line has `text` then `$((`).
async fn file_holds(path: &Path, text: &str) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let result = |cast: &str| {
        cast.match_indices(text)
            .any(|(at, _)| cast[at + text.len()..].starts_with(|c: char| c.is_ascii_digit()))
    };
    while started.elapsed() < FILE_TIMEOUT {
        if std::fs::read_to_string(path).is_ok_and(|cast| result(&cast)) {
            return Ok(started.elapsed());
        }
        tokio::time::sleep(POLL).await;
    }
    bail!("{} never held {text:?}", path.display())
}

/// Rows of coloured words, as a busy TUI or a compiler's output shows them.
fn coloured_text() -> Vec<u8> {
    let mut out = Vec::new();
    for row in 0..ROWS {
        let mut line = String::new();
        let mut col = 0;
        let mut n = usize::from(row);
        while col + 10 <= usize::from(COLS) {
            line.push_str(&format!(
                "\x1b[{};{}m{:<9}\x1b[0m ",
                30 + n % 8,
                40 + (n / 8) % 8,
                format!("w{row}-{n}")
            ));
            col += 10;
            n += 7;
        }
        out.extend_from_slice(line.as_bytes());
        if row + 1 < ROWS {
            out.extend_from_slice(b"\r\n");
        }
    }
    out
}

/// Rasterising and encoding the screen, timed; the PNG's size.
fn png_in_process() -> anyhow::Result<(Summary, usize)> {
    let screen = Screen::from_output(&coloured_text(), COLS, ROWS)?;
    let bytes = screen.png()?.len();
    let summary = time_blocking(PNG_WARMUP, PNG_RUNS, || {
        screen.png().map(drop).map_err(Into::into)
    })?;
    Ok((summary, bytes))
}

/// `capture_pane {"format": "png"}` of a 200x50 pane showing the coloured
/// text, timed; the PNG's size.
async fn png_through_mcp(server: &PrivateServer) -> anyhow::Result<(Summary, usize)> {
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), coloured_text())?;
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let session = json!({"name": "bench-png", "width": COLS, "height": ROWS});
    let pane = create_pane(&mut client, session).await?;
    let shown = format!("clear; cat {}; read -r", file.path().display());
    client
        .call_tool("send_keys", json!({"pane": pane, "text": shown}))
        .await?;
    let drawn = json!({"pane": pane, "pattern": format!("w{}-", ROWS - 1), "include_screen": true});
    client.call_tool("wait_for_text", drawn).await?;
    let capture = json!({"pane": pane, "format": "png"});
    let png_size = |result: &Value| -> anyhow::Result<usize> {
        let image = result["content"]
            .as_array()
            .and_then(|blocks| blocks.iter().find(|b| b["type"] == "image"))
            .with_context(|| format!("no image in {result}"))?;
        let data = image["data"].as_str().context("image data")?;
        Ok(data.len() / 4 * 3 - data.matches('=').count())
    };
    let bytes = png_size(&client.call_tool("capture_pane", capture.clone()).await?)?;
    let summary = time_async(PNG_WARMUP, PNG_RUNS, async || {
        let result = client.call_tool("capture_pane", capture.clone()).await?;
        png_size(&result).map(drop)
    })
    .await?;
    run_tmux(server, &["kill-session", "-t", "bench-png"])?;
    client.close().await?;
    Ok((summary, bytes))
}
