//! Parser throughput on a synthetic flood: `cargo bench -p termpilot-control`.
//!
//! One million `%output` lines shaped like `seq 1 1000000` in a pane (the number,
//! then an escaped CR LF), plus a 100,000-line reply block, fed in 64 KiB reads as a
//! pipe would deliver them. Prints MB/s and lines/s to stderr.

use std::time::Instant;

use termpilot_control::{Event, Parser};

fn output_flood(lines: usize) -> Vec<u8> {
    let mut stream = Vec::new();
    for n in 1..=lines {
        stream.extend_from_slice(format!("%output %1 {n}\\015\\012\n").as_bytes());
    }
    stream
}

fn reply_block(lines: usize) -> Vec<u8> {
    let mut stream = b"%begin 1700000000 7 1\n".to_vec();
    for n in 1..=lines {
        stream.extend_from_slice(format!("line {n} of a long capture\n").as_bytes());
    }
    stream.extend_from_slice(b"%end 1700000000 7 1\n");
    stream
}

fn measure(name: &str, stream: &[u8], lines: usize) {
    let start = Instant::now();
    let mut parser = Parser::new();
    let mut events = 0usize;
    let mut decoded = 0usize;
    for chunk in stream.chunks(64 * 1024) {
        parser.feed(chunk);
        while let Some(event) = parser.next_event() {
            events += 1;
            if let Event::Output { data, .. } = event {
                decoded += data.len();
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let megabytes = stream.len() as f64 / 1e6;
    eprintln!(
        "{name}: {megabytes:.1} MB, {lines} lines, {events} events, {decoded} decoded bytes \
         in {:.1} ms: {:.0} MB/s, {:.1} M lines/s",
        seconds * 1e3,
        megabytes / seconds,
        lines as f64 / seconds / 1e6
    );
}

fn main() {
    let flood = output_flood(1_000_000);
    measure("output flood", &flood, 1_000_000);
    let block = reply_block(100_000);
    measure("reply block", &block, 100_002);
}
