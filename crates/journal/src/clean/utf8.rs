//! UTF-8 decoding that survives characters split across feeds.

/// The replacement for every maximal invalid subsequence, as `String::from_utf8_lossy`
/// does, so that the result is the same however the input was split.
pub(crate) const REPLACEMENT: &str = "\u{FFFD}";

/// The first bytes of a character whose remaining bytes have not arrived yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Carry {
    bytes: [u8; 4],
    len: u8,
}

impl Carry {
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    fn push(&mut self, byte: u8) {
        self.bytes[usize::from(self.len)] = byte;
        self.len += 1;
    }

    fn clear(&mut self) {
        self.len = 0;
    }
}

/// One piece of decoded text.
pub(crate) enum Decoded<'a> {
    /// Valid text (possibly empty).
    Valid(&'a str),
    /// One invalid sequence, to be shown as U+FFFD.
    Invalid,
}

/// Decodes `run` (which contains no control bytes), continuing a character carried over
/// from the previous run and carrying an incomplete character at its end.
pub(crate) fn decode(carry: &mut Carry, mut run: &[u8], mut out: impl FnMut(Decoded<'_>)) {
    while !carry.is_empty() && !run.is_empty() {
        carry.push(run[0]);
        match std::str::from_utf8(carry.as_slice()) {
            Ok(text) => {
                out(Decoded::Valid(text));
                carry.clear();
                run = &run[1..];
            }
            Err(error) if error.error_len().is_none() => run = &run[1..],
            Err(_) => {
                // The new byte does not continue the character: the carried bytes are
                // one invalid sequence and the new byte is decoded afresh.
                carry.clear();
                out(Decoded::Invalid);
            }
        }
    }
    let mut chunks = run.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        out(Decoded::Valid(chunk.valid()));
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        if chunks.peek().is_none() && is_incomplete(invalid) {
            invalid.iter().for_each(|&byte| carry.push(byte));
        } else {
            out(Decoded::Invalid);
        }
    }
}

/// Ends a run: a character still waiting for bytes never gets them.
pub(crate) fn flush(carry: &mut Carry, mut out: impl FnMut(Decoded<'_>)) {
    if !carry.is_empty() {
        carry.clear();
        out(Decoded::Invalid);
    }
}

fn is_incomplete(bytes: &[u8]) -> bool {
    matches!(std::str::from_utf8(bytes), Err(error) if error.error_len().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_split(pieces: &[&[u8]]) -> String {
        let mut carry = Carry::default();
        let mut text = String::new();
        let mut push = |piece: Decoded<'_>| match piece {
            Decoded::Valid(valid) => text.push_str(valid),
            Decoded::Invalid => text.push_str(REPLACEMENT),
        };
        for piece in pieces {
            decode(&mut carry, piece, &mut push);
        }
        flush(&mut carry, &mut push);
        text
    }

    #[test]
    fn joins_a_character_split_in_three() {
        let crab = "🦀".as_bytes();
        assert_eq!(decode_split(&[&crab[..1], &crab[1..3], &crab[3..]]), "🦀");
    }

    #[test]
    fn matches_lossy_decoding_for_every_split() {
        let input: &[u8] = b"a\xe2\x82\xac\xed\xa0\x80\xf0\x90b\xc3\xf4\x8f\xbf\xbf\xff";
        let expected = String::from_utf8_lossy(input);
        for cut in 0..=input.len() {
            assert_eq!(
                decode_split(&[&input[..cut], &input[cut..]]),
                expected,
                "cut {cut}"
            );
        }
    }

    #[test]
    fn incomplete_character_at_the_end_becomes_replacement() {
        assert_eq!(decode_split(&[b"ok\xe2\x82"]), "ok\u{FFFD}");
    }
}
