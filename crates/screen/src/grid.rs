//! The screen as cells: what each cell shows and how, and where the cursor is.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::sgr::parse_line;

/// The most columns a [`Screen`] keeps; wider input is cut on the right.
pub const MAX_COLS: u16 = 400;
/// The most rows a [`Screen`] keeps; taller input is cut at the bottom.
pub const MAX_ROWS: u16 = 200;

/// A cell's colour as the program asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Color {
    /// The terminal's default foreground or background.
    #[default]
    Default,
    /// One of the 256 indexed colours (0-15 are the 16 named ones).
    Indexed(u8),
    /// A truecolour value.
    Rgb(u8, u8, u8),
}

/// How a cell is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    /// Foreground (text) colour.
    pub fg: Color,
    /// Background colour.
    pub bg: Color,
    /// Bold text.
    pub bold: bool,
    /// Dim (faint) text.
    pub dim: bool,
    /// Italic text (drawn upright in PNG: the font has no italics).
    pub italic: bool,
    /// Underlined text.
    pub underline: bool,
    /// Foreground and background swapped.
    pub inverse: bool,
}

/// One cell of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The character shown (a space when empty; `'\0'` in the right half
    /// of a wide character).
    pub ch: char,
    /// How it is drawn.
    pub style: Style,
    /// The character takes this cell and the next.
    pub wide: bool,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            ch: ' ',
            style: Style::default(),
            wide: false,
        }
    }
}

/// Where the cursor is, counted from the top left cell (0, 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// Row.
    pub row: u16,
    /// Column.
    pub col: u16,
    /// Whether the program shows it.
    pub visible: bool,
}

impl Cursor {
    /// A visible cursor at `row`, `col`.
    pub fn at(row: u16, col: u16) -> Cursor {
        Cursor {
            row,
            col,
            visible: true,
        }
    }
}

/// A terminal screen: rows of cells and the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    cols: u16,
    rows: Vec<Vec<Cell>>,
    cursor: Cursor,
    /// The text of the lines shown, wrapped rows joined.
    lines: Vec<String>,
}

impl Screen {
    /// A blank screen of `cols` × `rows`, within [`MAX_COLS`] × [`MAX_ROWS`].
    pub fn blank(cols: u16, rows: u16) -> Result<Screen> {
        if cols == 0 || rows == 0 {
            return Err(Error::Empty { cols, rows });
        }
        let (cols, rows) = (cols.min(MAX_COLS), rows.min(MAX_ROWS));
        Ok(Screen {
            cols,
            rows: vec![vec![Cell::default(); usize::from(cols)]; usize::from(rows)],
            cursor: Cursor {
                row: 0,
                col: 0,
                visible: true,
            },
            lines: Vec::new(),
        })
    }

    /// The screen that tmux's `capture-pane -p -e -J` printed for a pane
    /// of `cols` × `rows` with its cursor at `cursor`: one line per line of
    /// text (wrapped rows joined), with the SGR sequences that set colours
    /// and attributes (which carry over from line to line).
    ///
    /// The text goes through `rewrite` first: a function that maps text
    /// (lines each ended by `\n`) to the text to show instead, line by
    /// line, without looking ahead; it may drop lines or change them but
    /// never add any ([`unchanged`] changes nothing). Lines it keeps keep
    /// their colours; changed lines become plain text; dropped lines close
    /// up, and the cursor moves with its line. termpilot hides
    /// `run_command`'s wrapper and redacts secrets this way, so that the
    /// picture shows what the text shows.
    pub fn from_capture(
        capture: &[u8],
        cols: u16,
        rows: u16,
        cursor: Cursor,
        rewrite: impl Fn(&str) -> Cow<'_, str>,
    ) -> Result<Screen> {
        let mut screen = Screen::blank(cols, rows)?;
        let mut style = Style::default();
        let body = capture.strip_suffix(b"\n").unwrap_or(capture);
        let lines: Vec<Vec<Cell>> = body
            .split(|&b| b == b'\n')
            .map(|line| parse_line(line, &mut style))
            .collect();
        let heights: Vec<usize> = lines.iter().map(|l| height(l.len(), cols)).collect();
        let (cursor_line, cursor_down) = locate(&heights, cursor.row.into());
        let shown = rewritten(lines, rewrite);
        let mut row = 0;
        let mut cursor_row = None;
        for (from, cells) in &shown {
            if *from == cursor_line && cursor_row.is_none() {
                cursor_row = Some(row + cursor_down);
            }
            for piece in pieces(cells, cols) {
                if let Some(target) = screen.rows.get_mut(row) {
                    let n = piece.len().min(target.len());
                    target[..n].copy_from_slice(&piece[..n]);
                }
                row += 1;
            }
        }
        screen.lines = shown.iter().map(|(_, cells)| text_of(cells)).collect();
        // Below every line, or on a line the rewrite dropped.
        let below = if cursor_line >= heights.len() {
            cursor_down
        } else {
            0
        };
        let cursor_row = cursor_row.unwrap_or(row + below).min(usize::from(u16::MAX)) as u16;
        screen.set_cursor(cursor_row, cursor.col, cursor.visible);
        Ok(screen)
    }

    /// The screen a terminal of `cols` × `rows` shows after a program
    /// printed `output` (raw bytes, control sequences and all), cursor
    /// included.
    pub fn from_output(output: &[u8], cols: u16, rows: u16) -> Result<Screen> {
        let mut screen = Screen::blank(cols, rows)?;
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("checked by blank");
        let mut parser = vt100::Parser::new(size(rows), size(cols), 0);
        parser.process(output);
        let terminal = parser.screen();
        for (r, row) in screen.rows.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                if let Some(seen) = terminal.cell(r as u16, c as u16) {
                    *cell = converted(seen);
                }
            }
        }
        let (row, col) = terminal.cursor_position();
        screen.set_cursor(row, col, !terminal.hide_cursor());
        screen.lines = screen.text();
        Ok(screen)
    }

    /// Columns.
    pub fn cols(&self) -> u16 {
        self.cols
    }

    /// Rows.
    pub fn rows(&self) -> u16 {
        self.rows.len() as u16
    }

    /// The cell at `row`, `col`, if the screen has it.
    pub fn cell(&self, row: u16, col: u16) -> Option<&Cell> {
        self.rows.get(usize::from(row))?.get(usize::from(col))
    }

    /// The cursor.
    pub fn cursor(&self) -> Cursor {
        self.cursor
    }

    /// Puts the cursor at `row`, `col` (kept within the screen).
    pub fn set_cursor(&mut self, row: u16, col: u16, visible: bool) {
        self.cursor = Cursor {
            row: row.min(self.rows() - 1),
            col: col.min(self.cols - 1),
            visible,
        };
    }

    /// The text of `row`, without trailing spaces.
    pub fn row_text(&self, row: u16) -> String {
        self.rows
            .get(usize::from(row))
            .map(|cells| text_of(cells))
            .unwrap_or_default()
    }

    /// The text of every row, without trailing spaces.
    pub fn text(&self) -> Vec<String> {
        (0..self.rows()).map(|r| self.row_text(r)).collect()
    }

    /// The text of the lines on the screen, wrapped rows joined, without
    /// trailing spaces (what a text capture shows).
    pub fn lines(&self) -> &[String] {
        &self.lines
    }
}

/// A rewrite that changes nothing, for [`Screen::from_capture`].
pub fn unchanged(text: &str) -> Cow<'_, str> {
    Cow::Borrowed(text)
}

/// The text of `cells`, without trailing spaces.
fn text_of(cells: &[Cell]) -> String {
    let text: String = cells.iter().map(|c| c.ch).filter(|&c| c != '\0').collect();
    text.trim_end().to_owned()
}

/// Rows a line of `len` cells takes on a screen `cols` wide.
fn height(len: usize, cols: u16) -> usize {
    len.div_ceil(usize::from(cols)).max(1)
}

/// `cells` cut into rows `cols` wide (one empty row for an empty line).
fn pieces(cells: &[Cell], cols: u16) -> Vec<&[Cell]> {
    match cells.is_empty() {
        true => vec![cells],
        false => cells.chunks(usize::from(cols)).collect(),
    }
}

/// The line that screen row `row` belongs to, and how far down that line
/// the row is (for a row below them all: one past the last line, and how
/// far below).
fn locate(heights: &[usize], row: usize) -> (usize, usize) {
    let mut top = 0;
    for (line, &height) in heights.iter().enumerate() {
        if row < top + height {
            return (line, row - top);
        }
        top += height;
    }
    (heights.len(), row - top)
}

/// The lines `rewrite` shows, each with the index of the line it came
/// from: kept lines as they were, changed lines as plain text.
fn rewritten(
    lines: Vec<Vec<Cell>>,
    rewrite: impl Fn(&str) -> Cow<'_, str>,
) -> Vec<(usize, Vec<Cell>)> {
    let texts: Vec<String> = lines.iter().map(|cells| text_of(cells)).collect();
    let whole: String = texts.iter().map(|t| format!("{t}\n")).collect();
    if rewrite(&whole) == whole.as_str() {
        return lines.into_iter().enumerate().collect();
    }
    let mut shown = Vec::with_capacity(lines.len());
    let mut prefix = String::with_capacity(whole.len());
    let mut shown_before = 0;
    for (index, (cells, text)) in lines.into_iter().zip(&texts).enumerate() {
        prefix.push_str(text);
        prefix.push('\n');
        let now = rewrite(&prefix);
        let added = now.get(shown_before..).unwrap_or_default().to_owned();
        shown_before = now.len();
        let mut cells = Some(cells);
        for line in added.lines() {
            let kept = cells.take_if(|_| line == text);
            let cut = || {
                cells
                    .as_deref()
                    .and_then(|cells| with_a_piece_cut(cells, line))
            };
            match kept {
                Some(cells) => shown.push((index, cells)),
                None => shown.push((index, cut().unwrap_or_else(|| plain_line(line)))),
            }
        }
    }
    shown
}

/// The cells of `cells` that show `text` when `text` is their text with
/// one piece cut out (a head, a tail or a middle, as hiding a wrapper's
/// markers does), so that they keep their colours.
fn with_a_piece_cut(cells: &[Cell], text: &str) -> Option<Vec<Cell>> {
    // Each character with the cells it takes (two for a wide one).
    let mut units: Vec<&[Cell]> = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        match cell.ch {
            '\0' => {}
            _ if cell.wide => units.push(&cells[i..(i + 2).min(cells.len())]),
            _ => units.push(&cells[i..=i]),
        }
    }
    while units.last().is_some_and(|unit| unit[0].ch == ' ') {
        units.pop();
    }
    let wanted: Vec<char> = text.chars().collect();
    if wanted.len() > units.len() {
        return None;
    }
    let head = units
        .iter()
        .zip(&wanted)
        .take_while(|(unit, ch)| unit[0].ch == **ch)
        .count();
    let tail = wanted.len() - head;
    let ends_alike = units[units.len() - tail..]
        .iter()
        .zip(&wanted[head..])
        .all(|(unit, ch)| unit[0].ch == *ch);
    ends_alike.then(|| {
        let kept = units[..head].iter().chain(&units[units.len() - tail..]);
        kept.flat_map(|unit| unit.iter().copied()).collect()
    })
}

/// `text` as cells in default colours.
fn plain_line(text: &str) -> Vec<Cell> {
    parse_line(text.as_bytes(), &mut Style::default())
}

/// Our cell for a vt100 cell.
fn converted(cell: &vt100::Cell) -> Cell {
    let ch = if cell.is_wide_continuation() {
        '\0'
    } else {
        cell.contents().chars().next().unwrap_or(' ')
    };
    Cell {
        ch,
        wide: cell.is_wide(),
        style: Style {
            fg: color(cell.fgcolor()),
            bg: color(cell.bgcolor()),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        },
    }
}

fn color(color: vt100::Color) -> Color {
    match color {
        vt100::Color::Default => Color::Default,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(capture: &str, cols: u16, rows: u16) -> Screen {
        Screen::from_capture(capture.as_bytes(), cols, rows, Cursor::at(0, 0), unchanged).unwrap()
    }

    #[test]
    fn capture_lines_keep_their_colours_across_lines() {
        // tmux does not reset attributes at a line's end: red runs on.
        let screen = captured("\x1b[31mred\nstill\x1b[0m plain\n", 20, 3);
        assert_eq!(screen.cell(0, 0).unwrap().style.fg, Color::Indexed(1));
        assert_eq!(screen.cell(1, 0).unwrap().style.fg, Color::Indexed(1));
        assert_eq!(screen.cell(1, 6).unwrap().style.fg, Color::Default);
        assert_eq!(screen.text(), ["red", "still plain", ""]);
    }

    #[test]
    fn joined_lines_wrap_at_the_width() {
        let screen = captured("abcdefgh\nij", 4, 4);
        assert_eq!(screen.text(), ["abcd", "efgh", "ij", ""]);
        assert_eq!(screen.lines(), ["abcdefgh", "ij"]);
    }

    #[test]
    fn output_stream_sets_the_cursor_and_truecolour() {
        let screen =
            Screen::from_output(b"\x1b[48;2;1;2;3mX\x1b[0m\r\nab\x1b[?25l", 10, 4).unwrap();
        assert_eq!(screen.cell(0, 0).unwrap().style.bg, Color::Rgb(1, 2, 3));
        let cursor = screen.cursor();
        assert_eq!((cursor.row, cursor.col, cursor.visible), (1, 2, false));
    }

    #[test]
    fn sizes_are_bounded() {
        assert!(Screen::blank(0, 5).is_err());
        let screen = Screen::blank(1000, 1000).unwrap();
        assert_eq!((screen.cols(), screen.rows()), (MAX_COLS, MAX_ROWS));
    }

    #[test]
    fn rewriting_drops_and_changes_lines_and_moves_the_cursor() {
        // The second line wraps over two rows, and goes: the cursor, on the
        // last line (row 5), moves up two rows.
        let capture = "\x1b[32m$ SECRET go\x1b[0m\nwrapper tail tail\nout\n$ ";
        let cursor = Cursor::at(5, 2);
        let screen = Screen::from_capture(capture.as_bytes(), 10, 6, cursor, |text| {
            if !text.contains("SECRET") && !text.contains("tail") {
                return Cow::Borrowed(text);
            }
            let shown: String = text
                .split_inclusive('\n')
                .filter(|line| !line.contains("tail"))
                .collect();
            Cow::Owned(shown.replace("SECRET", "[secret]"))
        })
        .unwrap();
        assert_eq!(screen.text(), ["$ [secret]", " go", "out", "$", "", ""]);
        assert_eq!(screen.lines(), ["$ [secret] go", "out", "$"]);
        assert_eq!(screen.cell(0, 0).unwrap().style.fg, Color::Default);
        assert_eq!(screen.cell(2, 0).unwrap().style.fg, Color::Default);
        assert_eq!((screen.cursor().row, screen.cursor().col), (3, 2));
    }

    #[test]
    fn a_line_with_a_piece_cut_out_keeps_its_colours() {
        let capture = "\x1b[32m$\x1b[0m { MARK; ls\n\x1b[31mout\x1b[0m";
        let screen = Screen::from_capture(capture.as_bytes(), 20, 2, Cursor::at(0, 0), |text| {
            Cow::Owned(text.replace("{ MARK; ", "").replace("out", "o"))
        })
        .unwrap();
        assert_eq!(screen.lines(), ["$ ls", "o"]);
        assert_eq!(screen.cell(0, 0).unwrap().style.fg, Color::Indexed(2));
        assert_eq!(screen.cell(0, 2).unwrap().ch, 'l');
        // "o" is "out" with its tail cut: still red.
        assert_eq!(screen.cell(1, 0).unwrap().style.fg, Color::Indexed(1));
    }

    #[test]
    fn rewriting_that_changes_nothing_keeps_colours() {
        let capture = b"\x1b[32mgreen";
        let screen = Screen::from_capture(capture, 10, 2, Cursor::at(0, 0), |text| {
            Cow::Owned(text.to_owned())
        })
        .unwrap();
        assert_eq!(screen.cell(0, 0).unwrap().style.fg, Color::Indexed(2));
    }
}
