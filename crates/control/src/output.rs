//! Pane output and flow-control lines: `%output`, `%extended-output`, `%pause`,
//! `%continue`, and the octal escaping of output data.
//!
//! tmux 3.3a (`control.c`, `control_append_data`) writes every output byte below
//! 0x20 and every `\` as `\ooo` (three octal digits) and all other bytes as they are,
//! so an output line never contains a raw line end.

use memchr::memchr;

use crate::event::Event;
use crate::ids::PaneId;

/// Parses a pane-event line, or returns `None` if the line is not one that parses
/// fully (unknown keyword, missing or malformed pane id or age).
pub(crate) fn parse_pane_event(line: &[u8]) -> Option<Event> {
    if let Some(rest) = line.strip_prefix(b"%output ") {
        let (pane, data) = split_pane(rest)?;
        return Some(Event::Output {
            pane,
            data: decode_output(data),
        });
    }
    if let Some(rest) = line.strip_prefix(b"%extended-output ") {
        return parse_extended_output(rest);
    }
    if let Some(rest) = line.strip_prefix(b"%pause ") {
        return PaneId::parse_bytes(rest).map(|pane| Event::Pause { pane });
    }
    if let Some(rest) = line.strip_prefix(b"%continue ") {
        return PaneId::parse_bytes(rest).map(|pane| Event::Continue { pane });
    }
    None
}

/// Splits `%N DATA` (or a bare `%N`, for empty data) into the pane and the raw data.
fn split_pane(rest: &[u8]) -> Option<(PaneId, &[u8])> {
    match memchr(b' ', rest) {
        Some(space) => Some((PaneId::parse_bytes(&rest[..space])?, &rest[space + 1..])),
        None => Some((PaneId::parse_bytes(rest)?, &[])),
    }
}

/// Parses `%N AGE [MORE FIELDS ...] : DATA`. tmux 3.3a writes no fields after AGE,
/// but the data always starts after the first ` : `, so later fields are skipped.
fn parse_extended_output(rest: &[u8]) -> Option<Event> {
    let (pane, after_pane) = split_pane(rest)?;
    let age_end = memchr(b' ', after_pane)?;
    let age_ms = parse_decimal(&after_pane[..age_end])?;
    let fields = &after_pane[age_end..];
    let data_start = memchr::memmem::find(fields, b" : ")? + 3;
    Some(Event::ExtendedOutput {
        pane,
        age_ms,
        data: decode_output(&fields[data_start..]),
    })
}

/// Parses a non-empty run of ASCII digits; signs and spaces are rejected.
pub(crate) fn parse_decimal(text: &[u8]) -> Option<u64> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// Decodes tmux's `\ooo` escapes into raw bytes.
///
/// A `\` not followed by three octal digits whose value fits in a byte is kept
/// literally: tmux never writes one, and losing bytes would be worse than keeping them.
pub fn decode_output(data: &[u8]) -> Vec<u8> {
    let mut decoded = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Some(backslash) = memchr(b'\\', rest) {
        decoded.extend_from_slice(&rest[..backslash]);
        match octal_byte(&rest[backslash + 1..]) {
            Some(byte) => {
                decoded.push(byte);
                rest = &rest[backslash + 4..];
            }
            None => {
                decoded.push(b'\\');
                rest = &rest[backslash + 1..];
            }
        }
    }
    decoded.extend_from_slice(rest);
    decoded
}

/// The byte named by the first three bytes of `digits` if they are octal digits
/// with a value of at most 0o377.
fn octal_byte(digits: &[u8]) -> Option<u8> {
    let [a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7', ..] = *digits else {
        return None;
    };
    Some((a - b'0') * 64 + (b - b'0') * 8 + (c - b'0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_escapes_decode_to_raw_bytes() {
        assert_eq!(decode_output(br"a\015\012b"), b"a\r\nb");
        assert_eq!(decode_output(br"\134"), b"\\");
        assert_eq!(decode_output(br"\000\033[0m"), b"\x00\x1b[0m");
        assert_eq!(decode_output(br"\377"), [0xff]);
    }

    #[test]
    fn malformed_escapes_are_kept_literally() {
        assert_eq!(decode_output(br"\"), br"\");
        assert_eq!(decode_output(br"x\01"), br"x\01");
        assert_eq!(decode_output(br"\400"), br"\400");
        assert_eq!(decode_output(br"\08x"), br"\08x");
        assert_eq!(decode_output(br"\\012"), b"\\\n");
    }

    #[test]
    fn high_bytes_pass_through() {
        assert_eq!(decode_output("é😀".as_bytes()), "é😀".as_bytes());
        assert_eq!(decode_output(&[0x80, 0xff]), [0x80, 0xff]);
    }

    #[test]
    fn output_line_parses() {
        assert_eq!(
            parse_pane_event(br"%output %3 hi\015\012"),
            Some(Event::Output {
                pane: PaneId(3),
                data: b"hi\r\n".to_vec()
            })
        );
        assert_eq!(
            parse_pane_event(b"%output %3 "),
            Some(Event::Output {
                pane: PaneId(3),
                data: Vec::new()
            })
        );
        assert_eq!(
            parse_pane_event(b"%output %3"),
            Some(Event::Output {
                pane: PaneId(3),
                data: Vec::new()
            })
        );
        assert_eq!(
            parse_pane_event(b"%output %3  two spaces"),
            Some(Event::Output {
                pane: PaneId(3),
                data: b" two spaces".to_vec()
            })
        );
    }

    #[test]
    fn extended_output_line_parses() {
        assert_eq!(
            parse_pane_event(br"%extended-output %7 120 : a\012"),
            Some(Event::ExtendedOutput {
                pane: PaneId(7),
                age_ms: 120,
                data: b"a\n".to_vec()
            })
        );
        assert_eq!(
            parse_pane_event(b"%extended-output %7 0 future fields : x : y"),
            Some(Event::ExtendedOutput {
                pane: PaneId(7),
                age_ms: 0,
                data: b"x : y".to_vec()
            })
        );
        assert_eq!(
            parse_pane_event(b"%extended-output %7 5 : "),
            Some(Event::ExtendedOutput {
                pane: PaneId(7),
                age_ms: 5,
                data: Vec::new()
            })
        );
    }

    #[test]
    fn flow_control_lines_parse() {
        assert_eq!(
            parse_pane_event(b"%pause %1"),
            Some(Event::Pause { pane: PaneId(1) })
        );
        assert_eq!(
            parse_pane_event(b"%continue %2"),
            Some(Event::Continue { pane: PaneId(2) })
        );
    }

    #[test]
    fn incomplete_pane_lines_do_not_parse() {
        for line in [
            &b"%output"[..],
            b"%output x data",
            b"%output @1 data",
            b"%extended-output %1 : data",
            b"%extended-output %1 12",
            b"%extended-output %1 x : data",
            b"%pause %1 extra",
            b"%pause",
            b"%continue @1",
            b"%outputs %1 x",
        ] {
            assert_eq!(
                parse_pane_event(line),
                None,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
