//! Reading tmux's `capture-pane -e` lines into cells: text and the SGR
//! sequences (`ESC [ … m`) that set colours and attributes. tmux prints no
//! other control sequence there except OSC 8 hyperlinks, which are skipped
//! (as is any other escape sequence, to be safe).

use unicode_width::UnicodeWidthChar;

use crate::grid::{Cell, Color, Style};

/// Reads one line into `cells`, starting from `style` (tmux carries the
/// attributes over from the line before) and leaving it as the line ends.
pub(crate) fn parse_line(line: &[u8], style: &mut Style) -> Vec<Cell> {
    let text = String::from_utf8_lossy(line);
    let mut cells = Vec::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\x1b' {
            escape(&mut chars, style);
            continue;
        }
        match ch.width() {
            Some(0) | None => {}
            Some(2) => {
                cells.push(Cell {
                    ch,
                    style: *style,
                    wide: true,
                });
                cells.push(Cell {
                    ch: '\0',
                    style: *style,
                    wide: false,
                });
            }
            Some(_) => cells.push(Cell {
                ch,
                style: *style,
                wide: false,
            }),
        }
    }
    cells
}

/// Consumes an escape sequence after its ESC, applying it if it is SGR.
fn escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, style: &mut Style) {
    match chars.next() {
        Some('[') => {
            let mut params = String::new();
            for ch in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&ch) {
                    if ch == 'm' {
                        apply(&params, style);
                    }
                    return;
                }
                params.push(ch);
            }
        }
        // OSC, DCS and the like run to BEL or ST (ESC \).
        Some(']' | 'P' | '_' | '^') => {
            while let Some(ch) = chars.next() {
                if ch == '\x07' || (ch == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                    return;
                }
            }
        }
        _ => {}
    }
}

/// Applies SGR parameters `params` (`;`-separated, `:` sub-parameters).
fn apply(params: &str, style: &mut Style) {
    if params.is_empty() {
        *style = Style::default();
        return;
    }
    let mut items = params.split(';').peekable();
    while let Some(item) = items.next() {
        let mut parts = item.split(':');
        let code: u16 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        match code {
            0 => *style = Style::default(),
            1 => style.bold = true,
            2 => style.dim = true,
            3 => style.italic = true,
            4 => style.underline = parts.next() != Some("0"),
            7 => style.inverse = true,
            21 | 22 => (style.bold, style.dim) = (false, false),
            23 => style.italic = false,
            24 => style.underline = false,
            27 => style.inverse = false,
            30..=37 => style.fg = Color::Indexed((code - 30) as u8),
            39 => style.fg = Color::Default,
            40..=47 => style.bg = Color::Indexed((code - 40) as u8),
            49 => style.bg = Color::Default,
            90..=97 => style.fg = Color::Indexed((code - 90 + 8) as u8),
            100..=107 => style.bg = Color::Indexed((code - 100 + 8) as u8),
            38 | 48 | 58 => {
                let sub: Vec<&str> = parts.collect();
                let color = match sub.is_empty() {
                    true => extended(&mut items),
                    false => extended_sub(&sub),
                };
                match (code, color) {
                    (38, Some(color)) => style.fg = color,
                    (48, Some(color)) => style.bg = color,
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// An extended colour in `;` form: `5;N` or `2;R;G;B` from the items after
/// 38/48.
fn extended<'a>(items: &mut impl Iterator<Item = &'a str>) -> Option<Color> {
    let mut next = || items.next().and_then(|v| v.parse::<u8>().ok());
    match next()? {
        5 => Some(Color::Indexed(next()?)),
        2 => Some(Color::Rgb(next()?, next()?, next()?)),
        _ => None,
    }
}

/// An extended colour in `:` form: `5:N`, `2:R:G:B`, or `2:ID:R:G:B`
/// with a colour-space id (often empty).
fn extended_sub(sub: &[&str]) -> Option<Color> {
    let value = |s: &str| s.parse::<u8>().ok();
    match sub {
        ["5", n, ..] => Some(Color::Indexed(value(n)?)),
        ["2", r, g, b] => Some(Color::Rgb(value(r)?, value(g)?, value(b)?)),
        ["2", _, r, g, b, ..] => Some(Color::Rgb(value(r)?, value(g)?, value(b)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn styles(line: &str) -> Vec<Style> {
        parse_line(line.as_bytes(), &mut Style::default())
            .iter()
            .map(|c| c.style)
            .collect()
    }

    #[test]
    fn colours_in_every_form() {
        let s = styles("\x1b[31ma\x1b[38;5;200mb\x1b[38;2;1;2;3mc\x1b[48:2::4:5:6md\x1b[38:5:9me");
        assert_eq!(s[0].fg, Color::Indexed(1));
        assert_eq!(s[1].fg, Color::Indexed(200));
        assert_eq!(s[2].fg, Color::Rgb(1, 2, 3));
        assert_eq!(s[3].bg, Color::Rgb(4, 5, 6));
        assert_eq!(s[4].fg, Color::Indexed(9));
    }

    #[test]
    fn attributes_on_and_off_and_reset() {
        let s = styles("\x1b[1;4;7ma\x1b[22;24mb\x1b[mc\x1b[95;104md");
        assert!(s[0].bold && s[0].underline && s[0].inverse);
        assert!(!s[1].bold && !s[1].underline && s[1].inverse);
        assert_eq!(s[2], Style::default());
        assert_eq!((s[3].fg, s[3].bg), (Color::Indexed(13), Color::Indexed(12)));
    }

    #[test]
    fn wide_characters_take_two_cells_and_hyperlinks_are_skipped() {
        let cells = parse_line(
            "界\x1b]8;;http://x\x1b\\k\x1b]8;;\x1b\\e\u{301}".as_bytes(),
            &mut Style::default(),
        );
        let chars: Vec<char> = cells.iter().map(|c| c.ch).collect();
        assert_eq!(chars, ['界', '\0', 'k', 'e']);
        assert!(cells[0].wide);
    }

    #[test]
    fn style_carries_over_to_the_next_line() {
        let mut style = Style::default();
        parse_line(b"\x1b[32mgreen", &mut style);
        let next = parse_line(b"still", &mut style);
        assert_eq!(next[0].style.fg, Color::Indexed(2));
    }
}
