//! Links the `debug-sidecar` binary at a fixed address on Linux.
//!
//! A harness starts the binary on every hook event, so its start is paid
//! thousands of times a session. As a position-independent executable it
//! made the dynamic loader write 26,000 pointers at each start (a hundred
//! copied pages), a sixth of a hook's time (issue 33). Linked at a fixed
//! address, as Go links its programs by default, those are written by the
//! linker once. The heap, the stack and the shared libraries are still
//! placed at random. Only the binary is linked so: tests, benchmarks and
//! proc macros are not.
//!
//! It also writes the tables of the built-in secret anchors' scan into
//! `OUT_DIR` (`src/core/redact/anchor_tables.rs`): made at run time they
//! cost every `run` whose program prints 4.1M instructions.

#[allow(dead_code)]
#[path = "src/core/redact/tables.rs"]
mod tables;

#[path = "src/core/redact/anchor_tables.rs"]
mod anchor_tables;

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(
        out.join("anchor_tables.rs"),
        anchor_tables::built_in_source(),
    )
    .expect("OUT_DIR takes a file");
    for input in [
        "build.rs",
        "src/core/redact/tables.rs",
        "src/core/redact/anchor_tables.rs",
    ] {
        println!("cargo:rerun-if-changed={input}");
    }
}
