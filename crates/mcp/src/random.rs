//! Unguessable tokens from the kernel's random source, for the paths of
//! secret pages and the handles of questions awaiting the person's answer.

use std::io::Read;

/// `bytes` random bytes as lowercase hex digits; `None` when the kernel's
/// random source cannot be read (there is no safe fallback).
pub(crate) fn hex_token(bytes: usize) -> Option<String> {
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut buffer))
        .ok()?;
    Some(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_hex_of_the_length_asked_and_differ() {
        let a = hex_token(16).expect("random");
        let b = hex_token(16).expect("random");
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
