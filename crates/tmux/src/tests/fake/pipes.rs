//! The tasks at the far end of each pipe: writing what the fake queued,
//! reading the client's lines, or playing a transcript.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::Fake;
use super::conn::Out;
use super::replay::{self, Step, Transcript};

/// Writes what the fake queued for one connection, until it closes.
pub(super) async fn write_out(
    fake: Fake,
    conn: usize,
    mut to_client: DuplexStream,
    mut rx: mpsc::UnboundedReceiver<Out>,
) {
    while let Some(Out::Bytes(bytes)) = rx.recv().await {
        if to_client.write_all(&bytes).await.is_err() {
            break;
        }
    }
    drop(to_client);
    fake.mark_closed(conn);
}

/// Reads the client's lines and answers them, until either side closes.
pub(super) async fn read_lines(fake: Fake, conn: usize, from_client: DuplexStream) {
    let mut done = fake.lock().conns[conn].done.subscribe();
    let mut reader = BufReader::new(from_client);
    let mut line = Vec::new();
    loop {
        tokio::select! {
            _ = done.wait_for(|&closed| closed) => return,
            read = reader.read_until(b'\n', &mut line) => match read {
                Ok(n) if n > 0 && line.ends_with(b"\n") => {
                    line.pop();
                    fake.on_line(conn, std::mem::take(&mut line));
                }
                // The client closed its side: tmux's client process ends.
                _ => {
                    fake.lock().conns[conn].close();
                    return;
                }
            },
        }
    }
}

/// Plays a transcript to one connection.
pub(super) async fn play(
    fake: Fake,
    conn: usize,
    script: Transcript,
    from_client: DuplexStream,
    mut to_client: DuplexStream,
    mut rx: mpsc::UnboundedReceiver<Out>,
) {
    let mut reader = BufReader::new(from_client);
    let mut line = Vec::new();
    let mut steps = script.steps.into_iter();
    let mut expecting: Option<Step> = None;
    loop {
        let step = match expecting.take() {
            Some(step) => step,
            None => match steps.next() {
                Some(step) => step,
                // The transcript is over: keep reading lines (and what the
                // test injects) until a side closes.
                None => Step::Listen,
            },
        };
        let wanted = match step {
            Step::Send(bytes) => {
                let mut bytes = bytes;
                bytes.push(b'\n');
                if to_client.write_all(&bytes).await.is_err() {
                    break;
                }
                continue;
            }
            Step::Wait(duration) => {
                let deadline = Instant::now() + duration;
                tokio::select! {
                    () = tokio::time::sleep_until(deadline) => continue,
                    out = rx.recv() => match out {
                        Some(Out::Bytes(bytes)) => {
                            let _ = to_client.write_all(&bytes).await;
                            let left = deadline.saturating_duration_since(Instant::now());
                            expecting = Some(Step::Wait(left));
                            continue;
                        }
                        _ => break,
                    },
                }
            }
            Step::Close => break,
            wanted => wanted,
        };
        tokio::select! {
            out = rx.recv() => match out {
                Some(Out::Bytes(bytes)) => {
                    if to_client.write_all(&bytes).await.is_err() {
                        break;
                    }
                    expecting = Some(wanted);
                }
                _ => break,
            },
            read = reader.read_until(b'\n', &mut line) => match read {
                Ok(n) if n > 0 && line.ends_with(b"\n") => {
                    line.pop();
                    let got = std::mem::take(&mut line);
                    let over = wanted == Step::Listen;
                    let mut state = fake.lock();
                    state.conns[conn].lines.push(got.clone());
                    if !over && replay::matches(&wanted, &got) != Some(true) {
                        let got = String::from_utf8_lossy(&got);
                        let wanted = match &wanted {
                            Step::Expect(line) => String::from_utf8_lossy(line).into_owned(),
                            other => format!("{other:?}"),
                        };
                        state.mismatches.push(format!("connection {conn}: expected {wanted:?}, got {got:?}"));
                        break;
                    }
                }
                _ => break,
            },
        }
    }
    drop(to_client);
    fake.mark_closed(conn);
}
