//! Integration tests of the PTY backend: a harness plays the user's terminal through a
//! PTY of its own and runs the program under test on it, writing bytes with controlled
//! delays. The program under test is this same binary re-run as a runner (library
//! tests) or the real `termpilot` binary named by `TERMPILOT_BIN` (end-to-end tests).

mod bindings;
mod detach;
mod end_to_end;
mod fixture;
mod harness;
mod plain_io;
mod restore;
mod runner;

/// Not a test: the entry point of the runner process that the tests start. In an
/// ordinary test run it returns at once.
#[test]
fn runner_entry() {
    if let Some(code) = runner::run_from_env() {
        std::process::exit(code);
    }
}
