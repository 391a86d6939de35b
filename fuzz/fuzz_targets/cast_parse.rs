//! Any text as a recording, and recordings written from any events.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_cast_parse(data));
