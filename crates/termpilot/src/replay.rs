//! `termpilot replay FILE`: plays a recording (asciicast v3, as
//! `export_recording` and `serve --record` write them) in this terminal, at
//! its own pace, long pauses shortened.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use termpilot_cast::Event;

/// Arguments of `termpilot replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recording (a .cast file).
    file: PathBuf,
    /// Play this many times faster.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Shorten every pause to at most this many seconds.
    #[arg(long, default_value_t = 2.0)]
    idle_limit: f64,
}

/// The longest pause replayed, in seconds.
const MAX_PAUSE_S: f64 = 86_400.0;

/// Plays the recording's output to stdout; markers and typed input are in
/// the file for players that show them.
pub fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let cast = termpilot_cast::parse(&text)
        .with_context(|| format!("{} is not an asciicast v3 recording", args.file.display()))?;
    // Bounded so that no pause overflows a Duration: at most a day, played
    // at least a thousandth as fast as recorded.
    let speed = match args.speed.is_finite() && args.speed > 0.0 {
        true => args.speed.max(0.001),
        false => 1.0,
    };
    let idle = match args.idle_limit.is_nan() {
        true => Duration::ZERO,
        false => Duration::from_secs_f64(args.idle_limit.clamp(0.0, MAX_PAUSE_S)),
    };
    let mut stdout = std::io::stdout().lock();
    let mut before = Duration::ZERO;
    for (at, event) in &cast.events {
        let pause = at.saturating_sub(before).min(idle).div_f64(speed);
        before = *at;
        std::thread::sleep(pause);
        if let Event::Output(bytes) = event {
            stdout.write_all(bytes)?;
            stdout.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
