//! The local sink: where reviews go when no SCM is configured (the demo,
//! `quorum review`, a fleet reviewing local repositories). It lives with
//! the publisher, its only user, because it writes to the run store.

use std::sync::Arc;

use async_trait::async_trait;
use quorum_core::{Review, ReviewRequest};
use quorum_scm::{Posted, ReviewSink, SinkError};
use quorum_store::StateStore;

/// The local sink: the review's fingerprints recorded per PR (the publisher
/// stores the review itself), and Markdown on stdout when asked.
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

    /// The review JSON itself is stored by the publisher, for every sink.
    async fn post(&self, request: &ReviewRequest, review: &Review) -> Result<Posted, SinkError> {
        let fps = review.fingerprints();
        self.store
            .add_fingerprints(&pr_key(request), &fps)
            .await
            .map_err(|e| SinkError::Failed(e.to_string()))?;
        if self.print {
            println!("{}", review.render_terminal());
        }
        Ok(Posted {
            location: format!("store:review:{}", review.job_id),
        })
    }
}
