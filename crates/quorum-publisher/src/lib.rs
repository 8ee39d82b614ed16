//! The publisher (F-PUB-1..4), the only service that writes to the SCM.
//!
//! One review per job: a run already published (or drafted) makes a
//! redelivered `review.completed` a no-op; while posting, the publisher holds
//! a lease per job so two replicas never post at once. The lease is released
//! when posting fails so the retry can post (after 3 failures the runtime
//! dead-letters the message), and it lapses by itself if its holder crashes
//! before posting, so a crash cannot leave a review that is never posted. Comments
//! already on the PR (by fingerprint) are not repeated. When the sink refuses
//! an inline comment, it moves to the body and the post is retried once — a
//! comment is never dropped. In draft mode the review is stored, not posted.

mod local_sink;

pub use local_sink::{LocalSink, pr_key};

use std::sync::Arc;

use async_trait::async_trait;
use quorum_core::review::{Placement, build_review};
use quorum_core::{PublishMode, Review, RunState};
use quorum_events::{CompletedReview, ConsumerGroup, DraftDecided};
use quorum_runtime::{
    CancellationToken, Delivery, Handler, HandlerError, Metrics, OutMessage, RuntimeError, ServiceContext,
    ServiceHandle, WorkerSpec, now_ms,
};
use quorum_scm::{CheckStatus, ReviewSink, SinkError};
use quorum_store::StateStore;
use tracing::info;

pub struct Publisher {
    store: Arc<dyn StateStore>,
    sink: Arc<dyn ReviewSink>,
    metrics: Metrics,
    /// How long a publisher may hold a job before another may take over.
    lease: std::time::Duration,
    /// This publisher's name in the store's leases.
    instance: String,
}

/// Whether a run needs nothing more from a publisher.
fn settled(state: RunState) -> bool {
    matches!(
        state,
        RunState::Published | RunState::Draft | RunState::Approved | RunState::Discarded
    )
}

/// How often a publisher waiting for another's lease looks again.
const LEASE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Default [`Publisher`] lease: far longer than a post takes.
pub const DEFAULT_LEASE: std::time::Duration = std::time::Duration::from_secs(120);

/// What happened to a completed review.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Posted,
    Drafted,
    AlreadyPublished,
}

impl Publisher {
    pub fn new(store: Arc<dyn StateStore>, sink: Arc<dyn ReviewSink>, metrics: Metrics) -> Self {
        Publisher {
            store,
            sink,
            metrics,
            lease: DEFAULT_LEASE,
            instance: quorum_store::new_lease_holder(),
        }
    }

    pub fn with_lease(mut self, lease: std::time::Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The review a completed job turns into, minus comments already posted.
    pub async fn build(&self, completed: &CompletedReview) -> Result<Review, HandlerError> {
        let posted = self
            .sink
            .existing_fingerprints(&completed.request)
            .await
            .map_err(HandlerError::retryable)?;
        let diffs = completed.request.diffs();
        let Placement {
            inline,
            body_comments,
            notes,
        } = build_review(&completed.kept(), &diffs, &posted, &completed.request.policy.inline);
        Ok(Review {
            location: None,
            job_id: completed.request.job_id.clone(),
            verdict: completed.verdict,
            summary: completed.summary.clone(),
            inline,
            body_comments,
            agents: completed.agents.clone(),
            rejected: completed
                .judged
                .iter()
                .filter(|j| !j.keep)
                .map(|j| (j.finding.clone(), j.reason.clone()))
                .collect(),
            kept: completed.kept(),
            not_reviewed: completed
                .request
                .files
                .iter()
                .filter_map(|f| f.omitted.as_ref().map(|why| (f.path.clone(), why.clone())))
                .collect(),
            notices: completed.request.policy.warnings.clone(),
            notes,
        })
    }

    /// Publishes as a holder of its own: every call is a different
    /// publisher as far as the lease goes.
    pub async fn publish(&self, completed: &CompletedReview) -> Result<Outcome, HandlerError> {
        self.publish_as(completed, &quorum_store::new_lease_holder()).await
    }

    /// Publishes holding the job's lease as `holder`. The same holder takes
    /// its own lease again: a retry whose first attempt posted but could not
    /// release the lease (the store went down in between) goes on at once
    /// instead of waiting out a lease nobody else holds (found by
    /// `make chaos` with Redis restarts). The bus handler's holder is the
    /// process.
    pub async fn publish_as(&self, completed: &CompletedReview, holder: &str) -> Result<Outcome, HandlerError> {
        let job_id = &completed.request.job_id;
        let run = self.store.get_run(job_id).await.map_err(HandlerError::retryable)?;
        if run.is_some_and(|r| settled(r.state)) {
            return Ok(Outcome::AlreadyPublished);
        }
        let lease = format!("publish:{job_id}");
        let ttl = self.lease.as_millis() as u64;
        // Another publisher holds the lease: it is posting, or it died
        // holding it (a redelivery after `kill -9`). Wait for it to finish
        // or for the lease to lapse, at most one lease: retrying at once
        // would spend the message's attempts in milliseconds and
        // dead-letter a review that only had to wait (found by `make chaos`).
        let waiting_since = std::time::Instant::now();
        while !self
            .store
            .acquire_lease(&lease, holder, ttl)
            .await
            .map_err(HandlerError::retryable)?
        {
            if waiting_since.elapsed() > self.lease {
                return Err(HandlerError::retryable(format!(
                    "job {job_id} is being published by another publisher"
                )));
            }
            tokio::time::sleep(LEASE_POLL.min(self.lease)).await;
            let run = self.store.get_run(job_id).await.map_err(HandlerError::retryable)?;
            if run.is_some_and(|r| settled(r.state)) {
                return Ok(Outcome::AlreadyPublished);
            }
        }
        match self.publish_guarded(completed).await {
            Ok(o) => Ok(o),
            Err(e) => {
                // Let the retry post.
                if let Err(store_err) = self.store.release_lease(&lease, holder).await {
                    tracing::warn!(job_id, error = %store_err, "could not release the publish lease; this delivery's retry takes it again, another publisher waits for it to lapse");
                }
                if let Err(store_err) = self
                    .store
                    .set_run_state(job_id, RunState::Failed, Some(&e.to_string()))
                    .await
                {
                    tracing::warn!(job_id, error = %store_err, "could not mark the run failed after publishing failed");
                }
                Err(e)
            }
        }
    }

    async fn publish_guarded(&self, completed: &CompletedReview) -> Result<Outcome, HandlerError> {
        let job_id = &completed.request.job_id;
        let mut review = self.build(completed).await?;
        if completed.request.policy.publish_mode == PublishMode::Draft {
            let json = serde_json::to_string(&review).map_err(HandlerError::fatal)?;
            self.store
                .put_draft(job_id, &json)
                .await
                .map_err(HandlerError::retryable)?;
            self.store
                .set_run_state(job_id, RunState::Draft, None)
                .await
                .map_err(HandlerError::retryable)?;
            return Ok(Outcome::Drafted);
        }
        let mut moved_once = false;
        loop {
            match self.sink.post(&completed.request, &review).await {
                Ok(posted) => {
                    info!(job_id = %job_id, location = %posted.location, inline = review.inline.len(), "review published");
                    review.location = Some(posted.location);
                    break;
                }
                Err(SinkError::InlineRejected { index, reason }) if !moved_once && !review.inline.is_empty() => {
                    match index.filter(|i| *i < review.inline.len()) {
                        Some(i) => {
                            info!(job_id = %job_id, %reason, "inline comment refused; moving it to the body");
                            review.move_inline_to_body(i);
                        }
                        None => {
                            info!(job_id = %job_id, %reason, inline = review.inline.len(), "the SCM refused an inline comment without saying which; moving all of them to the body");
                            while !review.inline.is_empty() {
                                review.move_inline_to_body(0);
                            }
                        }
                    }
                    moved_once = true;
                }
                Err(e @ SinkError::Refused(_)) => return Err(HandlerError::invalid(e)),
                Err(e) => return Err(HandlerError::retryable(e)),
            }
        }
        // The check completes before the run says published, so whoever sees
        // `published` sees the check done too.
        report_completed(self.sink.as_ref(), &completed.request, &review).await;
        // What was posted, for `quorum runs` and the console, whatever the sink.
        let json = serde_json::to_string(&review).map_err(HandlerError::fatal)?;
        self.store
            .put_review(job_id, &json)
            .await
            .map_err(HandlerError::retryable)?;
        // Counted before the run says published, for the same reason: whoever
        // sees `published` can read the latency too.
        let latency = now_ms().saturating_sub(completed.request.requested_at_ms) as f64 / 1000.0;
        self.metrics
            .webhook_to_review
            .with_label_values(&["direct"])
            .observe(latency);
        self.store
            .set_run_state(job_id, RunState::Published, None)
            .await
            .map_err(HandlerError::retryable)?;
        Ok(Outcome::Posted)
    }
}

/// The check's final state. The review is posted either way: a status that
/// cannot be set is logged, not retried (a retry would post nothing new and
/// the next push sets a fresh status).
async fn report_completed(sink: &dyn ReviewSink, request: &quorum_core::ReviewRequest, review: &Review) {
    let status = CheckStatus::Completed {
        verdict: review.verdict,
        summary: review.summary.clone(),
        findings: review.kept.len(),
    };
    if let Err(e) = sink.report_status(request, &status).await {
        tracing::warn!(job_id = %request.job_id, error = %e, "the review was posted but its check status could not be set");
    }
}

struct CompletedHandler(Publisher);

/// Marks a new review request's check "in progress" (`publisher-checks`).
/// A run that already finished is left alone, so a late or redelivered
/// request never turns a completed check back.
struct ChecksHandler {
    store: Arc<dyn StateStore>,
    sink: Arc<dyn ReviewSink>,
}

#[async_trait]
impl Handler for ChecksHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let msg: quorum_events::ReviewRequested = d.decode()?;
        let request = &msg.request;
        let run = self
            .store
            .get_run(&request.job_id)
            .await
            .map_err(HandlerError::retryable)?;
        if run.is_some_and(|r| r.state.is_terminal() || r.state == RunState::Draft) {
            return Ok(vec![]);
        }
        // Best effort: the sink already retried; a request on the
        // dead-letter topic would be replayed as a whole new review.
        if let Err(e) = self.sink.report_status(request, &CheckStatus::InProgress).await {
            tracing::warn!(job_id = %request.job_id, error = %e, "cannot mark the check in progress");
        }
        Ok(vec![])
    }
}

#[async_trait]
impl Handler for CompletedHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let completed: CompletedReview = d.decode()?;
        let span = tracing::Span::current();
        span.record("repo", completed.request.repo.full_name.as_str());
        span.record("pr", completed.request.number);
        // The process is the holder. A retry is a new copy of the message
        // at a later offset, so a per-delivery holder would make the retry
        // a stranger to its own lease (seen in `make chaos`: the last
        // attempt waited out the lease of the first and went to the DLQ).
        // Within a process, messages of one key (the job) never run at the
        // same time (the worker's ready queue), so sharing the name is safe;
        // another replica, or this one after a restart, is another holder.
        self.0.publish_as(&completed, &self.0.instance).await?;
        Ok(vec![])
    }
}

/// Applies operator decisions from `review.draft.decided`. Idempotent: a
/// redelivered decision for a run already approved or discarded is a no-op.
struct DraftHandler {
    store: Arc<dyn StateStore>,
    sink: Arc<dyn ReviewSink>,
}

#[async_trait]
impl Handler for DraftHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let msg: DraftDecided = d.decode()?;
        let decision = match msg.decision {
            quorum_events::DraftDecision::Approve => DraftDecision::Approve,
            quorum_events::DraftDecision::Discard => DraftDecision::Discard,
        };
        match decide_draft(self.store.as_ref(), self.sink.as_ref(), &msg.job_id, decision).await {
            Ok(state) => {
                info!(job_id = %msg.job_id, operator = %msg.operator, state = state.as_str(), "draft decided");
                Ok(vec![])
            }
            Err(DraftError::NoDraft(job)) => {
                let run = self.store.get_run(&job).await.map_err(HandlerError::retryable)?;
                match run.map(|r| r.state) {
                    Some(RunState::Approved | RunState::Discarded) => Ok(vec![]),
                    Some(s) => Err(HandlerError::invalid(format!(
                        "run {job} has no draft to decide (state: {})",
                        s.as_str()
                    ))),
                    None => Err(HandlerError::invalid(format!("no run {job}"))),
                }
            }
            Err(e @ DraftError::Corrupt { .. }) => Err(HandlerError::invalid(e)),
            Err(e) => Err(HandlerError::retryable(e)),
        }
    }
}

/// The publisher: reviews from `review.completed`, and draft decisions from
/// `review.draft.decided`, behind one `/metrics`.
pub async fn start(
    http_addr: std::net::SocketAddr,
    ctx: &ServiceContext,
    store: Arc<dyn StateStore>,
    sink: Arc<dyn ReviewSink>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let completed = Arc::new(CompletedHandler(Publisher::new(
        store.clone(),
        sink.clone(),
        ctx.metrics.clone(),
    )));
    let checks = Arc::new(ChecksHandler {
        store: store.clone(),
        sink: sink.clone(),
    });
    let drafts = Arc::new(DraftHandler { store, sink });
    let drafts_spec = WorkerSpec {
        service: "publisher".into(),
        ..WorkerSpec::for_group(ConsumerGroup::PublisherDrafts)
    };
    let checks_spec = WorkerSpec {
        service: "publisher".into(),
        ..WorkerSpec::for_group(ConsumerGroup::PublisherChecks)
    };
    quorum_runtime::start_workers_service(
        ctx,
        "publisher",
        vec![
            (WorkerSpec::for_group(ConsumerGroup::Publisher), completed),
            (drafts_spec, drafts),
            (checks_spec, checks),
        ],
        http_addr,
        shutdown,
    )
    .await
}

/// What an operator decided about a draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftDecision {
    Approve,
    Discard,
}

/// Why a draft decision could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    #[error("job {0} has no draft review (not in draft mode, or already decided)")]
    NoDraft(String),
    #[error("stored draft of {job} is unreadable: {reason}")]
    Corrupt { job: String, reason: String },
    #[error("{0}")]
    Failed(String),
}

/// Applies an operator's decision on a draft (F-PUB-4): approving posts it
/// through the sink and marks the run `approved`; discarding drops it and
/// marks the run `discarded`. Only approved reviews may feed review memory.
pub async fn decide_draft(
    store: &dyn StateStore,
    sink: &dyn ReviewSink,
    job_id: &str,
    decision: DraftDecision,
) -> Result<RunState, DraftError> {
    let failed = |e: &dyn std::fmt::Display| DraftError::Failed(e.to_string());
    let json = store
        .get_draft(job_id)
        .await
        .map_err(|e| failed(&e))?
        .ok_or_else(|| DraftError::NoDraft(job_id.to_string()))?;
    let state = match decision {
        DraftDecision::Discard => RunState::Discarded,
        DraftDecision::Approve => {
            let mut review: Review = serde_json::from_str(&json).map_err(|e| DraftError::Corrupt {
                job: job_id.to_string(),
                reason: e.to_string(),
            })?;
            let job = store
                .get_job(job_id)
                .await
                .map_err(|e| failed(&e))?
                .ok_or_else(|| DraftError::Failed(format!("job {job_id} is not in the store")))?;
            let posted = sink.post(&job.request, &review).await.map_err(|e| failed(&e))?;
            review.location = Some(posted.location);
            report_completed(sink, &job.request, &review).await;
            let json = serde_json::to_string(&review).map_err(|e| failed(&e))?;
            store.put_review(job_id, &json).await.map_err(|e| failed(&e))?;
            RunState::Approved
        }
    };
    store.set_run_state(job_id, state, None).await.map_err(|e| failed(&e))?;
    store.delete_draft(job_id).await.map_err(|e| failed(&e))?;
    Ok(state)
}
