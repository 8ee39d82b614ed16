//! GitHub behind Quorum's SCM traits (F-GW-4, F-GW-8, F-PUB-1..3): the
//! [`GitHub`] client is a [`crate::ChangeSource`] (PR metadata, changed
//! files, write access), a [`crate::ReviewSink`] (reviews, fingerprints,
//! Check Runs or commit statuses) and a [`crate::TreeSource`] (files at a
//! commit). Only the publisher uses it as a sink.

mod change;
mod client;
pub(crate) mod config;
pub mod history;
pub mod pull;
mod sink;
mod tree;

pub use change::MAX_PR_FILES;
pub use client::{ApiError, ApiResponse, GitHub, error_message};
pub use config::{DEFAULT_API_URL, GitHubArgs, GitHubAuth, GitHubConfig};
pub use history::GitHubHistory;
