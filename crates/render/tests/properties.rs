//! Properties that hold for any text and any budget.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use termpilot_render::{Budget, OutputId, Rendered, estimate_tokens, render};

/// Characters of two to four bytes, an emoji sequence, and a tab.
const WIDE: &[&str] = &["é", "中", "🚀", "Ω", "─", "👨‍👩‍👧‍👦", "✅", "ß", "\t"];

/// Pieces that text is made of: words, digits, marks, spaces, line breaks, characters
/// of two to four bytes, emoji sequences, long runs and repeated lines.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z]{1,12}",
        2 => "[0-9]{1,8}",
        2 => "[ -/:-@\\[-`{-~]{1,4}",
        2 => " {1,6}",
        4 => Just("\n".to_owned()),
        1 => Just("\n\n\n".to_owned()),
        2 => prop::sample::select(WIDE).prop_map(str::to_owned),
        1 => (1usize..3_000).prop_map(|n| "x".repeat(n)),
        1 => (1usize..800).prop_map(|n| "🚀中é".repeat(n)),
        1 => (3usize..300).prop_map(|n| "same line\n".repeat(n)),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..120).prop_map(|pieces| pieces.concat())
}

fn budget() -> impl Strategy<Value = Budget> {
    (
        0usize..2_500,
        prop::option::of(0usize..40),
        prop::option::of(0usize..5_000),
        0.0f32..=1.0,
    )
        .prop_map(|(max_tokens, max_lines, max_bytes, head_fraction)| Budget {
            max_tokens,
            max_lines,
            max_bytes,
            head_fraction,
        })
}

/// Whether the rendering is nothing but the elision line (a budget too small for
/// anything else).
fn only_elision(rendered: &Rendered) -> bool {
    rendered.head_lines == 0 && rendered.tail_lines == 0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_budget_is_respected(text in text(), budget in budget()) {
        check_budget(&text, &budget)?;
    }

    #[test]
    fn the_accounting_adds_up(text in text(), budget in budget()) {
        check_accounting(&render(&text, &budget, None))?;
    }
}

proptest! {
    // Long lines make each case slower: fewer cases.
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn a_cut_line_keeps_its_true_start_and_end(
        chars in prop::collection::vec(prop::sample::select(CUT_CHARS), 2_000..6_000),
        max_tokens in 60usize..600,
    ) {
        check_cut(&chars.into_iter().collect::<String>(), max_tokens)?;
    }
}

/// Characters to cut between: one to four bytes, and a zero-width joiner.
const CUT_CHARS: &[char] = &['a', 'é', '中', '🚀', ' ', '─', '\u{200d}'];

fn check_budget(text: &str, budget: &Budget) -> Result<(), TestCaseError> {
    let id: OutputId = "o12345".parse().unwrap();
    let rendered = render(text, budget, Some(&id));
    prop_assert_eq!(rendered.shown_tokens, estimate_tokens(&rendered.text));
    if only_elision(&rendered) {
        return Ok(());
    }
    let (tokens, lines, bytes) = (
        rendered.shown_tokens,
        rendered.text.split('\n').count(),
        rendered.text.len(),
    );
    prop_assert!(
        tokens <= budget.max_tokens,
        "{} > {}",
        tokens,
        budget.max_tokens
    );
    prop_assert!(
        budget.max_lines.is_none_or(|max| lines <= max),
        "{} lines",
        lines
    );
    prop_assert!(
        budget.max_bytes.is_none_or(|max| bytes <= max),
        "{} bytes",
        bytes
    );
    Ok(())
}

fn check_accounting(rendered: &Rendered) -> Result<(), TestCaseError> {
    let covered = rendered.head_lines + rendered.omitted_lines + rendered.tail_lines;
    prop_assert_eq!(covered, rendered.total_lines);
    let is_elision = |line: &&str| line.starts_with("[... ") && line.contains(" omitted (");
    let elisions = rendered.text.split('\n').filter(is_elision).count();
    prop_assert_eq!(elisions, usize::from(rendered.omitted_lines > 0));
    prop_assert_eq!(rendered.truncated, rendered.omitted_bytes > 0);
    prop_assert!(rendered.omitted_bytes <= rendered.total_bytes);
    Ok(())
}

fn check_cut(line: &str, max_tokens: usize) -> Result<(), TestCaseError> {
    let rendered = render(line, &Budget::tokens(max_tokens), None);
    prop_assert!(rendered.shown_tokens <= max_tokens);
    if rendered.omitted_lines == 1 {
        // The budget was too small even for a cut: the elision line stands alone.
        prop_assert!(rendered.text.starts_with("[... line 1 omitted"));
    } else if let Some((start, rest)) = rendered.text.split_once("[... ") {
        let (_, end) = rest.split_once(" omitted ...]").expect("the marker closes");
        prop_assert!(line.starts_with(start));
        prop_assert!(line.ends_with(end));
        prop_assert_eq!(start.len() + end.len() + rendered.omitted_bytes, line.len());
    } else {
        prop_assert_eq!(&rendered.text, line);
    }
    Ok(())
}
