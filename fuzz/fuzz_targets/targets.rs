//! Any text as a pane, window or session target and as a session or window name.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_targets(data));
