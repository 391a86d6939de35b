//! Measures how long a full 200x50 screen takes to render, and how large
//! the PNG and SVG are: `cargo run --release -p termpilot-screen --example
//! render_time [OUT.png]` (with a path, the PNG is written there too).

use std::time::Instant;

use termpilot_screen::{Cursor, Screen, unchanged};

/// A busy 200x50 screen: every cell printed, in 256 colours, bold and
/// underlined runs, a frame of box-drawing characters.
fn busy_screen() -> Screen {
    let mut capture = Vec::new();
    capture.extend_from_slice(format!("┌{}┐\n", "─".repeat(198)).as_bytes());
    for row in 0..48u32 {
        capture.extend_from_slice("│".as_bytes());
        for col in 0..198u32 {
            let colour = (row * 7 + col) % 256;
            let attribute = if col % 40 < 10 {
                "1;"
            } else if col % 40 < 20 {
                "4;"
            } else {
                ""
            };
            let ch = char::from(b'!' + ((row + col) % 94) as u8);
            capture
                .extend_from_slice(format!("\x1b[{attribute}38;5;{colour}m{ch}\x1b[0m").as_bytes());
        }
        capture.extend_from_slice("│\n".as_bytes());
    }
    capture.extend_from_slice(format!("└{}┘", "─".repeat(198)).as_bytes());
    Screen::from_capture(&capture, 200, 50, Cursor::at(0, 0), unchanged).expect("a 200x50 screen")
}

fn main() -> Result<(), termpilot_screen::Error> {
    let screen = busy_screen();
    let runs = 20;
    let started = Instant::now();
    let mut png = Vec::new();
    for _ in 0..runs {
        png = screen.png()?;
    }
    let png_ms = started.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
    let started = Instant::now();
    let mut svg = String::new();
    for _ in 0..runs {
        svg = screen.svg();
    }
    let svg_ms = started.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
    let image = screen.image();
    eprintln!(
        "200x50 busy screen: PNG {}x{} px, {} bytes, {png_ms:.1} ms; SVG {} bytes, {svg_ms:.1} ms (mean of {runs})",
        image.width(),
        image.height(),
        png.len(),
        svg.len()
    );
    if let Some(path) = std::env::args().nth(1) {
        std::fs::write(&path, &png).map_err(|e| termpilot_screen::Error::Png(e.to_string()))?;
    }
    Ok(())
}
