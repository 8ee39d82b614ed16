//! The `quorum` operator CLI as a library, so tests drive the same code the
//! binary runs.

pub mod bench;
pub mod demo;
pub mod eval;
pub mod eval_report;
pub mod fleet;
pub mod review;
pub mod webhook;
