//! A submitted form: its `secret` field decoded, the value checked, the
//! request body wiped.

use bytes::Bytes;

/// A value a password prompt can take as typed: not empty, one line.
pub(super) fn acceptable(value: &str) -> bool {
    !value.is_empty() && !value.chars().any(char::is_control)
}

/// The value of `name` in a urlencoded form (`+` is a space); `None` when
/// absent or not UTF-8.
pub(super) fn form_field(body: &[u8], name: &str) -> Option<String> {
    body.split(|&b| b == b'&').find_map(|pair| {
        let (key, value) = match pair.iter().position(|&b| b == b'=') {
            Some(at) => (&pair[..at], &pair[at + 1..]),
            None => (pair, &[][..]),
        };
        (percent_decode(key)? == name.as_bytes())
            .then(|| String::from_utf8(percent_decode(value)?).ok())?
    })
}

fn percent_decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text.iter();
    while let Some(&b) = rest.next() {
        out.push(match b {
            b'+' => b' ',
            b'%' => {
                let high = (*rest.next()? as char).to_digit(16)?;
                let low = (*rest.next()? as char).to_digit(16)?;
                (high * 16 + low) as u8
            }
            b => b,
        });
    }
    Some(out)
}

/// Overwrites a request body when this is its only copy.
pub(super) fn wipe_bytes(body: Bytes) {
    if let Ok(mut bytes) = body.try_into_mut() {
        bytes.fill(0);
        std::hint::black_box(&bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_decoded_and_values_checked() {
        assert_eq!(
            form_field(b"secret=a%2Bb+c%26", "secret").as_deref(),
            Some("a+b c&")
        );
        assert_eq!(
            form_field(b"x=1&secret=%C3%A9", "secret").as_deref(),
            Some("é")
        );
        assert_eq!(form_field(b"secret", "secret").as_deref(), Some(""));
        assert_eq!(form_field(b"other=1", "secret"), None);
        assert_eq!(form_field(b"secret=%FF", "secret"), None);
        assert_eq!(form_field(b"secret=%4", "secret"), None);
        assert!(acceptable("hunter 2"));
        assert!(!acceptable(""));
        assert!(!acceptable("two\nlines"));
        assert!(!acceptable("tab\there"));
    }
}
