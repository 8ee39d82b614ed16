//! The operator API (F-GW-7): token-authenticated JSON endpoints for the
//! people running the fleet.
//!
//! | route | what |
//! |---|---|
//! | `POST /api/reviews` | review `repo` between `base` and `head` (a PR number, or 0) |
//! | `GET /api/runs?limit=N&offset=M[&repo=o/n][&state=S]` | a page of runs, newest first, with per-agent status and the total; filtered by repository and state in the store |
//! | `GET /api/runs/{job}` | one run, its request summary and its review |
//! | `POST /api/runs/{job}/approve` · `/discard` | decide a draft review |
//! | `POST /api/index` | request a re-index of `repo` at `ref` |
//! | `GET /api/memory` · `POST /api/memory/decide` | review memory (`memory_api.rs`) |
//! | `GET /api/fleet` · `GET /api/dlq` · `POST /api/dlq/replay` | fleet health and the DLQ (`fleet_api.rs`) |
//!
//! Every route needs `Authorization: Bearer <QUORUM_OPERATOR_TOKEN>`; with no
//! token configured the API is off (404). The gateway never writes to the
//! SCM: a draft decision is published on `review.draft.decided` and the
//! publisher, the only holder of a sink, applies it.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use quorum_core::{ContextMode, JobPolicy, Provider, PublishMode, RunState};
use quorum_events::{DraftDecided, DraftDecision, IndexRequested, SCHEMA_VERSION};
use quorum_runtime::BusProducer;
use quorum_store::{RunFilter, StateStore};
use serde::Deserialize;
use serde_json::json;
use sha2::Digest;

use crate::intake::{ChangeRequest, Intake, IntakeError};

/// The operator API's state.
#[derive(Clone)]
pub struct OperatorApi {
    token_digest: Option<[u8; 32]>,
    store: Arc<dyn StateStore>,
    intake: Arc<Intake>,
    producer: BusProducer,
    policy: JobPolicy,
    admission: crate::Admission,
    memory_policy: quorum_memory::Policy,
    /// The broker fleet health and the DLQ are read from.
    bus: Option<quorum_runtime::BusConfig>,
}

impl OperatorApi {
    /// `token` empty or `None`: the API answers 404 to everything.
    pub fn new(
        token: Option<&str>,
        store: Arc<dyn StateStore>,
        intake: Arc<Intake>,
        producer: BusProducer,
        policy: JobPolicy,
        admission: crate::Admission,
    ) -> Self {
        OperatorApi {
            token_digest: token
                .filter(|t| !t.is_empty())
                .map(|t| sha2::Sha256::digest(t.as_bytes()).into()),
            store,
            intake,
            producer,
            policy,
            admission,
            memory_policy: quorum_memory::Policy::default(),
            bus: None,
        }
    }

    /// Answers `/api/fleet` and `/api/dlq` from this broker.
    pub fn with_bus(mut self, bus: quorum_runtime::BusConfig) -> Self {
        self.bus = Some(bus);
        self
    }

    pub(crate) fn bus(&self) -> Option<&quorum_runtime::BusConfig> {
        self.bus.as_ref()
    }

    pub(crate) fn producer(&self) -> &BusProducer {
        &self.producer
    }

    /// The trust gates the memory page shows items with.
    pub fn with_memory_policy(mut self, policy: quorum_memory::Policy) -> Self {
        self.memory_policy = policy;
        self
    }

    pub(crate) fn memory_policy(&self) -> &quorum_memory::Policy {
        &self.memory_policy
    }

    pub(crate) fn store(&self) -> &Arc<dyn StateStore> {
        &self.store
    }

    pub fn router(self) -> Router {
        Router::new()
            .route("/api/reviews", post(trigger_review))
            .route("/api/runs", get(list_runs))
            .route("/api/runs/{job}", get(show_run))
            .route("/api/runs/{job}/approve", post(approve))
            .route("/api/runs/{job}/discard", post(discard))
            .route("/api/index", post(reindex).get(crate::fleet_api::index_freshness))
            .route("/api/memory", get(crate::memory_api::list))
            .route("/api/memory/decide", post(crate::memory_api::decide))
            .route("/api/fleet", get(crate::fleet_api::fleet))
            .route("/api/dlq", get(crate::fleet_api::list))
            .route("/api/dlq/replay", post(crate::fleet_api::replay))
            .with_state(self)
    }

    /// Compares digests in constant time, so response timing says nothing about the token.
    pub(crate) fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(expected) = self.token_digest else {
            return Err(ApiError(
                StatusCode::NOT_FOUND,
                "the operator API is disabled (set QUORUM_OPERATOR_TOKEN)".into(),
            ));
        };
        let given = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(|t| sha2::Sha256::digest(t.trim().as_bytes()));
        let ok = given.is_some_and(|g| g.iter().zip(expected.iter()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0);
        if ok {
            Ok(())
        } else {
            Err(ApiError(
                StatusCode::UNAUTHORIZED,
                "missing or wrong bearer token".into(),
            ))
        }
    }
}

/// A refusal: its status and what is wrong.
#[derive(Debug)]
pub(crate) struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = error(self.0, self.1);
        if self.0 == StatusCode::UNAUTHORIZED {
            r.headers_mut()
                .insert("www-authenticate", "Bearer".parse().expect("valid header"));
        }
        r
    }
}

pub(crate) fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (status, axum::Json(json!({ "error": message.to_string() }))).into_response()
}

pub(crate) fn unavailable(e: impl std::fmt::Display) -> Response {
    let mut r = error(StatusCode::SERVICE_UNAVAILABLE, e);
    r.headers_mut()
        .insert("retry-after", "5".parse().expect("valid header"));
    r
}

/// A JSON body, or a 400 that says what is wrong with it.
fn body<T: serde::de::DeserializeOwned>(raw: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(raw).map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("invalid JSON body: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewBody {
    repo: String,
    #[serde(default)]
    number: u64,
    base: String,
    head: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    publish_mode: Option<PublishMode>,
    #[serde(default)]
    context_mode: Option<ContextMode>,
}

async fn trigger_review(State(api): State<OperatorApi>, headers: HeaderMap, raw: axum::body::Bytes) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let b: ReviewBody = match body(&raw) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    if let Err(e) = quorum_core::job::validate_repo_name(&b.repo) {
        return error(StatusCode::BAD_REQUEST, e);
    }
    if let Err(e) = api.admission.check() {
        return crate::Admission::refusal(e);
    }
    let mut policy = api.policy.clone();
    if let Some(m) = b.publish_mode {
        policy.publish_mode = m;
    }
    if let Some(m) = b.context_mode {
        policy.context_mode = m;
    }
    let change = ChangeRequest {
        provider: Provider::Local,
        repo: b.repo,
        number: b.number,
        title: b.title,
        body: b.body,
        author: "operator".into(),
        base: b.base,
        head: b.head,
        policy,
        files: None,
        dedupe_suffix: None,
    };
    match api.intake.submit(change).await {
        Ok(s) => (
            if s.duplicate {
                StatusCode::OK
            } else {
                StatusCode::ACCEPTED
            },
            axum::Json(json!({ "job_id": s.job_id, "duplicate": s.duplicate })),
        )
            .into_response(),
        Err(IntakeError::Invalid(e) | IntakeError::Skipped(e)) => error(StatusCode::UNPROCESSABLE_ENTITY, e),
        Err(IntakeError::Unavailable(e)) => unavailable(e),
    }
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<usize>,
    /// Runs to skip (newest first): the list is paged here, not in the page.
    offset: Option<usize>,
    /// Only this repository's runs (`owner/name`).
    repo: Option<String>,
    /// Only runs in this state (`draft`: awaiting a decision).
    state: Option<String>,
}

impl ListQuery {
    /// The filter the query asks for; an unknown state is the caller's error
    /// (a typo would otherwise read as "no runs").
    fn filter(&self) -> Result<RunFilter, String> {
        let state = match self.state.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => Some(s.parse::<RunState>().map_err(|e| format!("state: {e}"))?),
            None => None,
        };
        let repo = self.repo.as_deref().map(str::trim).filter(|r| !r.is_empty());
        Ok(RunFilter {
            repo: repo.map(str::to_string),
            state,
        })
    }
}

async fn list_runs(State(api): State<OperatorApi>, headers: HeaderMap, Query(q): Query<ListQuery>) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let limit = q.limit.unwrap_or(20);
    if !(1..=500).contains(&limit) {
        return error(StatusCode::BAD_REQUEST, format!("limit must be 1-500, got {limit}"));
    }
    let offset = q.offset.unwrap_or(0);
    let filter = match q.filter() {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let (ids, total) = match tokio::try_join!(
        api.store.list_jobs(&filter, offset, limit),
        api.store.count_jobs(&filter)
    ) {
        Ok(found) => found,
        Err(e) => return unavailable(e),
    };
    // One row is three reads (run, job, review); the page's rows are read
    // concurrently, so a page costs about one row's round trips, not 100.
    let rows = futures::future::join_all(ids.iter().map(|id| {
        let api = &api;
        async move {
            match api.store.get_run(id).await {
                Ok(Some(run)) => Ok(Some(run_json(api, &run).await)),
                Ok(None) => Ok(None),
                Err(e) => Err(e),
            }
        }
    }))
    .await;
    let mut runs = vec![];
    for row in rows {
        match row {
            Ok(Some(run)) => runs.push(run),
            Ok(None) => {}
            Err(e) => return unavailable(e),
        }
    }
    axum::Json(json!({ "runs": runs, "offset": offset, "limit": limit, "total": total })).into_response()
}

async fn run_json(api: &OperatorApi, run: &quorum_store::RunRecord) -> serde_json::Value {
    let job = api.store.get_job(&run.job_id).await.ok().flatten();
    // The verdict and counts the console lists, from the stored review
    // (or draft) when there is one yet.
    let stored = match run.state {
        RunState::Draft => api.store.get_draft(&run.job_id).await,
        _ => api.store.get_review(&run.job_id).await,
    };
    let review: Option<serde_json::Value> = stored.ok().flatten().and_then(|t| serde_json::from_str(&t).ok());
    let count = |k: &str| review.as_ref().and_then(|r| r[k].as_array().map(Vec::len));
    json!({
        "verdict": review.as_ref().and_then(|r| r["verdict"].as_str().map(str::to_string)),
        "kept": count("kept"),
        "rejected": count("rejected"),
        "job_id": run.job_id,
        "state": run.state,
        "reason": run.reason,
        "agents": run.agents,
        "timeline": run.timeline,
        "repo": job.as_ref().map(|j| j.request.repo.full_name.clone()),
        "pr": job.as_ref().map(|j| j.request.number),
        "title": job.as_ref().map(|j| j.request.title.clone()),
        "head_sha": job.as_ref().map(|j| j.request.head_sha.clone()),
        "context_mode": job.as_ref().map(|j| j.request.policy.context_mode),
    })
}

/// The impact report the agents saw: the agents build it from the same graph
/// and diff, so it is shown once, with the agents that had it. `null` when
/// none had one (another context mode, no graph, or no results yet).
fn impact_json(
    results: &std::collections::BTreeMap<quorum_core::AgentRole, quorum_events::AgentResult>,
) -> serde_json::Value {
    let with: Vec<_> = results
        .iter()
        .filter_map(|(role, r)| Some((role, r.impact.as_ref()?)))
        .collect();
    match with.first() {
        Some((_, text)) => json!({
            "text": text,
            "agents": with.iter().map(|(role, _)| role.as_str()).collect::<Vec<_>>(),
        }),
        None => serde_json::Value::Null,
    }
}

async fn show_run(State(api): State<OperatorApi>, headers: HeaderMap, Path(job): Path<String>) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let run = match api.store.get_run(&job).await {
        Ok(Some(run)) => run,
        Ok(None) => return error(StatusCode::NOT_FOUND, format!("no run {job}")),
        Err(e) => return unavailable(e),
    };
    let mut out = run_json(&api, &run).await;
    let review = match run.state {
        RunState::Draft => api.store.get_draft(&job).await,
        _ => api.store.get_review(&job).await,
    };
    if let Ok(Some(text)) = review {
        out["review"] = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    }
    out["impact"] = match api.store.get_results(&job).await {
        Ok(results) => impact_json(&results),
        Err(e) => return unavailable(e),
    };
    axum::Json(out).into_response()
}

async fn decide(api: OperatorApi, headers: HeaderMap, job: String, decision: DraftDecision) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    match api.store.get_draft(&job).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            let state = api.store.get_run(&job).await.ok().flatten().map(|r| r.state);
            return error(
                StatusCode::NOT_FOUND,
                match state {
                    Some(s) => format!("run {job} has no draft to decide (state: {})", s.as_str()),
                    None => format!("no run {job}"),
                },
            );
        }
        Err(e) => return unavailable(e),
    }
    let msg = DraftDecided {
        schema_version: SCHEMA_VERSION,
        job_id: job.clone(),
        decision,
        operator: "operator-api".into(),
    };
    match api.producer.publish(&msg).await {
        Ok(()) => (
            StatusCode::ACCEPTED,
            axum::Json(json!({ "job_id": job, "decision": decision, "status": "queued for the publisher" })),
        )
            .into_response(),
        Err(e) => unavailable(e),
    }
}

async fn approve(State(api): State<OperatorApi>, headers: HeaderMap, Path(job): Path<String>) -> Response {
    decide(api, headers, job, DraftDecision::Approve).await
}

async fn discard(State(api): State<OperatorApi>, headers: HeaderMap, Path(job): Path<String>) -> Response {
    decide(api, headers, job, DraftDecision::Discard).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexBody {
    repo: String,
    #[serde(rename = "ref")]
    git_ref: String,
}

async fn reindex(State(api): State<OperatorApi>, headers: HeaderMap, raw: axum::body::Bytes) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let b: IndexBody = match body(&raw) {
        Ok(b) => b,
        Err(r) => return r.into_response(),
    };
    if let Err(e) = quorum_core::job::validate_repo_name(&b.repo) {
        return error(StatusCode::BAD_REQUEST, e);
    }
    if let Err(e) = quorum_scm::validate_ref(&b.git_ref) {
        return error(StatusCode::BAD_REQUEST, e);
    }
    let msg = IndexRequested {
        schema_version: SCHEMA_VERSION,
        repo: quorum_core::RepoRef {
            provider: Provider::Local,
            full_name: b.repo.clone(),
        },
        git_ref: b.git_ref.clone(),
        memory_pull_requests: vec![],
    };
    match api.producer.publish(&msg).await {
        Ok(()) => (
            StatusCode::ACCEPTED,
            axum::Json(json!({ "repo": b.repo, "ref": b.git_ref, "status": "queued for the indexer" })),
        )
            .into_response(),
        Err(e) => unavailable(e),
    }
}
