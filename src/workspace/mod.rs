//! The I/O layer: run log files, the probe scan, snippet templates.

pub mod runlog;
pub mod scan;
pub mod snippet;
