//! `detach` runs the hook and ends the session with the child left to go by itself.

use crate::fixture::Fixture;
use crate::runner::RunnerSpec;

#[test]
fn detach_runs_the_hook_and_reports_detached() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("detached");
    // The child plays a relay that leaves once the hook told it to.
    let script = r#"printf READY; while [ ! -e "$MARKER" ]; do sleep 0.02; done; exit 7"#;
    let mut spec = RunnerSpec::new(script)
        .bind("C-d=detach")
        .env("MARKER", &marker);
    spec.detach_marker = Some(marker.clone());
    let mut fixture = Fixture::start(spec);
    fixture.terminal.write(b"\x04");
    // Detached, not the relay's own exit code 7.
    assert_eq!(fixture.wait_restored(), 0);
    assert_eq!(std::fs::read(&marker).unwrap(), b"detach");
}
