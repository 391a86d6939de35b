//! The screen as cells: what each cell shows and how, and where the cursor is.

use std::borrow::Cow;

use crate::error::{Error, Result};

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

/// A terminal screen: rows of cells and the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    cols: u16,
    rows: Vec<Vec<Cell>>,
    cursor: Cursor,
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
        })
    }

    /// The screen that tmux's `capture-pane -p -e` printed for a pane of
    /// `cols` × `rows`: one line per row, with the escape sequences that
    /// set colours and attributes (which carry over from line to line).
    /// The cursor is left at (0, 0); set it with [`Screen::set_cursor`].
    pub fn from_capture(capture: &[u8], cols: u16, rows: u16) -> Result<Screen> {
        let mut stream = Vec::with_capacity(capture.len() + usize::from(rows) * 2);
        let lines = capture.strip_suffix(b"\n").unwrap_or(capture);
        for (n, line) in lines
            .split(|&b| b == b'\n')
            .take(usize::from(rows))
            .enumerate()
        {
            if n > 0 {
                stream.extend_from_slice(b"\r\n");
            }
            stream.extend_from_slice(line);
        }
        let mut screen = Screen::from_output(&stream, cols, rows)?;
        screen.cursor = Cursor {
            row: 0,
            col: 0,
            visible: true,
        };
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
        let Some(cells) = self.rows.get(usize::from(row)) else {
            return String::new();
        };
        let text: String = cells.iter().map(|c| c.ch).filter(|&c| c != '\0').collect();
        text.trim_end().to_owned()
    }

    /// The text of every row, without trailing spaces.
    pub fn text(&self) -> Vec<String> {
        (0..self.rows()).map(|r| self.row_text(r)).collect()
    }

    /// Replaces `row` with plain `text` (default colours), as far as it fits.
    pub fn set_row_text(&mut self, row: u16, text: &str) {
        let Some(cells) = self.rows.get_mut(usize::from(row)) else {
            return;
        };
        let mut chars = text.chars();
        for cell in cells.iter_mut() {
            *cell = Cell {
                ch: chars.next().unwrap_or(' '),
                ..Cell::default()
            };
        }
    }

    /// Rewrites the screen's text through `rewrite`, a function that maps
    /// a screen's text (rows joined with `\n`) to the text to show
    /// instead, row by row, without looking ahead: it may drop rows or
    /// change them, never add any. Rows it keeps as they were keep their
    /// colours; changed rows become plain text; dropped rows close up, with
    /// blank rows added at the bottom and the cursor moved up with its row.
    ///
    /// Used to hide `run_command`'s wrapper and to redact secrets in the
    /// picture as in the text.
    pub fn rewrite_rows(&mut self, rewrite: impl Fn(&str) -> Cow<'_, str>) {
        let text = self.text();
        let whole = format!("{}\n", text.join("\n"));
        if rewrite(&whole) == whole.as_str() {
            return;
        }
        let mut kept = Vec::with_capacity(self.rows.len());
        let mut shown_before = 0;
        let mut cursor_row = self.cursor.row;
        let mut prefix = String::with_capacity(whole.len());
        for (r, line) in text.iter().enumerate() {
            prefix.push_str(line);
            prefix.push('\n');
            let shown = rewrite(&prefix);
            let added = shown.get(shown_before..).unwrap_or_default().to_owned();
            shown_before = shown.len();
            let mut row = Some(std::mem::take(&mut self.rows[r]));
            for new_line in added.lines() {
                if new_line == line
                    && let Some(row) = row.take()
                {
                    kept.push(row);
                } else {
                    kept.push(plain_row(new_line, self.cols));
                }
            }
            if added.is_empty() && usize::from(self.cursor.row) > r {
                cursor_row = cursor_row.saturating_sub(1);
            }
        }
        kept.truncate(MAX_ROWS.into());
        while kept.len() < text.len() {
            kept.push(plain_row("", self.cols));
        }
        kept.truncate(text.len());
        self.rows = kept;
        self.cursor.row = cursor_row;
    }
}

/// A row of `cols` cells showing `text` in default colours.
fn plain_row(text: &str, cols: u16) -> Vec<Cell> {
    let mut chars = text.chars();
    (0..cols)
        .map(|_| Cell {
            ch: chars.next().unwrap_or(' '),
            ..Cell::default()
        })
        .collect()
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

    #[test]
    fn capture_lines_keep_their_colours_across_lines() {
        // tmux does not reset attributes at a line's end: red runs on.
        let screen = Screen::from_capture(b"\x1b[31mred\nstill\x1b[0m plain\n", 20, 3).unwrap();
        assert_eq!(screen.cell(0, 0).unwrap().style.fg, Color::Indexed(1));
        assert_eq!(screen.cell(1, 0).unwrap().style.fg, Color::Indexed(1));
        assert_eq!(screen.cell(1, 6).unwrap().style.fg, Color::Default);
        assert_eq!(screen.text(), ["red", "still plain", ""]);
    }

    #[test]
    fn a_full_width_line_does_not_wrap_into_the_next_row() {
        let screen = Screen::from_capture(b"abcd\nefgh\nij", 4, 3).unwrap();
        assert_eq!(screen.text(), ["abcd", "efgh", "ij"]);
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
    fn rewriting_drops_and_changes_rows_and_moves_the_cursor() {
        let mut screen =
            Screen::from_capture(b"\x1b[32m$ SECRET go\x1b[0m\nwrapper tail\nout\n$ ", 20, 5)
                .unwrap();
        screen.set_cursor(3, 2, true);
        screen.rewrite_rows(|text| {
            if !text.contains("SECRET") && !text.contains("tail") {
                return Cow::Borrowed(text);
            }
            let shown: String = text
                .split_inclusive('\n')
                .filter(|line| !line.contains("tail"))
                .collect();
            Cow::Owned(shown.replace("SECRET", "[secret]"))
        });
        assert_eq!(screen.text(), ["$ [secret] go", "out", "$", "", ""]);
        assert_eq!(screen.cell(0, 0).unwrap().style.fg, Color::Default);
        assert_eq!(screen.cursor().row, 2);
    }

    #[test]
    fn rewriting_that_changes_nothing_keeps_colours() {
        let mut screen = Screen::from_capture(b"\x1b[32mgreen", 10, 2).unwrap();
        screen.rewrite_rows(|text| Cow::Owned(text.to_owned()));
        assert_eq!(screen.cell(0, 0).unwrap().style.fg, Color::Indexed(2));
    }
}
