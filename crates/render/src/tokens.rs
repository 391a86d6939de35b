//! An estimate of how many tokens a language model's tokenizer makes of a text.
//!
//! No run crosses a line break, so the count in quarters is exactly additive over
//! lines; the renderer adds up lines in quarters and rounds once.

/// How many tokens a language model will likely make of `text`; an over-estimate for
/// typical terminal output.
///
/// BPE tokenizers (OpenAI's `cl100k_base` and `o200k_base`, and the ones other models
/// use) first split text into pieces with a regular expression (letter runs, digit runs
/// of up to three, punctuation runs, whitespace) and then merge bytes within each piece.
/// A plain "bytes / 4" is off by a factor of four either way on terminal output: `yes`
/// prints two tokens every two bytes, a line of 80 `=` is one token. So the estimate
/// walks the text once, splits it into runs of one character class the way the
/// tokenizers' pre-split does, and charges each run what the tokenizers were measured
/// to charge for it:
///
/// | run | estimate |
/// |---|---|
/// | word of letters (camelCase split) | 1, and 1 more per 7 letters; 2 per 3 letters for words with too few or too many vowels (`lrwxrwx`); 3 per 5 letters beyond 20 (random letters) |
/// | capitals | 1, and 1 more per 4 letters, up to 7 letters (`INFO`); 1 per 2 beyond (base64) |
/// | digits | 1 per 3 |
/// | punctuation | 1 per 3 mixed marks; a run of one of `~_.*+=-#/` (a rule) 1 per 80, of another mark (`^^^^`) 1 per 4; a lone `/._-` before a word ½ |
/// | spaces | the last one joins the word or mark after it; the others 1 per 64; 63 before a line end are free; a space before digits is 1 |
/// | line break | 1 |
/// | Latin with accents, Cyrillic | 1 per 2 letters, plus 1 |
/// | Greek, Hebrew, Arabic, ideographs, kana, hangul | 1 per character |
/// | box drawing | 1 or 2 per character, runs of one character 1 per 8 |
/// | other symbols (`✅`, `⚠`) | 2 per character; emoji (four bytes) 3 |
/// | base64 (a word of 16 or more characters with capitals, small letters and digits, the case changing often) | at least 3 per 4 characters |
///
/// Costs are counted in quarter tokens and rounded up once, and 3% is added, so the
/// estimate errs on the side of more tokens. Measured against `cl100k_base` and
/// `o200k_base` (the larger of the two counts) on build logs, compiler errors, JSON,
/// `ls -l`, logs, hex dumps, paths, CJK, emoji and Cyrillic text, the estimate
/// is 1.0 to 1.3 times the real count (see the tests, which run the real tokenizers).
///
/// ```
/// use termpilot_render::estimate_tokens;
///
/// assert_eq!(estimate_tokens(""), 0);
/// assert_eq!(estimate_tokens("error: could not compile `termpilot`"), 9);
/// ```
pub fn estimate_tokens(text: &str) -> usize {
    tokens_from_quarters(quarters(text))
}

/// The estimate in quarter tokens, before rounding and margin. Exactly additive over
/// lines: `quarters(a + "\n" + b) == quarters(a) + 4 + quarters(b)` when `a` and `b`
/// hold no line break, because no run crosses a line break.
pub(crate) fn quarters(text: &str) -> usize {
    runs_quarters(text) + random_words_surcharge(text)
}

/// The sum of the runs' costs.
fn runs_quarters(text: &str) -> usize {
    let mut total = 0usize;
    let mut runs = Runs { text, pos: 0 };
    let mut prev = None;
    while let Some(run) = runs.next_run() {
        let next = runs.peek_class();
        total += run_quarters(&run, prev, next);
        prev = Some(run.class);
    }
    total
}

/// What base64 costs beyond its runs. Random letters, digits and `+/` split into many
/// short runs, each of which looks like a cheap word, while tokenizers spend about three
/// tokens on four characters of it. A word (between whitespace) that looks like base64
/// is charged three quarters a character (repeated characters, such as `AAAA` padding,
/// counted as in [`effective_len`]).
fn random_words_surcharge(text: &str) -> usize {
    text.split([' ', '\t', '\n', '\r'])
        .filter(|word| looks_like_base64(word.as_bytes()))
        .map(|word| (3 * effective_len(word.as_bytes())).saturating_sub(runs_quarters(word)))
        .sum()
}

/// At least 16 characters of the base64 alphabets with capitals, small letters and
/// digits, and the case changing at least every fourth letter (camelCase names change
/// far less often).
fn looks_like_base64(word: &[u8]) -> bool {
    if word.len() < 16
        || !word
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=-_".contains(b))
    {
        return false;
    }
    let (mut letters, mut changes, mut upper, mut lower) = (0, 0, 0, 0);
    let mut previous_upper = None;
    for b in word.iter().filter(|b| b.is_ascii_alphabetic()) {
        let is_upper = b.is_ascii_uppercase();
        letters += 1;
        upper += usize::from(is_upper);
        lower += usize::from(!is_upper);
        changes += usize::from(previous_upper.is_some_and(|p| p != is_upper));
        previous_upper = Some(is_upper);
    }
    let has_digit = word.iter().any(u8::is_ascii_digit);
    upper > 0 && lower > 0 && has_digit && changes * 4 >= letters
}

/// Quarters of one line break.
pub(crate) const NEWLINE_QUARTERS: usize = 4;

/// Tokens for a count of quarters: rounded up, plus a 3% margin (rounded down, so a
/// one-token text stays one token) that keeps the estimate above the real count on
/// typical text. Never decreases as `quarters` grows.
pub(crate) fn tokens_from_quarters(quarters: usize) -> usize {
    quarters.div_ceil(4) + quarters.saturating_mul(3) / 400
}

/// The most quarters whose token estimate stays within `tokens`.
pub(crate) fn quarters_within(tokens: usize) -> usize {
    // `tokens_from_quarters` never decreases, so search for the last count that fits.
    let (mut lo, mut hi) = (0usize, tokens.saturating_mul(4));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if tokens_from_quarters(mid) <= tokens {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// A text longer than `MAX_BYTES_PER_QUARTER * q + MAX_FREE_BYTES` bytes costs more than
/// `q` quarters: the cheapest runs are rules (80 `=` for four quarters) and long runs of
/// spaces (64 for four quarters, the first 63 before a line end free). This lets the
/// renderer skip estimating enormous lines.
pub(crate) const MAX_BYTES_PER_QUARTER: usize = 32;
/// See [`MAX_BYTES_PER_QUARTER`].
pub(crate) const MAX_FREE_BYTES: usize = 64;

/// Character classes that the tokenizers' pre-split keeps apart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Space,
    Newline,
    Digit,
    Letter,
    Punct,
    /// Latin letters with accents and Cyrillic: BPE vocabularies merge them in pairs.
    Alphabetic,
    /// Ideographs, kana and hangul: about one token a character.
    Ideograph,
    /// Box drawing and block elements, common in tables and progress bars.
    Box,
    /// Every other character below U+10000: Greek, symbols, dingbats, punctuation.
    Symbol,
    /// Four-byte characters: emoji and rare ideographs.
    Astral,
}

/// One run of characters of the same class.
struct Run<'a> {
    class: Class,
    text: &'a str,
    chars: usize,
}

/// Splits a text into runs of one class.
struct Runs<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Runs<'a> {
    fn next_run(&mut self) -> Option<Run<'a>> {
        let start = self.pos;
        let (class, len) = class_at(self.text, start)?;
        let mut end = start + len;
        let mut chars = 1;
        while let Some((next, len)) = class_at(self.text, end) {
            if next != class {
                break;
            }
            end += len;
            chars += 1;
        }
        self.pos = end;
        Some(Run {
            class,
            text: &self.text[start..end],
            chars,
        })
    }

    fn peek_class(&self) -> Option<Class> {
        class_at(self.text, self.pos).map(|(class, _)| class)
    }
}

/// The class and UTF-8 length of the character starting at byte `i`, if any.
fn class_at(text: &str, i: usize) -> Option<(Class, usize)> {
    let &b = text.as_bytes().get(i)?;
    if b.is_ascii() {
        return Some((ascii_class(b), 1));
    }
    let c = text[i..].chars().next()?;
    Some((wide_class(c), c.len_utf8()))
}

fn ascii_class(b: u8) -> Class {
    match b {
        b' ' | b'\t' => Class::Space,
        b'\n' | b'\r' => Class::Newline,
        b'0'..=b'9' => Class::Digit,
        b'a'..=b'z' | b'A'..=b'Z' => Class::Letter,
        _ => Class::Punct,
    }
}

fn wide_class(c: char) -> Class {
    match u32::from(c) {
        0xc0..=0x24f | 0x400..=0x52f => Class::Alphabetic,
        0x2500..=0x259f => Class::Box,
        0x1100..=0x11ff | 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af => {
            Class::Ideograph
        }
        0x80..=0xffff => Class::Symbol,
        _ => Class::Astral,
    }
}

/// The cost of one run in quarter tokens, given the classes around it (spaces and
/// single marks merge into the piece that follows them).
fn run_quarters(run: &Run<'_>, prev: Option<Class>, next: Option<Class>) -> usize {
    let tokens = match run.class {
        Class::Punct => return punct_quarters(run.text.as_bytes(), prev, next),
        Class::Space => space_tokens(run.chars, next),
        Class::Newline => run.chars,
        Class::Digit => run.chars.div_ceil(3),
        Class::Letter => letters_tokens(run.text.as_bytes()),
        Class::Alphabetic => run.chars.div_ceil(2) + 1,
        Class::Ideograph => run.chars,
        Class::Box => box_tokens(run.text),
        Class::Symbol => symbol_tokens(run.text),
        Class::Astral => run.chars * 3,
    };
    4 * tokens
}

fn space_tokens(n: usize, next: Option<Class>) -> usize {
    match next {
        // Spaces before a line break or the end merge with it.
        None | Some(Class::Newline) => n / 64,
        // Digits take no leading space: the last space is a token of its own.
        Some(Class::Digit) => 1 + (n - 1).div_ceil(64),
        // The last space joins the word or mark after it.
        Some(_) => (n - 1).div_ceil(64),
    }
}

/// A run of ASCII letters, split into camelCase segments as `o200k_base` does.
fn letters_tokens(run: &[u8]) -> usize {
    let mut total = 0;
    let mut start = 0;
    let mut segments = 1;
    for k in 1..run.len() {
        if run[k].is_ascii_uppercase() && run[k - 1].is_ascii_lowercase() {
            total += segment_tokens(&run[start..k]);
            start = k;
            segments += 1;
        }
    }
    total += segment_tokens(&run[start..]);
    // Many short segments are random letters (base64), about three letters to two tokens.
    if segments >= 3 && run.len() < segments * 4 {
        total = total.max((effective_len(run) * 2).div_ceil(3));
    }
    total
}

fn segment_tokens(segment: &[u8]) -> usize {
    let len = segment.len();
    if !segment.iter().any(u8::is_ascii_lowercase) {
        // Short capitals are words (`INFO`, `FAILED`); long ones are codes or base64.
        return if len <= 7 {
            1 + (len - 1) / 4
        } else {
            effective_len(segment).div_ceil(2)
        };
    }
    let vowels = segment
        .iter()
        .filter(|b| b"aeiouyAEIOUY".contains(b))
        .count();
    if len > 20 {
        // No word is this long: random letters, about five letters to three tokens.
        (len * 3).div_ceil(5)
    } else if len >= 4 && (vowels * 5 < len || vowels * 5 > len * 3) {
        // Words that cannot be pronounced (`lrwxrwx`, `xkcd`) are not in the vocabulary.
        (len * 2).div_ceil(3)
    } else {
        1 + (len - 1) / 7
    }
}

/// Length with a run of one repeated letter counted as two per sixteen: vocabularies
/// hold runs such as `AAAAAAAA` (padding in base64) as single tokens.
fn effective_len(letters: &[u8]) -> usize {
    same_byte_runs(letters)
        .map(|(_, same)| {
            if same >= 3 {
                2 * same.div_ceil(16)
            } else {
                same
            }
        })
        .sum()
}

fn punct_quarters(run: &[u8], prev: Option<Class>, next: Option<Class>) -> usize {
    // A lone `/`, `.`, `-` or `_` often merges with the word after it (`/usr`, `.rs`),
    // unless a space came first and took it.
    if run.len() == 1
        && matches!(run[0], b'/' | b'.' | b'-' | b'_')
        && next == Some(Class::Letter)
        && prev != Some(Class::Space)
    {
        return 2;
    }
    let mut rules = 0;
    let mut mixed = 0;
    for (mark, same) in same_byte_runs(run) {
        if same < 3 {
            mixed += same;
        } else if b"~_.*+=-#/".contains(&mark) {
            rules += if same <= 80 { 1 } else { same.div_ceil(40) };
        } else {
            rules += same.div_ceil(4);
        }
    }
    4 * (rules + mixed.div_ceil(3))
}

/// Box drawing: straight lines are one token, corners and joints two, and a long run
/// of one character gains a token every eight.
fn box_tokens(run: &str) -> usize {
    let mut total = 0;
    let mut prev = None;
    let mut same = 0usize;
    for c in run.chars() {
        if Some(c) == prev {
            same += 1;
            total += usize::from(same.is_multiple_of(8));
        } else {
            total += if matches!(c, '─' | '│' | '━' | '┃' | '═' | '║') {
                1
            } else {
                2
            };
            same = 1;
            prev = Some(c);
        }
    }
    total
}

fn symbol_tokens(run: &str) -> usize {
    run.chars()
        .map(|c| match u32::from(c) {
            // Greek, Hebrew, Arabic letters and combining marks.
            0x80..=0x7ff => 1,
            // Zero-width joiners and variation selectors inside emoji sequences.
            0x200b..=0x200f | 0xfe00..=0xfe0f => 1,
            // General punctuation, CJK punctuation, full-width forms.
            0x2010..=0x206f | 0x3000..=0x303f | 0xff00..=0xffef => 1,
            _ => 2,
        })
        .sum()
}

/// Maximal runs of one repeated byte, as (byte, length).
fn same_byte_runs(bytes: &[u8]) -> impl Iterator<Item = (u8, usize)> + '_ {
    let mut k = 0;
    std::iter::from_fn(move || {
        let &first = bytes.get(k)?;
        let same = bytes[k..].iter().take_while(|&&b| b == first).count();
        k += same;
        Some((first, same))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_costs_nothing() {
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn common_shapes_cost_what_tokenizers_charge() {
        assert_eq!(estimate_tokens("y"), 1);
        assert_eq!(estimate_tokens("123456"), 2); // two runs of three digits
        assert_eq!(estimate_tokens(&"=".repeat(80)), 1);
        assert_eq!(estimate_tokens(" error"), 1);
    }

    #[test]
    fn spaces_merge_into_what_follows() {
        assert!(estimate_tokens("a    b") <= estimate_tokens("a b") + 1);
        assert_eq!(estimate_tokens("abc   "), estimate_tokens("abc"));
    }

    #[test]
    fn the_quarter_budget_is_the_largest_that_fits() {
        for tokens in [0, 1, 2, 10, 99, 2_000, 1_000_000] {
            let q = quarters_within(tokens);
            assert!(tokens_from_quarters(q) <= tokens);
            assert!(tokens_from_quarters(q + 1) > tokens);
        }
    }

    #[test]
    fn wide_characters_cost_more_than_ascii_letters() {
        assert!(estimate_tokens("编译完成") >= 4);
        assert!(estimate_tokens("🚀🚀") >= 6);
    }

    #[test]
    fn joined_lines_cost_no_more_than_their_parts() {
        let lines = [
            "   Compiling foo v0.1.0",
            "",
            "error[E0308]: mismatched types",
            "  |  ^^^",
        ];
        let parts: usize = lines.iter().map(|l| estimate_tokens(l) + 1).sum();
        assert!(estimate_tokens(&lines.join("\n")) <= parts);
    }
}
