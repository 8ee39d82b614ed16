//! Where reviews go.

use std::sync::Arc;

use async_trait::async_trait;
use quorum_core::{Review, ReviewRequest};
use quorum_store::StateStore;

/// Why a sink could not post.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The SCM refused one inline comment (GitHub's 422 "line must be part of
    /// the diff"): the publisher moves it to the body and retries once.
    #[error("inline comment {index} cannot be placed: {reason}")]
    InlineRejected { index: usize, reason: String },
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

/// A destination for reviews. Only the publisher holds one.
#[async_trait]
pub trait ReviewSink: Send + Sync + 'static {
    /// Fingerprints of Quorum comments already on this PR (F-PUB-3).
    async fn existing_fingerprints(&self, request: &ReviewRequest) -> Result<Vec<String>, SinkError>;
    /// Posts one review.
    async fn post(&self, request: &ReviewRequest, review: &Review) -> Result<Posted, SinkError>;
}

/// The local sink: the review as JSON in the run store, its fingerprints
/// recorded per PR, and Markdown on stdout when asked.
pub struct LocalSink {
    store: Arc<dyn StateStore>,
    print: bool,
}

impl LocalSink {
    pub fn new(store: Arc<dyn StateStore>, print: bool) -> Self {
        LocalSink { store, print }
    }
}

/// The key fingerprints of one PR are recorded under.
pub fn pr_key(request: &ReviewRequest) -> String {
    format!("{}#{}", request.repo.full_name, request.number)
}

#[async_trait]
impl ReviewSink for LocalSink {
    async fn existing_fingerprints(&self, request: &ReviewRequest) -> Result<Vec<String>, SinkError> {
        self.store
            .fingerprints(&pr_key(request))
            .await
            .map_err(|e| SinkError::Failed(e.to_string()))
    }

    async fn post(&self, request: &ReviewRequest, review: &Review) -> Result<Posted, SinkError> {
        let json = serde_json::to_string(review).map_err(|e| SinkError::Failed(e.to_string()))?;
        self.store
            .put_review(&review.job_id, &json)
            .await
            .map_err(|e| SinkError::Failed(e.to_string()))?;
        let fps: Vec<String> = review
            .inline
            .iter()
            .map(|c| c.fingerprint.clone())
            .chain(review.body_comments.iter().map(|c| c.fingerprint.clone()))
            .collect();
        self.store
            .add_fingerprints(&pr_key(request), &fps)
            .await
            .map_err(|e| SinkError::Failed(e.to_string()))?;
        if self.print {
            println!("{}", review.render_markdown());
        }
        Ok(Posted {
            location: format!("store:review:{}", review.job_id),
        })
    }
}
