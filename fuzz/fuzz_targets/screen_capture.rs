//! Any bytes as a `capture-pane -p -e -J` text, laid out and drawn.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_screen_capture(data));
