//! Where reviews go.

use async_trait::async_trait;
use quorum_core::{Review, ReviewRequest};

/// Why a sink could not post.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The SCM refused an inline comment (GitHub's 422 "Line could not be
    /// resolved"): the publisher moves it to the body and retries once.
    /// `index: None` when the SCM does not say which one (GitHub's review
    /// endpoint is all-or-nothing): every inline comment moves.
    #[error("an inline comment cannot be placed: {reason}")]
    InlineRejected { index: Option<usize>, reason: String },
    /// The SCM will not take this review (no access, the PR is gone):
    /// retrying will not help.
    #[error("the SCM refused the review: {0}")]
    Refused(String),
    /// Transient failure; the publisher releases its guard and retries.
    #[error("posting failed: {0}")]
    Failed(String),
}

/// What a sink posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posted {
    /// Where a human can see it (URL, or `store:review:<job>`).
    pub location: String,
}

/// The review's status on the SCM (a Check Run, a commit status), so a
/// branch protection rule can require Quorum.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckStatus {
    /// The agents are at work.
    InProgress,
    /// Published: the verdict and a summary.
    Completed {
        verdict: quorum_core::Verdict,
        summary: String,
        findings: usize,
    },
}

/// A destination for reviews. Only the publisher holds one.
#[async_trait]
pub trait ReviewSink: Send + Sync + 'static {
    /// Fingerprints of Quorum comments already on this PR (F-PUB-3).
    async fn existing_fingerprints(&self, request: &ReviewRequest) -> Result<Vec<String>, SinkError>;
    /// Posts one review.
    async fn post(&self, request: &ReviewRequest, review: &Review) -> Result<Posted, SinkError>;
    /// Reports the review's status on the change's head commit. Sinks with
    /// no such notion (the local sink) do nothing.
    async fn report_status(&self, request: &ReviewRequest, status: &CheckStatus) -> Result<(), SinkError> {
        let _ = (request, status);
        Ok(())
    }
}
