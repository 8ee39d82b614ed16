//! GitLab behind Quorum's SCM traits: the [`GitLab`] client is a
//! [`crate::ChangeSource`] (merge requests, their diffs, who may push), a
//! [`crate::ReviewSink`] (discussions with positions, a summary note,
//! fingerprints, a commit status) and a [`crate::TreeSource`] (files at a
//! commit). Projects are named by their full path (`group/sub/project`).

mod change;
mod client;
mod config;
pub mod history;
mod sink;
mod tree;

use change::DiffRefs;
pub use change::{MAX_MR_FILES, is_bot};
pub use client::{GitLab, GitLabError, GitLabResponse, error_message};
pub use config::{DEFAULT_URL, GitLabArgs, GitLabConfig};
pub use history::GitLabHistory;
