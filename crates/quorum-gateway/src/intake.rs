//! Intake: from "review this change" to a job on `pr.review.requested`.
//!
//! Order matters for "loses nothing": claim the dedupe key, fetch the
//! change, store the job, publish. If fetching or publishing fails the claim
//! is released, so a redelivery can try again instead of finding a job id
//! that never reached the bus.

use std::sync::Arc;

use quorum_core::budget::{PatchBudget, fit_patches};
use quorum_core::{JobPolicy, Provider, RepoRef, ReviewRequest, RunState};
use quorum_events::{Payload, ReviewRequested, SCHEMA_VERSION};
use quorum_runtime::{BusProducer, now_ms};
use quorum_scm::{ChangeSource, ScmError};
use quorum_store::{Claim, JobRecord, StateStore};

/// A change to review, however it arrived.
#[derive(Debug, Clone)]
pub struct ChangeRequest {
    pub provider: Provider,
    pub repo: String,
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub base: String,
    pub head: String,
    pub policy: JobPolicy,
    /// Which files are reviewed and how big a change may be (from the
    /// repository's `.quorum.yml`); `None`: every file.
    pub files: Option<crate::policy::Policy>,
    /// Makes this request its own run even for a head already reviewed: a
    /// slash command's comment id (a redelivery of the comment is still one).
    pub dedupe_suffix: Option<String>,
}

/// The outcome of a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    pub job_id: String,
    /// The same repo + PR + head SHA was already submitted; this is its job.
    pub duplicate: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("{0}")]
    Invalid(String),
    #[error("temporarily unavailable: {0}")]
    Unavailable(String),
    /// The policy leaves nothing to review (too big, every file excluded).
    #[error("not reviewed: {0}")]
    Skipped(String),
}

pub struct Intake {
    store: Arc<dyn StateStore>,
    producer: BusProducer,
    source: Arc<dyn ChangeSource>,
    budget: PatchBudget,
}

impl Intake {
    pub fn new(store: Arc<dyn StateStore>, producer: BusProducer, source: Arc<dyn ChangeSource>) -> Self {
        Intake {
            store,
            producer,
            source,
            budget: PatchBudget::default(),
        }
    }

    pub fn source(&self) -> &Arc<dyn ChangeSource> {
        &self.source
    }

    /// How much patch text one request may carry; the rest is left out
    /// and listed in the review as not reviewed.
    pub fn with_budget(mut self, budget: PatchBudget) -> Self {
        self.budget = budget;
        self
    }

    /// The `intake` span is the root of the job's trace: the request
    /// published here carries it as `traceparent`.
    #[tracing::instrument(name = "intake", skip_all, fields(service = "gateway", repo = %change.repo, pr = change.number))]
    pub async fn submit(&self, change: ChangeRequest) -> Result<Submitted, IntakeError> {
        let unavailable = |e: quorum_store::StoreError| IntakeError::Unavailable(e.to_string());
        let mut dedupe = quorum_core::job::dedupe_key(&change.repo, change.number, &change.head);
        if let Some(suffix) = &change.dedupe_suffix {
            dedupe = format!("{dedupe}/{suffix}");
        }
        let job_id = uuid::Uuid::new_v4().to_string();
        match self.store.claim_dedupe(&dedupe, &job_id).await.map_err(unavailable)? {
            Claim::Existing(existing) => {
                return Ok(Submitted {
                    job_id: existing,
                    duplicate: true,
                });
            }
            Claim::Claimed => {}
        }
        match self.enqueue(&job_id, change).await {
            Ok(()) => Ok(Submitted {
                job_id,
                duplicate: false,
            }),
            Err(e @ IntakeError::Skipped(_)) => {
                // No run was stored: nothing to mark failed.
                self.release_dedupe(&dedupe).await;
                Err(e)
            }
            Err(e) => {
                self.release_dedupe(&dedupe).await;
                if let Err(store_err) = self
                    .store
                    .set_run_state(&job_id, RunState::Failed, Some(&e.to_string()))
                    .await
                {
                    tracing::warn!(job_id, error = %store_err, "could not mark the run failed after its intake failed");
                }
                Err(e)
            }
        }
    }

    /// Lets a redelivery of this change through again. If the release
    /// fails the claim holds until its TTL lapses, and only then can the
    /// change be retried: say so, since nothing else will.
    async fn release_dedupe(&self, dedupe: &str) {
        if let Err(e) = self.store.release_dedupe(dedupe).await {
            tracing::warn!(dedupe, error = %e, "could not release the dedupe claim; a redelivery is refused until it expires");
        }
    }

    async fn enqueue(&self, job_id: &str, change: ChangeRequest) -> Result<(), IntakeError> {
        let fetched = self
            .source
            .fetch_change(&change.repo, change.number, &change.base, &change.head)
            .await
            .map_err(|e| match e {
                ScmError::Invalid(m) => IntakeError::Invalid(m),
                ScmError::Unavailable(m) => IntakeError::Unavailable(m),
            })?;
        let mut files = fetched.files;
        if let Some(policy) = &change.files {
            policy.select_files(&mut files).map_err(IntakeError::Skipped)?;
            if files.is_empty() {
                return Err(IntakeError::Skipped(format!(
                    "every changed file is excluded by {}",
                    crate::policy::CONFIG_PATH
                )));
            }
        }
        let omitted = fit_patches(&mut files, self.budget);
        if omitted > 0 {
            tracing::warn!(
                job_id,
                omitted,
                "patches over the size budget are left out of the review"
            );
        }
        let now = now_ms();
        let request = ReviewRequest {
            job_id: job_id.to_string(),
            repo: RepoRef {
                provider: change.provider,
                full_name: change.repo,
            },
            number: change.number,
            title: change.title,
            body: change.body,
            author: change.author,
            base_sha: fetched.base_sha,
            head_sha: fetched.head_sha,
            files,
            policy: change.policy,
            requested_at_ms: now,
        };
        let message = ReviewRequested {
            schema_version: SCHEMA_VERSION,
            request,
        };
        // Even without patches a change can be too big to travel (tens of
        // thousands of files); that is the change's fault, not a retry's.
        let size = message.encode().len();
        if size > self.budget.request_bytes {
            return Err(IntakeError::Invalid(format!(
                "the change is too large to review: {} files make a {} KiB request even with {omitted} patch(es) left out; the limit is {} KiB",
                message.request.files.len(),
                size / 1024,
                self.budget.request_bytes / 1024
            )));
        }
        let request = &message.request;
        let unavailable = |e: quorum_store::StoreError| IntakeError::Unavailable(e.to_string());
        self.store
            .put_job(&JobRecord {
                request: request.clone(),
                created_ms: now,
            })
            .await
            .map_err(unavailable)?;
        self.store.mark_pending(job_id, now).await.map_err(unavailable)?;
        self.producer
            .publish(&message)
            .await
            .map_err(|e| IntakeError::Unavailable(e.to_string()))?;
        Ok(())
    }
}
