//! Reading a recording back, strictly: what a player would refuse is an
//! error here too.

use std::time::Duration;

use serde_json::Value;

use crate::write::{Event, Header};

/// A recording that does not read as asciicast v3.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file is empty.
    #[error("empty recording")]
    Empty,
    /// The header line is not a v3 header.
    #[error("bad header: {0}")]
    Header(String),
    /// An event line is not `[interval, code, data]` as v3 has it.
    #[error("line {line}: {reason}")]
    Event {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// A recording read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cast {
    /// Its header.
    pub header: Header,
    /// Its events, each with when it happened since the start.
    pub events: Vec<(Duration, Event)>,
}

impl Cast {
    /// Everything the recording printed, in order.
    pub fn output(&self) -> Vec<u8> {
        let mut output = Vec::new();
        for (_, event) in &self.events {
            if let Event::Output(bytes) = event {
                output.extend_from_slice(bytes);
            }
        }
        output
    }

    /// The terminal's size at the end (the header's, or the last resize).
    pub fn final_size(&self) -> (u16, u16) {
        let mut size = (self.header.cols, self.header.rows);
        for (_, event) in &self.events {
            if let Event::Resize(cols, rows) = event {
                size = (*cols, *rows);
            }
        }
        size
    }
}

/// Reads the text of an asciicast v3 file. Lines starting with `#` are
/// comments, as v3 allows; event codes other than o, i, m, r, x are refused.
pub fn parse(text: &str) -> Result<Cast, Error> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty());
    let (_, first) = lines.next().ok_or(Error::Empty)?;
    let header = header(first)?;
    let mut events = Vec::new();
    let mut now = Duration::ZERO;
    for (index, line) in lines {
        let bad = |reason: &str| Error::Event {
            line: index + 1,
            reason: reason.to_owned(),
        };
        let (interval, event) = event(line).map_err(|reason| bad(&reason))?;
        now = now
            .checked_add(interval)
            .ok_or_else(|| bad("the time overflows"))?;
        events.push((now, event));
    }
    Ok(Cast { header, events })
}

fn header(line: &str) -> Result<Header, Error> {
    let bad = |reason: &str| Error::Header(reason.to_owned());
    let value: Value = serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
    if value["version"] != 3 {
        return Err(bad("version is not 3"));
    }
    let size = |key: &str| {
        value["term"][key]
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| bad(&format!("term.{key} is not a size")))
    };
    Ok(Header {
        cols: size("cols")?,
        rows: size("rows")?,
        term_type: value["term"]["type"].as_str().map(str::to_owned),
        timestamp: value["timestamp"].as_u64(),
        title: value["title"].as_str().map(str::to_owned),
    })
}

fn event(line: &str) -> Result<(Duration, Event), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let [interval, code, data] = value.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err("not [interval, code, data]".into());
    };
    let interval = interval
        .as_f64()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .ok_or("the interval is not a number of seconds")?;
    let data = data.as_str().ok_or("data is not a string")?;
    let event = match code.as_str() {
        Some("o") => Event::Output(data.as_bytes().to_vec()),
        Some("i") => Event::Input(data.to_owned()),
        Some("m") => Event::Marker(data.to_owned()),
        Some("r") => {
            let (cols, rows) = data.split_once('x').ok_or("resize is not COLSxROWS")?;
            let size = |n: &str| n.parse::<u16>().map_err(|e| e.to_string());
            Event::Resize(size(cols)?, size(rows)?)
        }
        Some("x") => Event::Exit(data.parse().map_err(|_| "exit status is not a number")?),
        _ => return Err(format!("unknown event code {code}")),
    };
    let interval = Duration::try_from_secs_f64(interval).map_err(|e| e.to_string())?;
    Ok((interval, event))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_v3() {
        assert_eq!(parse(""), Err(Error::Empty));
        assert!(matches!(
            parse(r#"{"version":2,"width":80,"height":24}"#),
            Err(Error::Header(_))
        ));
        let header = r#"{"version":3,"term":{"cols":80,"rows":24}}"#;
        for bad in [
            r#"[0.1,"o"]"#,
            r#"[-1,"o","x"]"#,
            r#"[0.1,"q","x"]"#,
            r#"[0.1,"r","80"]"#,
        ] {
            let text = format!("{header}\n{bad}\n");
            assert!(
                matches!(parse(&text), Err(Error::Event { line: 2, .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn intervals_add_up_and_comments_are_skipped() {
        let text = "{\"version\":3,\"term\":{\"cols\":80,\"rows\":24}}\n# note\n\
                    [0.5,\"o\",\"a\"]\n[0.25,\"r\",\"100x40\"]\n[1,\"o\",\"b\"]\n";
        let cast = parse(text).unwrap();
        let times: Vec<Duration> = cast.events.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            times,
            [
                Duration::from_millis(500),
                Duration::from_millis(750),
                Duration::from_millis(1750)
            ]
        );
        assert_eq!(cast.output(), b"ab");
        assert_eq!(cast.final_size(), (100, 40));
    }
}
