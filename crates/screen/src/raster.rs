//! The screen as pixels, and as a PNG file.
//!
//! Glyphs come from Noto Sans Mono, pre-rasterized at 16 pixels high
//! (one byte of coverage per pixel), which covers Latin text; box-drawing
//! and block characters, which TUIs draw their frames and bars with, are
//! drawn here to fill the cell exactly; anything else shows as `�`.

use noto_sans_mono_bitmap::{FontWeight, RasterHeight, get_raster, get_raster_width};

use crate::error::{Error, Result};
use crate::grid::{Cell, Screen};
use crate::palette::{Rgb, blend, cell_colors};
use crate::shapes;

/// Width of a cell in pixels.
pub const CELL_WIDTH: usize = get_raster_width(FontWeight::Regular, RasterHeight::Size16);
/// Height of a cell in pixels.
pub const CELL_HEIGHT: usize = 16;

/// One cell's coverage: how much of each pixel the foreground covers.
pub(crate) type Coverage = [u8; CELL_WIDTH * CELL_HEIGHT];

/// An RGB picture of a screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl Image {
    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The pixel at `x`, `y` (panics outside the picture).
    pub fn pixel(&self, x: usize, y: usize) -> Rgb {
        let at = (y * self.width + x) * 3;
        [self.pixels[at], self.pixels[at + 1], self.pixels[at + 2]]
    }

    /// The picture as a PNG file (8-bit RGB).
    pub fn png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.pixels.len() / 16);
        let mut encoder = png::Encoder::new(&mut out, self.width as u32, self.height as u32);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(Error::png)?;
        writer.write_image_data(&self.pixels).map_err(Error::png)?;
        writer.finish().map_err(Error::png)?;
        Ok(out)
    }

    fn fill_cell(&mut self, left: usize, top: usize, fg: Rgb, bg: Rgb, coverage: &Coverage) {
        for y in 0..CELL_HEIGHT {
            let row = (top + y) * self.width + left;
            for x in 0..CELL_WIDTH {
                let color = blend(bg, fg, coverage[y * CELL_WIDTH + x]);
                let at = (row + x) * 3;
                self.pixels[at..at + 3].copy_from_slice(&color);
            }
        }
    }
}

impl Screen {
    /// The screen drawn as a person sees it: [`CELL_WIDTH`] × [`CELL_HEIGHT`]
    /// pixels a cell, colours, bold, underline, inverse and the cursor (a
    /// block in inverse colours) included.
    pub fn image(&self) -> Image {
        let width = usize::from(self.cols()) * CELL_WIDTH;
        let height = usize::from(self.rows()) * CELL_HEIGHT;
        let mut image = Image {
            width,
            height,
            pixels: vec![0; width * height * 3],
        };
        let cursor = self.cursor();
        for row in 0..self.rows() {
            for col in 0..self.cols() {
                let cell = self.cell(row, col).expect("within the screen");
                let (mut fg, mut bg) = cell_colors(&cell.style);
                if cursor.visible && (cursor.row, cursor.col) == (row, col) {
                    (fg, bg) = (bg, fg);
                }
                let coverage = coverage(cell);
                let (left, top) = (
                    usize::from(col) * CELL_WIDTH,
                    usize::from(row) * CELL_HEIGHT,
                );
                image.fill_cell(left, top, fg, bg, &coverage);
            }
        }
        image
    }

    /// The screen as a PNG file; see [`Screen::image`].
    pub fn png(&self) -> Result<Vec<u8>> {
        self.image().png()
    }
}

/// Which pixels of `cell` its foreground covers.
fn coverage(cell: &Cell) -> Coverage {
    let mut coverage = [0; CELL_WIDTH * CELL_HEIGHT];
    if !matches!(cell.ch, ' ' | '\0') && !shapes::draw(cell.ch, cell.style.bold, &mut coverage) {
        let weight = match cell.style.bold {
            true => FontWeight::Bold,
            false => FontWeight::Regular,
        };
        let glyph = get_raster(cell.ch, weight, RasterHeight::Size16)
            .or_else(|| get_raster('\u{fffd}', weight, RasterHeight::Size16));
        if let Some(glyph) = glyph {
            for (y, line) in glyph.rows().enumerate().take(CELL_HEIGHT) {
                for (x, &value) in line.iter().enumerate().take(CELL_WIDTH) {
                    coverage[y * CELL_WIDTH + x] = value;
                }
            }
        }
    }
    if cell.style.underline {
        let y = CELL_HEIGHT - 2;
        coverage[y * CELL_WIDTH..(y + 1) * CELL_WIDTH].fill(255);
    }
    coverage
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cursor, unchanged};
    use crate::palette::{DEFAULT_BG, DEFAULT_FG, indexed};

    /// Pixels of the cell at `row`, `col` that are not `bg`.
    fn inked(image: &Image, row: usize, col: usize, bg: Rgb) -> usize {
        let (left, top) = (col * CELL_WIDTH, row * CELL_HEIGHT);
        (top..top + CELL_HEIGHT)
            .flat_map(|y| (left..left + CELL_WIDTH).map(move |x| (x, y)))
            .filter(|&(x, y)| image.pixel(x, y) != bg)
            .count()
    }

    #[test]
    fn draws_colours_glyphs_and_the_cursor() {
        let mut screen = Screen::from_capture(
            b"\x1b[41m RED \x1b[0m \x1b[1;38;5;46mG\x1b[0m",
            20,
            3,
            Cursor::at(0, 0),
            unchanged,
        )
        .unwrap();
        screen.set_cursor(2, 4, true);
        let image = screen.image();
        assert_eq!(
            (image.width(), image.height()),
            (20 * CELL_WIDTH, 3 * CELL_HEIGHT)
        );
        // The space before "RED" is all red background; "R" has ink on red.
        assert_eq!(inked(&image, 0, 0, indexed(1)), 0);
        assert_eq!(image.pixel(0, 0), indexed(1));
        assert!(inked(&image, 0, 1, indexed(1)) > 10);
        // Bold green "G" on the default background.
        assert!(inked(&image, 0, 6, DEFAULT_BG) > 10);
        let green = (0..CELL_WIDTH * CELL_HEIGHT).any(|i| {
            let (x, y) = (6 * CELL_WIDTH + i % CELL_WIDTH, i / CELL_WIDTH);
            image.pixel(x, y) == indexed(46)
        });
        assert!(green, "the G is drawn in colour 46");
        // An empty cell is background; the cursor's cell is a block.
        assert_eq!(inked(&image, 1, 0, DEFAULT_BG), 0);
        assert_eq!(
            image.pixel(4 * CELL_WIDTH + 1, 2 * CELL_HEIGHT + 1),
            DEFAULT_FG
        );
    }

    #[test]
    fn underline_and_box_drawing_cover_their_lines() {
        let screen = Screen::from_capture(
            "\x1b[4mu\x1b[0m─│".as_bytes(),
            3,
            1,
            Cursor::at(0, 0),
            unchanged,
        )
        .unwrap();
        let mut screen = screen;
        screen.set_cursor(0, 2, false);
        let image = screen.image();
        assert_eq!(image.pixel(0, CELL_HEIGHT - 2), DEFAULT_FG);
        // The horizontal line crosses the whole cell at mid height.
        let mid = CELL_HEIGHT / 2;
        assert!((CELL_WIDTH..2 * CELL_WIDTH).all(|x| image.pixel(x, mid) == DEFAULT_FG));
        assert!(
            (0..CELL_HEIGHT).all(|y| image.pixel(2 * CELL_WIDTH + CELL_WIDTH / 2, y) == DEFAULT_FG)
        );
    }

    #[test]
    fn png_has_the_signature_and_size() {
        let png = Screen::blank(10, 2).unwrap().png().unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 70);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 32);
    }
}
