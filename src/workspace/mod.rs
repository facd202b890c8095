//! The I/O layer: session state stores, run log files, the probe scan,
//! snippet templates.

pub mod artifacts;
pub mod breadcrumb;
pub mod committed;
pub mod ended;
pub mod git_index;
pub mod ingest;
pub mod logpoints;
pub mod logread;
pub mod redaction;
pub mod reproduce;
pub mod runlog;
pub mod scan;
pub mod settings;
pub mod snippet;
pub mod store;
pub mod targets;
pub mod watch;
