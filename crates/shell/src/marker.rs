//! Finding a command's markers in raw pane output.
//!
//! The shell prints `ESC ] 7770 ; NONCE ; VALUE BEL` right before the
//! command runs (`VALUE` is `start`) and when it finishes (`VALUE` is the
//! exit code). The echo of the wrapper shows the same text with `\033` in
//! place of the ESC byte, so it never matches.

/// What every marker starts with: the OSC number of the completion marker.
pub const MARKER_PREFIX: &[u8] = b"\x1b]7770;";

/// The longest marker value (`start`, or an exit code) looked for after the
/// prefix: a BEL later than this ends no marker.
const VALUE_MAX: usize = 16;

/// `ESC ] 7770 ; NONCE ;`: what both markers of the command with `nonce`
/// start with.
pub(crate) fn marker_for(nonce: &str) -> Vec<u8> {
    let mut marker = MARKER_PREFIX.to_vec();
    marker.extend_from_slice(nonce.as_bytes());
    marker.push(b';');
    marker
}

/// A marker found in a slice: its value, and the indices where it begins
/// and ends.
pub(crate) type Found<'a> = (&'a [u8], usize, usize);

/// The markers starting with `marker` in `bytes`, and how many bytes are
/// done with: a marker may be arriving in the rest.
pub(crate) fn markers_in<'a>(marker: &[u8], bytes: &'a [u8]) -> (Vec<Found<'a>>, usize) {
    let finder = memchr::memmem::Finder::new(marker);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = finder.find(&bytes[from..]).map(|i| from + i) {
        let value_at = at + marker.len();
        let window = &bytes[value_at..bytes.len().min(value_at + VALUE_MAX + 1)];
        match memchr::memchr(0x07, window) {
            Some(bell) => {
                found.push((&window[..bell], at, value_at + bell + 1));
                from = value_at + bell + 1;
            }
            None if window.len() <= VALUE_MAX => return (found, at),
            None => from = at + 1,
        }
    }
    // The last bytes may be the beginning of a marker.
    (
        found,
        bytes.len().saturating_sub(marker.len() - 1).max(from),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_whole_markers_and_holds_back_a_partial_one() {
        let marker = marker_for("tp01");
        let stream = b"a\x1b]7770;tp01;start\x07out\x1b]7770;tp01;0\x07\x1b]7770;tp0";
        let (found, done) = markers_in(&marker, stream);
        let values: Vec<&[u8]> = found.iter().map(|f| f.0).collect();
        assert_eq!(values, [&b"start"[..], b"0"]);
        assert_eq!((found[0].1, found[0].2), (1, 19));
        assert_eq!(
            done,
            stream.len() - 10,
            "the partial marker is not done with"
        );
    }

    #[test]
    fn a_value_too_long_for_a_marker_is_skipped() {
        let marker = marker_for("tp01");
        let stream = b"\x1b]7770;tp01;0123456789abcdefXYZ\x07 and on";
        let (found, done) = markers_in(&marker, stream);
        assert!(found.is_empty());
        assert_eq!(done, stream.len() - (marker.len() - 1));
    }
}
