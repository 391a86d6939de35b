//! Any text with secrets taken from it, through the redactor.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_redactor(data));
