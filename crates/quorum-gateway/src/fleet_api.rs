//! Fleet health and the DLQ over the operator API (F-UI-3): what the
//! console's fleet page reads, and its replay button.
//!
//! | route | what |
//! |---|---|
//! | `GET /api/fleet` | per consumer group: members (0 = down), state, lag; messages on the DLQ |
//! | `GET /api/dlq` | every DLQ message: where it came from, which group gave up, why |
//! | `POST /api/dlq/replay` `{partition, offset}` | re-publish one to its topic, for the group that gave up |
//! | `GET /api/index` | per repository: the last index request (ref, when) and the commit its graph is at |
//!
//! Measured from the broker (`quorum_runtime::fleet`), never from the
//! services themselves, so it is the same on every gateway replica and
//! shows a service that is down as a group with no member.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use crate::operator::{OperatorApi, error, unavailable};

/// How long the DLQ read waits after the last message (the DLQ is read
/// only when the watermarks say it holds something).
const DLQ_QUIET: Duration = Duration::from_secs(2);

pub(crate) async fn fleet(State(api): State<OperatorApi>, headers: HeaderMap) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let Some(bus) = api.bus().cloned() else {
        return unavailable("this gateway was started without a broker to measure");
    };
    match tokio::task::spawn_blocking(move || quorum_runtime::fleet::measure(&bus)).await {
        Ok(Ok(health)) => axum::Json(health).into_response(),
        Ok(Err(e)) => unavailable(format!("the broker did not answer: {e}")),
        Err(e) => unavailable(e),
    }
}

/// Repositories the index page lists, the most recently requested first.
const INDEX_LISTED: usize = 50;

/// Index freshness from the store: what was last asked of the indexer for
/// each repository, and the commit the branch's code graph is at (`null`
/// until a graph of that branch is built; a request for a commit moves no
/// branch).
pub(crate) async fn index_freshness(State(api): State<OperatorApi>, headers: HeaderMap) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let store = api.store();
    let repos = match store.indexed_repos(INDEX_LISTED).await {
        Ok(r) => r,
        Err(e) => return unavailable(e),
    };
    let mut out = Vec::with_capacity(repos.len());
    for repo in repos {
        let (git_ref, at_ms) = match store.last_index_request(&repo).await {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => return unavailable(e),
        };
        let branch = git_ref.strip_prefix("refs/heads/").unwrap_or(&git_ref);
        let indexed = if quorum_core::is_commit_id(branch) {
            None
        } else {
            match store.branch_graph(&repo, branch).await {
                Ok(c) => c,
                Err(e) => return unavailable(e),
            }
        };
        out.push(json!({
            "repo": repo,
            "ref": git_ref,
            "requested_at_ms": at_ms,
            "indexed_commit": indexed,
        }));
    }
    axum::Json(json!({ "repositories": out })).into_response()
}

async fn dlq_entries(api: &OperatorApi) -> Result<Vec<quorum_runtime::dlq::DlqEntry>, Response> {
    let Some(bus) = api.bus().cloned() else {
        return Err(unavailable("this gateway was started without a broker to read"));
    };
    let probe = bus.clone();
    let size = tokio::task::spawn_blocking(move || quorum_runtime::fleet::dlq_size(&probe))
        .await
        .map_err(unavailable)?
        .map_err(|e| unavailable(format!("the broker did not answer: {e}")))?;
    if size == 0 {
        return Ok(vec![]);
    }
    quorum_runtime::dlq::read_all(&bus, DLQ_QUIET)
        .await
        .map_err(|e| unavailable(format!("reading the DLQ: {e}")))
}

pub(crate) async fn list(State(api): State<OperatorApi>, headers: HeaderMap) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let entries = match dlq_entries(&api).await {
        Ok(e) => e,
        Err(r) => return r,
    };
    let shown: Vec<_> = entries
        .iter()
        .map(|e| {
            use quorum_events::headers as h;
            json!({
                "partition": e.partition,
                "offset": e.offset,
                "key": e.key,
                "topic": e.header(h::DLQ_TOPIC),
                "group": e.header(h::DLQ_GROUP),
                "kind": e.header(h::DLQ_ERROR_KIND),
                "error": e.header(h::DLQ_ERROR),
            })
        })
        .collect();
    axum::Json(json!({ "messages": shown })).into_response()
}

#[derive(Deserialize)]
struct ReplayBody {
    partition: i32,
    offset: i64,
}

pub(crate) async fn replay(State(api): State<OperatorApi>, headers: HeaderMap, raw: axum::body::Bytes) -> Response {
    if let Err(r) = api.authorize(&headers) {
        return r.into_response();
    }
    let want: ReplayBody = match serde_json::from_slice(&raw) {
        Ok(b) => b,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("expected {{\"partition\": N, \"offset\": M}}: {e}"),
            );
        }
    };
    let entries = match dlq_entries(&api).await {
        Ok(e) => e,
        Err(r) => return r,
    };
    let Some(entry) = entries
        .iter()
        .find(|e| e.partition == want.partition && e.offset == want.offset)
    else {
        return error(
            StatusCode::NOT_FOUND,
            format!("no DLQ message at {}:{}", want.partition, want.offset),
        );
    };
    match quorum_runtime::dlq::replay(api.producer(), entry).await {
        Ok(()) => axum::Json(json!({
            "replayed": format!("{}:{}", entry.partition, entry.offset),
            "to": entry.header(quorum_events::headers::DLQ_TOPIC),
            "for": entry.header(quorum_events::headers::DLQ_GROUP),
        }))
        .into_response(),
        Err(e) => unavailable(format!("re-publishing: {e}")),
    }
}
