//! debug-sidecar: a disciplined Debug Mode for coding agents.
//!
//! Layers, imports pointing downward only: `core` (pure domain) ->
//! `workspace` (I/O) -> `engine` (single owner of state) -> faces (`cli`, ...).

pub mod acp;
pub mod cli;
pub mod core;
pub mod engine;
pub mod hook;
pub mod mcp;
pub mod protocol;
pub mod rpc;
pub mod workspace;
