//! Arbitrary text through the key-name parser.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_key_names(data));
