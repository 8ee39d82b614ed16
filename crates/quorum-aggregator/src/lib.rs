//! The aggregator (F-AGG-1, F-AGG-2). Results are stored per (job, agent), so
//! a duplicate is a no-op. A job is flushed to `review.aggregated` when every
//! agent its policy expects has reported, or by the deadline sweeper when it
//! is late (missing agents marked `timeout`). The flush takes a once-only
//! guard in the store, so two replicas (or a replica and its sweeper) flush a
//! job exactly once; if publishing the flush fails the guard is released so
//! the retry can flush.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use quorum_core::cluster::cluster_findings;
use quorum_core::review::AgentReport;
use quorum_core::{AgentRole, AgentStatus, RunState};
use quorum_events::{AgentResult, AggregatedReview, ConsumerGroup, SCHEMA_VERSION, headers};
use quorum_runtime::{
    BusProducer, CancellationToken, Delivery, Handler, HandlerError, OutMessage, RuntimeError, ServiceContext,
    ServiceHandle, WorkerSpec, now_ms, start_worker_service, trace,
};
use quorum_store::StateStore;
use tracing::{info, warn};

/// Aggregator settings.
#[derive(Debug, Clone)]
pub struct AggregatorConfig {
    pub http_addr: std::net::SocketAddr,
    /// How long after intake a job is flushed with whatever arrived.
    pub deadline: Duration,
    /// How often the sweeper looks for late jobs.
    pub sweep_every: Duration,
}

impl AggregatorConfig {
    pub fn new(http_addr: std::net::SocketAddr) -> Self {
        AggregatorConfig {
            http_addr,
            deadline: Duration::from_secs(300),
            sweep_every: Duration::from_secs(5),
        }
    }
}

/// The join logic, shared by the handler and the sweeper.
pub struct Aggregator {
    store: Arc<dyn StateStore>,
    producer: BusProducer,
}

/// What a flush attempt did.
#[derive(Debug, PartialEq, Eq)]
pub enum Flush {
    Flushed,
    /// Someone else flushed it already.
    AlreadyFlushed,
    /// Not every expected agent has reported yet.
    Waiting,
}

impl Aggregator {
    pub fn new(store: Arc<dyn StateStore>, producer: BusProducer) -> Self {
        Aggregator { store, producer }
    }

    /// Records one result and flushes if the job is complete. `trace` is the
    /// result's `traceparent`, continued by the flush.
    pub async fn on_result(&self, result: &AgentResult, trace: Option<&str>) -> Result<Flush, HandlerError> {
        let Some(job) = self
            .store
            .get_job(&result.job_id)
            .await
            .map_err(HandlerError::retryable)?
        else {
            // Intake stores the job before publishing it, so this is a
            // result for a job we never accepted (or the store lost it).
            return Err(HandlerError::retryable(format!(
                "job {} is not in the store",
                result.job_id
            )));
        };
        let fresh = self.store.put_result(result).await.map_err(HandlerError::retryable)?;
        if fresh {
            self.store
                .set_agent_status(&result.job_id, result.agent, result.status)
                .await
                .map_err(HandlerError::retryable)?;
        }
        let results = self
            .store
            .get_results(&result.job_id)
            .await
            .map_err(HandlerError::retryable)?;
        let expected = &job.request.policy.agents;
        if expected.iter().all(|a| results.contains_key(a)) {
            return self.flush(&result.job_id, false, trace).await;
        }
        Ok(Flush::Waiting)
    }

    /// Flushes a job with what it has; `late` marks missing agents `timeout`.
    pub async fn flush(&self, job_id: &str, late: bool, trace: Option<&str>) -> Result<Flush, HandlerError> {
        let guard = format!("flush:{job_id}");
        if !self
            .store
            .acquire_guard(&guard)
            .await
            .map_err(HandlerError::retryable)?
        {
            return Ok(Flush::AlreadyFlushed);
        }
        match self.publish(job_id, late, trace).await {
            Ok(()) => Ok(Flush::Flushed),
            // The aggregated review cannot be published as it is, now or
            // later: the job fails (with why) and the guard stays taken, so
            // neither the sweeper nor a redelivery tries it again.
            Err(HandlerError::Invalid(reason)) => {
                let reason = format!("aggregated review cannot be published: {reason}");
                self.store
                    .set_run_state(job_id, RunState::Failed, Some(&reason))
                    .await
                    .map_err(HandlerError::retryable)?;
                self.store
                    .clear_pending(job_id)
                    .await
                    .map_err(HandlerError::retryable)?;
                Err(HandlerError::Invalid(reason))
            }
            Err(e) => {
                if let Err(store_err) = self.store.release_guard(&guard).await {
                    tracing::warn!(guard, error = %store_err, "could not release the aggregation guard; the retry waits for it to expire");
                }
                Err(e)
            }
        }
    }

    async fn publish(&self, job_id: &str, late: bool, trace: Option<&str>) -> Result<(), HandlerError> {
        let job = self
            .store
            .get_job(job_id)
            .await
            .map_err(HandlerError::retryable)?
            .ok_or_else(|| HandlerError::retryable(format!("job {job_id} is not in the store")))?;
        let results = self.store.get_results(job_id).await.map_err(HandlerError::retryable)?;
        let payload = aggregate(job.request, &results, late);
        for a in payload.agents.iter().filter(|a| a.status == AgentStatus::Timeout) {
            self.store
                .set_agent_status(job_id, a.agent, AgentStatus::Timeout)
                .await
                .map_err(HandlerError::retryable)?;
        }
        let tp = trace::outgoing(&tracing::Span::current(), trace);
        let msg = OutMessage::of(&payload).with_header(headers::TRACEPARENT, tp);
        self.producer.send(&msg).await.map_err(HandlerError::from_send)?;
        self.store
            .set_run_state(job_id, RunState::Aggregated, None)
            .await
            .map_err(HandlerError::retryable)?;
        self.store
            .clear_pending(job_id)
            .await
            .map_err(HandlerError::retryable)?;
        info!(job_id, late, findings = payload.findings.len(), "job aggregated");
        Ok(())
    }

    /// Flushes every job pending for longer than `deadline`.
    pub async fn sweep(&self, deadline: Duration) -> Result<usize, HandlerError> {
        let before = now_ms().saturating_sub(deadline.as_millis() as u64);
        let due = self
            .store
            .pending_before(before)
            .await
            .map_err(HandlerError::retryable)?;
        let mut flushed = 0;
        let mut first_error = None;
        // One job that cannot be flushed must not hold up the others.
        for job_id in due {
            match self.flush(&job_id, true, None).await {
                Ok(Flush::Flushed) => flushed += 1,
                // Flushed by the handler (or another replica) meanwhile.
                Ok(_) => self
                    .store
                    .clear_pending(&job_id)
                    .await
                    .map_err(HandlerError::retryable)?,
                // Already marked failed and taken off the pending list.
                Err(HandlerError::Invalid(reason)) => warn!(job_id, %reason, "job failed at the deadline flush"),
                Err(e) => {
                    warn!(job_id, error = %e, "deadline flush failed; will try again");
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(flushed),
        }
    }
}

/// Builds the aggregated review: clustered findings of every agent that
/// reported, and one status line per expected agent.
pub fn aggregate(
    request: quorum_core::ReviewRequest,
    results: &BTreeMap<AgentRole, AgentResult>,
    late: bool,
) -> AggregatedReview {
    let mut agents = Vec::new();
    let mut findings = Vec::new();
    for role in &request.policy.agents {
        match results.get(role) {
            Some(r) => {
                agents.push(AgentReport {
                    agent: *role,
                    status: r.status,
                    duration_ms: r.duration_ms,
                    findings: r.findings.len(),
                    error: r.error.clone(),
                    usage: quorum_core::AgentUsage {
                        model_calls: r.model_calls.live,
                        replayed_calls: r.model_calls.replayed,
                        tool_calls: r.tool_calls,
                        prompt_tokens: r.tokens.prompt,
                        cached_prompt_tokens: r.tokens.cached_prompt,
                        completion_tokens: r.tokens.completion,
                    },
                });
                findings.extend(r.findings.iter().cloned());
            }
            None => agents.push(AgentReport {
                agent: *role,
                status: if late {
                    AgentStatus::Timeout
                } else {
                    AgentStatus::Pending
                },
                duration_ms: 0,
                findings: 0,
                error: None,
                usage: Default::default(),
            }),
        }
    }
    AggregatedReview {
        schema_version: SCHEMA_VERSION,
        request,
        findings: cluster_findings(findings),
        agents,
    }
}

struct ResultHandler {
    aggregator: Arc<Aggregator>,
}

#[async_trait]
impl Handler for ResultHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let result: AgentResult = d.decode()?;
        // The aggregator publishes the flush itself, under its guard.
        self.aggregator
            .on_result(&result, d.header(headers::TRACEPARENT))
            .await?;
        Ok(vec![])
    }
}

/// Starts the aggregator: the result consumer and the deadline sweeper.
pub async fn start(
    config: AggregatorConfig,
    ctx: &ServiceContext,
    store: Arc<dyn StateStore>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let aggregator = Arc::new(Aggregator::new(store, ctx.producer.clone()));
    let spec = WorkerSpec::for_group(ConsumerGroup::Aggregator);
    let handler = Arc::new(ResultHandler {
        aggregator: aggregator.clone(),
    });
    let mut handle = start_worker_service(ctx, spec, handler, config.http_addr, shutdown.clone()).await?;
    handle.tasks.push(tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return Ok(()),
                _ = tokio::time::sleep(config.sweep_every) => {}
            }
            if let Err(e) = aggregator.sweep(config.deadline).await {
                warn!(error = %e, "deadline sweep failed; will try again");
            }
        }
    }));
    Ok(handle)
}
