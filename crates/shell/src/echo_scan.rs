//! Finding a wait's pattern in a pane's output while skipping the echo of
//! what was typed into it: the scanning half of `wait_for_text`, with no
//! I/O. The rules of what is echo are in [`crate::echo`].

use termpilot_journal::{Journal, Match, Pattern, Redaction, Scanner};

use crate::echo::{Echo, EchoSpan, Seen, Typed, echo_span};

/// Where a scan step left off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scanned {
    /// A match that is not echo.
    Found(Match),
    /// Output was lost (evicted before it was scanned): this many bytes.
    Lost(u64),
    /// Nothing yet: scan again when more output arrives.
    Pending,
}

/// The journal offset just after the first copy of `typed` in the raw
/// output from `from`, when the journal holds it without a gap: where the
/// terminal's echo of a typed line ends and the program's output after it
/// begins. `None` when the echo is not there as one piece (a line editor
/// that colours it).
fn echo_end_offset(journal: &Journal, from: u64, typed: &str) -> Option<u64> {
    if from < journal.start() {
        return None;
    }
    let read = journal.read_from(from);
    if !read.gaps.is_empty() || read.lost > 0 {
        return None;
    }
    let at = memchr::memmem::find(&read.bytes, typed.as_bytes())?;
    Some(from + (at + typed.len()) as u64)
}

/// An incremental scan that skips matches inside the echo of typed input
/// (see [`crate::echo`] for the rules): a wait feeds it snapshots of the
/// pane's journal as output arrives and gets back a real match, a loss or
/// nothing yet.
pub struct EchoScan {
    pattern: Pattern,
    scanner: Scanner,
    /// Scanning restarts here after an echo line: the end of the last
    /// complete line skipped as echo (or the baseline).
    resume: u64,
    baseline: u64,
    /// Echo candidates from before the baseline whose echo was not seen yet.
    fixed: Vec<String>,
    /// Candidate lines used by a skipped echo line, and how it echoed: a
    /// bare echo may still be followed by one prompted echo.
    consumed: Vec<(String, Echo)>,
    /// Bytes lost between the baseline and the scan position.
    lost: u64,
    /// Where the scanner goes on: a snapshot of the journal from here on is
    /// all the next step reads.
    position: u64,
    /// The secrets hidden from the pattern (and so from the echo candidates
    /// compared with what it matched).
    redaction: Redaction,
}

impl EchoScan {
    /// A scan for `pattern` from the journal offset `baseline`, with its
    /// secrets hidden as `redaction` says. `earlier` are the lines typed
    /// before the baseline whose echo was not seen yet ([`crate::echo::unechoed`]):
    /// their echo does not match either.
    pub fn new(
        pattern: Pattern,
        baseline: u64,
        earlier: Vec<String>,
        redaction: Redaction,
    ) -> Self {
        EchoScan {
            scanner: Scanner::new(pattern.clone(), baseline).redacting(redaction.clone()),
            pattern,
            resume: baseline,
            baseline,
            fixed: earlier,
            consumed: Vec::new(),
            lost: 0,
            position: baseline,
            redaction,
        }
    }

    /// The offset the next step starts reading at.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Bytes lost between the baseline and the scan position: evicted from
    /// the journal before they were scanned.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Scans what arrived in `journal` (a snapshot from [`EchoScan::position`]
    /// on), with `typed` the text typed into the pane so far; returns a real
    /// match, a loss, or `Pending`.
    pub fn step(&mut self, journal: &Journal, typed: &[Typed]) -> Scanned {
        loop {
            let scan = self.scanner.scan(journal);
            self.position = scan.scanned_to;
            self.lost = self.lost.max(scan.lost);
            let Some(found) = scan.found else {
                return if scan.lost > 0 {
                    Scanned::Lost(scan.lost)
                } else {
                    Scanned::Pending
                };
            };
            let Some((candidate, span)) = self.echo_candidate(&found, typed) else {
                return Scanned::Found(found);
            };
            // A program may draw on the echo's line after it (an editor
            // redraws the text the typed command changed): that is output.
            if let Some(after) = self.match_after_echo(&found, span.end, typed) {
                return Scanned::Found(after);
            }
            // Restart after (or, for an unfinished line, at) the echo line;
            // after the whole echo on an unfinished line, what follows on it
            // is output (vim's redraw after a command on its last line).
            let echoed = match span.whole && !found.line_complete {
                true => echo_end_offset(journal, self.resume, &candidate),
                false => None,
            };
            if let Some(after) = echoed {
                self.consume(candidate, span.kind);
                self.resume = after;
                self.restart();
            } else if found.line_complete {
                self.consume(candidate, span.kind);
                self.resume = found.line_end;
                self.restart();
            } else {
                // `resume` may be before the snapshot's start: the next step
                // takes a snapshot from there.
                self.restart();
                return Scanned::Pending;
            }
        }
    }

    fn restart(&mut self) {
        self.scanner =
            Scanner::new(self.pattern.clone(), self.resume).redacting(self.redaction.clone());
        self.position = self.resume;
    }

    /// The first match on `found`'s line after the echo that ends at
    /// `echo_end`, unless it is an echo too.
    fn match_after_echo(&self, found: &Match, echo_end: usize, typed: &[Typed]) -> Option<Match> {
        let mut from = echo_end;
        loop {
            let rest = found.line.get(from..).filter(|rest| !rest.is_empty())?;
            let mut line = Journal::new(termpilot_journal::Limits::default());
            line.append(rest.as_bytes());
            let next = Scanner::new(self.pattern.clone(), 0).scan(&line).found?;
            let next = Match {
                line: found.line.clone(),
                start: from + next.start,
                end: from + next.end,
                line_end: found.line_end,
                line_complete: found.line_complete,
                redrawn: found.redrawn,
                ..next
            };
            match self.echo_candidate(&next, typed) {
                Some((_, span)) if span.end > from => from = span.end,
                Some(_) => return None,
                None => return Some(next),
            }
        }
    }

    fn echo_candidate(&self, found: &Match, typed: &[Typed]) -> Option<(String, EchoSpan)> {
        let after_baseline = typed
            .iter()
            .filter(|t| t.offset >= self.baseline && t.offset <= found.line_end)
            .flat_map(Typed::lines)
            .map(str::to_owned);
        let mut available: Vec<String> = (self.fixed.iter().cloned().chain(after_baseline))
            .map(|line| self.redaction.redact(&line).into_owned())
            .collect();
        available.dedup();
        available.into_iter().find_map(|candidate| {
            let seen = Seen {
                line: &found.line,
                start: found.start,
                end: found.end,
                redrawn: found.redrawn,
            };
            let span = echo_span(seen, &candidate)?;
            let used = self
                .consumed
                .iter()
                .find(|(c, _)| *c == candidate)
                .map(|(_, k)| *k);
            match (used, span.kind) {
                (None, _) | (Some(Echo::Bare), Echo::Prompted) => Some((candidate, span)),
                _ => None,
            }
        })
    }

    fn consume(&mut self, candidate: String, kind: Echo) {
        match self.consumed.iter_mut().find(|(c, _)| *c == candidate) {
            Some(entry) => entry.1 = kind,
            None => self.consumed.push((candidate, kind)),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Transcripts: the bytes a pane printed, and the text typed into it at
    //! which point, in; what the wait decides, out.

    use termpilot_journal::Limits;

    use super::*;

    /// A pane's output as it arrives, with what was typed into it.
    struct Pane {
        journal: Journal,
        typed: Vec<Typed>,
    }

    impl Pane {
        fn new() -> Pane {
            Pane {
                journal: Journal::new(Limits::default()),
                typed: Vec::new(),
            }
        }

        fn types(&mut self, text: &str) {
            let offset = self.journal.end();
            let text = text.to_owned();
            self.typed.push(Typed { offset, text });
        }

        fn prints(&mut self, bytes: &str) {
            self.journal.append(bytes.as_bytes());
        }

        fn scan(&self, scan: &mut EchoScan) -> Scanned {
            scan.step(&self.journal, &self.typed)
        }
    }

    fn scan_for(text: &str, baseline: u64, earlier: Vec<String>) -> EchoScan {
        let pattern = Pattern::literals([text], true).expect("a pattern");
        EchoScan::new(pattern, baseline, earlier, Redaction::default())
    }

    /// The line a step found its match on, or why it found none.
    fn found_line(step: Scanned) -> Result<String, Scanned> {
        match step {
            Scanned::Found(found) => Ok(found.line),
            other => Err(other),
        }
    }

    #[test]
    fn the_echo_of_a_command_line_is_skipped_and_its_output_found() {
        let mut pane = Pane::new();
        pane.prints("$ ");
        let mut scan = scan_for("DONE", pane.journal.end(), Vec::new());
        pane.types("echo DONE\n");
        pane.prints("echo DONE\r\n");
        assert_eq!(pane.scan(&mut scan), Scanned::Pending);
        pane.prints("DONE\r\n$ ");
        assert_eq!(found_line(pane.scan(&mut scan)), Ok("DONE".to_owned()));
    }

    #[test]
    fn a_line_printed_again_by_the_program_is_output() {
        let mut pane = Pane::new();
        let mut scan = scan_for("hello", 0, Vec::new());
        pane.types("hello\n");
        // `cat`: the terminal echoes the line, then cat prints it.
        pane.prints("hello\r\n");
        assert_eq!(pane.scan(&mut scan), Scanned::Pending);
        pane.prints("hello\r\n");
        let Scanned::Found(found) = pane.scan(&mut scan) else {
            panic!("cat's copy is output");
        };
        assert_eq!(found.line_end, pane.journal.end());
    }

    #[test]
    fn typed_ahead_text_echoed_bare_then_after_the_prompt_is_one_echo() {
        let mut pane = Pane::new();
        let mut scan = scan_for("DONE", 0, Vec::new());
        pane.types("echo DONE\n");
        // The terminal driver echoes it while the shell starts; the shell's
        // line editor shows it again after its prompt.
        pane.prints("echo DONE\r\n$ echo DONE\r\n");
        assert_eq!(pane.scan(&mut scan), Scanned::Pending);
        pane.prints("DONE\r\n");
        assert_eq!(found_line(pane.scan(&mut scan)), Ok("DONE".to_owned()));
    }

    #[test]
    fn text_typed_before_the_baseline_and_not_yet_echoed_is_skipped() {
        let mut pane = Pane::new();
        pane.prints("$ ");
        let baseline = pane.journal.end();
        let mut scan = scan_for("ready", baseline, vec!["echo ready".to_owned()]);
        pane.prints("echo ready\r\n");
        assert_eq!(pane.scan(&mut scan), Scanned::Pending);
        pane.prints("ready\r\n");
        assert_eq!(found_line(pane.scan(&mut scan)), Ok("ready".to_owned()));
    }

    #[test]
    fn output_drawn_after_the_echo_on_its_line_matches() {
        let mut pane = Pane::new();
        let mut scan = scan_for("DONE", 0, Vec::new());
        pane.types("echo DONE");
        // A program that draws on the echo's line (vim's redraw after a
        // command on its last line).
        pane.prints(":echo DONE  DONE");
        let Scanned::Found(found) = pane.scan(&mut scan) else {
            panic!("the second DONE is output");
        };
        assert_eq!(&found.line[found.start..], "DONE");
    }

    #[test]
    fn an_unfinished_echo_waits_for_more() {
        let mut pane = Pane::new();
        let mut scan = scan_for("DONE", 0, Vec::new());
        pane.types("echo DONE\n");
        pane.prints("$ echo DO");
        assert_eq!(pane.scan(&mut scan), Scanned::Pending);
        pane.prints("NE");
        assert_eq!(pane.scan(&mut scan), Scanned::Pending);
        pane.prints("\r\nDONE\r\n");
        assert_eq!(found_line(pane.scan(&mut scan)), Ok("DONE".to_owned()));
    }

    #[test]
    fn output_evicted_before_it_was_scanned_is_reported_lost() {
        let limits = Limits { max_bytes: 1024 };
        let mut pane = Pane {
            journal: Journal::new(limits),
            typed: Vec::new(),
        };
        let mut scan = scan_for("DONE", 0, Vec::new());
        pane.prints(&"x".repeat(4096));
        let Scanned::Lost(lost) = pane.scan(&mut scan) else {
            panic!("the first bytes are gone");
        };
        assert!(lost > 0);
        assert_eq!(scan.lost(), lost);
        assert_eq!(scan.position(), pane.journal.end());
    }
}
