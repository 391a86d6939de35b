//! Arbitrary bytes through `quote` and back through `unquote`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_quote_roundtrip(data));
