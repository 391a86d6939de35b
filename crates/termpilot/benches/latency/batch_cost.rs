//! Part 6: 50 keystroke operations across 3 panes in one `send_keys_batch`
//! call vs 50 single `send_keys` calls, with the panes in 3 sessions (3
//! control connections) and in 3 windows of one session (one connection).

use std::path::Path;

use anyhow::ensure;
use serde_json::{Value, json};

use crate::mcp_client::McpClient;
use crate::report::Section;
use crate::server::PrivateServer;
use crate::stats::{Summary, time_async};
use crate::{TERMPILOT, client_runtime, create_pane};

const OPERATIONS: usize = 50;
const BATCHES: usize = 30;
const BATCH_WARMUP: usize = 3;
const ROUNDS: usize = 10;
const ROUND_WARMUP: usize = 1;
/// Each pane runs this: it takes any number of keystrokes and runs nothing.
const SINK: &str = "cat > /dev/null";

/// Where the three panes live.
#[derive(Clone, Copy)]
enum Layout {
    Sessions,
    Windows,
}

struct Costs {
    batch: Summary,
    singles: Summary,
}

pub fn batch_cost(server: &PrivateServer) -> anyhow::Result<Section> {
    let runtime = client_runtime()?;
    let sessions = runtime.block_on(measure(server, Layout::Sessions))?;
    let windows = runtime.block_on(measure(server, Layout::Windows))?;
    Ok(Section::new(
        "6. 50 send_keys operations (\"x\") across 3 `cat` panes, total per call or round",
    )
    .row(
        "batch_3_sessions",
        "send_keys_batch, panes in 3 sessions",
        sessions.batch,
    )
    .row(
        "singles_3_sessions",
        "50 send_keys calls, panes in 3 sessions",
        sessions.singles,
    )
    .row(
        "batch_1_session",
        "send_keys_batch, panes in 3 windows of 1 session",
        windows.batch,
    )
    .row(
        "singles_1_session",
        "50 send_keys calls, 3 windows of 1 session",
        windows.singles,
    )
    .ratio(
        "batch_vs_singles_3_sessions",
        "batch vs 50 single calls, 3 sessions",
        sessions.batch.times_faster_than(&sessions.singles),
    )
    .ratio(
        "batch_vs_singles_1_session",
        "batch vs 50 single calls, 1 session",
        windows.batch.times_faster_than(&windows.singles),
    )
    .note("ratios are times faster, by median")
    .note(
        "targets: batch median <= 20 ms, >= 5x faster than 50 single calls \
                 (existing servers: 441 ms for such a batch, context only)",
    ))
}

async fn measure(server: &PrivateServer, layout: Layout) -> anyhow::Result<Costs> {
    let mut client = McpClient::spawn(Path::new(TERMPILOT), server.name(), server.config())?;
    client.initialize().await?;
    let panes = sink_panes(&mut client, layout).await?;
    let operations: Vec<Value> = (0..OPERATIONS)
        .map(|i| json!({ "pane": panes[i % panes.len()], "text": "x", "enter": false }))
        .collect();
    let arguments = json!({ "operations": operations });
    let batch = time_async(BATCH_WARMUP, BATCHES, async || {
        let result = client
            .call_tool("send_keys_batch", arguments.clone())
            .await?;
        let succeeded = result["structuredContent"]["succeeded"].as_u64();
        ensure!(
            succeeded == Some(OPERATIONS as u64),
            "the batch did not send all operations: {result}"
        );
        Ok(())
    })
    .await?;
    let singles = time_async(ROUND_WARMUP, ROUNDS, async || {
        for operation in &operations {
            client.call_tool("send_keys", operation.clone()).await?;
        }
        Ok(())
    })
    .await?;
    client.close().await?;
    Ok(Costs { batch, singles })
}

/// Three `cat` panes: in three sessions, or in three windows of one.
async fn sink_panes(client: &mut McpClient, layout: Layout) -> anyhow::Result<Vec<String>> {
    let mut panes = Vec::with_capacity(3);
    match layout {
        Layout::Sessions => {
            for n in 1..=3 {
                let session = json!({ "name": format!("bench-batch-{n}"), "command": SINK });
                panes.push(create_pane(client, session).await?);
            }
        }
        Layout::Windows => {
            let name = "bench-batch-windows";
            let session = json!({ "name": name, "command": SINK });
            panes.push(create_pane(client, session).await?);
            for _ in 0..2 {
                let window = json!({ "session": name, "command": SINK });
                let created = client.call_tool("create_window", window).await?;
                panes.push(crate::structured_str(&created, "pane")?.to_owned());
            }
        }
    }
    Ok(panes)
}
