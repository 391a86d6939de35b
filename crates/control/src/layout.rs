//! tmux's window layouts, as `%layout-change` gives them: the size of each
//! pane.
//!
//! A layout is a checksum, then one cell: `WxH,X,Y` and either `,ID` (a
//! pane) or a list of cells in `{...}` (side by side) or `[...]` (stacked),
//! e.g. `5e0b,159x40,0,0{79x40,0,0,1,79x40,80,0,2}`.

use crate::ids::PaneId;

/// A pane's size in a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneSize {
    /// The pane.
    pub pane: PaneId,
    /// Its width in cells.
    pub cols: u16,
    /// Its height in cells.
    pub rows: u16,
}

/// The size of every pane in `layout`, in the layout's order; `None` when
/// it does not read as a tmux layout.
pub fn pane_sizes(layout: &str) -> Option<Vec<PaneSize>> {
    let (_checksum, cell) = layout.split_once(',')?;
    let mut sizes = Vec::new();
    let rest = parse_cell(cell.as_bytes(), &mut sizes)?;
    rest.is_empty().then_some(sizes)
}

/// Reads one cell from the start of `text` into `sizes`; returns what
/// follows it.
fn parse_cell<'a>(text: &'a [u8], sizes: &mut Vec<PaneSize>) -> Option<&'a [u8]> {
    let (cols, text) = number(text)?;
    let text = text.strip_prefix(b"x")?;
    let (rows, text) = number(text)?;
    let text = text.strip_prefix(b",")?;
    let (_x, text) = number(text)?;
    let text = text.strip_prefix(b",")?;
    let (_y, text) = number(text)?;
    match text.first()? {
        b',' => {
            let (id, rest) = number(&text[1..])?;
            sizes.push(PaneSize {
                pane: PaneId(id),
                cols: u16::try_from(cols).ok()?,
                rows: u16::try_from(rows).ok()?,
            });
            Some(rest)
        }
        open @ (b'{' | b'[') => {
            let close = if *open == b'{' { b'}' } else { b']' };
            let mut text = &text[1..];
            loop {
                text = parse_cell(text, sizes)?;
                match text.first()? {
                    b',' => text = &text[1..],
                    c if *c == close => return Some(&text[1..]),
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

/// A decimal number at the start of `text`, and what follows it.
fn number(text: &[u8]) -> Option<(u32, &[u8])> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    let value = std::str::from_utf8(&text[..digits]).ok()?.parse().ok()?;
    Some((value, &text[digits..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(pane: u32, cols: u16, rows: u16) -> PaneSize {
        PaneSize {
            pane: PaneId(pane),
            cols,
            rows,
        }
    }

    #[test]
    fn one_pane_and_nested_splits() {
        assert_eq!(
            pane_sizes("a87d,100x30,0,0,0"),
            Some(vec![size(0, 100, 30)])
        );
        // As tmux 3.3a printed them: a split, then a split inside it.
        assert_eq!(
            pane_sizes("c08a,100x30,0,0[100x15,0,0,0,100x14,0,16,1]"),
            Some(vec![size(0, 100, 15), size(1, 100, 14)])
        );
        assert_eq!(
            pane_sizes("5e0b,159x40,0,0{79x40,0,0,1,79x40,80,0[79x20,80,0,2,79x19,80,21,3]}"),
            Some(vec![size(1, 79, 40), size(2, 79, 20), size(3, 79, 19)])
        );
    }

    #[test]
    fn what_is_not_a_layout_is_none() {
        for bad in [
            "",
            "a87d",
            "a87d,100x30,0,0",
            "a87d,100x30,0,0,0,",
            "a87d,100x30,0,0{100x15,0,0,0",
            "a87d,100x30,0,0[100x15,0,0,0}",
            "a87d,100y30,0,0,0",
            "a87d,100000x30,0,0,0",
        ] {
            assert_eq!(pane_sizes(bad), None, "{bad}");
        }
    }
}
