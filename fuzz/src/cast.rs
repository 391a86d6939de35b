//! The checks of the recordings (`termpilot-cast`): reading any text, and
//! reading back what the writer wrote.

use std::time::Duration;

use termpilot_cast::{Event, Header, Writer, parse};

/// Reads `data` (as UTF-8, lossily) as a recording: never a panic. Then
/// writes the events `data` stands for (see [`events`]) and reads them
/// back: the header as written (refused only for an empty size), the
/// output the same text as all output written, the other events the same
/// and in order, at times that never go back.
pub fn check_cast_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = parse(&text);
    let byte = |n: usize| data.get(n).copied().unwrap_or(0);
    let header = Header {
        term_type: (byte(2) & 1 == 0).then(|| text.chars().take(8).collect()),
        timestamp: (byte(2) & 2 == 0).then(|| u64::from(byte(3)) << 56),
        title: (byte(2) & 4 == 0).then(|| text.chars().rev().take(8).collect()),
        ..Header::new(u16::from(byte(0)) % 4, u16::from(byte(1)))
    };
    let mut writer = Writer::new(&header);
    let events = events(data.get(4..).unwrap_or_default());
    for (at, event) in &events {
        writer.push(*at, event);
    }
    // A last byte that finishes no character, so that nothing stays carried.
    writer.push(Duration::ZERO, &Event::Output(b"\n".to_vec()));
    let written = writer.finish();
    let cast = match parse(&written) {
        Ok(cast) => cast,
        Err(error) => {
            assert!(header.cols == 0 || header.rows == 0, "{error}: {written}");
            return;
        }
    };
    assert_eq!(cast.header, header);
    let mut output: Vec<u8> = events.iter().flat_map(|(_, e)| output_of(e)).collect();
    output.push(b'\n');
    assert_eq!(cast.output(), String::from_utf8_lossy(&output).as_bytes());
    let others = |events: &[(Duration, Event)]| -> Vec<Event> {
        let others = events.iter().map(|(_, e)| e.clone());
        others.filter(|e| !matches!(e, Event::Output(_))).collect()
    };
    assert_eq!(others(&cast.events), others(&events));
    let times: Vec<Duration> = cast.events.iter().map(|(at, _)| *at).collect();
    assert!(times.is_sorted(), "{times:?}");
}

/// The events `data` stands for: each byte's low three bits pick the kind,
/// the byte itself (in milliseconds, and sometimes earlier than the event
/// before) its time, and the next few bytes what it carries.
fn events(data: &[u8]) -> Vec<(Duration, Event)> {
    let mut events = Vec::new();
    let mut now = Duration::ZERO;
    let mut rest = data;
    while let Some((&first, after)) = rest.split_first() {
        let take = usize::from(first >> 5).min(after.len());
        let (carried, after) = after.split_at(take);
        let text = String::from_utf8_lossy(carried).into_owned();
        let number = |n: usize| carried.get(n).copied().unwrap_or(0);
        let event = match first & 7 {
            0..=2 => Event::Output(carried.to_vec()),
            3 => Event::Input(text),
            4 => Event::Marker(text),
            5 => Event::Resize(
                u16::from(number(0)),
                u16::from_le_bytes([number(1), number(2)]),
            ),
            _ => Event::Exit(i32::from_le_bytes([number(0), 0, 0, number(1)])),
        };
        let at = match first & 8 {
            0 => now + Duration::from_millis(u64::from(first)),
            _ => now.saturating_sub(Duration::from_micros(u64::from(first))),
        };
        now = now.max(at);
        events.push((at, event));
        rest = after;
    }
    events
}

fn output_of(event: &Event) -> Vec<u8> {
    match event {
        Event::Output(bytes) => bytes.clone(),
        _ => Vec::new(),
    }
}
