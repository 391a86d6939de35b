//! Colours as pixels: the 256-colour palette and the default colours.

use crate::grid::{Color, Style};

/// An RGB pixel.
pub type Rgb = [u8; 3];

/// The default foreground: light grey.
pub const DEFAULT_FG: Rgb = [0xd4, 0xd4, 0xd4];
/// The default background: near black.
pub const DEFAULT_BG: Rgb = [0x1e, 0x1e, 0x1e];

/// The 16 named colours (xterm's).
const NAMED: [Rgb; 16] = [
    [0x00, 0x00, 0x00],
    [0xcd, 0x00, 0x00],
    [0x00, 0xcd, 0x00],
    [0xcd, 0xcd, 0x00],
    [0x00, 0x00, 0xee],
    [0xcd, 0x00, 0xcd],
    [0x00, 0xcd, 0xcd],
    [0xe5, 0xe5, 0xe5],
    [0x7f, 0x7f, 0x7f],
    [0xff, 0x00, 0x00],
    [0x00, 0xff, 0x00],
    [0xff, 0xff, 0x00],
    [0x5c, 0x5c, 0xff],
    [0xff, 0x00, 0xff],
    [0x00, 0xff, 0xff],
    [0xff, 0xff, 0xff],
];

/// Indexed colour `i` of the 256: 16 named, a 6×6×6 cube, 24 greys.
pub fn indexed(i: u8) -> Rgb {
    match i {
        0..=15 => NAMED[usize::from(i)],
        16..=231 => {
            let level = |n: u8| if n == 0 { 0 } else { 55 + 40 * n };
            let n = i - 16;
            [level(n / 36), level(n / 6 % 6), level(n % 6)]
        }
        _ => {
            let grey = 8 + 10 * (i - 232);
            [grey, grey, grey]
        }
    }
}

/// The pixel colour of `color`, with `default` for the terminal's own.
pub fn rgb(color: Color, default: Rgb) -> Rgb {
    match color {
        Color::Default => default,
        Color::Indexed(i) => indexed(i),
        Color::Rgb(r, g, b) => [r, g, b],
    }
}

/// A cell's foreground and background pixels, inverse and dim applied.
pub fn cell_colors(style: &Style) -> (Rgb, Rgb) {
    let mut fg = rgb(style.fg, DEFAULT_FG);
    let bg = rgb(style.bg, DEFAULT_BG);
    if style.dim {
        fg = blend(bg, fg, 140);
    }
    match style.inverse {
        true => (bg, fg),
        false => (fg, bg),
    }
}

/// `over` laid on `under` with coverage `alpha` (0 none, 255 all).
pub fn blend(under: Rgb, over: Rgb, alpha: u8) -> Rgb {
    let mix = |u: u8, o: u8| {
        let (u, o, a) = (u32::from(u), u32::from(o), u32::from(alpha));
        ((o * a + u * (255 - a) + 127) / 255) as u8
    };
    [
        mix(under[0], over[0]),
        mix(under[1], over[1]),
        mix(under[2], over[2]),
    ]
}

/// `rgb` as `#rrggbb`.
pub fn hex(rgb: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_follows_xterm() {
        assert_eq!(indexed(1), [0xcd, 0, 0]);
        assert_eq!(indexed(16), [0, 0, 0]);
        assert_eq!(indexed(196), [0xff, 0, 0]);
        assert_eq!(indexed(231), [0xff, 0xff, 0xff]);
        assert_eq!(indexed(232), [8, 8, 8]);
        assert_eq!(indexed(255), [238, 238, 238]);
    }

    #[test]
    fn inverse_swaps_and_blend_ends_are_exact() {
        let style = Style {
            fg: Color::Indexed(1),
            inverse: true,
            ..Style::default()
        };
        assert_eq!(cell_colors(&style), (DEFAULT_BG, [0xcd, 0, 0]));
        assert_eq!(blend([0; 3], [255; 3], 255), [255; 3]);
        assert_eq!(blend([9; 3], [255; 3], 0), [9; 3]);
    }
}
