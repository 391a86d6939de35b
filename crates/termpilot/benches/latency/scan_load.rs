//! The scan load of part 8: waits that each scan a whole 8 MiB journal,
//! started while a quiet pane's wake-up lag is measured. Before each pane's
//! journal had a lock of its own, such scans ran under the one lock every
//! control client's reader needed.

use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::json;

use crate::mcp_client::McpClient;
use crate::stats::Summary;
use crate::{create_pane, structured_str, wake_lag};

/// Scanning waits started per sample.
const SCANS: usize = 4;
const LAGS: usize = 20;
/// Shorter than the scans take together, so the marker prints while they run.
const MARKER_DELAY: Duration = Duration::from_millis(300);
/// About 8.8 MB of output: more than the journal keeps, so every wait from
/// its start scans all of the 8 MiB held, reports the rest lost, and ends.
const BIG_COMMAND: &str = "seq 1 1100000; echo BIG''-DONE; exec sleep 3600";
pub const BIG_SESSION: &str = "bench-big";

/// The quiet pane's wake-up lag while [`SCANS`] waits scan a big journal.
pub async fn lags_while_scanning(client: &mut McpClient, quiet: &str) -> anyhow::Result<Summary> {
    let big = big_journal(client).await?;
    let mut lags = Vec::with_capacity(LAGS);
    for _ in 0..LAGS {
        let cursor = wake_lag::type_marker(client, quiet, MARKER_DELAY).await?;
        for _ in 0..SCANS {
            let wait = json!({ "pane": big.pane, "pattern": "tp-never-printed", "since": big.start, "timeout_s": 5 });
            let call = json!({ "name": "wait_for_text", "arguments": wait });
            client.start_request("tools/call", call).await?;
        }
        lags.push(wake_lag::await_marker(client, quiet, &cursor).await?);
    }
    Ok(Summary::of(lags))
}

/// A pane and the cursor at the start of its output.
struct Big {
    pane: String,
    start: String,
}

/// Creates the pane with the big journal and waits until it is full.
async fn big_journal(client: &mut McpClient) -> anyhow::Result<Big> {
    let session = json!({ "name": BIG_SESSION, "command": BIG_COMMAND });
    let pane = create_pane(client, session).await?;
    let wait = json!({ "pane": pane, "pattern": "BIG-DONE", "timeout_s": 60 });
    let done = client
        .call_tool_within("wait_for_text", wait, Duration::from_secs(65))
        .await?;
    let outcome = structured_str(&done, "outcome")?;
    ensure!(outcome == "matched", "the big output did not end: {done}");
    // A cursor names epoch, pane and offset; offset 0 is the first byte.
    let cursor = structured_str(&done, "cursor")?;
    let (prefix, _) = cursor.rsplit_once('.').context("a cursor without fields")?;
    Ok(Big {
        start: format!("{prefix}.0"),
        pane,
    })
}
