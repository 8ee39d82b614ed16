//! SCM adapters. Two seams:
//! - [`ChangeSource`]: the intake asks it for the files and patches of a
//!   change (F-GW-4). [`LocalGit`] reads a local repository in-process (gitoxide).
//! - [`ReviewSink`]: the publisher hands it one [`Review`](quorum_core::Review); only the
//!   publisher holds a sink, so only the publisher writes to the SCM.
//!   The local sink (no SCM: fingerprints in the run store) is the
//!   publisher's own (`quorum_publisher::LocalSink`).
//!
//! - [`TreeSource`]: read-only access to a repository's files at a commit.
//!
//! [`github`] implements all three against GitHub's REST API (octocrab),
//! [`gitlab`] against GitLab's; [`ScmApi`] is whichever one a fleet uses;
//! local git and the local sink serve `quorum review`, the demo and the eval.

mod clone;
mod git;
pub mod github;
pub mod gitlab;
mod gix_diff;
mod http_cache;
mod retry;
mod scm;
mod sink;
mod snapshot;
mod tree;

pub use clone::{CloneCache, TreeArgs, Trees};
pub use git::{LocalGit, LocalRepos, validate_ref};
pub use gix_diff::unified_patch;
pub use http_cache::HttpCache;
pub use quorum_core::is_commit_id;
pub use scm::{ScmApi, ScmArgs};
pub use sink::{CheckStatus, Posted, ReviewSink, SinkError};
pub use snapshot::{MAX_PATCH_BYTES, Snapshot, snapshot};
pub use tree::{MAX_FILE_BYTES, TreeSource, read_dir_tree, validate_path};

use async_trait::async_trait;
use quorum_core::FileChange;

/// Why a change could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum ScmError {
    /// Bad input (unknown repo, invalid ref): retrying will not help.
    #[error("{0}")]
    Invalid(String),
    /// The SCM (or git) failed; may work later.
    #[error("{0}")]
    Unavailable(String),
}

/// What the intake needs to know about a change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub base_sha: String,
    pub head_sha: String,
    pub files: Vec<FileChange>,
}

/// A pull request as the SCM describes it now (for slash commands, whose
/// event carries no commits).
#[derive(Debug, Clone, PartialEq)]
pub struct PullRequestInfo {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub author_is_bot: bool,
    pub draft: bool,
    /// Closed or merged PRs are not reviewed.
    pub open: bool,
    pub base_sha: String,
    pub head_sha: String,
    pub labels: Vec<String>,
}

/// Percent-encodes a URL part; `/` is kept with `keep_slash` (GitHub's
/// content paths), encoded without (GitLab's project ids and file paths).
pub(crate) fn percent_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// GitHub's marks of a bot account: the user type, or the `[bot]` login suffix.
pub fn is_bot(login: &str, user_type: &str) -> bool {
    user_type == "Bot" || login.ends_with("[bot]")
}

/// Where changes come from.
#[async_trait]
pub trait ChangeSource: Send + Sync + 'static {
    /// Files and patches of `repo` between `base` and `head`.
    async fn fetch_change(&self, repo: &str, number: u64, base: &str, head: &str) -> Result<Change, ScmError>;

    /// The pull request `number` of `repo`.
    async fn pull_request(&self, repo: &str, number: u64) -> Result<PullRequestInfo, ScmError> {
        let _ = number;
        Err(ScmError::Invalid(format!(
            "{repo}: this change source has no pull requests (configure GitHub or GitLab)"
        )))
    }

    /// Whether `user` may push to `repo` (slash commands need write access).
    async fn can_write(&self, repo: &str, user: &str) -> Result<bool, ScmError> {
        let _ = (repo, user);
        Ok(false)
    }
}
