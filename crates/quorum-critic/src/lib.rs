//! The critic (F-CRIT-1): the skeptic between the agents and the publisher.
//! It judges each finding of `review.aggregated`, keeps the rejected ones
//! with their reason, and publishes the verdict on `review.completed`.
//!
//! The offline checks always run first ([`judge::judge_offline`]). With a
//! model configured, the non-deterministic findings they keep go to one
//! judgement call per job ([`quorum_llm::ModelJudge`]); if that call fails,
//! the offline verdict stands and the summary says so.

pub mod judge;

use std::sync::Arc;

use async_trait::async_trait;
use quorum_context::ContextBuilder;
use quorum_core::RunState;
use quorum_engine::ContextNeeds;
use quorum_events::{AggregatedReview, CompletedReview, ConsumerGroup, JudgedFinding, SCHEMA_VERSION};
use quorum_llm::{LlmConfig, ModelJudge};
use quorum_runtime::{
    CancellationToken, Delivery, Handler, HandlerError, Metrics, OutMessage, RuntimeError, ServiceContext,
    ServiceHandle, WorkerSpec, start_worker_service,
};
use quorum_store::StateStore;

use crate::judge::{ImpactSites, KEEP_THRESHOLD, outside_diff};

/// What the critic may use beyond the message.
#[derive(Default)]
pub struct CriticOptions {
    /// The model for the judgement call; `None`: offline checks only.
    pub llm: Option<LlmConfig>,
    /// Read-only graph access, to check a model's claims about call sites
    /// outside the diff against the impact report itself, and to read the
    /// `.quorum/memory.yaml` committed at a PR's base.
    pub context: Option<Arc<ContextBuilder>>,
    /// The trust gates learned memory passes before it applies.
    pub memory_policy: quorum_memory::Policy,
}

struct CriticHandler {
    store: Arc<dyn StateStore>,
    metrics: Metrics,
    model: Option<ModelJudge>,
    context: Option<Arc<ContextBuilder>>,
    memory_policy: quorum_memory::Policy,
}

/// Judges an aggregated review with the offline checks only.
pub fn judge(aggregated: AggregatedReview) -> CompletedReview {
    let diffs = aggregated.request.diffs();
    let judged = judge::judge_offline(&aggregated.findings, &diffs, None);
    complete(aggregated, judged, None)
}

fn complete(aggregated: AggregatedReview, judged: Vec<JudgedFinding>, note: Option<String>) -> CompletedReview {
    let (verdict, mut summary) = judge::summarise(&judged);
    if let Some(n) = note {
        summary.push_str(&format!(" ({n})"));
    }
    CompletedReview {
        schema_version: SCHEMA_VERSION,
        request: aggregated.request,
        judged,
        verdict,
        summary,
        agents: aggregated.agents,
    }
}

impl CriticHandler {
    /// The impact report's call sites, when a model finding outside the
    /// diff needs them and the graph can be read.
    async fn impact_sites(
        &self,
        aggregated: &AggregatedReview,
        diffs: &[quorum_core::FileDiff],
    ) -> Option<ImpactSites> {
        let needed = aggregated
            .findings
            .iter()
            .any(|f| f.rule.is_none() && !f.is_deterministic() && outside_diff(f, diffs));
        let context = self.context.as_ref().filter(|_| needed)?;
        let needs = ContextNeeds {
            conventions: false,
            head_files: false,
            impact: true,
            past_reviews: false,
        };
        let ctx = context.for_request(&aggregated.request, needs).await;
        ctx.impact.as_ref().map(ImpactSites::from_report)
    }

    /// Drops what the repository's memory suppresses; returns what could
    /// not be read, for the summary.
    async fn apply_memory(&self, aggregated: &AggregatedReview, judged: &mut [JudgedFinding]) -> Option<String> {
        let req = &aggregated.request;
        let trees = self.context.as_ref().map(|c| c.index().trees().as_ref());
        let mem = quorum_context::memory::load(self.store.as_ref(), trees, req, &self.memory_policy).await;
        let now = chrono::Utc::now().to_rfc3339();
        for j in judged.iter_mut().filter(|j| j.keep) {
            let Some(s) = mem.set.suppression(&j.finding) else {
                continue;
            };
            tracing::info!(job_id = %req.job_id, item = %s.item_id, file = %j.finding.file, line = j.finding.line, "finding suppressed by review memory");
            j.keep = false;
            j.reason = s.reason;
            j.suppressed_by = Some(s.item_id.clone());
            if let Err(e) = self
                .store
                .touch_memory_item(&req.repo.full_name, &s.item_id, &now)
                .await
            {
                tracing::warn!(item = %s.item_id, error = %e, "memory match not recorded");
            }
        }
        (!mem.notes.is_empty()).then(|| mem.notes.join("; "))
    }

    async fn judge(&self, aggregated: AggregatedReview) -> CompletedReview {
        let diffs = aggregated.request.diffs();
        let sites = self.impact_sites(&aggregated, &diffs).await;
        let mut judged = judge::judge_offline(&aggregated.findings, &diffs, sites.as_ref());
        let memory_note = self.apply_memory(&aggregated, &mut judged).await;
        let Some(model) = &self.model else {
            return complete(aggregated, judged, memory_note);
        };
        // Only free-form (model) findings go to the model: a rule's finding
        // has already passed the offline checks above, and a rule is
        // measured at precision 1.0 on every case set, which no model
        // critic is (a 1.5B critic rejected correct findings in the eval).
        let candidates: Vec<usize> = (0..judged.len())
            .filter(|&i| judged[i].keep && !judged[i].finding.is_deterministic() && judged[i].finding.rule.is_none())
            .collect();
        if candidates.is_empty() {
            return complete(aggregated, judged, memory_note);
        }
        let shown: Vec<quorum_core::Finding> = candidates.iter().map(|&i| judged[i].finding.clone()).collect();
        let outcome = model.judge(&aggregated.request.title, &diffs, &shown).await;
        let (result, tokens) = match outcome {
            Ok((d, t)) => (Ok(d), t),
            Err((e, t)) => (Err(e), t),
        };
        for (kind, n) in quorum_runtime::metrics::TOKEN_KINDS.into_iter().zip([
            tokens.prompt,
            tokens.cached_prompt,
            tokens.completion,
        ]) {
            self.metrics
                .llm_tokens
                .with_label_values(&["critic", model.model(), kind])
                .inc_by(n);
        }
        let outcome = if result.is_ok() { "ok" } else { "error" };
        self.metrics
            .llm_calls
            .with_label_values(&["critic", model.model(), outcome])
            .inc();
        let decisions = match result {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(job_id = %aggregated.request.job_id, error = %e, "model judgement failed; offline verdict stands");
                let note = [memory_note, Some(format!("model judgement unavailable: {e}"))];
                return complete(
                    aggregated,
                    judged,
                    note.into_iter().flatten().reduce(|a, b| format!("{a}; {b}")),
                );
            }
        };
        for d in decisions {
            let j = &mut judged[candidates[d.index]];
            j.finding.confidence = d.confidence;
            j.finding.severity = d.severity;
            if !d.keep {
                j.keep = false;
                j.reason = format!("model critic: {}", d.reason);
            } else if d.confidence < KEEP_THRESHOLD {
                j.keep = false;
                j.reason = format!(
                    "model critic lowered confidence to {:.2}, under {KEEP_THRESHOLD}: {}",
                    d.confidence, d.reason
                );
            } else {
                j.reason = format!("{}; model critic: {}", j.reason, d.reason);
            }
        }
        complete(aggregated, judged, memory_note)
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
        let completed = self.judge(aggregated).await;
        for j in &completed.judged {
            let decision = match (j.keep, &j.suppressed_by) {
                (true, _) => "kept",
                (false, Some(_)) => "memory",
                (false, None) => "rejected",
            };
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
    options: CriticOptions,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let spec = WorkerSpec::for_group(ConsumerGroup::Critic);
    let model = match options.llm {
        Some(cfg) => Some(ModelJudge::new(cfg).map_err(|e| RuntimeError::Config(e.to_string()))?),
        None => None,
    };
    let handler = Arc::new(CriticHandler {
        store,
        metrics: ctx.metrics.clone(),
        model,
        context: options.context,
        memory_policy: options.memory_policy,
    });
    start_worker_service(ctx, spec, handler, http_addr, shutdown).await
}
