//! The token estimate against real BPE tokenizers (`cl100k_base` and `o200k_base`,
//! bundled in `tiktoken-rs`; no network).

use std::sync::OnceLock;

use termpilot_render::estimate_tokens;
use tiktoken_rs::CoreBPE;

use crate::samples;

/// The estimate may exceed the larger real count by this much at most...
const MAX_OVER: f64 = 1.30;
/// ...and may not fall short of it, on any one kind of output.
const MAX_UNDER: f64 = 1.0;

struct Tokenizers {
    cl100k: CoreBPE,
    o200k: CoreBPE,
}

impl Tokenizers {
    /// Loaded once for all tests: parsing the vocabularies takes a second or two.
    fn get() -> &'static Tokenizers {
        static LOADED: OnceLock<Tokenizers> = OnceLock::new();
        LOADED.get_or_init(|| Tokenizers {
            cl100k: tiktoken_rs::cl100k_base().expect("cl100k_base is bundled"),
            o200k: tiktoken_rs::o200k_base().expect("o200k_base is bundled"),
        })
    }

    /// The larger of the two real counts: the estimate should cover either model.
    fn count(&self, text: &str) -> usize {
        self.cl100k
            .encode_ordinary(text)
            .len()
            .max(self.o200k.encode_ordinary(text).len())
    }
}

#[test]
fn the_estimate_stays_close_to_real_tokenizers_and_errs_high() {
    let tokenizers = Tokenizers::get();
    let mut samples: Vec<(&str, String)> = samples::fixtures()
        .into_iter()
        .map(|(name, text)| (name, text.to_owned()))
        .collect();
    samples.extend(samples::generated());
    let (mut estimated, mut real) = (0, 0);
    let mut report = Vec::new();
    for (name, text) in &samples {
        let (e, r) = (estimate_tokens(text), tokenizers.count(text));
        let ratio = e as f64 / r as f64;
        report.push(format!("{name}: estimate {e}, real {r}, ratio {ratio:.2}"));
        estimated += e;
        real += r;
    }
    let report = report.join("\n");
    eprintln!("{report}");
    for line in report.lines() {
        let ratio: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(
            (MAX_UNDER..=MAX_OVER).contains(&ratio),
            "out of range:\n{report}"
        );
    }
    let overall = estimated as f64 / real as f64;
    assert!(
        (1.0..=1.25).contains(&overall),
        "overall {overall:.2}:\n{report}"
    );
}

#[test]
fn short_lines_are_not_underestimated_much() {
    let tokenizers = Tokenizers::get();
    let build_log = samples::build_log(100);
    let (mut under, mut lines) = (0, 0);
    for line in build_log.lines() {
        lines += 1;
        if (estimate_tokens(line) as f64) < 0.9 * tokenizers.count(line) as f64 {
            under += 1;
        }
    }
    assert!(
        under * 20 <= lines,
        "{under} of {lines} lines underestimated by more than 10%"
    );
}
