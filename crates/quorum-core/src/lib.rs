//! Quorum's domain model. This crate does no IO: no network, no files, no
//! clocks. Everything here is a pure function of its inputs, so every other
//! crate can test against it without setting anything up.

pub mod backoff;
pub mod budget;
pub mod cluster;
pub mod commit;
pub mod diff;
pub mod error;
pub mod finding;
pub mod job;
pub mod lang;
pub mod repo_config;
pub mod review;
pub mod secret;

pub use commit::{CommitId, CommitIdError, is_commit_id};
pub use diff::{DiffLine, FileDiff, FileStatus, Hunk, LineKind};
pub use finding::{Category, Evidence, Finding, Severity};
pub use job::{
    AgentRole, AgentStatus, ContextMode, FileChange, JobPolicy, Provider, PublishMode, RepoRef, ReviewRequest, RunState,
};
pub use lang::{Family, Lang, is_test_path};
pub use review::{
    AgentUsage, InlinePolicy, LowSeverity, Review, Verdict, parse_fingerprints, parse_rule_marker, strip_markers,
};
pub use secret::Secret;
