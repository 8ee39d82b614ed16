//! Fleet health and the DLQ over the operator API (F-UI-3): what the
//! console's fleet page reads, and its replay button.
//!
//! | route | what |
//! |---|---|
//! | `GET /api/fleet` | per consumer group: members (0 = down), state, lag; messages on the DLQ |
//! | `GET /api/dlq` | every DLQ message: where it came from, which group gave up, why |
//! | `POST /api/dlq/replay` `{partition, offset}` | re-publish one to its topic, for the group that gave up |
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
