//! Finding text in a journal: the heart of `wait_for_text`.

use crate::Pattern;
use crate::Redaction;
use crate::gap::Gap;
use crate::journal::Journal;
use crate::replay::Replay;
use crate::row::{Row, RowSink};

/// Characters of the previous row kept in front of a soft-wrapped row, so that a match
/// may span the wrap point of a very long line.
const CONTEXT_CHARS: usize = 1024;

/// A match found by a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// Index of the needle that matched (the first listed, if several match at the same
    /// place).
    pub pattern: usize,
    /// The matched text.
    pub text: String,
    /// The line state the match was found in: the cleaned line as it was visible at that
    /// moment (see [`Scanner`]). For the row of a very long line, it starts with up to
    /// 1 Ki characters of the row before.
    pub line: String,
    /// Byte offset of the match in `line`.
    pub start: usize,
    /// Byte offset after the match in `line`.
    pub end: usize,
    /// The raw journal offset just after the line's end (`\n`), or of the gap that ended
    /// it; if the line is unfinished, the journal's end at the time of the scan. A wait
    /// that continues after this match should start here.
    pub line_end: u64,
    /// Whether the line had ended; false for a match in the unfinished last line (a
    /// prompt such as `Password: `).
    pub line_complete: bool,
    /// Whether a carriage return came back over text of this line before the match: the
    /// line was redrawn (a progress bar, or a line editor redrawing a long command line
    /// from the first column), so `line` may not show how it began.
    pub redrawn: bool,
}

/// The result of a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The first match after the starting offset, if there is one yet.
    pub found: Option<Match>,
    /// Offsets that could not be scanned: evicted before they were read, plus one per
    /// gap crossed. Never zero when output was really missed.
    pub lost: u64,
    /// The gaps crossed, oldest first.
    pub gaps: Vec<Gap>,
    /// How far the journal has been read. Without a match, the next scan continues here;
    /// after a match, continue from [`Match::line_end`] instead.
    pub scanned_to: u64,
}

/// Finds the first match of a [`Pattern`] after a starting offset, remembering how far
/// it got so that scanning again after more output only looks at what is new.
///
/// # What is matched
///
/// The bytes are cleaned ([`Cleaner`](crate::clean::Cleaner)) and split into lines at
/// `\n`, `\r\n` and gaps; a pattern never matches across lines. The line containing the
/// starting offset counts only from that offset. Every *state* of a line can match, in
/// order:
/// - the line's visible text just before each carriage return (a progress state that was
///   on screen for a moment still matches),
/// - its final text when it ends,
/// - for the unfinished last line, its text as it is now. So a prompt matches as soon as
///   it is complete, however its bytes were split into appends; a held-back `\r` or an
///   incomplete UTF-8 character at the end is not part of it yet.
///
/// A state is the collapsed text ("abcdef\rXY" is "XYcdef"), so the first match in
/// stream order is found and the result depends only on the bytes, never on how they
/// were split into appends. A scan that finds a match in the unfinished line reports
/// what is visible at that moment, exactly as a fresh [`Journal::find`] would.
///
/// # Long lines
///
/// A line is matched in rows of 16 Ki characters (it is soft-wrapped there, like a
/// terminal wraps at its width; a carriage return goes back to the start of the current
/// row). Each row is matched with the last 1 Ki characters of the row before it in front,
/// so a match up to 1 Ki characters long is found even across a wrap; a longer match that
/// crosses a wrap is not, and `^` does not match at a wrap while `$` matches at its end.
/// Because only the unfinished row is matched again after more output, a 5 MB line
/// arriving in 4 KiB appends costs O(total) plus O(16 Ki) per scan, not O(n²).
///
/// # Secrets
///
/// A scanner given a [`Redaction`] ([`Scanner::redacting`]) matches each line state
/// after its secrets are replaced by `[secret NAME]`, so a pattern never observes a
/// secret's characters, and the match and line it reports are redacted. In the
/// unfinished last line (and at a soft wrap), an end that could be the beginning of a
/// secret whose rest has not arrived is left out until the line goes on or ends.
///
/// After a match the scanner is done: further scans return the same result.
#[derive(Debug, Clone)]
pub struct Scanner {
    replay: Replay,
    matcher: RowMatcher,
    result: Option<Scan>,
}

impl Scanner {
    /// A scanner for matches after `from` (a `from` past the journal's end at the first
    /// scan is treated as the end).
    pub fn new(pattern: Pattern, from: u64) -> Self {
        let matcher = RowMatcher {
            pattern,
            context: String::new(),
            hay: String::new(),
            found: None,
            redrawn: false,
            redaction: Redaction::default(),
            held: false,
        };
        Scanner {
            replay: Replay::new(from),
            matcher,
            result: None,
        }
    }

    /// The same scanner, matching over text with `redaction`'s secrets hidden.
    pub fn redacting(mut self, redaction: Redaction) -> Self {
        self.matcher.redaction = redaction;
        self
    }

    /// Scans everything appended since the last scan (or since `from`).
    pub fn scan(&mut self, journal: &Journal) -> Scan {
        if let Some(done) = &self.result {
            return done.clone();
        }
        let line_ended = |m: &RowMatcher| m.found.as_ref().is_some_and(|f| f.line_complete);
        self.replay.advance(journal, &mut self.matcher, line_ended);
        self.matcher.check(self.replay.row_mut(), true);
        if let Some(found) = self.matcher.found.as_mut().filter(|f| !f.line_complete) {
            found.line_end = journal.end();
        }
        let scan = Scan {
            found: self.matcher.found.clone(),
            lost: self.replay.lost,
            gaps: self.replay.gaps.clone(),
            scanned_to: self.replay.next(),
        };
        if scan.found.is_some() {
            self.result = Some(scan.clone());
        }
        scan
    }
}

impl Journal {
    /// The first match of `pattern` after `from`; see [`Scanner`] for what is matched.
    /// A wait that is woken repeatedly should keep a [`Scanner`] instead.
    pub fn find(&self, from: u64, pattern: &Pattern) -> Scan {
        Scanner::new(pattern.clone(), from).scan(self)
    }
}

/// Matches the states of rows as the collapser reports them.
#[derive(Debug, Clone)]
struct RowMatcher {
    pattern: Pattern,
    /// The end of the previous row of the same line (plus one character, so that `^`
    /// does not match where the context starts).
    context: String,
    /// Reused buffer: context followed by the row's text.
    hay: String,
    found: Option<Match>,
    /// A carriage return came after text in the current line.
    redrawn: bool,
    /// The secrets hidden from the pattern.
    redaction: Redaction,
    /// The last check left out an end that could begin a secret: the row
    /// must be matched again, whole, even if it does not change.
    held: bool,
}

impl RowMatcher {
    /// Matches the row's current text, unless it was already matched unchanged; with
    /// `hold`, leaves out an end that could begin a secret (see [`Scanner`]).
    fn check(&mut self, row: &mut Row, hold: bool) {
        let again = self.held && !hold;
        if self.found.is_some() || !(row.changed || again) {
            return;
        }
        row.changed = false;
        self.held = false;
        if row.is_empty() {
            // Only the context, which was matched as part of the previous row.
            return;
        }
        self.hay.clear();
        self.hay.push_str(&self.context);
        row.push_text(0.., &mut self.hay);
        if !self.redaction.is_empty() {
            self.hide_secrets(hold);
        }
        let skip = match self.context.is_empty() {
            true => 0,
            false => self.hay.chars().next().map_or(0, char::len_utf8),
        };
        if let Some((pattern, found)) = self.pattern.find_at(&self.hay, skip) {
            self.found = Some(Match {
                pattern,
                text: found.as_str().to_owned(),
                line: self.hay.clone(),
                start: found.start(),
                end: found.end(),
                line_end: 0,
                line_complete: false,
                redrawn: self.redrawn,
            });
        }
    }

    /// Replaces the secrets in `hay`; with `hold`, cuts off an end that could begin one.
    fn hide_secrets(&mut self, hold: bool) {
        if let std::borrow::Cow::Owned(redacted) = self.redaction.redact(&self.hay) {
            self.hay = redacted;
        }
        if hold {
            let held = self.redaction.held_back(&self.hay);
            self.hay.truncate(self.hay.len() - held);
            self.held = held > 0;
        }
    }
}

impl RowSink for RowMatcher {
    fn carriage_return(&mut self, row: &mut Row) {
        self.check(row, false);
        self.redrawn |= !row.is_empty();
    }

    fn wrap(&mut self, row: &mut Row) {
        self.check(row, true);
        self.context.clear();
        row.push_text(
            row.len().saturating_sub(CONTEXT_CHARS + 1)..,
            &mut self.context,
        );
    }

    fn line_end(&mut self, row: &mut Row, end: u64) {
        self.check(row, false);
        self.context.clear();
        self.redrawn = false;
        if let Some(found) = self.found.as_mut().filter(|f| !f.line_complete) {
            found.line_end = end;
            found.line_complete = true;
        }
    }
}

#[cfg(test)]
mod tests;
