//! Reading the command lines a control client writes, as tmux would: words
//! (bare or double-quoted), commands separated by a bare `;`, flags per
//! command, and `#{...}` formats.

/// One parsed tmux command.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cmd {
    /// The command name (`send-keys`).
    pub(crate) name: String,
    /// Flags without a value, in order (`"dP"` for `-d -P`).
    pub(crate) flags: String,
    /// Flags with their values (`('t', "%1")`).
    pub(crate) opts: Vec<(char, String)>,
    /// The words after the flags.
    pub(crate) args: Vec<String>,
}

impl Cmd {
    /// Whether the flag `-c` was given.
    pub(crate) fn has(&self, flag: char) -> bool {
        self.flags.contains(flag)
    }

    /// The value of the last `-c VALUE`.
    pub(crate) fn opt(&self, flag: char) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    }

    /// The target (`-t`), or "" when none was given.
    pub(crate) fn target(&self) -> &str {
        self.opt('t').unwrap_or_default()
    }
}

/// The flags of each command that take a value (tmux 3.3a's tables, for
/// the commands the fake knows).
fn value_flags(name: &str) -> &'static str {
    match name {
        "new-session" => "cefFnstxy",
        "attach-session" => "cft",
        "display-message" => "cdFt",
        "list-sessions" | "list-windows" => "Ftf",
        "list-clients" => "Ft",
        "list-panes" => "Ftf",
        "capture-pane" => "bEStN",
        "send-keys" => "Nt",
        "set-buffer" => "bnt",
        "paste-buffer" => "bst",
        "set-option" => "t",
        "kill-session" | "kill-window" | "kill-pane" => "t",
        "new-window" => "cenFt",
        "split-window" => "cefFlpt",
        "refresh-client" => "ABCfFlt",
        "wait-for" => "",
        "if-shell" => "t",
        _ => "",
    }
}

/// Splits a command line (without its newline) into commands, each a list
/// of words. `None` when the quoting is broken.
pub(crate) fn split_line(line: &[u8]) -> Option<Vec<Vec<String>>> {
    let mut commands = vec![Vec::new()];
    let mut at = 0;
    while at < line.len() {
        match line[at] {
            b' ' | b'\t' => at += 1,
            b'"' => {
                let end = quoted_end(line, at)?;
                let word = termpilot_control::unquote(&line[at..end]).ok()?;
                commands.last_mut()?.push(lossy(&word));
                at = end;
            }
            _ => {
                let end = line[at..]
                    .iter()
                    .position(|&b| b == b' ')
                    .map_or(line.len(), |n| at + n);
                let word = lossy(&line[at..end]);
                if word == ";" {
                    commands.push(Vec::new());
                } else {
                    commands.last_mut()?.push(word);
                }
                at = end;
            }
        }
    }
    commands.retain(|words| !words.is_empty());
    Some(commands)
}

/// Where the double-quoted word starting at `start` ends (after its
/// closing quote).
fn quoted_end(line: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    while at < line.len() {
        match line[at] {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
    None
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Reads a command's words: its name, then flags as getopt does (a
/// value-taking flag takes the rest of its word or the next word), until
/// `--` or the first word that is not a flag.
pub(crate) fn parse_cmd(words: &[String]) -> Cmd {
    let mut cmd = Cmd {
        name: words.first().cloned().unwrap_or_default(),
        ..Cmd::default()
    };
    let valued = value_flags(&cmd.name);
    let mut rest = words.iter().skip(1).peekable();
    while let Some(word) = rest.peek() {
        if *word == "--" {
            rest.next();
            break;
        }
        if !word.starts_with('-') || word.len() < 2 {
            break;
        }
        let word = rest.next().expect("peeked");
        let letters: Vec<char> = word[1..].chars().collect();
        for (i, &letter) in letters.iter().enumerate() {
            if valued.contains(letter) {
                let tail: String = letters[i + 1..].iter().collect();
                let value = if tail.is_empty() {
                    rest.next().cloned().unwrap_or_default()
                } else {
                    tail
                };
                cmd.opts.push((letter, value));
                break;
            }
            cmd.flags.push(letter);
        }
    }
    cmd.args = rest.cloned().collect();
    cmd
}

/// Expands `#{name}` with `field(name)` and `##` to `#`, as tmux expands a
/// format; anything else is kept.
pub(crate) fn expand(format: &str, field: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = format;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('#') {
            out.push('#');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('{')
            && let Some(close) = inner.find('}')
        {
            out.push_str(&field(&inner[..close]));
            rest = &inner[close + 1..];
        } else {
            out.push('#');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Escapes pane output as tmux does in `%output`: bytes below a space and
/// the backslash as three octal digits.
pub(crate) fn escape_output(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for &byte in data {
        if byte < b' ' || byte == b'\\' {
            out.extend_from_slice(format!("\\{byte:03o}").as_bytes());
        } else {
            out.push(byte);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use termpilot_control::Command;

    #[test]
    fn reads_what_the_command_builder_writes() {
        let line = Command::new("send-keys")
            .flag("-l")
            .opt("-t", "%3")
            .end_of_flags()
            .arg("-x; \"$HOME\"\n")
            .build()
            .unwrap();
        let commands = split_line(line.strip_suffix(b"\n").unwrap()).unwrap();
        let cmd = parse_cmd(&commands[0]);
        assert_eq!(cmd.name, "send-keys");
        assert!(cmd.has('l'));
        assert_eq!(cmd.target(), "%3");
        assert_eq!(cmd.args, ["-x; \"$HOME\"\n"]);
    }

    #[test]
    fn splits_commands_on_a_bare_semicolon() {
        let commands = split_line(b"display-message -p one ; kill-pane -t %99").unwrap();
        assert_eq!(commands.len(), 2);
        assert_eq!(parse_cmd(&commands[1]).target(), "%99");
        assert_eq!(
            expand("#{a}-##{b}-#x", &|name| name.to_uppercase()),
            "A-#{b}-#x"
        );
        assert_eq!(escape_output(b"a\\b\r\n"), b"a\\134b\\015\\012");
    }
}
