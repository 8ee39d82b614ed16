//! The critic (F-CRIT-1): the skeptic between the agents and the publisher.
//! It judges each finding of `review.aggregated`, keeps the rejected ones
//! with their reason, and publishes the verdict on `review.completed`.

pub mod judge;

use std::sync::Arc;

use async_trait::async_trait;
use quorum_core::RunState;
use quorum_events::{AggregatedReview, CompletedReview, ConsumerGroup, SCHEMA_VERSION};
use quorum_runtime::{
    CancellationToken, Delivery, Handler, HandlerError, Metrics, OutMessage, RuntimeError, ServiceContext,
    ServiceHandle, WorkerSpec, start_worker_service,
};
use quorum_store::StateStore;

struct CriticHandler {
    store: Arc<dyn StateStore>,
    metrics: Metrics,
}

/// Judges an aggregated review.
pub fn judge(aggregated: AggregatedReview) -> CompletedReview {
    let diffs = aggregated.request.diffs();
    let judged = judge::judge_offline(&aggregated.findings, &diffs);
    let (verdict, summary) = judge::summarise(&judged);
    CompletedReview {
        schema_version: SCHEMA_VERSION,
        request: aggregated.request,
        judged,
        verdict,
        summary,
        agents: aggregated.agents,
    }
}

#[async_trait]
impl Handler for CriticHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let aggregated: AggregatedReview = d.decode()?;
        let span = tracing::Span::current();
        span.record("repo", aggregated.request.repo.full_name.as_str());
        span.record("pr", aggregated.request.number);
        let job_id = aggregated.request.job_id.clone();
        let completed = judge(aggregated);
        for j in &completed.judged {
            let decision = if j.keep { "kept" } else { "rejected" };
            self.metrics.critic_decisions.with_label_values(&[decision]).inc();
        }
        self.store
            .set_run_state(&job_id, RunState::Judged, None)
            .await
            .map_err(HandlerError::retryable)?;
        Ok(vec![OutMessage::of(&completed)])
    }
}

pub async fn start(
    http_addr: std::net::SocketAddr,
    ctx: &ServiceContext,
    store: Arc<dyn StateStore>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let spec = WorkerSpec::for_group(ConsumerGroup::Critic);
    let handler = Arc::new(CriticHandler {
        store,
        metrics: ctx.metrics.clone(),
    });
    start_worker_service(ctx, spec, handler, http_addr, shutdown).await
}
