//! Hiding the echo of `run_command`'s wrapper again.
//!
//! The shell echoes the wrapper like anything typed at its prompt, so a
//! screen would show the markers and, in bash, the history fix-up around
//! every command. [`hide_wrappers`] turns that echo back into the command
//! line as the agent wrote it, the way a person would have typed it.

use std::borrow::Cow;

use crate::wrapper::{BASH_TAIL, END_MARK, FISH_TAIL, MARK, OTHER_TAIL, START_END, nonce_len};

/// `text` (a screen, or cleaned journal text) with the echo of every
/// `run_command` wrapper reduced to the command line itself: the start
/// marker in front of the command is cut out, and the lines of the tail
/// after it (the closing brace, bash's history fix-up, the end marker) are
/// left out. Text without a wrapper comes back as it is.
///
/// A tail whose first line scrolled away still loses its last line (the one
/// with the end marker); a tail whose end has not been echoed yet runs to
/// the end of the text.
pub fn hide_wrappers(text: &str) -> Cow<'_, str> {
    if !text.contains(MARK) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len());
    let mut in_tail = false;
    for line in text.split_inclusive('\n') {
        if in_tail {
            in_tail = !is_tail_end(line);
            if !in_tail {
                push_after_tail(&mut shown, line);
            }
            continue;
        }
        match tail_start(line) {
            Some(at) => {
                // A first line that filled the pane's width exactly comes
                // joined with the tail's first line (tmux marks the row as
                // wrapped): keep the command line, without the shell's PS2.
                let head = &line[..at];
                if head.contains(START_END) {
                    push_without_starts(&mut shown, without_ps2(head));
                    shown.push('\n');
                }
                in_tail = !is_tail_end(&line[at..]);
                if !in_tail {
                    push_after_tail(&mut shown, &line[at..]);
                }
            }
            None if is_tail_end(line) => push_after_tail(&mut shown, line),
            None => push_without_starts(&mut shown, line),
        }
    }
    if !text.ends_with('\n') && shown.ends_with('\n') {
        shown.pop();
    }
    Cow::Owned(shown)
}

/// Whether `line` shows a piece of a wrapper's marker (`\033]7770;`, or
/// the end of a marker's format), as a shell's echo or redraw of a
/// wrapper does.
pub fn shows_wrapper(line: &str) -> bool {
    line.contains("\\033]7770;") || line.contains("\\007'")
}

/// Where the tail of a wrapper begins in `line` (its closing brace).
fn tail_start(line: &str) -> Option<usize> {
    [BASH_TAIL, OTHER_TAIL, FISH_TAIL]
        .into_iter()
        .filter_map(|tail| line.find(tail))
        .min()
}

/// `head` without the continuation prompt at its end: `> ` (bash, sh) or
/// `cursh> ` (zsh inside braces). Another PS2 stays.
fn without_ps2(head: &str) -> &str {
    head.strip_suffix("cursh> ")
        .or_else(|| head.strip_suffix("> "))
        .unwrap_or(head)
}

/// Whether `line` holds an end marker's `printf` (with a nonce in it).
fn is_tail_end(line: &str) -> bool {
    line.match_indices(MARK).any(|(at, _)| {
        nonce_len(&line[at + MARK.len()..])
            .is_some_and(|n| line[at + MARK.len() + n..].starts_with(END_MARK))
    })
}

/// Pushes what follows the tail's end in `line`, if anything does: output
/// that `capture-pane -J` joined to the tail's last row because that row
/// filled the pane's width exactly.
fn push_after_tail(shown: &mut String, line: &str) {
    let after_marker = line.match_indices(MARK).find_map(|(at, _)| {
        let after = &line[at + MARK.len()..];
        let n = nonce_len(after)?;
        after[n..].strip_prefix(END_MARK)
    });
    // The marker's argument runs to its closing quote; bash then unsets its
    // status variable.
    let Some(rest) = after_marker
        .and_then(|a| a.split_once('"'))
        .map(|(_, rest)| rest)
    else {
        return;
    };
    let rest = rest
        .strip_prefix("; unset __termpilot_status")
        .unwrap_or(rest);
    // A raw stream ends the line with `\r\n`, a screen with `\n`.
    if !rest.trim_end_matches(['\r', '\n']).is_empty() {
        shown.push_str(rest);
    }
}

/// Pushes `line` with every `{ printf '\033]7770;NONCE;start\007'; ` (fish:
/// `begin; printf ...`) cut out, and the extra space that zsh's and fish's
/// wrappers put before it.
fn push_without_starts(shown: &mut String, mut line: &str) {
    while let Some(at) = line.find(MARK) {
        let after = &line[at + MARK.len()..];
        let start = nonce_len(after)
            .filter(|&n| after[n..].starts_with(START_END))
            .map(|n| at + MARK.len() + n + START_END.len());
        let before = &line[..at];
        let opener = before
            .strip_suffix("{ ")
            .or_else(|| before.strip_suffix("begin; "));
        let (Some(end), Some(opened)) = (start, opener) else {
            shown.push_str(&line[..at + MARK.len()]);
            line = after;
            continue;
        };
        let kept = opened
            .strip_suffix("  ")
            .map_or(opened, |b| &opened[..b.len() + 1]);
        shown.push_str(kept);
        line = &line[end..];
    }
    shown.push_str(line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wrapper::{Shell, wrapper};

    /// How a shell shows `typed` after `prompt`: continuation lines get `> `.
    fn echoed(prompt: &str, typed: &str) -> String {
        let mut screen = String::from(prompt);
        screen.push_str(&typed.replace('\n', "\n> "));
        screen.push('\n');
        screen
    }

    #[test]
    fn shows_each_shells_wrapper_as_the_bare_command() {
        for shell in Shell::ALL {
            for command in [
                "make test",
                "for i in 1 2; do\n echo $i\ndone",
                "echo 'a''b' # c",
            ] {
                let typed = wrapper(shell, command, "tp0123456789abcdef");
                let screen = format!("{}out 1\nout 2\n$ ", echoed("$ ", &typed));
                let expected = format!("{}out 1\nout 2\n$ ", echoed("$ ", command));
                assert_eq!(hide_wrappers(&screen), expected, "{shell:?} {command:?}");
            }
        }
    }

    #[test]
    fn a_first_line_joined_with_the_tail_keeps_the_command() {
        // The first line filled the width exactly, so `capture-pane -J` joined
        // it with the next row.
        assert_eq!(OTHER_TAIL, format!("}}; {MARK}"));
        for shell in Shell::ALL {
            let typed = wrapper(shell, "cat notes.txt", "tp0123456789abcdef");
            let joined = format!("$ {}\nhello\n$ ", typed.replace('\n', "> "));
            assert_eq!(
                hide_wrappers(&joined),
                "$ cat notes.txt\nhello\n$ ",
                "{shell:?}"
            );
        }
    }

    #[test]
    fn output_joined_to_the_tails_last_row_is_kept() {
        // The tail's last row filled the width exactly, so `capture-pane -J`
        // joined the command's first line of output to it.
        for shell in Shell::ALL {
            let typed = wrapper(shell, "echo hi; echo there", "tp0123456789abcdef");
            let joined = format!(
                "{}hi\nthere\n$ ",
                echoed("$ ", &typed).trim_end_matches('\n')
            );
            assert_eq!(
                hide_wrappers(&joined),
                "$ echo hi; echo there\nhi\nthere\n$ ",
                "{shell:?}"
            );
        }
    }

    #[test]
    fn a_raw_tail_end_leaves_no_empty_line() {
        // Raw output ends lines with \r\n: nothing follows the tail there.
        let typed = wrapper(Shell::Bash, "ls", "tp0123456789abcdef");
        let raw = format!("{}a.txt\r\n$ ", echoed("$ ", &typed).replace('\n', "\r\n"));
        assert_eq!(hide_wrappers(&raw), "$ ls\r\na.txt\r\n$ ");
    }

    #[test]
    fn keeps_text_without_a_wrapper_and_forged_pieces() {
        let plain = "$ ls\nfile\n";
        assert!(matches!(hide_wrappers(plain), Cow::Borrowed(_)));
        // A program printing the marker's text without a nonce, or without
        // the brace before it, is output like any other.
        let forged =
            "printf '\\033]7770;start\\007'; x\nsay { printf '\\033]7770;nonce;start\\007'; y\n";
        assert_eq!(hide_wrappers(forged), forged);
    }

    #[test]
    fn a_tail_cut_at_either_end_is_still_hidden() {
        let typed = wrapper(Shell::Bash, "a\nb", "tpfeed");
        let screen = echoed("$ ", &typed);
        let lines: Vec<&str> = screen.lines().collect();
        // The screen starts inside the tail: only its last line goes.
        let top_cut = lines[3..].join("\n");
        assert_eq!(
            hide_wrappers(&top_cut),
            lines[3..lines.len() - 1].join("\n")
        );
        // The tail is still being echoed: it runs to the end.
        let bottom_cut = lines[..3].join("\n");
        assert_eq!(hide_wrappers(&bottom_cut), "$ a\n> b");
    }

    proptest::proptest! {
        #[test]
        fn any_wrapped_command_shows_as_typed(
            command in "[ -~\n]{0,80}",
            output in "[ -~\n]{0,80}",
            // Prompts end in one space: zsh's wrapper adds a second one.
            prompt in "[ -~]{0,12}[#$%>] ",
            shell in proptest::sample::select(Shell::ALL.to_vec()),
        ) {
            let typed = wrapper(shell, &command, "tp0123456789abcdef");
            let screen = format!("{}{output}", echoed(&prompt, &typed));
            let expected = format!("{}{output}", echoed(&prompt, &command));
            proptest::prop_assume!(!expected.contains(MARK) && !expected.contains("}; __termpilot"));
            proptest::prop_assert_eq!(hide_wrappers(&screen), expected);
        }

        #[test]
        fn a_command_line_joined_with_the_tail_shows_as_typed(
            command in "[ -~]{0,80}",
            prompt in "[ -~]{0,12}[#$%>] ",
            shell in proptest::sample::select(Shell::ALL.to_vec()),
        ) {
            let typed = wrapper(shell, &command, "tp0123456789abcdef");
            // The first row filled the width: `capture-pane -J` joins it with the next.
            let joined = echoed(&prompt, &typed).replacen("\n> ", "> ", 1);
            let expected = echoed(&prompt, &command);
            proptest::prop_assume!(!expected.contains(MARK) && !expected.contains("}; "));
            proptest::prop_assume!(!command.ends_with('>') && !command.ends_with("> "));
            proptest::prop_assert_eq!(hide_wrappers(&joined), expected);
        }

        #[test]
        fn hiding_only_ever_removes_text(pieces in proptest::collection::vec(piece(), 0..40)) {
            let text = pieces.concat();
            let shown = hide_wrappers(&text);
            proptest::prop_assert!(shown.len() <= text.len());
        }
    }

    /// Pieces of wrappers and other text, to shuffle into near-wrappers.
    fn piece() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "{ ", "  ", MARK, START_END, END_MARK, BASH_TAIL, "tp", "tp0a", "tpz", "\n", "x", "é",
            "$?\"", "\"",
        ])
    }
}
