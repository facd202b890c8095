//! The demo, run as a user runs it: the real binary, end to end.

use std::process::Command;

#[test]
fn demo_runs_a_whole_session_and_verifies_cleanup() {
    let output = Command::new(env!("CARGO_BIN_EXE_debug-sidecar"))
        .arg("demo")
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "demo failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "total: 6000",
        "stop blocked",
        "[Proceed]  [Mark fixed]",
        "\"probeId\":\"p1\"",
        "total: 5400",
        "Cleanup is not finished",
        "Cleanup verified",
        "2 run(s) (2 log line(s)); 1 probe(s) removed",
    ] {
        assert!(
            stdout.contains(expected),
            "missing `{expected}` in:\n{stdout}"
        );
    }
    assert!(
        output.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
