//! Arbitrary bytes through the terminal-text cleaner and the journal's line view.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_terminal_cleaner(data));
