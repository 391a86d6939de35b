//! Decisions about a command being followed in its pane, from what the
//! pane shows: whether an end marker counts yet ([`MarkerDoubt`]), why a
//! shell did not run a line ([`not_run_verdict`]), which program a command
//! line runs ([`program_of`]), the prompt a waiting shell shows
//! ([`shown_prompt`]). The engine looks; these decide.

use termpilot_journal::{Journal, LineView};

use crate::{Shell, blames_wrapper, shows_wrapper};

/// Why a shell took a command line and went back to reading its terminal
/// without running any of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRun {
    /// It could not parse the line (a syntax error) and shows its prompt
    /// again.
    SyntaxError,
    /// The line was unfinished (an unclosed quote, bracket or
    /// here-document) and the shell waited for the rest; termpilot pressed
    /// C-c to get the prompt back.
    Incomplete,
}

/// What a command's follower has seen of end markers that did not count
/// yet. An end marker counts once the shell has the terminal at two looks
/// in a row after a look where it did not: when a program that printed a
/// marker exits, the shell takes the terminal back a moment before it
/// prints its own marker, and the first look may fall in that moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MarkerDoubt {
    /// None so far: a marker counts as soon as the shell has the terminal.
    #[default]
    Clear,
    /// One, while something other than the shell had the terminal.
    Seen,
    /// The shell has the terminal again since then: the next look decides.
    Settling,
}

impl MarkerDoubt {
    /// At a look that found an end marker, with the shell in charge of its
    /// terminal or not: whether the newest marker counts now. When it does
    /// not, the doubt moves on and the follower looks again.
    pub fn marker_counts(&mut self, shell_in_charge: bool) -> bool {
        *self = match (shell_in_charge, *self) {
            (false, _) => MarkerDoubt::Seen,
            (true, MarkerDoubt::Seen) => MarkerDoubt::Settling,
            (true, MarkerDoubt::Clear | MarkerDoubt::Settling) => return true,
        };
        false
    }
}

/// The text of the journal's unfinished last line, as cleaned: a shell's
/// prompt while it waits. `None` when there is none.
pub fn shown_prompt(journal: &Journal) -> Option<String> {
    let view = journal.lines(journal.end().saturating_sub(PROMPT_BYTES));
    view.partial
        .map(|line| line.trim_end().to_owned())
        .filter(|line| !line.is_empty())
}

/// The first program a command line runs other than the builtins and
/// wrappers that set things up (`cd dir && vim x` runs vim).
pub fn program_of(command: &str) -> Option<String> {
    const SETUP: [&str; 10] = [
        "cd", "echo", "printf", "export", "env", "sudo", "exec", "time", "nice", "command",
    ];
    command
        .split([';', '&', '|', '\n', '(', ')'])
        .flat_map(|part| {
            part.split_whitespace()
                .find(|word| !word.contains('=') && !word.starts_with('-'))
        })
        .find(|word| !SETUP.contains(word))
        .map(|word| word.rsplit('/').next().unwrap_or(word).to_owned())
}

/// Why a shell did not run a command line typed at the offset `view`
/// starts from (the journal's lines from there), and what it said about
/// it. After the echo of the line, a shell that could not parse it says so
/// on a line of its own that starts with its name (`bash: syntax error
/// ...`, `sh: 1: Syntax error: ...`, `fish: ...`); its message runs to its
/// next prompt, or to a line that shows pieces of termpilot's wrapper (a
/// shell's redraw, or bash complaining again about the wrapper's second
/// line). A shell that said nothing waits for the rest of the line; one
/// whose message names a token of the wrapper rather than of `command` read
/// on into the wrapper because the line was unfinished.
pub fn not_run_verdict(view: &LineView, prompt: Option<&str>, command: &str) -> (NotRun, String) {
    let prompt = prompt.filter(|p| !p.is_empty());
    let said: Vec<&str> = view
        .lines
        .iter()
        .skip(1)
        .map(|line| line.text.as_str())
        .skip_while(|line| !names_a_shell(line))
        .take_while(|line| !prompt.is_some_and(|p| line.starts_with(p)) && !shows_wrapper(line))
        .collect();
    let said = said.join("\n").trim_end().to_owned();
    if said.is_empty() {
        (NotRun::Incomplete, said)
    } else if blames_wrapper(&said, command) {
        let why = format!(
            "the command line is unfinished (an unclosed quote, bracket, `$(` or block?): \
             the shell read on into termpilot's wrapper and said: {said}"
        );
        (NotRun::Incomplete, why)
    } else {
        (NotRun::SyntaxError, said)
    }
}

/// Whether `line` starts the way shells start their error messages: the
/// shell's name (a login shell's `-` allowed) and a colon.
fn names_a_shell(line: &str) -> bool {
    line.split_once(':')
        .is_some_and(|(name, _)| Shell::from_command(name).is_some())
}

/// How far back [`shown_prompt`] reads: more than any prompt line.
const PROMPT_BYTES: u64 = 4096;

#[cfg(test)]
mod tests {
    use termpilot_journal::{Limits, Line};

    use super::*;

    fn view(lines: &[&str]) -> LineView {
        LineView {
            lost: 0,
            gaps: Vec::new(),
            lines: lines
                .iter()
                .map(|text| Line {
                    text: (*text).to_owned(),
                    end: 0,
                })
                .collect(),
            partial: None,
            next: 0,
        }
    }

    #[test]
    fn a_note_names_the_program_not_its_set_up() {
        assert_eq!(program_of("vim data.txt").as_deref(), Some("vim"));
        assert_eq!(program_of("cd /r && git log").as_deref(), Some("git"));
        assert_eq!(
            program_of("EDITOR=vi /usr/bin/less -R f").as_deref(),
            Some("less")
        );
        assert_eq!(program_of("cd /tmp; echo hi"), None);
    }

    #[test]
    fn a_rejected_line_gives_the_shell_s_first_answer() {
        let lines = view(&[
            "{ printf '\\033]7770;tp1;start\\007'; echo )",
            "bash: syntax error near unexpected token `)'",
            "$ }; __termpilot_status=$?; case ...",
            "bash: syntax error near unexpected token `}'",
        ]);
        let (why, said) = not_run_verdict(&lines, Some("$"), "echo )");
        assert_eq!(why, NotRun::SyntaxError);
        assert_eq!(said, "bash: syntax error near unexpected token `)'");
    }

    #[test]
    fn a_message_stops_at_a_redraw_of_the_wrapper() {
        let lines = view(&[
            "echo )",
            "fish: Missing end to balance this begin",
            " begin; printf '\\033]7770;tp1;start\\007'; echo )",
        ]);
        let (why, said) = not_run_verdict(&lines, None, "echo )");
        assert_eq!(why, NotRun::SyntaxError);
        assert_eq!(said, "fish: Missing end to balance this begin");
        let dash = view(&["echo )", "sh: 1: Syntax error: \")\" unexpected", "$ "]);
        assert_eq!(
            not_run_verdict(&dash, Some("$"), "echo )").0,
            NotRun::SyntaxError
        );
    }

    #[test]
    fn a_shell_that_said_nothing_waits_for_the_rest() {
        let lines = view(&[
            "echo 'unclosed",
            "> }; printf '\\033]7770;tp1;%s\\007' \"$?\"",
        ]);
        assert_eq!(
            not_run_verdict(&lines, Some("$"), "echo 'unclosed"),
            (NotRun::Incomplete, String::new())
        );
        // Output that merely contains a colon is not a shell's message.
        let lines = view(&["echo 'a", "> note: not a shell"]);
        assert_eq!(
            not_run_verdict(&lines, Some("$"), "echo 'a").0,
            NotRun::Incomplete
        );
    }

    #[test]
    fn a_shell_that_read_on_into_the_wrapper_had_an_unfinished_line() {
        // bash closes an unclosed quote with one of the wrapper's and then
        // stumbles over the wrapper's `;;`.
        let lines = view(&[
            "{ printf '\\033]7770;tp1;start\\007'; echo 'unclosed",
            "bash: syntax error near unexpected token `;;'",
            "$ ",
        ]);
        let (why, said) = not_run_verdict(&lines, Some("$"), "echo 'unclosed");
        assert_eq!(why, NotRun::Incomplete);
        assert!(said.contains("unfinished"), "{said}");
        assert!(
            said.ends_with("bash: syntax error near unexpected token `;;'"),
            "{said}"
        );
    }

    #[test]
    fn an_end_marker_counts_when_the_shell_has_the_terminal() {
        let mut doubt = MarkerDoubt::default();
        assert!(doubt.marker_counts(true));
        assert_eq!(doubt, MarkerDoubt::Clear);
    }

    #[test]
    fn after_a_look_where_a_program_had_the_terminal_two_looks_decide() {
        let mut doubt = MarkerDoubt::default();
        // A program printed a marker and still has the terminal.
        assert!(!doubt.marker_counts(false));
        assert_eq!(doubt, MarkerDoubt::Seen);
        // The shell took the terminal back: it may not have printed its
        // own marker yet.
        assert!(!doubt.marker_counts(true));
        assert_eq!(doubt, MarkerDoubt::Settling);
        assert!(doubt.marker_counts(true));
        // A program taking the terminal again starts the doubt over.
        let mut doubt = MarkerDoubt::Settling;
        assert!(!doubt.marker_counts(false));
        assert_eq!(doubt, MarkerDoubt::Seen);
    }

    #[test]
    fn the_prompt_shown_is_the_unfinished_last_line() {
        let mut journal = Journal::new(Limits::default());
        journal.append(b"\x1b[1m~/src\x1b[0m $ ");
        assert_eq!(shown_prompt(&journal).as_deref(), Some("~/src $"));
        journal.append(b"ls\r\n");
        assert_eq!(shown_prompt(&journal), None, "the line is complete");
        journal.append(b"   ");
        assert_eq!(shown_prompt(&journal), None, "nothing but spaces");
    }
}
