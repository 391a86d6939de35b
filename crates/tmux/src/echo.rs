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

/// Whether the match `line[start..end]` lies in an echo of `typed`, and how.
pub fn echo_kind(line: &str, start: usize, end: usize, typed: &str) -> Option<Echo> {
    let matched = &line[start..end];
    if matched.is_empty() || typed.len() < matched.len() {
        return None;
    }
    typed
        .match_indices(matched)
        .find_map(|(at, _)| aligned_with_echo(line, start, end, typed, at))
}

/// Whether the match `line[start..end]` lies in an echo of `typed`.
pub fn is_echo(line: &str, start: usize, end: usize, typed: &str) -> bool {
    echo_kind(line, start, end, typed).is_some()
}

/// With the match at `typed[at..]`, checks that the line holds `typed` from
/// its beginning up to its end (or up to the end of the line).
fn aligned_with_echo(line: &str, start: usize, end: usize, typed: &str, at: usize) -> Option<Echo> {
    let line_start = start.checked_sub(at)?;
    if !line.is_char_boundary(line_start) || line[line_start..start] != typed[..at] {
        return None;
    }
    let rest_typed = &typed[at + (end - start)..];
    let rest_line = &line[end..];
    let aligned = rest_line.starts_with(rest_typed) || rest_typed.starts_with(rest_line);
    let kind = if line[..line_start].trim().is_empty() {
        Echo::Bare
    } else {
        Echo::Prompted
    };
    aligned.then_some(kind)
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

    fn echo(line: &str, needle: &str, typed: &str) -> bool {
        let start = line.find(needle).expect("needle in line");
        is_echo(line, start, start + needle.len(), typed)
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
    fn text_around_the_echo_must_match_the_typed_line() {
        assert!(!echo("$ printf DONE", "DONE", "echo DONE"));
        assert!(!echo("$ echo DONE!", "DONE", "echo DONE?"));
    }

    #[test]
    fn tells_bare_from_prompted_echo() {
        let typed = "echo HI";
        assert_eq!(echo_kind("echo HI", 5, 7, typed), Some(Echo::Bare));
        assert_eq!(echo_kind("$ echo HI", 7, 9, typed), Some(Echo::Prompted));
        assert_eq!(echo_kind("HI", 0, 2, typed), None);
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
