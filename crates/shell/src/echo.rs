//! Telling the terminal's echo of typed input apart from program output.
//!
//! When termpilot types `echo DONE` and Enter into a shell, the terminal shows
//! the command line (`$ echo DONE`) before the program prints `DONE`. A wait
//! for `DONE` must not be satisfied by that echo. The rule, applied to each
//! match a wait finds:
//!
//! - Every line of text termpilot typed into the pane (split at newlines,
//!   surrounding whitespace ignored) is an *echo candidate* if it was typed
//!   after the wait's baseline, or before it but not yet seen on a complete
//!   line before the baseline.
//! - A match is echo when, on the line it was found on, the matched text lies
//!   inside a copy of a candidate line that starts at the candidate's
//!   beginning and either reaches the candidate's end or runs to the end of
//!   the displayed line (the echo is still arriving, or the terminal cut it).
//!   In a line that was redrawn (a carriage return came back over its text),
//!   the copy may also start inside the candidate at the very beginning of
//!   the line, with at least one character before the match: a line editor
//!   such as zsh's wraps a long command line with a carriage return at the
//!   margin and redraws the rest from the first column, which the line view
//!   (that knows no terminal width) sees as the line's new text.
//! - Each candidate discounts one complete line: once its echo line has been
//!   skipped, later lines with the same text are program output (for example
//!   `cat` repeating its input) and do match. One exception: text typed
//!   before the program was reading is echoed twice, first bare by the
//!   terminal driver, then after the prompt by the shell's line editor; a
//!   bare echo followed by a prompted one counts as one echo.
//!
//! So `$ echo DONE` never satisfies a wait for `DONE`, while a `DONE` printed
//! by the program does, as does the typed text when the program prints it
//! again.

/// One piece of text typed into a pane, and where the pane's output stood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed {
    /// The journal offset when the text was sent.
    pub offset: u64,
    /// The text, as typed.
    pub text: String,
}

impl Typed {
    /// The non-empty lines of the typed text, trimmed.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.text
            .split(['\n', '\r'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
    }
}

/// How a line echoes typed text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// The typed text at the very start of the line, as the terminal driver
    /// echoes input typed ahead of the program.
    Bare,
    /// The typed text after something else, normally a prompt.
    Prompted,
}

/// A match to judge: `line[start..end]`, in a line that was `redrawn` or not
/// (see [`termpilot_journal::Match`]).
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// The line the match was found in.
    pub line: &'a str,
    /// Byte offset of the match in `line`.
    pub start: usize,
    /// Byte offset after the match.
    pub end: usize,
    /// Whether a carriage return came back over the line's text before.
    pub redrawn: bool,
}

/// Whether the match lies in an echo of `typed`, and how.
pub fn echo_kind(seen: Seen<'_>, typed: &str) -> Option<Echo> {
    echo_span(seen, typed).map(|span| span.kind)
}

/// Where an echo lies on its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoSpan {
    /// How it echoes.
    pub kind: Echo,
    /// Byte offset in the line after the echo: what follows is not echo (a
    /// program that moved the cursor and drew there, as an editor does
    /// after a command typed on its last line).
    pub end: usize,
    /// The typed line is echoed whole, not cut by the line's end.
    pub whole: bool,
}

/// [`echo_kind`], with where the echo ends in the line.
pub fn echo_span(seen: Seen<'_>, typed: &str) -> Option<EchoSpan> {
    let matched = &seen.line[seen.start..seen.end];
    if matched.is_empty() || typed.len() < matched.len() {
        return None;
    }
    typed.match_indices(matched).find_map(|(at, _)| {
        let kind = aligned_with_echo(seen, typed, at)?;
        let (rest_typed, rest_line) =
            (typed.len() - at - matched.len(), seen.line.len() - seen.end);
        Some(EchoSpan {
            kind,
            end: seen.end + rest_typed.min(rest_line),
            whole: rest_typed <= rest_line,
        })
    })
}

/// With the match at `typed[at..]`, checks that the line holds `typed` from
/// its beginning up to its end (or up to the end of the line).
fn aligned_with_echo(seen: Seen<'_>, typed: &str, at: usize) -> Option<Echo> {
    let Seen {
        line, start, end, ..
    } = seen;
    let Some(line_start) = start.checked_sub(at) else {
        // The line begins inside the typed text: a redrawn row of its echo.
        let piece = at - start;
        let wrapped = seen.redrawn
            && start > 0
            && typed.is_char_boundary(piece)
            && line[..start] == typed[piece..at];
        return (wrapped && rest_aligned(line, end, typed, at + (end - start)))
            .then_some(Echo::Prompted);
    };
    if !line.is_char_boundary(line_start) || line[line_start..start] != typed[..at] {
        return None;
    }
    let kind = if line[..line_start].trim().is_empty() {
        Echo::Bare
    } else {
        Echo::Prompted
    };
    rest_aligned(line, end, typed, at + (end - start)).then_some(kind)
}

/// Whether the line after the match (from `end`) goes on as the typed text
/// does after it (from `typed_end`), up to the end of either.
fn rest_aligned(line: &str, end: usize, typed: &str, typed_end: usize) -> bool {
    let rest_typed = &typed[typed_end..];
    let rest_line = &line[end..];
    rest_line.starts_with(rest_typed) || rest_typed.starts_with(rest_line)
}

/// The lines typed before a wait's baseline that it must still discount:
/// those whose echo is on none of `lines`, the complete lines that ended
/// after the text was typed and before the baseline.
pub fn unechoed<'a>(typed: &'a [Typed], lines: &[termpilot_journal::Line]) -> Vec<&'a str> {
    typed
        .iter()
        .flat_map(|entry| {
            entry.lines().filter(move |candidate| {
                !lines
                    .iter()
                    .any(|line| line.end > entry.offset && line.text.contains(candidate))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen<'a>(line: &'a str, needle: &str, redrawn: bool) -> Seen<'a> {
        let start = line.find(needle).expect("needle in line");
        Seen {
            line,
            start,
            end: start + needle.len(),
            redrawn,
        }
    }

    fn echo(line: &str, needle: &str, typed: &str) -> bool {
        echo_kind(seen(line, needle, false), typed).is_some()
    }

    fn redrawn_echo(line: &str, needle: &str, typed: &str) -> bool {
        echo_kind(seen(line, needle, true), typed).is_some()
    }

    #[test]
    fn the_command_line_is_echo() {
        assert!(echo("bash-5.2$ echo DONE", "DONE", "echo DONE"));
        assert!(echo(
            "$ make && echo BUILD-OK",
            "BUILD-OK",
            "make && echo BUILD-OK"
        ));
    }

    #[test]
    fn program_output_is_not_echo() {
        assert!(!echo("DONE", "DONE", "echo DONE"));
        assert!(!echo("task DONE here", "DONE", "echo DONE"));
    }

    #[test]
    fn a_partly_echoed_line_is_echo() {
        assert!(echo("$ echo DO", "DO", "echo DONE"));
        assert!(
            !echo("$ echo DO", "DO", "echo XX DO"),
            "the echo does not start where typed text does"
        );
    }

    #[test]
    fn a_redrawn_row_of_the_echo_is_echo() {
        let typed = "sleep 1; echo yyyyyyyy MARKER-Z";
        // zsh redrew the rest of the line from the first column.
        assert!(redrawn_echo("yyyyy MARKER-Z", "MARKER-Z", typed));
        assert!(redrawn_echo("yyyyy MARK", "MARK", typed), "still arriving");
        let not = |line, needle, why| assert!(!redrawn_echo(line, needle, typed), "{why}");
        not("yyyyy MARKER-Y", "MARKER", "goes on otherwise");
        not("MARKER-Z", "MARKER-Z", "nothing of the echo before");
        not("xyyyy MARKER-Z", "MARKER-Z", "not a piece of it");
        // Output that repeats the end of the command line, never redrawn
        // (`echo yyy MARKER-Z` printing its argument), is not echo.
        assert!(!echo("yyyyy MARKER-Z", "MARKER-Z", typed));
    }

    #[test]
    fn text_around_the_echo_must_match_the_typed_line() {
        assert!(!echo("$ printf DONE", "DONE", "echo DONE"));
        assert!(!echo("$ echo DONE!", "DONE", "echo DONE?"));
    }

    #[test]
    fn the_echo_ends_where_the_typed_line_does() {
        let line = ":1s/cobalt/harbor/alpha harbor beta";
        let typed = ":1s/cobalt/harbor/";
        let span = echo_span(seen(line, "harbor", false), typed).expect("echo");
        assert_eq!(
            (span.kind, &line[span.end..]),
            (Echo::Bare, "alpha harbor beta")
        );
        assert!(span.whole);
        let arriving = "$ echo har";
        let span = echo_span(seen(arriving, "har", false), "echo harbor").expect("echo");
        assert_eq!((span.end, span.whole), (arriving.len(), false));
    }

    #[test]
    fn tells_bare_from_prompted_echo() {
        let typed = "echo HI";
        let kind = |line| echo_kind(seen(line, "HI", false), typed);
        assert_eq!(kind("echo HI"), Some(Echo::Bare));
        assert_eq!(kind("$ echo HI"), Some(Echo::Prompted));
        assert_eq!(kind("HI"), None);
    }

    #[test]
    fn typed_lines_already_echoed_are_not_discounted_again() {
        let typed = vec![
            Typed {
                offset: 10,
                text: "echo A\necho B".into(),
            },
            Typed {
                offset: 50,
                text: "echo C".into(),
            },
        ];
        let line = |text: &str, end| termpilot_journal::Line {
            text: text.into(),
            end,
        };
        let seen = [line("$ echo A", 30), line("$ echo C", 40)];
        // "echo C" on a line that ended before it was typed is not its echo.
        assert_eq!(unechoed(&typed, &seen), vec!["echo B", "echo C"]);
        assert_eq!(unechoed(&typed[..1], &[]), vec!["echo A", "echo B"]);
    }
}
