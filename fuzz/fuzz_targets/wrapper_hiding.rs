//! Arbitrary text through wrapper hiding and the echo rules.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_wrapper_hiding(data));
