//! Box-drawing (U+2500-U+257F) and block (U+2580-U+259F) characters,
//! drawn to fill the cell so that frames and bars join from cell to cell.

use crate::raster::{CELL_HEIGHT, CELL_WIDTH, Coverage};

/// The arms of a box-drawing character: up, down, left, right.
#[derive(Clone, Copy)]
struct Arms(bool, bool, bool, bool);

const H: Arms = Arms(false, false, true, true);
const V: Arms = Arms(true, true, false, false);

/// Draws `ch` into `coverage` if it is a box-drawing or block character;
/// says whether it was one.
pub(crate) fn draw(ch: char, bold: bool, coverage: &mut Coverage) -> bool {
    let code = u32::from(ch);
    if let Some(arms) = arms(code) {
        let heavy = bold || is_heavy(code);
        lines(arms, if heavy { 2 } else { 1 }, coverage);
        return true;
    }
    match block(code) {
        Some((left, top, right, bottom, alpha)) => {
            for y in top..bottom {
                coverage[y * CELL_WIDTH + left..y * CELL_WIDTH + right].fill(alpha);
            }
            true
        }
        None => false,
    }
}

/// Heavy and double lines, drawn two pixels thick.
fn is_heavy(code: u32) -> bool {
    matches!(
        code,
        0x2501 | 0x2503 | 0x2505 | 0x2507 | 0x2509 | 0x250b | 0x254d | 0x254f
    ) || (0x2550..=0x256c).contains(&code)
        || (0x2578..=0x257b).contains(&code)
}

/// The arms of box-drawing character `code` (mixed weights drawn as one).
fn arms(code: u32) -> Option<Arms> {
    let arms = match code {
        0x2500 | 0x2501 | 0x2504 | 0x2505 | 0x2508 | 0x2509 | 0x254c | 0x254d | 0x2550 => H,
        0x2502 | 0x2503 | 0x2506 | 0x2507 | 0x250a | 0x250b | 0x254e | 0x254f | 0x2551 => V,
        0x250c..=0x250f | 0x2552..=0x2554 | 0x256d => Arms(false, true, false, true),
        0x2510..=0x2513 | 0x2555..=0x2557 | 0x256e => Arms(false, true, true, false),
        0x2514..=0x2517 | 0x2558..=0x255a | 0x2570 => Arms(true, false, false, true),
        0x2518..=0x251b | 0x255b..=0x255d | 0x256f => Arms(true, false, true, false),
        0x251c..=0x2523 | 0x255e..=0x2560 => Arms(true, true, false, true),
        0x2524..=0x252b | 0x2561..=0x2563 => Arms(true, true, true, false),
        0x252c..=0x2533 | 0x2564..=0x2566 => Arms(false, true, true, true),
        0x2534..=0x253b | 0x2567..=0x2569 => Arms(true, false, true, true),
        0x253c..=0x254b | 0x256a..=0x256c => Arms(true, true, true, true),
        0x2574 | 0x2578 => Arms(false, false, true, false),
        0x2575 | 0x2579 => Arms(true, false, false, false),
        0x2576 | 0x257a => Arms(false, false, false, true),
        0x2577 | 0x257b => Arms(false, true, false, false),
        0x257c | 0x257e => H,
        0x257d | 0x257f => V,
        _ => return None,
    };
    Some(arms)
}

/// Draws the arms from the cell's centre to its edges.
fn lines(Arms(up, down, left, right): Arms, thickness: usize, coverage: &mut Coverage) {
    let (cx, cy) = (CELL_WIDTH / 2, CELL_HEIGHT / 2);
    let mut fill = |x0: usize, x1: usize, y0: usize, y1: usize| {
        for y in y0..y1 {
            coverage[y * CELL_WIDTH + x0..y * CELL_WIDTH + x1].fill(255);
        }
    };
    let (x0, x1) = (cx, (cx + thickness).min(CELL_WIDTH));
    let (y0, y1) = (cy, (cy + thickness).min(CELL_HEIGHT));
    if up {
        fill(x0, x1, 0, y1);
    }
    if down {
        fill(x0, x1, y0, CELL_HEIGHT);
    }
    if left {
        fill(0, x1, y0, y1);
    }
    if right {
        fill(x0, CELL_WIDTH, y0, y1);
    }
}

/// The rectangle (left, top, right, bottom) and coverage of block
/// character `code`.
fn block(code: u32) -> Option<(usize, usize, usize, usize, u8)> {
    let (w, h) = (CELL_WIDTH, CELL_HEIGHT);
    let eighths = |n: u32, of: usize| (of * n as usize).div_ceil(8);
    let rect = match code {
        0x2580 => (0, 0, w, h / 2, 255),
        0x2581..=0x2588 => (0, h - eighths(code - 0x2580, h), w, h, 255),
        0x2589..=0x258f => (0, 0, eighths(0x2590 - code, w), h, 255),
        0x2590 => (w / 2, 0, w, h, 255),
        0x2591 => (0, 0, w, h, 64),
        0x2592 => (0, 0, w, h, 128),
        0x2593 => (0, 0, w, h, 192),
        0x2594 => (0, 0, w, eighths(1, h), 255),
        0x2595 => (w - eighths(1, w), 0, w, h, 255),
        _ => return None,
    };
    Some(rect)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_block_covers_the_cell_and_a_corner_reaches_two_edges() {
        let mut full = [0; CELL_WIDTH * CELL_HEIGHT];
        assert!(draw('█', false, &mut full));
        assert!(full.iter().all(|&c| c == 255));
        let mut corner = [0; CELL_WIDTH * CELL_HEIGHT];
        assert!(draw('┌', false, &mut corner));
        let mid = CELL_HEIGHT / 2;
        assert_eq!(corner[mid * CELL_WIDTH + CELL_WIDTH - 1], 255);
        assert_eq!(corner[(CELL_HEIGHT - 1) * CELL_WIDTH + CELL_WIDTH / 2], 255);
        assert_eq!(corner[mid * CELL_WIDTH], 0);
        assert!(!draw('a', false, &mut corner));
    }
}
