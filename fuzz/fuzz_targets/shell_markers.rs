//! A command's markers followed through arbitrary pane output, whole and chunked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| termpilot_fuzz::check_shell_markers(data));
