//! A terminal screen as a picture a person (or a model) can look at.
//!
//! A [`Screen`] is rows of [`Cell`]s (a character, its colours and
//! attributes) and a [`Cursor`]. It comes from tmux's `capture-pane -p -e`
//! `-J` ([`Screen::from_capture`], which parses the SGR sequences itself
//! so that it can hide and redact whole lines before laying them out) or from a program's raw output played through
//! a terminal emulator ([`Screen::from_output`], the `vt100` crate), and
//! renders to pixels ([`Screen::image`], [`Screen::png`]) or to SVG
//! ([`Screen::svg`]). Like the other parsers here it does no I/O.
//!
//! ```
//! use termpilot_screen::{CELL_WIDTH, Cursor, Screen, palette, unchanged};
//!
//! let screen = Screen::from_capture(b"\x1b[41m RED \x1b[0m ok", 20, 2, Cursor::at(1, 0), unchanged)?;
//! let image = screen.image();
//! assert_eq!(image.width(), 20 * CELL_WIDTH);
//! // The first cell is a red space.
//! assert_eq!(image.pixel(1, 1), palette::indexed(1));
//! let png = image.png()?;
//! assert!(png.starts_with(b"\x89PNG"));
//! assert!(screen.svg().contains("fill=\"#cd0000\""));
//! # Ok::<(), termpilot_screen::Error>(())
//! ```
//!
//! Tour: `grid` holds the cells and reads them in (and rewrites rows, to
//! hide `run_command`'s wrapper or a secret in the picture as in the text);
//! [`palette`] turns colours into pixels; `raster` draws cells with the
//! embedded Noto Sans Mono bitmaps and `shapes` draws box-drawing and block
//! characters; `svg` writes the vector form. Sizes are bounded by
//! [`MAX_COLS`] × [`MAX_ROWS`] cells of [`CELL_WIDTH`] × [`CELL_HEIGHT`]
//! pixels.

#![deny(missing_docs)]

mod error;
mod grid;
pub mod palette;
mod raster;
mod sgr;
mod shapes;
mod svg;

pub use error::{Error, Result};
pub use grid::{Cell, Color, Cursor, MAX_COLS, MAX_ROWS, Screen, Style, unchanged};
pub use raster::{CELL_HEIGHT, CELL_WIDTH, Image};
