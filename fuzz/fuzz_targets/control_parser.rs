//! Arbitrary bytes, in arbitrary chunks, into the control-mode parser.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_control_parser(data));
