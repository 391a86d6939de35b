//! The screen as SVG: a rectangle per run of background and a text element
//! per run of same-styled characters, stretched to the cell grid so that
//! columns line up whatever monospace font the viewer picks.

use std::fmt::Write as _;

use crate::grid::{Cell, Screen, Style};
use crate::palette::{DEFAULT_BG, hex};
use crate::palette::{Rgb, cell_colors};
use crate::raster::{CELL_HEIGHT, CELL_WIDTH};

impl Screen {
    /// The screen as an SVG document, cells the size of [`Screen::image`]'s.
    pub fn svg(&self) -> String {
        let (width, height) = (
            usize::from(self.cols()) * CELL_WIDTH,
            usize::from(self.rows()) * CELL_HEIGHT,
        );
        let mut svg = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
             viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans Mono,Menlo,Consolas,monospace\" \
             font-size=\"{}\">\n<rect width=\"100%\" height=\"100%\" fill=\"{}\"/>\n",
            CELL_HEIGHT * 3 / 4,
            hex(DEFAULT_BG)
        );
        for row in 0..self.rows() {
            let cells: Vec<(Cell, Rgb, Rgb)> =
                (0..self.cols()).map(|col| self.drawn(row, col)).collect();
            backgrounds(&mut svg, row, &cells);
            texts(&mut svg, row, &cells);
        }
        svg.push_str("</svg>\n");
        svg
    }

    /// The cell at `row`, `col` with its foreground and background, the
    /// cursor's cell inverted.
    fn drawn(&self, row: u16, col: u16) -> (Cell, Rgb, Rgb) {
        let cell = *self.cell(row, col).expect("within the screen");
        let (fg, bg) = cell_colors(&cell.style);
        let cursor = self.cursor();
        match cursor.visible && (cursor.row, cursor.col) == (row, col) {
            true => (cell, bg, fg),
            false => (cell, fg, bg),
        }
    }
}

/// A rectangle for each run of cells with the same background, except the
/// default one (the document's own).
fn backgrounds(svg: &mut String, row: u16, cells: &[(Cell, Rgb, Rgb)]) {
    let y = usize::from(row) * CELL_HEIGHT;
    for (start, end) in runs(cells, |(_, _, bg)| *bg) {
        let bg = cells[start].2;
        if bg != DEFAULT_BG {
            let _ = writeln!(
                svg,
                "<rect x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{CELL_HEIGHT}\" fill=\"{}\"/>",
                start * CELL_WIDTH,
                (end - start) * CELL_WIDTH,
                hex(bg)
            );
        }
    }
}

/// A text element for each run of characters drawn alike; underline as a
/// decoration.
fn texts(svg: &mut String, row: u16, cells: &[(Cell, Rgb, Rgb)]) {
    let baseline = usize::from(row) * CELL_HEIGHT + CELL_HEIGHT * 3 / 4;
    let key = |(cell, fg, _): &(Cell, Rgb, Rgb)| {
        let Style {
            bold,
            italic,
            underline,
            ..
        } = cell.style;
        (*fg, bold, italic, underline)
    };
    for (start, mut end) in runs(cells, key) {
        let (cell, fg, _) = cells[start];
        if !cell.style.underline {
            while end > start && matches!(cells[end - 1].0.ch, ' ' | '\0') {
                end -= 1;
            }
        }
        if end == start {
            continue;
        }
        let text: String = cells[start..end].iter().map(|(c, _, _)| c.ch).collect();
        let mut attributes = format!("fill=\"{}\"", hex(fg));
        if cell.style.bold {
            attributes.push_str(" font-weight=\"bold\"");
        }
        if cell.style.italic {
            attributes.push_str(" font-style=\"italic\"");
        }
        if cell.style.underline {
            attributes.push_str(" text-decoration=\"underline\"");
        }
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{baseline}\" textLength=\"{}\" lengthAdjust=\"spacingAndGlyphs\" \
             xml:space=\"preserve\" {attributes}>{}</text>",
            start * CELL_WIDTH,
            (end - start) * CELL_WIDTH,
            escaped(&text)
        );
    }
}

/// Runs of consecutive cells with the same `key`, as index ranges.
fn runs<T, K: PartialEq>(cells: &[T], key: impl Fn(&T) -> K) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=cells.len() {
        if i == cells.len() || key(&cells[i]) != key(&cells[start]) {
            runs.push((start, i));
            start = i;
        }
    }
    runs
}

/// `text` safe inside an XML element: markup escaped, the halves of wide
/// characters and control characters left out.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cursor, unchanged};

    #[test]
    fn svg_has_a_red_background_run_and_escaped_text() {
        let mut screen = Screen::from_capture(
            b"\x1b[41m RED \x1b[0m a<b",
            12,
            2,
            Cursor::at(0, 0),
            unchanged,
        )
        .unwrap();
        screen.set_cursor(1, 0, false);
        let svg = screen.svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"84\""));
        assert!(
            svg.contains("<rect x=\"0\" y=\"0\" width=\"35\" height=\"16\" fill=\"#cd0000\"/>")
        );
        // One text run: the foreground is the same throughout.
        assert!(svg.contains("> RED  a&lt;b</text>"));
        assert!(svg.ends_with("</svg>\n"));
    }
}
