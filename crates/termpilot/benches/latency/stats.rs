//! Timing loops and the summary of their samples.

use std::time::{Duration, Instant};

/// What one measurement produced: how many timed runs, their median, p95
/// and maximum.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub runs: usize,
    pub median: Duration,
    pub p95: Duration,
    pub max: Duration,
}

impl Summary {
    /// Summarises samples; the median of an even count is the mean of the two
    /// middle ones, the p95 is the nearest-rank percentile.
    pub fn of(mut samples: Vec<Duration>) -> Summary {
        assert!(
            !samples.is_empty(),
            "a measurement needs at least one sample"
        );
        samples.sort_unstable();
        let n = samples.len();
        let median = if n % 2 == 1 {
            samples[n / 2]
        } else {
            (samples[n / 2 - 1] + samples[n / 2]) / 2
        };
        let p95 = samples[(n * 95).div_ceil(100) - 1];
        Summary {
            runs: n,
            median,
            p95,
            max: samples[n - 1],
        }
    }

    /// How many times slower `other` is than `self`, by median.
    pub fn times_faster_than(&self, other: &Summary) -> f64 {
        other.median.as_secs_f64() / self.median.as_secs_f64()
    }
}

/// Runs `step` `warmup` times untimed, then `runs` times timed.
pub fn time_blocking(
    warmup: usize,
    runs: usize,
    mut step: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Summary> {
    for _ in 0..warmup {
        step()?;
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        step()?;
        samples.push(start.elapsed());
    }
    Ok(Summary::of(samples))
}

/// The async twin of [`time_blocking`].
pub async fn time_async(
    warmup: usize,
    runs: usize,
    mut step: impl AsyncFnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Summary> {
    for _ in 0..warmup {
        step().await?;
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        step().await?;
        samples.push(start.elapsed());
    }
    Ok(Summary::of(samples))
}

/// A duration in the unit that keeps three significant digits readable.
pub fn human(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros < 1_000.0 {
        format!("{micros:.1} µs")
    } else if micros < 1_000_000.0 {
        format!("{:.2} ms", micros / 1e3)
    } else {
        format!("{:.2} s", micros / 1e6)
    }
}
