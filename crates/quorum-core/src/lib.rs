//! Quorum's domain model. This crate does no IO: no network, no files, no
//! clocks. Everything here is a pure function of its inputs, so every other
//! crate can test against it without setting anything up.

pub mod budget;
pub mod cluster;
pub mod diff;
pub mod finding;
pub mod job;
pub mod review;
pub mod secret;

pub use diff::{DiffLine, FileDiff, FileStatus, Hunk, LineKind};
pub use finding::{Category, Evidence, Finding, Severity};
pub use job::{
    AgentRole, AgentStatus, ContextMode, FileChange, JobPolicy, Provider, PublishMode, RepoRef, ReviewRequest, RunState,
};
pub use review::{InlinePolicy, LowSeverity, Review, Verdict};
pub use secret::Secret;
