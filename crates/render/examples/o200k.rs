//! Counts `o200k_base` tokens: reads texts from stdin, one JSON string a
//! line, and prints each text's count on a line of its own. The task
//! benchmark (`tests/e2e/bench_tasks.py`) uses it to count what an agent
//! reads.

use std::io::{BufRead, Write};

fn main() {
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base is bundled");
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin is readable");
        let text = json_string(&line);
        let count = bpe.encode_with_special_tokens(&text).len();
        writeln!(out, "{count}").expect("stdout is writable");
    }
}

/// Decodes one JSON string literal (as Python's `json.dumps` writes it).
fn json_string(line: &str) -> String {
    let inner = line.trim().trim_start_matches('"').trim_end_matches('"');
    let mut text = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => text.push('\n'),
            Some('t') => text.push('\t'),
            Some('r') => text.push('\r'),
            Some('b') => text.push('\u{8}'),
            Some('f') => text.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = u32::from_str_radix(&hex, 16).unwrap_or(0xfffd);
                text.push(char::from_u32(unit).unwrap_or('\u{fffd}'));
            }
            Some(other) => text.push(other),
            None => {}
        }
    }
    text
}
