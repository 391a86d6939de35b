//! The wrapper `run_command` types around a command line, per shell.
//!
//! ```text
//! { printf '\033]7770;NONCE;start\007'; COMMAND
//! }; printf '\033]7770;NONCE;%s\007' "$?"
//! ```
//!
//! The braces and the newline let any command line through, including one
//! that ends in `&` or a `# comment`. Right before the command runs, and
//! when it finishes, the shell prints an invisible OSC sequence carrying the
//! nonce (and at the end the exit code): the command's output is what lies
//! between the two (see [`crate::Tracker`]). The terminal's echo of the
//! wrapper shows the nonce too, but only as the text `\033]7770;`, never
//! with a real ESC byte before it, so the echo cannot pass for a marker.
//!
//! History: in bash the wrapper replaces its own history entry with the
//! command line alone (`history -s`), keeping `$?` in a variable meanwhile.
//! zsh gets the wrapper with a leading space, which keeps it out of history
//! when `hist_ignore_space` is set (it is in most configurations); fish
//! (whose wrapper is a `begin`/`end` block) likewise, and it never keeps such
//! lines; POSIX sh keeps no history.

use std::hash::{BuildHasher, Hasher};

/// Which shell a pane runs, for the parts of the wrapper that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shell {
    /// GNU bash.
    Bash,
    /// zsh.
    Zsh,
    /// A POSIX shell without history (sh, dash, ash, ksh, mksh).
    Posix,
    /// fish.
    Fish,
}

impl Shell {
    /// Every shell, in a fixed order.
    pub const ALL: [Shell; 4] = [Shell::Bash, Shell::Zsh, Shell::Posix, Shell::Fish];

    /// Recognises a shell from its program name, as tmux's
    /// `pane_current_command` or `/proc/PID/comm` give it (a login shell's
    /// leading `-` is ignored).
    pub fn from_command(command: &str) -> Option<Shell> {
        match command.trim_start_matches('-') {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            "sh" | "dash" | "ash" | "ksh" | "mksh" | "busybox" => Some(Shell::Posix),
            _ => None,
        }
    }
}

/// What every marker `printf` in the echo starts with.
pub(crate) const MARK: &str = "printf '\\033]7770;";
/// Ends the start marker's `printf` and the `{` group's first command.
pub(crate) const START_END: &str = ";start\\007'; ";
/// Only in bash's tail: the line that begins the history fix-up.
pub(crate) const BASH_TAIL: &str =
    "}; __termpilot_status=$?; case \"$(HISTTIMEFORMAT= history 1)\" in *";
/// zsh's and sh's tail: the closing brace, then the end marker.
pub(crate) const OTHER_TAIL: &str = "}; printf '\\033]7770;";
/// fish's tail: the end of its block, then the end marker.
pub(crate) const FISH_TAIL: &str = "end; printf '\\033]7770;";
/// In every shell's tail: the end marker's format and its argument.
pub(crate) const END_MARK: &str = ";%s\\007' \"";
/// What a nonce starts with, before its hex digits.
pub(crate) const NONCE_PREFIX: &str = "tp";

/// The text typed into the shell for `command` with `nonce` (from
/// [`new_nonce`]; the tracker and [`crate::hide_wrappers`] recognise only
/// nonces of that form).
pub fn wrapper(shell: Shell, command: &str, nonce: &str) -> String {
    let start = format!("{MARK}{nonce}{START_END}");
    let end = |status: &str| format!("{MARK}{nonce}{END_MARK}{status}\"");
    match shell {
        // `history -s` replaces the newest entry (this wrapper) with the
        // command line alone; the `case` makes sure that entry is ours. The
        // end marker comes last, so the shell is back at its prompt right
        // after it.
        Shell::Bash => format!(
            "{{ {start}{command}\n{BASH_TAIL}{nonce}*) history -s -- {quoted};; esac; \
             {end_marker}; unset __termpilot_status",
            quoted = single_quoted(command),
            end_marker = end("$__termpilot_status"),
        ),
        Shell::Zsh => format!(" {{ {start}{command}\n}}; {}", end("$?")),
        // fish keeps a line that starts with a space out of its history.
        Shell::Fish => format!(" begin; {start}{command}\nend; {}", end("$status")),
        Shell::Posix => format!("{{ {start}{command}\n}}; {}", end("$?")),
    }
}

/// `text` as one single-quoted shell word.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Whether a shell's syntax error about the wrapped `command` names a token
/// that is not in the command line. The shell then read past the line's end
/// into the wrapper's tail (bash's `;;`, a closing `}`, zsh's `printf`), so
/// the line itself was unfinished (an unclosed quote, a `$(` or an `if`
/// without its `fi`) rather than wrong where the message points.
pub fn blames_wrapper(message: &str, command: &str) -> bool {
    blamed_token(message)
        .is_some_and(|token| !NOT_TYPED.contains(&token) && !command.contains(token))
}

/// Tokens a shell names that nobody typed: the end of a line or of input.
const NOT_TYPED: &[&str] = &["newline", "EOF", "end of file"];

/// The token the first line of a syntax error names: bash's ``near
/// unexpected token `X'``, zsh's ``parse error near `X'``, dash's `Syntax
/// error: "X" unexpected`.
fn blamed_token(message: &str) -> Option<&str> {
    let first = message.lines().next()?;
    let between = |text: &'static str, open: &str, close: &str| {
        let after = &first[first.find(text)? + text.len()..];
        let token = after.strip_prefix(open)?;
        token.find(close).map(|end| &token[..end])
    };
    between("near unexpected token ", "`", "'")
        .or_else(|| between("parse error near ", "`", "'"))
        .or_else(|| between("Syntax error: ", "\"", "\" unexpected"))
}

/// A fresh nonce: `tp` and 16 hex digits, from the standard library's
/// per-process random hasher keys mixed with the time. A program cannot
/// guess it before the shell echoes it.
pub fn new_nonce() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    hasher.write_u128(now.as_nanos());
    format!("{NONCE_PREFIX}{:016x}", hasher.finish())
}

/// The length of the nonce (`tp` and hex digits) at the start of `text`.
pub(crate) fn nonce_len(text: &str) -> Option<usize> {
    let digits = text.strip_prefix(NONCE_PREFIX)?;
    let n = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
    (n > 0).then_some(NONCE_PREFIX.len() + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_shells() {
        assert_eq!(Shell::from_command("-bash"), Some(Shell::Bash));
        assert_eq!(Shell::from_command("zsh"), Some(Shell::Zsh));
        assert_eq!(Shell::from_command("dash"), Some(Shell::Posix));
        assert_eq!(Shell::from_command("fish"), Some(Shell::Fish));
        assert_eq!(Shell::from_command("python3"), None);
    }

    #[test]
    fn wrapper_quotes_the_command_for_history() {
        let text = wrapper(Shell::Bash, "echo 'it''s' # note", "tpabc");
        let start = "{ printf '\\033]7770;tpabc;start\\007'; echo 'it''s' # note\n}; ";
        assert!(text.starts_with(start), "{text}");
        assert!(
            text.ends_with("\"$__termpilot_status\"; unset __termpilot_status"),
            "{text}"
        );
        assert!(
            text.contains("history -s -- 'echo '\\''it'\\'''\\''s'\\'' # note'"),
            "{text}"
        );
        assert!(wrapper(Shell::Zsh, "ls", "n").starts_with(" { printf"));
        assert!(wrapper(Shell::Fish, "ls", "n").starts_with(" begin; printf"));
    }

    #[test]
    fn a_syntax_error_about_the_wrapper_s_tail_blames_the_wrapper() {
        // What bash and zsh said about unfinished lines in the wrapper (dash's
        // message has the form of its recorded ones below).
        let bash = "bash: syntax error near unexpected token `;;'";
        assert!(blames_wrapper(bash, "echo 'unclosed"));
        let brace = "bash: syntax error near unexpected token `}'";
        assert!(blames_wrapper(brace, "if true; then echo x"));
        let zsh = "zsh: parse error near `}'\nzsh: parse error near `$('";
        assert!(blames_wrapper(zsh, "echo $("));
        assert!(blames_wrapper(
            "zsh: parse error near `printf'",
            "if true; then echo x"
        ));
        let dash = "sh: 10: Syntax error: \"}\" unexpected";
        assert!(blames_wrapper(dash, "case x in"));
    }

    #[test]
    fn a_syntax_error_in_the_line_itself_does_not() {
        let paren = "bash: syntax error near unexpected token `)'";
        assert!(!blames_wrapper(paren, "echo )"));
        let fi = "sh: 10: Syntax error: \"fi\" unexpected (expecting \"}\")";
        assert!(!blames_wrapper(fi, "fi"));
        let newline = "bash: syntax error near unexpected token `newline'";
        assert!(!blames_wrapper(newline, "echo ("));
        let eof = "sh: 6: Syntax error: newline unexpected (expecting \")\")";
        assert!(!blames_wrapper(eof, "echo ("));
        // fish names no token.
        let fish = "fish: Missing end to balance this begin";
        assert!(!blames_wrapper(fish, "echo )"));
    }

    #[test]
    fn nonces_are_fresh_and_recognised() {
        let (a, b) = (new_nonce(), new_nonce());
        assert_ne!(a, b);
        assert_eq!(nonce_len(&a), Some(18), "{a}");
        assert_eq!(nonce_len(&format!("{a};start")), Some(18));
        assert_eq!(nonce_len("tp;"), None);
        assert_eq!(nonce_len("xp0123"), None);
    }
}
