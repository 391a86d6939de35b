//! Telling a full-screen program's drawing apart from a command's output.
//!
//! A pager or an editor draws on the alternate screen, or on the normal one
//! with cursor addressing; read as a stream of lines its drawing is a
//! jumble (rows joined, redraws repeated). What a person sees after it
//! exits is what it left on the normal screen: [`split_screens`] keeps the
//! bytes drawn on the normal screen and drops the alternate screen's, and
//! [`addresses_cursor`] tells whether bytes draw a screen rather than
//! print lines.

/// Raw output with the alternate screen's drawing taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screens {
    /// The bytes drawn on the normal screen, in order.
    pub normal: Vec<u8>,
    /// Some bytes went to the alternate screen (a full-screen program ran).
    pub full_screen: bool,
    /// The bytes end on the alternate screen (the program still runs).
    pub ends_full_screen: bool,
}

/// Splits `bytes` at each switch to or from the alternate screen (private
/// modes 47, 1047 and 1049), keeping what is drawn on the normal screen,
/// with `note` on a line of its own where each stretch on the alternate
/// screen was. `on_alternate` says which screen the bytes start on.
pub fn split_screens(bytes: &[u8], on_alternate: bool, note: &[u8]) -> Screens {
    let mut normal = Vec::with_capacity(bytes.len());
    let mut alternate = on_alternate;
    let mut full_screen = on_alternate;
    let mut from = 0;
    let noted = |normal: &mut Vec<u8>| {
        if note.is_empty() {
            return;
        }
        if normal.last().is_some_and(|&b| b != b'\n') {
            normal.extend_from_slice(b"\r\n");
        }
        normal.extend_from_slice(note);
        normal.extend_from_slice(b"\r\n");
    };
    if on_alternate {
        noted(&mut normal);
    }
    for (at, len, to_alternate) in switches(bytes) {
        if !alternate {
            normal.extend_from_slice(&bytes[from..at]);
            if to_alternate {
                noted(&mut normal);
            }
        }
        alternate = to_alternate;
        full_screen |= to_alternate;
        from = at + len;
    }
    if !alternate {
        normal.extend_from_slice(&bytes[from..]);
    }
    Screens {
        normal,
        full_screen,
        ends_full_screen: alternate,
    }
}

/// The screen switches in `bytes`: where each sequence starts, its length,
/// and whether it goes to the alternate screen.
fn switches(bytes: &[u8]) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
    memchr::memmem::find_iter(bytes, b"\x1b[?").filter_map(|at| {
        let rest = &bytes[at + 3..];
        let len = rest
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))?;
        let to_alternate = match rest[len] {
            b'h' => true,
            b'l' => false,
            _ => return None,
        };
        let screen = |mode: &[u8]| matches!(mode, b"47" | b"1047" | b"1049");
        rest[..len]
            .split(|&b| b == b';')
            .any(screen)
            .then_some((at, len + 4, to_alternate))
    })
}

/// Whether `bytes` draw a screen: see [`drawn_span`].
pub fn addresses_cursor(bytes: &[u8]) -> bool {
    drawn_span(bytes).is_some()
}

/// Where `bytes` draw a screen: from the first sequence that moves the
/// cursor to an absolute position (`CSI row;col H`, `CSI row d`), clears
/// the screen (`CSI 2J`), sets a scroll region or scrolls back (`ESC M`) to
/// the end of the last one, when there are at least three (`clear` alone
/// makes two). A command that prints lines, colours them or rewrites its
/// own line (progress bars, a prompt's `CSI K`) makes none.
pub fn drawn_span(bytes: &[u8]) -> Option<std::ops::Range<usize>> {
    let mut seen = 0;
    let mut span: Option<std::ops::Range<usize>> = None;
    for at in memchr::memchr_iter(0x1b, bytes) {
        let rest = &bytes[at + 1..];
        let len = match rest.first() {
            Some(b'M') => Some(2),
            Some(b'[') => csi_draws(&rest[1..]).map(|len| len + 3),
            _ => None,
        };
        if let Some(len) = len {
            seen += 1;
            let start = span.as_ref().map_or(at, |span| span.start);
            span = Some(start..at + len);
        }
    }
    span.filter(|_| seen >= 3)
}

/// The length of the parameters of the CSI sequence they start, when it
/// addresses the cursor or the screen.
fn csi_draws(rest: &[u8]) -> Option<usize> {
    let len = rest
        .iter()
        .take(16)
        .position(|b| !(b.is_ascii_digit() || *b == b';'))?;
    match rest[len] {
        b'H' | b'f' | b'd' | b'r' => Some(len),
        b'J' if rest[..len] == *b"2" => Some(len),
        _ => None,
    }
}

/// A screen's rows: trailing spaces and blank rows at the bottom removed.
pub fn screen_rows(lines: &[String]) -> Vec<String> {
    let mut rows: Vec<String> = lines
        .iter()
        .map(|line| line.trim_end().to_owned())
        .collect();
    let shown = rows
        .iter()
        .rposition(|row| !row.is_empty())
        .map_or(0, |last| last + 1);
    rows.truncate(shown);
    rows
}

/// A screen shown again, as the rows that changed since `before`: a run
/// of two or more unchanged rows is one line saying which rows it spans
/// (counted from 1), and a screen with no change says so.
pub fn changed_rows(before: &[String], now: &[String]) -> String {
    let rows = before.len().max(now.len());
    fn row(lines: &[String], at: usize) -> &str {
        lines.get(at).map_or("", String::as_str)
    }
    if (0..rows).all(|at| row(before, at) == row(now, at)) {
        return "[screen unchanged]".to_owned();
    }
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    while at < now.len() {
        let same = (at..now.len())
            .take_while(|&i| row(before, i) == row(now, i))
            .count();
        if same >= 2 {
            out.push(format!("[rows {}-{} unchanged]", at + 1, at + same));
            at += same;
        } else {
            out.push(now[at].clone());
            at += 1;
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screen_s_rows_end_at_its_last_text() {
        let lines = ["$ ls  ", "a  b", "", "   ", ""].map(str::to_owned);
        assert_eq!(screen_rows(&lines), ["$ ls", "a  b"]);
        assert!(screen_rows(&[String::new(), " ".to_owned()]).is_empty());
    }

    #[test]
    fn a_screen_shown_again_shows_its_changes() {
        let rows = |text: &str| text.split(',').map(str::to_owned).collect::<Vec<_>>();
        let before = rows("alpha cobalt,1,2,3,4,~,:");
        let now = rows("alpha harbor,1,2,3,4,~,:1s/cobalt/harbor/");
        assert_eq!(
            changed_rows(&before, &now),
            "alpha harbor\n[rows 2-6 unchanged]\n:1s/cobalt/harbor/"
        );
        assert_eq!(changed_rows(&now, &now), "[screen unchanged]");
        // One unchanged row between changes is shown as it is.
        assert_eq!(changed_rows(&rows("a,b,c"), &rows("x,b,y")), "x\nb\ny");
    }

    #[test]
    fn the_alternate_screen_s_drawing_is_left_out() {
        let bytes = b"before\r\n\x1b[?1049h\x1b[1;1Hdrawn\x1b[2;1Hrows\x1b[?1049lafter\r\n";
        let screens = split_screens(bytes, false, b"");
        assert_eq!(screens.normal, b"before\r\nafter\r\n");
        let noted = split_screens(bytes, false, b"[vim]");
        assert_eq!(noted.normal, b"before\r\n[vim]\r\nafter\r\n");
        assert!(screens.full_screen && !screens.ends_full_screen);
        let running = split_screens(b"x\x1b[?25;1049hdrawn", false, b"");
        assert_eq!(running.normal, b"x");
        assert!(running.ends_full_screen);
        let plain = split_screens(b"a\x1b[?25la\x1b[?2004h", false, b"");
        assert_eq!(plain.normal, b"a\x1b[?25la\x1b[?2004h");
        assert!(!plain.full_screen);
        // Output that starts on the alternate screen keeps only what follows it.
        let left = split_screens(b"drawn\x1b[?47lnormal", true, b"");
        assert_eq!((&left.normal[..], left.full_screen), (&b"normal"[..], true));
    }

    #[test]
    fn cursor_addressing_draws_a_screen() {
        let bytes = b"before\x1b[H\x1b[2Jtop\x1b[24;1H:after";
        assert_eq!(drawn_span(bytes), Some(6..23));
        assert!(addresses_cursor(b"\x1bM\x1bM\x1bMline"));
        assert!(addresses_cursor(b"\x1b[1;24r\x1b[5d\x1b[H"));
    }

    #[test]
    fn printing_lines_draws_no_screen() {
        assert!(!addresses_cursor(
            b"\x1b[1;31merror\x1b[0m\r\n 10%\r\x1b[K 60%\r\n"
        ));
        assert!(!addresses_cursor(b"\x1b[?2004h$ \x1b[?2004l\r\r\n"));
        assert!(!addresses_cursor(b"one \x1b[H only"));
        // `clear` before a command's output.
        assert!(!addresses_cursor(b"\x1b[H\x1b[2J\x1b[3Jmake: ok"));
    }
}
