//! Review memory over the operator API (F-MEM, F-UI-3): what the console's
//! memory page reads and decides.
//!
//! | route | what |
//! |---|---|
//! | `GET /api/memory?repo=owner/name` | the repository's items (learned and imported, with the gates applied), and how many past threads memory holds |
//! | `POST /api/memory/decide` `{repo, id, decision: approve\|retire}` | an operator's decision on an item |
//!
//! A decision is written into the memory state under the `memory:{repo}`
//! lease that `quorum memory` and the indexer take; a lease held elsewhere
//! is a 409 to try again. The committed `.quorum/memory.yaml` is not shown
//! here: it lives in the repository and wins over what this page decides.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use quorum_memory::{MemoryState, Status, items_for};
use serde::Deserialize;
use serde_json::json;

use crate::operator::{OperatorApi, error, unavailable};

const LEASE_MS: u64 = 30_000;

#[derive(Deserialize)]
pub(crate) struct RepoQuery {
    repo: String,
}

async fn load(api: &OperatorApi, repo: &str) -> Result<MemoryState, Response> {
    match api.store().get_memory(repo).await {
        Ok(Some(json)) => serde_json::from_str(&json).map_err(|e| {
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the stored memory of {repo} is not readable: {e}"),
            )
        }),
        Ok(None) => Ok(MemoryState::default()),
        Err(e) => Err(unavailable(e)),
    }
}

pub(crate) async fn list(State(api): State<OperatorApi>, headers: HeaderMap, Query(q): Query<RepoQuery>) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    if let Err(e) = quorum_core::job::validate_project_path(&q.repo) {
        return error(StatusCode::BAD_REQUEST, e);
    }
    let state = match load(&api, &q.repo).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let mut state = state;
    if let Ok(m) = api.store().memory_matches(&q.repo).await {
        state.last_matched = m;
    }
    let items = items_for(&state, api.memory_policy(), chrono::Utc::now(), None);
    axum::Json(json!({ "repo": q.repo, "items": items, "threads": state.threads.len() })).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideBody {
    repo: String,
    id: String,
    decision: Decision,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Decision {
    Approve,
    Retire,
}

pub(crate) async fn decide(State(api): State<OperatorApi>, headers: HeaderMap, raw: axum::body::Bytes) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let b: DecideBody = match serde_json::from_slice(&raw) {
        Ok(b) => b,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("invalid JSON body: {e}")),
    };
    if let Err(e) = quorum_core::job::validate_project_path(&b.repo) {
        return error(StatusCode::BAD_REQUEST, e);
    }
    let lease = quorum_memory::lease_name(&b.repo);
    let holder = quorum_store::new_lease_holder();
    match api.store().acquire_lease(&lease, &holder, LEASE_MS).await {
        Ok(true) => {}
        Ok(false) => {
            return error(
                StatusCode::CONFLICT,
                format!(
                    "the memory of {} is being updated (an ingest or another decision); try again",
                    b.repo
                ),
            );
        }
        Err(e) => return unavailable(e),
    }
    let result = apply(&api, &b).await;
    if let Err(e) = api.store().release_lease(&lease, &holder).await {
        tracing::warn!(repo = %b.repo, error = %e, "memory lease not released; it lapses by itself");
    }
    result
}

async fn apply(api: &OperatorApi, b: &DecideBody) -> Response {
    let mut state = match load(api, &b.repo).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let now = chrono::Utc::now();
    let known = items_for(&state, api.memory_policy(), now, None);
    if !known.iter().any(|m| m.id == b.id) {
        return error(StatusCode::NOT_FOUND, format!("no memory item {} in {}", b.id, b.repo));
    }
    let status = match b.decision {
        Decision::Approve => Status::Active,
        Decision::Retire => Status::Retired,
    };
    state.decide(&b.id, status, "operator-api", now);
    let json = match serde_json::to_string(&state) {
        Ok(j) => j,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e),
    };
    if let Err(e) = api.store().put_memory(&b.repo, &json).await {
        return unavailable(e);
    }
    tracing::info!(repo = %b.repo, item = %b.id, status = %status, "memory item decided by an operator");
    axum::Json(json!({ "repo": b.repo, "id": b.id, "status": status.to_string() })).into_response()
}
