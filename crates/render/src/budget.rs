//! How much a rendering may show, and the accounting of what it shows against that.

use crate::tokens;

/// Limits on one rendering. The rendered text stays within all of them; the only
/// exception is the elision line itself (about 40 tokens), which is always shown when
/// something was left out, even if the budget is smaller than it.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    /// Estimated tokens (see [`estimate_tokens`](crate::estimate_tokens)).
    pub max_tokens: usize,
    /// Lines of rendered text, counting the elision line.
    pub max_lines: Option<usize>,
    /// Bytes of rendered text, counting the elision line.
    pub max_bytes: Option<usize>,
    /// The share of the budget given to the first lines; the last lines get the rest,
    /// and whatever the first lines left unused. Clamped to `0.0..=1.0`.
    pub head_fraction: f32,
}

impl Budget {
    /// The default budget with another token limit.
    pub fn tokens(max_tokens: usize) -> Self {
        Budget {
            max_tokens,
            ..Budget::default()
        }
    }
}

impl Default for Budget {
    /// About 2,000 tokens, a quarter of them for the first lines: enough for a screen
    /// of output, small enough to call often.
    fn default() -> Self {
        Budget {
            max_tokens: 2_000,
            max_lines: None,
            max_bytes: None,
            head_fraction: 0.25,
        }
    }
}

/// What a piece of rendered text costs, its line break included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cost {
    pub quarters: usize,
    pub lines: usize,
    pub bytes: usize,
}

impl Cost {
    /// The cost of one rendered line followed by a line break.
    pub fn of_line(line: &str) -> Cost {
        Cost {
            quarters: tokens::quarters(line) + tokens::NEWLINE_QUARTERS,
            lines: 1,
            bytes: line.len() + 1,
        }
    }

    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            quarters: self.quarters + other.quarters,
            lines: self.lines + other.lines,
            bytes: self.bytes + other.bytes,
        }
    }
}

/// Room left for rendered text, in the units of [`Cost`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub quarters: usize,
    pub lines: usize,
    pub bytes: usize,
}

impl Limits {
    /// The room a budget allows. Every line is counted with a line break after it, so
    /// the last line's break buys the slack that keeps the rendered text within limits.
    pub fn of(budget: &Budget) -> Limits {
        Limits {
            quarters: tokens::quarters_within(budget.max_tokens)
                .saturating_add(tokens::NEWLINE_QUARTERS),
            lines: budget.max_lines.unwrap_or(usize::MAX),
            bytes: budget.max_bytes.map_or(usize::MAX, |b| b.saturating_add(1)),
        }
    }

    pub fn fits(&self, cost: Cost) -> bool {
        cost.quarters <= self.quarters && cost.lines <= self.lines && cost.bytes <= self.bytes
    }

    pub fn minus(self, cost: Cost) -> Limits {
        Limits {
            quarters: self.quarters.saturating_sub(cost.quarters),
            lines: self.lines.saturating_sub(cost.lines),
            bytes: self.bytes.saturating_sub(cost.bytes),
        }
    }

    /// A share of this room, rounded down.
    pub fn share(self, fraction: f32) -> Limits {
        let fraction = if fraction.is_nan() {
            0.25
        } else {
            f64::from(fraction.clamp(0.0, 1.0))
        };
        // Float-to-int `as` saturates, so `usize::MAX` (no limit) stays huge.
        let part = |n: usize| (n as f64 * fraction) as usize;
        Limits {
            quarters: part(self.quarters),
            lines: part(self.lines),
            bytes: part(self.bytes),
        }
    }
}

/// Adds up costs against limits.
#[derive(Debug)]
pub(crate) struct Meter {
    pub room: Limits,
    pub used: Cost,
}

impl Meter {
    pub fn new(room: Limits) -> Meter {
        Meter {
            room,
            used: Cost::default(),
        }
    }

    /// What is still free.
    pub fn left(&self) -> Limits {
        self.room.minus(self.used)
    }

    /// Counts `cost` if it fits in what is left; says whether it did.
    pub fn try_add(&mut self, cost: Cost) -> bool {
        let fits = self.left().fits(cost);
        if fits {
            self.used = self.used.plus(cost);
        }
        fits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_budget_is_two_thousand_tokens_a_quarter_for_the_head() {
        let budget = Budget::default();
        assert_eq!((budget.max_tokens, budget.head_fraction), (2_000, 0.25));
        assert_eq!(Budget::tokens(50).max_tokens, 50);
    }

    #[test]
    fn a_meter_refuses_what_does_not_fit() {
        let budget = Budget {
            max_lines: Some(2),
            ..Budget::default()
        };
        let mut meter = Meter::new(Limits::of(&budget));
        assert!(meter.try_add(Cost::of_line("a")));
        assert!(meter.try_add(Cost::of_line("b")));
        assert!(!meter.try_add(Cost::of_line("c")));
        assert_eq!(meter.used.lines, 2);
    }

    #[test]
    fn a_share_of_unlimited_room_stays_unlimited() {
        let room = Limits {
            quarters: 400,
            lines: usize::MAX,
            bytes: usize::MAX,
        };
        let head = room.share(0.25);
        assert_eq!(head.quarters, 100);
        assert!(head.lines > usize::MAX / 8);
        assert_eq!(room.share(f32::NAN).quarters, 100);
        assert_eq!(room.share(7.0).quarters, 400);
    }
}
