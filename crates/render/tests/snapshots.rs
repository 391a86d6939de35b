//! What agents see: rendered outputs, reviewed and kept as `insta` snapshots.

use termpilot_render::{Budget, OutputId, Plan, Rendered, plan, plan_terminal};

use crate::samples;

/// The facts and the text of a rendering, as one snapshot.
fn shown(rendered: &Rendered) -> String {
    format!(
        "truncated={} total_lines={} total_bytes={} omitted_lines={} omitted_bytes={} shown_tokens={} head_lines={} tail_lines={}\n---\n{}",
        rendered.truncated,
        rendered.total_lines,
        rendered.total_bytes,
        rendered.omitted_lines,
        rendered.omitted_bytes,
        rendered.shown_tokens,
        rendered.head_lines,
        rendered.tail_lines,
        rendered.text
    )
}

/// Finishes a plan as a caller that keeps cut outputs would, naming `o1`.
fn finish(plan: &Plan<'_>) -> Rendered {
    let id: OutputId = "o1".parse().unwrap();
    plan.finish(plan.is_truncated().then_some(&id))
}

#[test]
fn build_log_of_20000_lines() {
    let log = samples::build_log(20_000);
    let rendered = finish(&plan(&log, &Budget::default()));
    assert!(rendered.shown_tokens <= 2_000);
    insta::assert_snapshot!("build_log_20000_lines", shown(&rendered));
}

#[test]
fn progress_bar_drawn_with_carriage_returns() {
    let mut raw = b"Downloading image layers\r\n".to_vec();
    for percent in (0..=100).step_by(5) {
        let bar = "#".repeat(percent / 5) + &" ".repeat(20 - percent / 5);
        raw.extend(
            format!(
                "\r\x1b[K[{bar}] {percent:>3}% {:.1} MB",
                percent as f64 * 0.42
            )
            .bytes(),
        );
    }
    raw.extend(b"\r\nDone.\r\n\r\n\r\n");
    let rendered = finish(&plan_terminal(&raw, &Budget::default()));
    assert!(!rendered.truncated);
    insta::assert_snapshot!("progress_bar", shown(&rendered));
}

#[test]
fn spinner_redrawn_in_place() {
    let mut raw = b"$ npm install\r\n".to_vec();
    for frame in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏".chars().cycle().take(200) {
        raw.extend(format!("\r\x1b[36m{frame}\x1b[0m resolving dependencies").bytes());
    }
    raw.extend("\r\x1b[2K\x1b[32m✔\x1b[0m added 42 packages in 3s\r\n$ ".bytes());
    let rendered = finish(&plan_terminal(&raw, &Budget::default()));
    insta::assert_snapshot!("spinner", shown(&rendered));
}

#[test]
fn colored_compiler_errors_within_a_small_budget() {
    let rendered = finish(&plan_terminal(
        samples::RUSTC_ERRORS_ANSI,
        &Budget::tokens(400),
    ));
    assert!(!rendered.text.contains('\x1b'));
    assert!(rendered.shown_tokens <= 400);
    insta::assert_snapshot!("rustc_errors_400_tokens", shown(&rendered));
}

#[test]
fn colored_compiler_errors_whole() {
    let rendered = finish(&plan_terminal(
        samples::RUSTC_ERRORS_ANSI,
        &Budget::default(),
    ));
    assert!(!rendered.truncated);
    insta::assert_snapshot!("rustc_errors_whole", shown(&rendered));
}

#[test]
fn one_hundred_thousand_identical_lines() {
    let text = "$ yes | head -n 100000\n".to_owned() + &"y\n".repeat(100_000) + "$ \n";
    let rendered = finish(&plan(&text, &Budget::default()));
    insta::assert_snapshot!("identical_lines_100000", shown(&rendered));
}

#[test]
fn identical_lines_inside_a_cut_log() {
    let mut text = samples::build_log(3_000);
    text.push_str(&"warning: retrying connection\n".repeat(500));
    text.push_str("error: could not download crate after 500 tries\n");
    let rendered = finish(&plan(&text, &Budget::tokens(300)));
    insta::assert_snapshot!("identical_lines_in_a_cut_log", shown(&rendered));
}

#[test]
fn one_line_of_five_megabytes() {
    let mut rng = samples::Rng::new(3);
    let line: String = (0..5_000_000)
        .map(|_| char::from(b'a' + rng.below(26) as u8))
        .collect();
    let rendered = finish(&plan(&line, &Budget::default()));
    assert!(rendered.shown_tokens <= 2_000);
    insta::assert_snapshot!("one_line_5mb", shown(&rendered));
}

#[test]
fn mixed_utf8_and_emoji_cut_in_a_small_budget() {
    let lines: String = (1..=400)
        .map(|i| format!("{i} 编译 ✅ café 👨‍👩‍👧‍👦 Ошибка {}\n", "🚀".repeat(i % 7)))
        .collect();
    let rendered = finish(&plan(&lines, &Budget::tokens(250)));
    assert!(rendered.shown_tokens <= 250);
    insta::assert_snapshot!("mixed_utf8_250_tokens", shown(&rendered));
}

#[test]
fn a_line_limit_and_a_byte_limit() {
    let log = samples::build_log(1_000);
    let by_lines = finish(&plan(
        &log,
        &Budget {
            max_lines: Some(8),
            ..Budget::default()
        },
    ));
    insta::assert_snapshot!("build_log_8_lines", shown(&by_lines));
    let by_bytes = finish(&plan(
        &log,
        &Budget {
            max_bytes: Some(500),
            ..Budget::default()
        },
    ));
    insta::assert_snapshot!("build_log_500_bytes", shown(&by_bytes));
}
