//! What a scan looks for: one or more literal strings or regular expressions.

use regex::{Regex, RegexBuilder};

use crate::Error;

/// One thing to look for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needle {
    /// Text matched literally.
    Literal(String),
    /// A regular expression in the syntax of the `regex` crate.
    Regex(String),
}

impl Needle {
    fn source(&self) -> String {
        match self {
            Needle::Literal(text) => regex::escape(text),
            Needle::Regex(source) => source.clone(),
        }
    }

    fn as_given(&self) -> &str {
        match self {
            Needle::Literal(text) | Needle::Regex(text) => text,
        }
    }
}

/// A compiled list of [`Needle`]s, matched against one line state at a time (see
/// [`Scanner`](crate::Scanner) for what exactly is matched).
///
/// `^` and `$` match at the start and end of the line state; `.` does not need to avoid
/// line ends because a line state never contains one. Needles that would match empty
/// text are refused: they would end every wait at once.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// All needles as one alternation, so that each line is searched once.
    any: Regex,
    /// Each needle alone, to tell which one matched.
    each: Vec<Regex>,
}

impl Pattern {
    /// Compiles the needles; `match_case: false` makes every needle case-insensitive.
    pub fn new(
        needles: impl IntoIterator<Item = Needle>,
        match_case: bool,
    ) -> Result<Pattern, Error> {
        let needles: Vec<Needle> = needles.into_iter().collect();
        if needles.is_empty() {
            return Err(Error::NoPatterns);
        }
        let each = needles
            .iter()
            .enumerate()
            .map(|(index, needle)| compile_one(index, needle, match_case))
            .collect::<Result<Vec<_>, _>>()?;
        let sources: Vec<String> = needles
            .iter()
            .map(|n| format!("(?:{})", n.source()))
            .collect();
        let any = build(&sources.join("|"), match_case).map_err(|source| {
            // Each needle compiled alone, so only the combined size can be the problem.
            Error::InvalidRegex {
                index: 0,
                pattern: sources.join("|"),
                source: Box::new(source),
            }
        })?;
        Ok(Pattern { any, each })
    }

    /// Literal strings.
    pub fn literals<S: Into<String>>(
        texts: impl IntoIterator<Item = S>,
        match_case: bool,
    ) -> Result<Pattern, Error> {
        Pattern::new(
            texts.into_iter().map(|t| Needle::Literal(t.into())),
            match_case,
        )
    }

    /// Regular expressions.
    pub fn regexes<S: Into<String>>(
        sources: impl IntoIterator<Item = S>,
        match_case: bool,
    ) -> Result<Pattern, Error> {
        Pattern::new(
            sources.into_iter().map(|s| Needle::Regex(s.into())),
            match_case,
        )
    }

    /// How many needles there are.
    pub fn len(&self) -> usize {
        self.each.len()
    }

    /// Always false: a pattern has at least one needle.
    pub fn is_empty(&self) -> bool {
        self.each.is_empty()
    }

    /// The leftmost match in `hay` starting at or after byte `start`, with the index of
    /// the needle that matched (the first one listed, if several match there).
    pub(crate) fn find_at<'h>(
        &self,
        hay: &'h str,
        start: usize,
    ) -> Option<(usize, regex::Match<'h>)> {
        let found = self.any.find_at(hay, start)?;
        let index = self
            .each
            .iter()
            .position(|one| {
                one.find_at(hay, found.start())
                    .is_some_and(|m| m.start() == found.start())
            })
            .unwrap_or(0);
        Some((index, found))
    }
}

fn compile_one(index: usize, needle: &Needle, match_case: bool) -> Result<Regex, Error> {
    let pattern = needle.as_given().to_owned();
    let regex = build(&needle.source(), match_case).map_err(|source| Error::InvalidRegex {
        index,
        pattern: pattern.clone(),
        source: Box::new(source),
    })?;
    if regex.is_match("") {
        return Err(Error::MatchesEmpty { index, pattern });
    }
    Ok(regex)
}

fn build(source: &str, match_case: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source)
        .case_insensitive(!match_case)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(pattern: &Pattern, hay: &str) -> Option<(usize, String)> {
        pattern
            .find_at(hay, 0)
            .map(|(index, m)| (index, m.as_str().to_owned()))
    }

    #[test]
    fn literals_are_not_regexes() {
        let pattern = Pattern::literals(["a.c", "$ "], true).unwrap();
        assert_eq!(found(&pattern, "abc"), None);
        assert_eq!(found(&pattern, "x a.c"), Some((0, "a.c".into())));
        assert_eq!(found(&pattern, "user@host:~$ "), Some((1, "$ ".into())));
    }

    #[test]
    fn leftmost_match_wins_then_first_needle() {
        let pattern = Pattern::regexes(["wor", "hello", "hel+o w"], true).unwrap();
        assert_eq!(found(&pattern, "hello world"), Some((1, "hello".into())));
        assert_eq!(found(&pattern, "say world"), Some((0, "wor".into())));
    }

    #[test]
    fn case_folding() {
        let pattern = Pattern::literals(["Error"], false).unwrap();
        assert_eq!(found(&pattern, "FATAL ERROR"), Some((0, "ERROR".into())));
        let strict = Pattern::literals(["Error"], true).unwrap();
        assert_eq!(found(&strict, "FATAL ERROR"), None);
    }

    #[test]
    fn mixed_needles() {
        let needles = [
            Needle::Literal("a+b".into()),
            Needle::Regex(r"\d+ passed".into()),
        ];
        let pattern = Pattern::new(needles, true).unwrap();
        assert_eq!(found(&pattern, "12 passed"), Some((1, "12 passed".into())));
        assert_eq!(found(&pattern, "a+b"), Some((0, "a+b".into())));
    }

    #[test]
    fn refuses_bad_patterns_with_their_index() {
        assert!(matches!(
            Pattern::literals(Vec::<String>::new(), true),
            Err(Error::NoPatterns)
        ));
        let bad = Pattern::regexes(["ok", "(unclosed"], true).unwrap_err();
        assert!(matches!(bad, Error::InvalidRegex { index: 1, .. }), "{bad}");
        let empty = Pattern::regexes(["ok", "x*"], true).unwrap_err();
        assert!(
            matches!(empty, Error::MatchesEmpty { index: 1, .. }),
            "{empty}"
        );
        assert!(matches!(
            Pattern::literals([""], true),
            Err(Error::MatchesEmpty { .. })
        ));
    }
}
