//! Guard lines that frame a command's reply: `%begin`, `%end` and `%error`, each
//! followed by `TIME NUMBER FLAGS` (tmux 3.3a `cmd-queue.c`, `cmdq_guard`).

use crate::output::parse_decimal;

/// Which guard a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GuardKind {
    /// `%begin`: a reply block opens.
    Begin,
    /// `%end`: the command succeeded.
    End,
    /// `%error`: the command failed.
    Error,
}

/// A parsed guard line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Guard {
    pub(crate) kind: GuardKind,
    pub(crate) time: u64,
    pub(crate) number: u64,
    pub(crate) flags: u32,
}

/// Parses a guard line, or `None` if the line is not exactly a guard keyword and
/// three decimal numbers separated by single spaces.
pub(crate) fn parse_guard(line: &[u8]) -> Option<Guard> {
    let (kind, fields) = if let Some(fields) = line.strip_prefix(b"%begin ") {
        (GuardKind::Begin, fields)
    } else if let Some(fields) = line.strip_prefix(b"%end ") {
        (GuardKind::End, fields)
    } else {
        (GuardKind::Error, line.strip_prefix(b"%error ")?)
    };
    let mut numbers = fields.split(|&byte| byte == b' ');
    let time = parse_decimal(numbers.next()?)?;
    let number = parse_decimal(numbers.next()?)?;
    let flags = u32::try_from(parse_decimal(numbers.next()?)?).ok()?;
    if numbers.next().is_some() {
        return None;
    }
    Some(Guard {
        kind,
        time,
        number,
        flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_parse() {
        assert_eq!(
            parse_guard(b"%begin 1700000000 12 1"),
            Some(Guard {
                kind: GuardKind::Begin,
                time: 1_700_000_000,
                number: 12,
                flags: 1
            })
        );
        assert_eq!(
            parse_guard(b"%end 1 2 0").map(|g| g.kind),
            Some(GuardKind::End)
        );
        assert_eq!(
            parse_guard(b"%error 1 2 1").map(|g| g.kind),
            Some(GuardKind::Error)
        );
    }

    #[test]
    fn malformed_guards_do_not_parse() {
        for line in [
            &b"%begin"[..],
            b"%begin 1 2",
            b"%begin 1 2 3 4",
            b"%begin 1  2 3",
            b"%begin -1 2 3",
            b"%begin 1 2 x",
            b"%end 1 2 4294967296",
            b"%ending 1 2 3",
            b"%begin 1 2 3 ",
        ] {
            assert_eq!(
                parse_guard(line),
                None,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
