//! Spotting a switch to or from the alternate screen in raw pane output, so
//! a wait can tell whether the screen facts it read at its start still hold.

/// How far before a point a screen switch that takes effect after it may
/// begin: longer than any such sequence in practice.
pub(super) const SWITCH_MAX: usize = 32;

/// Whether `bytes` may switch the terminal to or from the alternate screen:
/// a private mode 47, 1047 or 1049 set or reset (`ESC [ ? 1049 h`, also
/// among other modes), a full reset (`ESC c`), or the start of a private
/// mode sequence cut off at the end. Errs towards yes.
pub(super) fn switches_screen(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"\x1bc").is_some()
        || memchr::memmem::find_iter(bytes, b"\x1b[?")
            .any(|at| private_mode_switches(&bytes[at + 3..]))
}

/// Whether the private mode sequence whose parameters start `rest` sets or
/// resets a screen mode; true for one cut off before its final byte.
fn private_mode_switches(rest: &[u8]) -> bool {
    let params = rest
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b';'));
    let Some(len) = params.filter(|&len| len <= SWITCH_MAX) else {
        return params.is_none();
    };
    let mut modes = rest[..len].split(|&b| b == b';');
    let screen = |mode: &[u8]| matches!(mode, b"47" | b"1047" | b"1049");
    matches!(rest[len], b'h' | b'l') && modes.any(screen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_switches_are_seen() {
        for bytes in [
            &b"\x1b[?1049h"[..],
            b"text\x1b[?1049lmore",
            b"\x1b[?47h",
            b"\x1b[?1047l",
            b"\x1b[?25;1049h",
            b"\x1bc",
            // Cut off before its final byte: it may be one.
            b"\x1b[?10",
        ] {
            assert!(switches_screen(bytes), "{bytes:?}");
        }
    }

    #[test]
    fn other_sequences_are_not_switches() {
        for bytes in [
            &b"plain text 1049h"[..],
            b"\x1b[?25l\x1b[?2004h",
            b"\x1b[1049h",
            b"\x1b[?10490h",
        ] {
            assert!(!switches_screen(bytes), "{bytes:?}");
        }
    }
}
