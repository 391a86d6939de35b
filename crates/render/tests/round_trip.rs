//! The head of a rendering and the pages of its kept output give back the whole text.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use regex::Regex;
use termpilot_render::{Budget, OutputStore, plan};

/// Distinct lines (so none fold) of short mixed text.
fn distinct_lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z é中🚀Ω]{0,16}", 1..400).prop_map(|lines| {
        lines
            .into_iter()
            .enumerate()
            .map(|(i, line)| format!("{i}:{line}"))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn head_and_pages_reassemble_the_text(
        lines in distinct_lines(),
        max_tokens in 300usize..1_500,
        limit in 1usize..90,
    ) {
        check_round_trip(&(lines.join("\n") + "\n"), max_tokens, limit)?;
    }
}

fn check_round_trip(text: &str, max_tokens: usize, limit: usize) -> Result<(), TestCaseError> {
    let plan = plan(text, &Budget::tokens(max_tokens));
    let mut store = OutputStore::new(None, 64 << 20, false).unwrap();
    let id = store.keep(plan.full_text()).unwrap();
    let rendered = plan.finish(Some(&id));
    // Lines are short: only a tiny head share could need a cut.
    prop_assume!(!rendered.text.contains("of this line omitted"));

    let head = rendered.text.split('\n').take(rendered.head_lines);
    let mut rebuilt: Vec<String> = head.map(str::to_owned).collect();
    let mut offset = Some(rendered.head_lines);
    while let Some(at) = offset {
        let page = store.page(&id.to_string(), at as i64, limit, None).unwrap();
        prop_assert_eq!(
            page.first_line,
            if page.lines.is_empty() { 0 } else { at + 1 }
        );
        rebuilt.extend(page.lines.into_iter().map(|line| line.text));
        offset = page.next_offset;
    }
    prop_assert_eq!(rebuilt.join("\n"), text.trim_end_matches('\n'));
    Ok(())
}

#[test]
fn the_offset_in_the_elision_line_starts_at_the_first_omitted_line() {
    let text: String = (1..=5_000).map(|i| format!("row {i}\n")).collect();
    let plan = plan(&text, &Budget::tokens(200));
    let mut store = OutputStore::new(None, 1 << 20, false).unwrap();
    let id = store.keep(plan.full_text()).unwrap();
    let rendered = plan.finish(Some(&id));
    let offset: i64 = Regex::new(&format!(r"read_output id={id} offset=(\d+)"))
        .unwrap()
        .captures(&rendered.text)
        .unwrap()[1]
        .parse()
        .unwrap();
    let page = store.page(&id.to_string(), offset, 1, None).unwrap();
    assert_eq!(
        page.lines[0].text,
        format!("row {}", rendered.head_lines + 1)
    );
    let last_page = store
        .page(&id.to_string(), -(rendered.tail_lines as i64), 10_000, None)
        .unwrap();
    let tail: Vec<&str> = rendered
        .text
        .rsplit('\n')
        .take(rendered.tail_lines)
        .collect();
    assert_eq!(last_page.lines.last().unwrap().text, tail[0]);
}

#[test]
fn grep_finds_lines_in_the_omitted_middle() {
    let text: String = (1..=10_000)
        .map(|i| {
            if i == 6_789 {
                "panic: boom\n".to_owned()
            } else {
                format!("ok {i}\n")
            }
        })
        .collect();
    let plan = plan(&text, &Budget::tokens(100));
    let mut store = OutputStore::new(None, 1 << 20, false).unwrap();
    let id = store.keep(plan.full_text()).unwrap();
    let page = store
        .page(&id.to_string(), 0, 10, Some(&Regex::new("panic").unwrap()))
        .unwrap();
    assert_eq!(page.text(), "6789:panic: boom");
    assert_eq!(page.matching_lines, Some(1));
}
