//! Building command lines for a control client, with quoting that delivers every
//! argument byte for byte.
//!
//! # Quoting rules, confirmed in tmux 3.3a `cmd-parse.y`
//!
//! A control client's input line goes through `cmd_parse_and_append`, the same lexer
//! as a configuration file. [`quote`] writes each argument as one double-quoted word:
//!
//! - Inside double quotes `yylex_token` still expands `$NAME`/`${NAME}` (environment)
//!   and `~` right after the opening quote (home directory), and it treats `\` as an
//!   escape. Whitespace, `;`, `}` and `#` do not end or comment out a quoted word, but
//!   a raw newline inside quotes is kept with the indentation after it stripped.
//! - `yylex_token_escape`: `\` followed by `0`–`3` and two more octal digits is that
//!   byte; `\4`–`\7` is an error; `\a \b \e \f \s \v \r \n \t \u \U` are special; any
//!   other character after `\` stands for itself. So `\` before every ASCII
//!   punctuation character (none of which is a digit or letter) yields that character
//!   and disarms `$`, `~`, `"`, `\`, `;`, `#{` and `%`.
//! - Bytes below 0x20 and 0x7f are written `\ooo`, so no raw newline or other control
//!   byte reaches the lexer (an empty line would detach the client, a line ending in
//!   `\` would continue it).
//! - Bytes 0x80–0xfe pass through unchanged. 0xff is written `\377` too: the lexer
//!   reads the line through a plain `char`, which is signed on most platforms, so a
//!   raw 0xff byte would read as end of input and cut the command short.
//! - NUL cannot be sent at all: tmux's strings end at NUL, so [`quote`] refuses it.
//!
//! Quoting does not stop an argument that starts with `-` from being taken as a flag:
//! that is decided after parsing, so put [`Command::end_of_flags`] before such text.

/// Why a command could not be built or a quoted word could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// An argument contained a NUL byte, which tmux cannot receive.
    #[error("argument contains a NUL byte, which tmux cannot receive")]
    Nul,
    /// A word given to [`unquote`] is not a double-quoted word that tmux would read
    /// back without expansion.
    #[error("invalid quoted word at byte {offset}: {reason}")]
    InvalidQuoting {
        /// Byte offset of the problem in the quoted word.
        offset: usize,
        /// What is wrong there.
        reason: &'static str,
    },
}

/// Quotes one argument so that tmux's parser yields exactly `arg`.
///
/// ```
/// use termpilot_control::command::quote;
///
/// assert_eq!(quote(b"ls -l;").unwrap(), br#""ls \-l\;""#);
/// assert_eq!(quote(b"").unwrap(), b"\"\"");
/// assert_eq!(quote(b"a\nb").unwrap(), br#""a\012b""#);
/// ```
pub fn quote(arg: &[u8]) -> Result<Vec<u8>, CommandError> {
    let mut quoted = Vec::with_capacity(arg.len() + 2);
    write_quoted(&mut quoted, arg)?;
    Ok(quoted)
}

/// Appends the quoted form of `arg` to `out`; on error `out` may hold part of it.
fn write_quoted(out: &mut Vec<u8>, arg: &[u8]) -> Result<(), CommandError> {
    out.push(b'"');
    for &byte in arg {
        match byte {
            0 => return Err(CommandError::Nul),
            0x01..0x20 | 0x7f | 0xff => write_octal(out, byte),
            byte if byte.is_ascii_punctuation() => out.extend_from_slice(&[b'\\', byte]),
            byte => out.push(byte),
        }
    }
    out.push(b'"');
    Ok(())
}

fn write_octal(out: &mut Vec<u8>, byte: u8) {
    out.extend_from_slice(&[
        b'\\',
        b'0' + (byte >> 6),
        b'0' + ((byte >> 3) & 7),
        b'0' + (byte & 7),
    ]);
}

/// Decodes one double-quoted word the way tmux 3.3a's `yylex_token` reads it.
///
/// It accepts everything [`quote`] produces, plus the other escapes tmux knows
/// (`\n`, `\e`, `\u00e9`, ...) and a `\` line continuation. It refuses what tmux
/// would expand or mangle (`$`, a `~` right after the opening quote, a raw newline)
/// and anything that is not exactly one double-quoted word.
pub fn unquote(quoted: &[u8]) -> Result<Vec<u8>, CommandError> {
    let invalid = |offset, reason| CommandError::InvalidQuoting { offset, reason };
    if quoted.first() != Some(&b'"') {
        return Err(invalid(0, "a quoted word must start with a double quote"));
    }
    if quoted.get(1) == Some(&b'~') {
        return Err(invalid(1, "tmux expands ~ at the start of a quoted word"));
    }
    let mut decoded = Vec::with_capacity(quoted.len());
    let mut at = 1;
    while let Some(&byte) = quoted.get(at) {
        match byte {
            b'"' if at + 1 == quoted.len() => return Ok(decoded),
            b'"' => return Err(invalid(at + 1, "text after the closing double quote")),
            b'$' => return Err(invalid(at, "tmux expands $ inside double quotes")),
            b'\n' => return Err(invalid(at, "raw newline inside a quoted word")),
            0 => return Err(invalid(at, "NUL byte")),
            b'\\' => at = unescape(quoted, at + 1, &mut decoded)?,
            byte => {
                decoded.push(byte);
                at += 1;
            }
        }
    }
    Err(invalid(quoted.len(), "missing closing double quote"))
}

/// Decodes the escape whose first byte after `\` is at `at`; returns where the text
/// after the escape starts.
fn unescape(quoted: &[u8], at: usize, out: &mut Vec<u8>) -> Result<usize, CommandError> {
    let invalid = |reason| CommandError::InvalidQuoting { offset: at, reason };
    let Some(&byte) = quoted.get(at) else {
        return Err(invalid("backslash at end of input"));
    };
    let simple = match byte {
        b'0'..=b'3' => {
            let digits = quoted
                .get(at..at + 3)
                .ok_or(invalid("short octal escape"))?;
            let value = octal_value(digits).ok_or(invalid("invalid octal escape"))?;
            out.push(value);
            return Ok(at + 3);
        }
        b'4'..=b'7' => return Err(invalid("invalid octal escape")),
        b'u' => return unescape_unicode(quoted, at + 1, 4, out),
        b'U' => return unescape_unicode(quoted, at + 1, 8, out),
        // A backslash before a line end joins the lines (`yylex_getc`).
        b'\n' => return Ok(at + 1),
        b'a' => 0x07,
        b'b' => 0x08,
        b'e' => 0x1b,
        b'f' => 0x0c,
        b's' => b' ',
        b'v' => 0x0b,
        b'r' => b'\r',
        b'n' => b'\n',
        b't' => b'\t',
        other => other,
    };
    out.push(simple);
    Ok(at + 1)
}

/// The value of three octal digits, if they are octal and fit in a byte.
fn octal_value(digits: &[u8]) -> Option<u8> {
    let [a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7'] = *digits else {
        return None;
    };
    Some((a - b'0') * 64 + (b - b'0') * 8 + (c - b'0'))
}

/// Decodes `\uXXXX` / `\UXXXXXXXX` (hex digits starting at `at`) as UTF-8, as tmux
/// does in a UTF-8 locale.
fn unescape_unicode(
    quoted: &[u8],
    at: usize,
    digits: usize,
    out: &mut Vec<u8>,
) -> Result<usize, CommandError> {
    let invalid = CommandError::InvalidQuoting {
        offset: at,
        reason: "invalid unicode escape",
    };
    let hex = quoted.get(at..at + digits).ok_or(invalid.clone())?;
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return Err(invalid);
    }
    let text = std::str::from_utf8(hex).map_err(|_| invalid.clone())?;
    let code = u32::from_str_radix(text, 16).map_err(|_| invalid.clone())?;
    let ch = char::from_u32(code)
        .filter(|&ch| ch != '\0')
        .ok_or(invalid)?;
    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
    Ok(at + digits)
}

/// One tmux command, built into a single control-mode input line.
///
/// ```
/// use termpilot_control::Command;
///
/// let line = Command::new("send-keys").flag("-l").opt("-t", "%3").end_of_flags().arg("-x;").build();
/// assert_eq!(line.unwrap(), b"send-keys -l -t \"\\%3\" -- \"\\-x\\;\"\n");
/// ```
#[derive(Debug, Clone)]
pub struct Command {
    /// The command name, kept for error messages and reply bookkeeping.
    name: &'static str,
    /// The line built so far, starting with the name.
    line: Vec<u8>,
    /// The first error met while adding arguments; reported by [`Command::build`] so
    /// that a builder chain need not check each step.
    error: Option<CommandError>,
}

impl Command {
    /// Starts a command; `name` (such as `"send-keys"`) is written bare.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            line: name.as_bytes().to_vec(),
            error: None,
        }
    }

    /// Adds a flag such as `"-l"`, written bare.
    pub fn flag(mut self, flag: &'static str) -> Self {
        self.push_bare(flag);
        self
    }

    /// Adds a flag with a value, such as `("-t", "%3")`: the flag bare, the value quoted.
    pub fn opt(self, flag: &'static str, value: impl AsRef<[u8]>) -> Self {
        self.flag(flag).arg(value)
    }

    /// Adds an argument, always quoted.
    pub fn arg(mut self, value: impl AsRef<[u8]>) -> Self {
        self.line.push(b' ');
        if let Err(error) = write_quoted(&mut self.line, value.as_ref()) {
            self.error.get_or_insert(error);
        }
        self
    }

    /// Adds `--`, so that later arguments are never read as flags even if they
    /// start with `-`.
    pub fn end_of_flags(mut self) -> Self {
        self.push_bare("--");
        self
    }

    /// The finished line, ending in `\n`, or the first error met while building.
    pub fn build(self) -> Result<Vec<u8>, CommandError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let mut line = self.line;
        line.push(b'\n');
        Ok(line)
    }

    /// The command name given to [`Command::new`].
    pub fn name(&self) -> &'static str {
        self.name
    }

    fn push_bare(&mut self, word: &str) {
        self.line.push(b' ');
        self.line.extend_from_slice(word.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn punctuation_is_backslashed_and_letters_are_not() {
        assert_eq!(quote(b"a-b_c").unwrap(), br#""a\-b\_c""#);
        assert_eq!(quote(b"$(whoami)").unwrap(), br#""\$\(whoami\)""#);
        assert_eq!(quote(b"#{pane_id}").unwrap(), br#""\#\{pane\_id\}""#);
        assert_eq!(quote(br#"'"\"#).unwrap(), br#""\'\"\\""#);
        assert_eq!(quote(b"~ x %").unwrap(), br#""\~ x \%""#);
    }

    #[test]
    fn control_bytes_del_and_ff_are_octal() {
        assert_eq!(
            quote(b"\x01\t\n\x1f\x7f").unwrap(),
            br#""\001\011\012\037\177""#
        );
        assert_eq!(quote(&[0xff]).unwrap(), br#""\377""#);
    }

    #[test]
    fn other_high_bytes_pass_through() {
        assert_eq!(quote("é😀".as_bytes()).unwrap(), "\"é😀\"".as_bytes());
        assert_eq!(quote(&[0x80, 0xfe]).unwrap(), [b'"', 0x80, 0xfe, b'"']);
    }

    #[test]
    fn empty_argument_is_two_quotes() {
        assert_eq!(quote(b"").unwrap(), b"\"\"");
    }

    #[test]
    fn nul_is_refused() {
        assert_eq!(quote(b"a\0b"), Err(CommandError::Nul));
    }

    #[test]
    fn command_line_has_bare_flags_and_quoted_values() {
        let line = Command::new("send-keys")
            .flag("-l")
            .opt("-t", "%3")
            .end_of_flags()
            .arg("-x");
        assert_eq!(line.name(), "send-keys");
        assert_eq!(
            line.build().unwrap(),
            b"send-keys -l -t \"\\%3\" -- \"\\-x\"\n"
        );
        assert_eq!(Command::new("list-panes").build().unwrap(), b"list-panes\n");
    }

    #[test]
    fn command_remembers_the_first_error() {
        let built = Command::new("set-buffer").arg("a\0").arg("fine").build();
        assert_eq!(built, Err(CommandError::Nul));
        let built = Command::new("send-keys").opt("-t", b"\0").build();
        assert_eq!(built, Err(CommandError::Nul));
    }

    #[test]
    fn unquote_knows_tmux_escapes() {
        assert_eq!(
            unquote(br#""a\sb\tc\n\e\a\b\f\v\r""#).unwrap(),
            b"a b\tc\n\x1b\x07\x08\x0c\x0b\r"
        );
        assert_eq!(unquote(br#""\u00e9\U0001F600""#).unwrap(), "é😀".as_bytes());
        assert_eq!(unquote(br#""\101\q\\""#).unwrap(), br"Aq\");
        assert_eq!(unquote(b"\"a\\\nb\"").unwrap(), b"ab");
        assert_eq!(
            unquote(br#""plain ; # } words""#).unwrap(),
            b"plain ; # } words"
        );
    }

    #[test]
    fn unquote_refuses_what_tmux_would_expand_or_reject() {
        for bad in [
            &br#"abc"#[..],
            br#""abc"#,
            br#""a"b"#,
            br#""$HOME""#,
            br#""~/x""#,
            br#""\4""#,
            br#""\01""#,
            br#""\019""#,
            br#""\u12""#,
            br#""\uD800""#,
            br#""\u0000""#,
            br#""\"#,
            b"\"a\nb\"",
            b"\"a\0\"",
            b"",
        ] {
            let result = unquote(bad);
            assert!(
                matches!(result, Err(CommandError::InvalidQuoting { .. })),
                "{:?} gave {result:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn error_messages_say_where() {
        let err = unquote(br#""$x""#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid quoted word at byte 1: tmux expands $ inside double quotes"
        );
        assert_eq!(
            CommandError::Nul.to_string(),
            "argument contains a NUL byte, which tmux cannot receive"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn quote_round_trips(arg in prop::collection::vec(1u8..=255, 0..64)) {
            let quoted = quote(&arg).unwrap();
            prop_assert_eq!(unquote(&quoted).unwrap(), arg);
        }

        #[test]
        fn quoted_words_hold_no_raw_control_bytes(arg in prop::collection::vec(1u8..=255, 0..64)) {
            let quoted = quote(&arg).unwrap();
            let inner = &quoted[1..quoted.len() - 1];
            prop_assert!(!inner.iter().any(|&b| b < 0x20 || b == 0x7f || b == 0xff));
            prop_assert_eq!(quoted.first(), Some(&b'"'));
        }
    }
}
