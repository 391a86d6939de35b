//! Terminal output to test with: recorded fixtures and deterministic generators.

/// A small deterministic generator (xorshift), so samples are the same on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Recorded outputs (`name`, text).
pub fn fixtures() -> Vec<(&'static str, &'static str)> {
    vec![
        ("cargo build", include_str!("fixtures/cargo_build.txt")),
        ("rustc errors", include_str!("fixtures/rustc_errors.txt")),
        ("gcc errors", include_str!("fixtures/gcc_errors.txt")),
        ("python traceback", include_str!("fixtures/traceback.txt")),
        ("ls -l", include_str!("fixtures/ls_l.txt")),
        ("JSON, pretty", include_str!("fixtures/json_pretty.txt")),
        ("CJK", include_str!("fixtures/cjk.txt")),
        ("emoji", include_str!("fixtures/emoji.txt")),
        (
            "Cyrillic, Greek, German",
            include_str!("fixtures/cyrillic_greek.txt"),
        ),
        ("Rust source", include_str!("../src/plan.rs")),
    ]
}

/// Generated outputs (`name`, text).
pub fn generated() -> Vec<(&'static str, String)> {
    vec![
        ("build log", build_log(300)),
        ("structured logs", structured_logs(200)),
        ("hex dump", hex_dump(200)),
        ("hashes", hashes(150)),
        ("seq", (1..=2_000).map(|i| format!("{i}\n")).collect()),
        ("box table", box_table(30)),
        ("progress lines", progress_lines(150)),
        ("random letters", random_letters(100)),
        ("base64", base64_lines(60)),
    ]
}

/// A cargo build of exactly `lines` lines: `Compiling` lines with a warning now and
/// then, and a summary.
pub fn build_log(lines: usize) -> String {
    let mut rng = Rng::new(7);
    let names = [
        "serde",
        "tokio",
        "regex",
        "memchr",
        "proc-macro2",
        "syn",
        "quote",
        "libc",
        "termpilot-render",
    ];
    let mut out = String::new();
    for i in 0..lines {
        let name = names[i % names.len()];
        match rng.below(40) {
            0 => out.push_str(&format!(
                "warning: unused variable: `x{i}`\n  --> src/lib.rs:{}:9\n   |\n{:>3} |     let x{i} = {};\n   |         ^^ help: if this is intentional, prefix it with an underscore: `_x{i}`\n",
                i % 500 + 1,
                i % 500 + 1,
                rng.below(1000)
            )),
            _ => out.push_str(&format!(
                "   Compiling {name}{} v{}.{}.{}\n",
                if i >= names.len() { format!("-{i}") } else { String::new() },
                rng.below(3),
                rng.below(40),
                rng.below(20)
            )),
        }
    }
    let mut kept: Vec<&str> = out.lines().take(lines.saturating_sub(1)).collect();
    kept.push("    Finished `dev` profile [unoptimized + debuginfo] target(s) in 42.17s");
    kept.iter().map(|line| format!("{line}\n")).collect()
}

fn structured_logs(lines: usize) -> String {
    let mut rng = Rng::new(11);
    let levels = ["INFO ", "DEBUG", "WARN ", "ERROR"];
    (0..lines)
        .map(|_| {
            format!(
                "2026-11-{:02}T{:02}:{:02}:{:02}.{:03}Z {} termpilot::engine{{pane=%{}}}: request id={:016x} took {} us\n",
                rng.below(28) + 1,
                rng.below(24),
                rng.below(60),
                rng.below(60),
                rng.below(1000),
                levels[rng.below(4) as usize],
                rng.below(40),
                rng.next(),
                rng.below(100_000)
            )
        })
        .collect()
}

fn hex_dump(lines: usize) -> String {
    let mut rng = Rng::new(13);
    let mut out = String::new();
    for line in 0..lines {
        let bytes: Vec<u8> = (0..16)
            .map(|_| {
                if rng.below(3) == 0 {
                    0
                } else {
                    rng.below(256) as u8
                }
            })
            .collect();
        let hex: Vec<String> = bytes
            .chunks(2)
            .map(|p| format!("{:02x}{:02x}", p[0], p[1]))
            .collect();
        let ascii: String = bytes
            .iter()
            .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
            .collect();
        out.push_str(&format!("{:08x}: {}  {ascii}\n", line * 16, hex.join(" ")));
    }
    out
}

fn hashes(lines: usize) -> String {
    let mut rng = Rng::new(17);
    (0..lines)
        .map(|_| {
            format!(
                "{:08x}-{:04x}-{:04x}  sha256:{:016x}{:016x}{:016x}{:016x}\n",
                rng.next() as u32,
                rng.next() as u16,
                rng.next() as u16,
                rng.next(),
                rng.next(),
                rng.next(),
                rng.next()
            )
        })
        .collect()
}

fn box_table(rows: usize) -> String {
    let mut rng = Rng::new(19);
    let mut out = String::from(
        "┌────────────────────┬─────────┬────────┐\n│ crate              │ status  │ time   │\n├────────────────────┼─────────┼────────┤\n",
    );
    for i in 0..rows {
        let status = if rng.below(5) == 0 { "FAIL" } else { "ok" };
        out.push_str(&format!(
            "│ {:<18} │ {status:<7} │ {:>4} ms │\n",
            format!("crate-{i}"),
            rng.below(1000)
        ));
    }
    out.push_str("└────────────────────┴─────────┴────────┘\n");
    out
}

fn progress_lines(lines: usize) -> String {
    let mut rng = Rng::new(23);
    (0..lines)
        .map(|_| {
            let p = rng.below(101) as usize;
            format!(
                "[{:<40}] {p:>3}% {:>5}.{} MB/s eta {}s\n",
                "#".repeat(p * 40 / 100),
                rng.below(100),
                rng.below(10),
                rng.below(99)
            )
        })
        .collect()
}

/// Lines of random lowercase letters, like generated names and base32 ids.
fn random_letters(lines: usize) -> String {
    let mut rng = Rng::new(29);
    (0..lines)
        .map(|_| {
            let len = 8 + rng.below(60) as usize;
            let word: String = (0..len)
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect();
            format!("{word}\n")
        })
        .collect()
}

/// Base64 of random bytes, 76 characters a line, as in certificates and keys.
fn base64_lines(lines: usize) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = Rng::new(31);
    (0..lines)
        .map(|_| {
            let line: String = (0..76)
                .map(|_| char::from(ALPHABET[rng.below(64) as usize]))
                .collect();
            format!("{line}\n")
        })
        .collect()
}

/// rustc's errors as a terminal shows them, colors and all.
pub const RUSTC_ERRORS_ANSI: &[u8] = include_bytes!("fixtures/rustc_errors.ansi");
