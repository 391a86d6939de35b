//! Throughput of rendering large terminal outputs with the default budget:
//! `cargo bench -p termpilot-render`. Prints MB/s (1 MB = 10^6 bytes) per input.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use termpilot_render::{Budget, plan_terminal, render};

const TARGET_BYTES: usize = 20_000_000;

fn main() {
    let inputs = [
        ("build log, 20 MB", build_log()),
        ("identical lines, 20 MB", "y\n".repeat(TARGET_BYTES / 2)),
        (
            "one line, 20 MB",
            "0123456789abcdef".repeat(TARGET_BYTES / 16),
        ),
        ("UTF-8 lines, 20 MB", utf8_lines()),
    ];
    for (name, text) in &inputs {
        let per_run = time(|| render(black_box(text), &Budget::default(), None));
        let mb_per_s = text.len() as f64 / 1e6 / per_run.as_secs_f64();
        println!(
            "{name}: {:.2} ms a render, {mb_per_s:.0} MB/s",
            per_run.as_secs_f64() * 1e3
        );
    }
    // Raw bytes are cleaned first (by termpilot-journal), which reads every byte.
    let raw = build_log()
        .replace("Compiling", "\x1b[1;32mCompiling\x1b[0m")
        .replace('\n', "\r\n");
    let per_run =
        time(|| plan_terminal(black_box(raw.as_bytes()), &Budget::default()).finish(None));
    let mb_per_s = raw.len() as f64 / 1e6 / per_run.as_secs_f64();
    println!(
        "raw colored build log, {:.0} MB, cleaned then rendered: {:.2} ms, {mb_per_s:.0} MB/s",
        raw.len() as f64 / 1e6,
        per_run.as_secs_f64() * 1e3
    );
}

/// The best time of several runs, after one to warm up.
fn time<T>(mut run: impl FnMut() -> T) -> Duration {
    black_box(run());
    (0..10)
        .map(|_| {
            let start = Instant::now();
            black_box(run());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn build_log() -> String {
    let mut out = String::with_capacity(TARGET_BYTES + 100);
    let mut i = 0u64;
    while out.len() < TARGET_BYTES {
        i += 1;
        if i.is_multiple_of(37) {
            out.push_str(&format!(
                "warning: unused variable: `x{i}`\n  --> src/lib.rs:{}:9\n",
                i % 997
            ));
        } else {
            out.push_str(&format!("   Compiling crate-{i} v0.{}.{}\n", i % 13, i % 7));
        }
    }
    out
}

fn utf8_lines() -> String {
    let mut out = String::with_capacity(TARGET_BYTES + 100);
    let mut i = 0u64;
    while out.len() < TARGET_BYTES {
        i += 1;
        out.push_str(&format!(
            "{i} 编译 ✅ café 👨‍👩‍👧‍👦 Ошибка {}\n",
            "🚀".repeat((i % 5) as usize)
        ));
    }
    out
}
