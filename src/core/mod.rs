//! The pure core (DESIGN sections 2-5): no I/O, no async, no clock, no
//! randomness. Time and ids are arguments, so every rule here is testable as a
//! plain function.

pub mod activity;
pub mod agents;
pub mod budget;
pub mod certificate;
pub mod context_sync;
pub mod error;
pub mod escape;
pub mod findings;
pub mod go_imports;
pub mod harness;
pub mod harness_memory;
pub mod hits;
pub mod host;
pub mod json_skim;
pub mod json_string;
pub mod logpoint;
pub mod machine;
pub mod markers;
pub mod message_shape;
pub mod model;
pub mod progress;
pub mod rates;
pub mod redact;
pub mod reproduction;
pub mod revision;
pub mod revival;
pub mod run_id;
pub mod session_id;
pub mod snapshot;
pub mod target;
pub mod text;
pub mod turn;
pub mod wake;
