//! The agent service. Each role is its own consumer group on
//! `pr.review.requested` (fan-out without a router); replicas of one role
//! split its partitions. Agents are stateless: they read the request from the
//! message and publish one result per job on `review.agent.results`.
//! What they see beyond the diff (head files, conventions, the impact
//! report) comes from the shared [`ContextBuilder`]: graphs live in the
//! store, so any replica can review any job.

mod graph_tools;
pub mod repo_search;

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use quorum_context::ContextBuilder;
use quorum_context::tools::JobTools;
use quorum_core::{AgentRole, AgentStatus, ContextMode, Finding};
use quorum_engine::{ContextNeeds, Engine, ReviewContext, ReviewInput, offline_engine};
use quorum_events::payloads::{ModelCalls, TokenUsage};
use quorum_events::{AgentResult, ConsumerGroup, ReviewRequested, SCHEMA_VERSION};
use quorum_llm::{LlmConfig, ModelReviewer, NotIndexed, SearchIndex, ToolBox};
use quorum_runtime::{
    CancellationToken, Delivery, Handler, HandlerError, Metrics, OutMessage, RuntimeError, ServiceContext,
    ServiceHandle, WorkerSpec, start_worker_service,
};
use quorum_search::HybridIndex;

pub use graph_tools::GraphTools;

/// An agent's configuration.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub role: AgentRole,
    pub http_addr: std::net::SocketAddr,
    /// The model endpoint; `None`: the offline engine reviews.
    pub llm: Option<LlmConfig>,
    /// The hybrid index behind `search_code` / `search_docs`; `None`: the
    /// tools are not offered.
    pub search: Option<Arc<HybridIndex>>,
}

/// Which engine reviews a role. [`engine_for`] is the one place that
/// decides.
pub enum RoleEngine {
    /// Deterministic analysis only (the static role, or no model).
    Offline(Box<dyn Engine>),
    /// The role's offline rules and the model's tool loop together: the
    /// rules are cheap and precise, so a model adds to them and never
    /// replaces them (and when the model fails, they still stand).
    Model {
        model: Arc<ModelReviewer>,
        offline: Box<dyn Engine>,
    },
}

/// The engine of `role`: the static role never uses a model; the others use
/// it when one is configured, unless their effort is 0 turns
/// (`--model-effort security=0`: that role stays offline).
pub fn engine_for(role: AgentRole, model: Option<Arc<ModelReviewer>>) -> RoleEngine {
    match model {
        Some(model) if model.config().uses_model(role) => RoleEngine::Model {
            model,
            offline: offline_engine(role),
        },
        _ => RoleEngine::Offline(offline_engine(role)),
    }
}

/// Reviews one request with the role's engine.
pub struct AgentHandler {
    role: AgentRole,
    engine: RoleEngine,
    context: Option<Arc<ContextBuilder>>,
    search: Option<Arc<HybridIndex>>,
    metrics: Metrics,
}

/// What one review produced, whichever engine ran.
struct Outcome {
    findings: Vec<Finding>,
    tokens: TokenUsage,
    model_calls: ModelCalls,
    tool_calls: u32,
    note: Option<String>,
    model: String,
}

impl AgentHandler {
    /// `context` is `None` when the agent cannot read repositories: it then
    /// reviews the diff alone.
    pub fn new(role: AgentRole, engine: RoleEngine, context: Option<Arc<ContextBuilder>>, metrics: Metrics) -> Self {
        // Series exist at zero so dashboards show "none" rather than
        // "no data".
        let r = role.as_str();
        let model = match &engine {
            RoleEngine::Offline(_) => quorum_runtime::metrics::OFFLINE_MODEL.to_string(),
            RoleEngine::Model { model, .. } => model.config().model.clone(),
        };
        for kind in quorum_runtime::metrics::TOKEN_KINDS {
            metrics.llm_tokens.with_label_values(&[r, &model, kind]);
        }
        for outcome in ["ok", "error"] {
            metrics.llm_calls.with_label_values(&[r, &model, outcome]);
        }
        for tool in quorum_runtime::metrics::TOOLS {
            metrics.tool_calls.with_label_values(&[r, tool]);
        }
        AgentHandler {
            role,
            engine,
            context,
            search: None,
            metrics,
        }
    }

    /// Gives the model `search_code` / `search_docs` over `index`.
    pub fn with_search(mut self, index: Option<Arc<HybridIndex>>) -> Self {
        self.search = index;
        self
    }

    /// The search tools' back-end for one repository ("not indexed" when
    /// there is no index or the repository is not in it).
    async fn search_for(&self, repo: &str) -> Arc<dyn SearchIndex> {
        match &self.search {
            Some(index) => Arc::new(repo_search::RepoSearch::new(index.clone(), repo).await),
            None => Arc::new(NotIndexed),
        }
    }

    /// Runs the role's engine on one request.
    async fn review(&self, req: &quorum_core::ReviewRequest, input: &ReviewInput<'_>) -> Outcome {
        let (model, offline) = match &self.engine {
            RoleEngine::Offline(e) => {
                return Outcome {
                    findings: e.review(input),
                    tokens: TokenUsage::default(),
                    model_calls: ModelCalls::default(),
                    tool_calls: 0,
                    note: None,
                    model: quorum_runtime::metrics::OFFLINE_MODEL.into(),
                };
            }
            RoleEngine::Model { model, offline } => (model, offline),
        };
        let mut notes = vec![];
        let tools = match (&self.context, input.context.mode) {
            (Some(c), ContextMode::GraphRag) => match JobTools::for_request(c.index().clone(), req).await {
                Ok(t) => Some(GraphTools {
                    tools: t,
                    search: self.search_for(&req.repo.full_name).await,
                }),
                Err(e) => {
                    notes.push(format!("tools unavailable: {e}"));
                    None
                }
            },
            _ => None,
        };
        let outcome = model
            .review(self.role, input, tools.as_ref().map(|t| t as &dyn ToolBox))
            .await;
        let stats = match &outcome {
            Ok(r) => &r.stats,
            Err(f) => &f.stats,
        };
        let r = self.role.as_str();
        let ok = stats.calls.saturating_sub(stats.failed_calls) as u64;
        self.metrics
            .llm_calls
            .with_label_values(&[r, &stats.model, "ok"])
            .inc_by(ok);
        self.metrics
            .llm_calls
            .with_label_values(&[r, &stats.model, "error"])
            .inc_by(stats.failed_calls as u64);
        for (tool, (answered, failed)) in &stats.tools {
            if quorum_runtime::metrics::TOOLS.contains(&tool.as_str()) {
                self.metrics
                    .tool_calls
                    .with_label_values(&[r, tool])
                    .inc_by((answered + failed) as u64);
            }
        }
        let tokens = TokenUsage {
            prompt: stats.tokens.prompt,
            cached_prompt: stats.tokens.cached_prompt,
            completion: stats.tokens.completion,
        };
        let model_calls = ModelCalls {
            live: stats.live_calls,
            replayed: stats.replayed_calls,
        };
        let tool_calls = stats.tools.values().map(|(answered, failed)| answered + failed).sum();
        let model_name = stats.model.clone();
        if stats.fell_back {
            notes.push(format!("fallback model {model_name} used"));
        }
        if outcome.is_ok() && stats.invalid_replies > 0 {
            notes.push(format!("{} invalid model repl(ies) repaired", stats.invalid_replies));
        }
        let mut findings = offline.review(input);
        match outcome {
            Ok(r) => findings.extend(r.findings),
            Err(f) => {
                tracing::warn!(job_id = %req.job_id, role = r, error = %f.error, "model review failed; offline rules' findings only");
                notes.push(format!("model failed: {}; offline rules' findings only", f.error));
            }
        }
        Outcome {
            findings,
            tokens,
            model_calls,
            tool_calls,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            model: model_name,
        }
    }

    fn needs(&self) -> ContextNeeds {
        match &self.engine {
            RoleEngine::Offline(e) => e.needs(),
            RoleEngine::Model { .. } => ContextNeeds::ALL,
        }
    }
}

/// Past review threads ranked by the `reviews` collection of hybrid search.
pub struct ReviewsCollection(pub Arc<HybridIndex>);

#[async_trait]
impl quorum_context::memory::PastRanker for ReviewsCollection {
    async fn rank(
        &self,
        repo: &str,
        threads: &[quorum_memory::PastThread],
        query: &str,
        path: &str,
        limit: usize,
    ) -> Result<Option<Vec<quorum_memory::SearchHit>>, String> {
        quorum_search::reviews::ask(
            &self.0,
            repo,
            threads,
            &quorum_memory::Asker::Anyone,
            query,
            Some(path),
            limit,
        )
        .await
        .map_err(|e| quorum_core::error::chain(&e))
    }
}

/// Findings one agent reports per review at most. A review nobody reads to
/// the end helps no one, and every finding travels in the aggregated and
/// completed messages (Kafka's 1 MB default) with the request.
pub const MAX_FINDINGS: usize = 50;

/// The `max` most severe, most confident findings (ties keep report order),
/// and a note saying how many were withheld.
pub fn most_severe(mut findings: Vec<Finding>, max: usize) -> (Vec<Finding>, Option<String>) {
    if findings.len() <= max {
        return (findings, None);
    }
    let total = findings.len();
    findings.sort_by(|a, b| b.severity.cmp(&a.severity).then(b.confidence.total_cmp(&a.confidence)));
    findings.truncate(max);
    (
        findings,
        Some(format!("kept the {max} most severe of {total} findings")),
    )
}

#[async_trait]
impl Handler for AgentHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let msg: ReviewRequested = d.decode()?;
        let req = &msg.request;
        let role = self.role;
        if !req.policy.agents.contains(&role) {
            return Ok(vec![]);
        }
        let span = tracing::Span::current();
        span.record("repo", req.repo.full_name.as_str());
        span.record("pr", req.number);
        span.record("agent", role.as_str());
        let started = Instant::now();
        let diffs = req.diffs();
        let context = match &self.context {
            Some(c) => c.for_request(req, self.needs()).await,
            None => ReviewContext {
                mode: req.policy.context_mode,
                notes: vec!["no repository access: diff only".into()],
                ..Default::default()
            },
        };
        let input = ReviewInput {
            title: &req.title,
            body: &req.body,
            diffs: &diffs,
            context: &context,
        };
        let outcome = self.review(req, &input).await;
        let (findings, cap_note) = most_severe(outcome.findings, MAX_FINDINGS);
        for (backend, secs) in &context.timings {
            self.metrics.retrieval.with_label_values(&[backend]).observe(*secs);
        }
        for f in &findings {
            self.metrics
                .findings
                .with_label_values(&[role.as_str(), f.category.as_str()])
                .inc();
        }
        let note = match (outcome.note, cap_note) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        let result = AgentResult {
            schema_version: SCHEMA_VERSION,
            job_id: req.job_id.clone(),
            agent: role,
            status: AgentStatus::Done,
            findings,
            duration_ms: started.elapsed().as_millis() as u64,
            error: note,
            tokens: outcome.tokens,
            model_calls: outcome.model_calls,
            tool_calls: outcome.tool_calls,
            impact: context
                .impact
                .as_ref()
                .map(|r| quorum_events::bounded_impact(&r.render(quorum_events::IMPACT_SHOWN_TOKENS))),
        };
        for (kind, n) in quorum_runtime::metrics::TOKEN_KINDS.into_iter().zip([
            result.tokens.prompt,
            result.tokens.cached_prompt,
            result.tokens.completion,
        ]) {
            self.metrics
                .llm_tokens
                .with_label_values(&[role.as_str(), &outcome.model, kind])
                .inc_by(n);
        }
        Ok(vec![OutMessage::of(&result)])
    }
}

/// Starts the agent of `config.role`.
pub async fn start(
    config: AgentConfig,
    ctx: &ServiceContext,
    context: Option<Arc<ContextBuilder>>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let spec = WorkerSpec::for_group(ConsumerGroup::Agent(config.role));
    let model = match &config.llm {
        Some(cfg) if config.role != AgentRole::Static => Some(Arc::new(
            ModelReviewer::new(cfg.clone()).map_err(|e| RuntimeError::Config(e.to_string()))?,
        )),
        _ => None,
    };
    // With an index, a prompt's past review threads are picked by meaning.
    let context = match (context, &config.search) {
        (Some(c), Some(index)) => Some(Arc::new(
            c.as_ref()
                .clone()
                .with_past_ranker(Arc::new(ReviewsCollection(index.clone()))),
        )),
        (c, _) => c,
    };
    let handler = Arc::new(
        AgentHandler::new(
            config.role,
            engine_for(config.role, model),
            context,
            ctx.metrics.clone(),
        )
        .with_search(config.search),
    );
    start_worker_service(ctx, spec, handler, config.http_addr, shutdown).await
}

/// Parses flags, starts the agent of `role` and runs it until SIGTERM.
pub async fn main_for(role: AgentRole) -> anyhow::Result<()> {
    use clap::Parser;
    #[derive(Parser)]
    #[command(about = "A Quorum review agent")]
    struct Args {
        #[command(flatten)]
        common: quorum_runtime::CommonArgs,
        #[command(flatten)]
        repos: quorum_scm::TreeArgs,
        #[command(flatten)]
        llm: quorum_llm::LlmArgs,
        #[command(flatten)]
        search: quorum_search::SearchArgs,
        #[command(flatten)]
        memory: quorum_context::memory::MemoryArgs,
    }
    let args = Args::parse();
    // Checked before anything connects (it logs nothing).
    let llm = args.llm.config()?;
    quorum_runtime::serve(&args.common, |boot| async move {
        let trees = Arc::new(args.repos.trees()?);
        let index = Arc::new(quorum_context::GraphIndex::new(boot.store, trees));
        // The in-process index belongs to the indexer's process; a separate
        // agent process searches only a shared Qdrant server.
        let search = match (&args.search.qdrant_url, args.search.mode) {
            (None, quorum_search::config::SearchMode::Auto) => {
                tracing::info!("search_code / search_docs off: set QDRANT_URL to share the indexer's index");
                None
            }
            _ if role == AgentRole::Static => None,
            _ => quorum_search::open_index(&args.search).await?,
        };
        let config = AgentConfig {
            role,
            http_addr: args.common.http_addr,
            llm,
            search,
        };
        anyhow::Ok(
            start(
                config,
                &boot.ctx,
                Some(Arc::new(
                    ContextBuilder::new(index).with_memory_policy(args.memory.policy()),
                )),
                boot.shutdown,
            )
            .await?,
        )
    })
    .await
}

#[cfg(test)]
mod cap_tests {
    use super::*;
    use quorum_core::{Category, Severity};

    fn f(line: u32, severity: Severity, confidence: f64) -> Finding {
        Finding {
            file: "a.py".into(),
            line,
            start_line: None,
            category: Category::Bug,
            severity,
            confidence,
            title: "t".into(),
            explanation: "e".into(),
            suggestion: None,
            rule: None,
            agent: AgentRole::Static,
            evidence: vec![],
            agreed_by: vec![],
        }
    }

    #[test]
    fn keeps_the_most_severe_and_says_how_many_were_withheld() {
        let all = vec![
            f(1, Severity::Minor, 0.9),
            f(2, Severity::Critical, 0.7),
            f(3, Severity::Major, 0.6),
            f(4, Severity::Major, 0.8),
        ];
        let (kept, note) = most_severe(all.clone(), 2);
        assert_eq!(kept.iter().map(|f| f.line).collect::<Vec<_>>(), [2, 4]);
        assert_eq!(note.as_deref(), Some("kept the 2 most severe of 4 findings"));
        assert_eq!(most_severe(all.clone(), 4), (all, None));
    }
}
