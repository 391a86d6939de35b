//! Progress values of one request: one total, values that only increase,
//! and a batch step's own progress (a wait's seconds) kept inside its step.

use std::time::Duration;

use tokio::time::Instant;

/// The least time between two counted notifications; the last count (equal
/// to the total) always goes out.
const COUNT_INTERVAL: Duration = Duration::from_millis(100);

/// How far into its step a step's own progress may go: never as far as the
/// value the batch reports when the step is over.
const STEP_CEILING: f64 = 0.99;

/// A batch step being run, as its place in the batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Step {
    /// The step's index, from 0.
    pub(crate) index: usize,
    /// The batch's number of steps: the total of every notification.
    pub(crate) total: usize,
}

impl Step {
    /// The batch's progress once the step has used `elapsed` of `limit`:
    /// between `index` and `index + 1`, never reaching `index + 1`.
    pub(crate) fn value(self, elapsed: Duration, limit: Duration) -> f64 {
        let fraction = if limit.is_zero() {
            STEP_CEILING
        } else {
            (elapsed.as_secs_f64() / limit.as_secs_f64()).min(STEP_CEILING)
        };
        self.index as f64 + fraction
    }
}

/// Decides which progress notifications of a request go out: values must
/// strictly increase (MCP says so), and counts are sent at most every
/// [`COUNT_INTERVAL`], except the one that reaches the total.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    /// The last value sent, and when.
    last: Option<(Instant, f64)>,
}

impl Throttle {
    /// Whether `value` (of `total`) may be sent `now`; if so, it becomes the
    /// last value sent.
    pub(crate) fn admit(&mut self, now: Instant, value: f64, total: f64) -> bool {
        if let Some((at, sent)) = self.last {
            let recent = now.saturating_duration_since(at) < COUNT_INTERVAL;
            if value <= sent || (recent && value < total) {
                return false;
            }
        }
        self.last = Some((now, value));
        true
    }

    /// When the last notification went out, if any did.
    pub(crate) fn last_sent(&self) -> Option<Instant> {
        self.last.map(|(at, _)| at)
    }
}

/// How long a response waits after a progress notification sent just
/// before it. Some clients (the official TypeScript SDK) handle a
/// notification in a later task but a response at once: when both arrive in
/// one read, the response retires the progress token first and the
/// notification is refused as one for an unknown token. A short gap lets
/// them arrive in two reads.
pub(crate) const SETTLE_BEFORE_RESPONSE: Duration = Duration::from_millis(10);

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn a_step_stays_inside_its_own_slot() {
        let step = Step {
            index: 3,
            total: 10,
        };
        for elapsed in [0.0, 0.5, 9.9, 10.0, 10.5, 1_000.0] {
            let value = step.value(secs(elapsed), secs(10.0));
            assert!((3.0..4.0).contains(&value), "{elapsed} s: {value}");
        }
        assert!((3.0..4.0).contains(&step.value(secs(1.0), Duration::ZERO)));
        assert_eq!(step.value(secs(2.5), secs(10.0)), 3.25);
    }

    #[test]
    fn the_throttle_lets_only_larger_values_through() {
        let start = Instant::now();
        let mut throttle = Throttle::default();
        assert!(throttle.admit(start, 1.0, 4.0));
        let later = start + secs(1.0);
        assert!(!throttle.admit(later, 1.0, 4.0), "the same value twice");
        assert!(!throttle.admit(later, 0.5, 4.0), "a smaller value");
        assert!(throttle.admit(later, 1.5, 4.0));
    }

    #[test]
    fn the_throttle_holds_back_counts_but_never_the_total() {
        let start = Instant::now();
        let mut throttle = Throttle::default();
        assert!(throttle.admit(start, 1.0, 4.0));
        assert!(!throttle.admit(start + secs(0.01), 2.0, 4.0), "too soon");
        assert!(throttle.admit(start + secs(0.02), 4.0, 4.0), "the total");
    }

    /// The sequence run_batch produces for [send_keys, wait 2.5 s, send_keys]
    /// (once "1 of 3", then "1.0006 of 2.5" seconds, then "2 of 3"): every
    /// value sent is on the batch's total, increases, and the last is the total.
    #[test]
    fn a_batch_with_a_waiting_step_reports_one_increasing_count() {
        let start = Instant::now();
        let mut throttle = Throttle::default();
        let total = 3.0;
        let wait = Step { index: 1, total: 3 };
        let limit = secs(2.5);
        let offered = [
            (start, 1.0),
            (start + secs(1.0), wait.value(secs(1.0006), limit)),
            (start + secs(2.0), wait.value(secs(2.0007), limit)),
            (start + secs(2.5), wait.value(secs(2.6), limit)),
            (start + secs(2.51), 2.0),
            (start + secs(2.52), 3.0),
        ];
        let sent: Vec<f64> = offered
            .iter()
            .filter_map(|&(at, value)| throttle.admit(at, value, total).then_some(value))
            .collect();
        assert!(sent.windows(2).all(|w| w[0] < w[1]), "{sent:?}");
        assert!(
            sent.iter().filter(|v| **v > 1.0 && **v < 2.0).count() >= 2,
            "{sent:?}"
        );
        assert_eq!(sent.last(), Some(&total), "{sent:?}");
    }
}
