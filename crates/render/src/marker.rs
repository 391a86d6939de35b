//! The wording of what the renderer inserts: the elision line, the marker inside a cut
//! line, and folded runs of identical lines. Each says how much is missing and how to
//! get it, with numbers grouped by thousands.

use crate::OutputId;

/// The line that replaces the omitted middle, e.g.
/// `[... lines 101-19,600 omitted (19,500 lines, 1.7 MB); read_output id=o7 offset=100 shows them ...]`.
///
/// `first` is the index (from 0) of the first omitted line, which is also the
/// `read_output` offset that starts there; the line numbers shown count from 1.
pub(crate) fn elision_line(
    first: usize,
    lines: usize,
    bytes: usize,
    id: Option<&OutputId>,
) -> String {
    let range = if lines == 1 {
        format!("line {}", thousands(first + 1))
    } else {
        format!(
            "lines {}-{}",
            thousands(first + 1),
            thousands(first + lines)
        )
    };
    let count = if lines == 1 {
        "1 line".to_owned()
    } else {
        format!("{} lines", thousands(lines))
    };
    let how = match id {
        Some(id) => format!(
            "read_output id={id} offset={first} shows {}",
            if lines == 1 { "it" } else { "them" }
        ),
        None => "not kept; raise max_tokens to see more".to_owned(),
    };
    format!(
        "[... {range} omitted ({count}, {}); {how} ...]",
        size(bytes)
    )
}

/// The marker that replaces the middle of a line too long for the budget.
pub(crate) fn cut_marker(bytes: usize, id: Option<&OutputId>) -> String {
    let amount = if bytes < 1000 {
        size(bytes)
    } else {
        format!("{} bytes ({})", thousands(bytes), size(bytes))
    };
    match id {
        Some(id) => {
            format!("[... {amount} of this line omitted; full text: read_output id={id} ...]")
        }
        None => format!("[... {amount} of this line omitted ...]"),
    }
}

/// What follows a line that stands for a run of identical lines.
pub(crate) fn fold_suffix(count: usize) -> String {
    format!("  [×{} identical lines]", thousands(count))
}

/// The row that stands for a run of blank lines.
pub(crate) fn blank_run(count: usize) -> String {
    format!("[×{} blank lines]", thousands(count))
}

/// `19500` as `19,500`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A byte count for people: `512 bytes`, `1.7 KB`, `20.0 MB` (powers of 1,000).
pub(crate) fn size(bytes: usize) -> String {
    if bytes < 1000 {
        return if bytes == 1 {
            "1 byte".to_owned()
        } else {
            format!("{bytes} bytes")
        };
    }
    let mut value = bytes as f64 / 1000.0;
    for unit in ["KB", "MB", "GB", "TB"] {
        // Compare the rounded value, so 999,960 bytes reads 1.0 MB, not 1000.0 KB.
        if (value * 10.0).round() < 10_000.0 || unit == "TB" {
            return format!("{value:.1} {unit}");
        }
        value /= 1000.0;
    }
    unreachable!("the loop returns at TB")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(19_500), "19,500");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn sizes_use_one_decimal_and_never_read_1000() {
        assert_eq!(size(1), "1 byte");
        assert_eq!(size(512), "512 bytes");
        assert_eq!(size(1_700), "1.7 KB");
        assert_eq!(size(999_960), "1.0 MB");
        assert_eq!(size(20_000_000), "20.0 MB");
        assert!(size(usize::MAX).ends_with(" TB"));
    }

    #[test]
    fn the_elision_line_says_what_is_missing_and_how_to_read_it() {
        let id: OutputId = "o7".parse().unwrap();
        assert_eq!(
            elision_line(100, 19_500, 1_700_000, Some(&id)),
            "[... lines 101-19,600 omitted (19,500 lines, 1.7 MB); read_output id=o7 offset=100 shows them ...]"
        );
        assert_eq!(
            elision_line(4, 1, 10, None),
            "[... line 5 omitted (1 line, 10 bytes); not kept; raise max_tokens to see more ...]"
        );
    }

    #[test]
    fn the_cut_marker_names_the_bytes_left_out() {
        let id: OutputId = "o3".parse().unwrap();
        assert_eq!(
            cut_marker(4_998_000, Some(&id)),
            "[... 4,998,000 bytes (5.0 MB) of this line omitted; full text: read_output id=o3 ...]"
        );
        assert_eq!(
            cut_marker(20, None),
            "[... 20 bytes of this line omitted ...]"
        );
    }
}
