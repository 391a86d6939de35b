//! The checks of the screen pictures (`termpilot-screen`): a pane's capture
//! laid out into cells and drawn.

use std::borrow::Cow;

use termpilot_screen::{CELL_HEIGHT, CELL_WIDTH, Cursor, MAX_COLS, MAX_ROWS, Screen};

/// Largest size drawn, so that one run stays fast.
const DRAWN_COLS: u16 = 24;
const DRAWN_ROWS: u16 = 8;

/// Lays out `data` as what `capture-pane -p -e -J` printed, its first bytes
/// giving the size, the cursor and a rewrite (none, dropping lines, or
/// cutting a piece out of lines): never a panic; an empty size refused; the
/// screen within [`MAX_COLS`] × [`MAX_ROWS`] with every row full and the
/// cursor on it; no more lines than the capture has; and, for a small
/// screen, the picture and the SVG drawn at the screen's size.
pub fn check_screen_capture(data: &[u8]) {
    let byte = |n: usize| data.get(n).copied().unwrap_or(0);
    let capture = data.get(6..).unwrap_or_default();
    let cursor = Cursor {
        row: u16::from(byte(2)),
        col: u16::from(byte(3)),
        visible: byte(4) & 1 == 0,
    };
    let rewrite = rewrite(byte(5));
    let small = (
        u16::from(byte(0)) % (DRAWN_COLS + 1),
        u16::from(byte(1)) % (DRAWN_ROWS + 1),
    );
    // Past the bounds: sizes up to twice the largest kept.
    let large = (
        u16::from_le_bytes([byte(0), byte(1)]) % (2 * MAX_COLS),
        u16::from_le_bytes([byte(1), byte(0)]) % (2 * MAX_ROWS),
    );
    for (cols, rows) in [small, large] {
        let result = Screen::from_capture(capture, cols, rows, cursor, &rewrite);
        let Ok(screen) = result else {
            assert!(cols == 0 || rows == 0, "{cols}x{rows} refused: {result:?}");
            continue;
        };
        check_bounds(&screen, cols, rows, capture);
        if (cols, rows) == small {
            check_drawing(&screen);
        }
    }
}

fn check_bounds(screen: &Screen, cols: u16, rows: u16, capture: &[u8]) {
    assert_eq!(
        (screen.cols(), screen.rows()),
        (cols.min(MAX_COLS), rows.min(MAX_ROWS))
    );
    for row in 0..screen.rows() {
        assert!(
            screen.cell(row, screen.cols() - 1).is_some(),
            "row {row} short"
        );
        assert!(screen.cell(row, screen.cols()).is_none(), "row {row} long");
    }
    assert!(screen.cell(screen.rows(), 0).is_none());
    let cursor = screen.cursor();
    assert!(
        cursor.row < screen.rows() && cursor.col < screen.cols(),
        "{cursor:?}"
    );
    let lines = capture.strip_suffix(b"\n").unwrap_or(capture);
    let count = lines.iter().filter(|&&b| b == b'\n').count() + 1;
    assert!(
        screen.lines().len() <= count,
        "{} lines from {count}",
        screen.lines().len()
    );
}

fn check_drawing(screen: &Screen) {
    let image = screen.image();
    assert_eq!(
        (image.width(), image.height()),
        (
            usize::from(screen.cols()) * CELL_WIDTH,
            usize::from(screen.rows()) * CELL_HEIGHT
        )
    );
    let png = image.png().expect("an image encodes");
    assert!(png.starts_with(b"\x89PNG"));
    let svg = screen.svg();
    assert!(
        svg.starts_with("<svg ") && svg.ends_with("</svg>\n"),
        "{svg}"
    );
}

/// A rewrite as termpilot's are: line by line, never adding a line. `pick`
/// chooses: none, dropping lines holding `#`, or cutting `ab` out of them.
fn rewrite(pick: u8) -> impl Fn(&str) -> Cow<'_, str> {
    move |text: &str| match pick % 3 {
        1 if text.contains('#') => Cow::Owned(
            text.lines()
                .filter(|line| !line.contains('#'))
                .map(|line| format!("{line}\n"))
                .collect(),
        ),
        2 if text.contains("ab") => Cow::Owned(text.replace("ab", "")),
        _ => Cow::Borrowed(text),
    }
}
