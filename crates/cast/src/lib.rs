//! Recordings of panes in asciicast v3, the format `asciinema play` and the
//! asciinema web player read: a JSON header line, then one JSON array per
//! event, `[interval, code, data]`, the interval in seconds since the event
//! before.
//!
//! [`Writer`] turns events with their times into a file's text (output
//! cut anywhere, even inside a UTF-8 character, is carried over to the
//! next output event); [`output_events`] takes a pane's output from its
//! journal with the times it arrived; [`parse`] reads a file back, strictly,
//! and [`Cast::output`] is everything it printed, to replay through a
//! terminal emulator. No I/O here: the caller writes and reads files.
//!
//! ```
//! use std::time::Duration;
//! use termpilot_cast::{Event, Header, Writer, parse};
//!
//! let mut writer = Writer::new(&Header::new(80, 24));
//! writer.push(Duration::ZERO, &Event::Marker("run_command ls (call 1)".into()));
//! writer.push(Duration::from_millis(250), &Event::Output(b"a.txt\r\n".to_vec()));
//! writer.push(Duration::from_millis(300), &Event::Exit(0));
//! let text = writer.finish();
//! assert!(text.starts_with(r#"{"version":3,"term":{"cols":80,"rows":24"#));
//!
//! let cast = parse(&text)?;
//! assert_eq!(cast.output(), b"a.txt\r\n");
//! assert_eq!(cast.events[1].0, Duration::from_millis(250));
//! # Ok::<(), termpilot_cast::Error>(())
//! ```

#![deny(missing_docs)]

mod journal;
mod read;
mod write;

pub use journal::output_events;
pub use read::{Cast, Error, parse};
pub use write::{Event, Header, Writer};
