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

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
