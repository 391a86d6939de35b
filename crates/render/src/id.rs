//! The opaque name of a kept output: `o` and a number, never a path.

use std::fmt;
use std::str::FromStr;

use crate::StoreError;

/// The id under which an [`OutputStore`](crate::OutputStore) keeps a full output,
/// written `o7`. Only the store makes new ids; callers can only parse ids they were
/// given. Parsing is strict (`o`, then digits without a leading zero), so no caller
/// string can ever become part of a file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OutputId(u64);

impl OutputId {
    /// The longest id there can be, for reserving room in a budget.
    pub(crate) const WIDEST: OutputId = OutputId(u64::MAX);

    pub(crate) fn new(number: u64) -> Self {
        OutputId(number)
    }
}

impl fmt::Display for OutputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "o{}", self.0)
    }
}

impl FromStr for OutputId {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, StoreError> {
        let malformed = || StoreError::MalformedId {
            id: s.chars().take(40).collect(),
        };
        let digits = s.strip_prefix('o').ok_or_else(malformed)?;
        let well_formed = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !(digits.len() > 1 && digits.starts_with('0'));
        if !well_formed {
            return Err(malformed());
        }
        digits.parse().map(OutputId).map_err(|_| malformed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_text() {
        for n in [0, 7, 123_456, u64::MAX] {
            let id = OutputId::new(n);
            assert_eq!(id.to_string().parse::<OutputId>().unwrap(), id);
        }
    }

    #[test]
    fn anything_but_o_and_digits_is_refused() {
        for bad in [
            "",
            "o",
            "7",
            "O7",
            "o-1",
            "o07",
            "o7 ",
            "o7/../x",
            "../o7",
            "o18446744073709551616",
            "o٣",
        ] {
            assert!(bad.parse::<OutputId>().is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_refused_id_is_named_in_the_error() {
        let err = "../etc".parse::<OutputId>().unwrap_err();
        assert!(err.to_string().contains("../etc"), "{err}");
    }
}
