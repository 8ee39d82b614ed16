//! The gateway (F-GW-1..3): the fleet's front door.
//!
//! `POST /webhooks/github` verifies the signature over the raw body before
//! reading anything else, parses the event, applies the policy, and submits
//! the change through [`intake::Intake`]. Status codes: 401 bad or missing
//! signature (nothing enqueued), 413 body too large, 400 malformed payload,
//! 202 accepted (or ignored event, counted; a push to the default branch
//! publishes a re-index request), 200 duplicate delivery with the
//! existing job id, 422 a change that cannot be reviewed, 503 when the bus or
//! the store is unavailable (GitHub redelivers).
//!
//! `/api/*` is the token-authenticated operator API ([`operator`]). While
//! more review requests wait than `max_backlog` (F-GW-6), new reviews get
//! 503 with `Retry-After` instead of growing the queue without bound.

pub mod github;
pub mod intake;
pub mod operator;
pub mod signature;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use quorum_core::{JobPolicy, Provider};
use quorum_runtime::{CancellationToken, Metrics, RuntimeError, ServiceContext, ServiceHandle, ops};
use quorum_scm::ChangeSource;
use quorum_store::StateStore;
use serde_json::json;

use crate::github::Event;
use crate::intake::{ChangeRequest, Intake, IntakeError};

/// Gateway settings.
#[derive(Clone)]
pub struct GatewayConfig {
    pub http_addr: SocketAddr,
    /// The webhook secret shared with GitHub.
    pub webhook_secret: Vec<u8>,
    /// Largest accepted body (GitHub caps payloads at 25 MiB; reviews need far less).
    pub max_body_bytes: usize,
    /// Review draft PRs too.
    pub review_drafts: bool,
    /// Review PRs opened by bots too.
    pub review_bots: bool,
    /// The policy every accepted job carries (per-repo `.quorum.yml` later).
    pub policy: JobPolicy,
    /// Bearer token of the operator API; `None` turns the API off.
    pub operator_token: Option<String>,
    /// Refuse new reviews (503 + Retry-After) while more than this many
    /// requests wait for the slowest agent group (F-GW-6); `None`: no limit.
    pub max_backlog: Option<u64>,
    /// How often the backlog is measured.
    pub backlog_every: std::time::Duration,
}

impl GatewayConfig {
    pub fn new(http_addr: SocketAddr, webhook_secret: impl Into<Vec<u8>>) -> Self {
        GatewayConfig {
            http_addr,
            webhook_secret: webhook_secret.into(),
            max_body_bytes: 1 << 20,
            review_drafts: false,
            review_bots: false,
            policy: JobPolicy::default(),
            operator_token: None,
            max_backlog: Some(1000),
            backlog_every: std::time::Duration::from_secs(2),
        }
    }
}

/// The backlog limit, checked before a review is accepted.
#[derive(Clone)]
pub struct Admission {
    limit: Option<u64>,
    backlog: Option<quorum_runtime::backlog::Backlog>,
}

impl Admission {
    /// `Err(message)` when the backlog is over the limit.
    pub fn check(&self) -> Result<(), String> {
        match (self.limit, self.backlog.as_ref().and_then(|b| b.get())) {
            (Some(limit), Some(now)) if now > limit => Err(format!(
                "{now} review requests are waiting (limit {limit}); retry later"
            )),
            _ => Ok(()),
        }
    }

    /// A 503 with `Retry-After` for a refused request.
    pub fn refusal(message: String) -> Response {
        let mut r = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({ "error": message }))).into_response();
        r.headers_mut()
            .insert("retry-after", "30".parse().expect("valid header"));
        r
    }
}

#[derive(Clone)]
struct AppState {
    config: Arc<GatewayConfig>,
    intake: Arc<Intake>,
    producer: quorum_runtime::BusProducer,
    admission: Admission,
    metrics: Metrics,
}

fn reply(metrics: &Metrics, status: StatusCode, body: serde_json::Value) -> Response {
    metrics.gateway_requests.with_label_values(&[status.as_str()]).inc();
    (status, axum::Json(body)).into_response()
}

async fn github_webhook(State(app): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let m = &app.metrics;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Err(e) = signature::verify(&app.config.webhook_secret, &body, header("x-hub-signature-256")) {
        return reply(m, StatusCode::UNAUTHORIZED, json!({ "error": e.to_string() }));
    }
    let Some(event) = header("x-github-event") else {
        return reply(
            m,
            StatusCode::BAD_REQUEST,
            json!({ "error": "missing X-GitHub-Event header" }),
        );
    };
    let event = match github::parse(event, &body) {
        Ok(e) => e,
        Err(e) => return reply(m, StatusCode::BAD_REQUEST, json!({ "error": e })),
    };
    let pr = match event {
        Event::Ping => return reply(m, StatusCode::OK, json!({ "ok": true })),
        Event::Ignored { event, action } => {
            return reply(m, StatusCode::ACCEPTED, json!({ "ignored": event, "action": action }));
        }
        Event::Push { repo, branch } => {
            let msg = quorum_events::IndexRequested {
                schema_version: quorum_events::SCHEMA_VERSION,
                repo: quorum_core::RepoRef {
                    provider: Provider::Github,
                    full_name: repo.clone(),
                },
                git_ref: branch.clone(),
            };
            return match app.producer.publish(&msg).await {
                Ok(()) => reply(m, StatusCode::ACCEPTED, json!({ "index": repo, "ref": branch })),
                Err(e) => {
                    let mut r = reply(m, StatusCode::SERVICE_UNAVAILABLE, json!({ "error": e.to_string() }));
                    r.headers_mut()
                        .insert("retry-after", "5".parse().expect("valid header"));
                    r
                }
            };
        }
        Event::PullRequest(pr) => pr,
    };
    if pr.draft && !app.config.review_drafts {
        return reply(
            m,
            StatusCode::ACCEPTED,
            json!({ "ignored": "pull_request", "reason": "draft" }),
        );
    }
    if pr.author_is_bot && !app.config.review_bots {
        return reply(
            m,
            StatusCode::ACCEPTED,
            json!({ "ignored": "pull_request", "reason": "bot author" }),
        );
    }
    if let Err(e) = app.admission.check() {
        m.gateway_requests.with_label_values(&["503"]).inc();
        return Admission::refusal(e);
    }
    let change = ChangeRequest {
        provider: Provider::Github,
        repo: pr.repo,
        number: pr.number,
        title: pr.title,
        body: pr.body,
        author: pr.author,
        base: pr.base_sha,
        head: pr.head_sha,
        policy: app.config.policy.clone(),
    };
    match app.intake.submit(change).await {
        Ok(s) if s.duplicate => reply(m, StatusCode::OK, json!({ "job_id": s.job_id, "duplicate": true })),
        Ok(s) => reply(
            m,
            StatusCode::ACCEPTED,
            json!({ "job_id": s.job_id, "duplicate": false }),
        ),
        Err(IntakeError::Invalid(e)) => reply(m, StatusCode::UNPROCESSABLE_ENTITY, json!({ "error": e })),
        Err(IntakeError::Unavailable(e)) => {
            let mut r = reply(m, StatusCode::SERVICE_UNAVAILABLE, json!({ "error": e }));
            r.headers_mut()
                .insert("retry-after", "5".parse().expect("valid header"));
            r
        }
    }
}

/// The gateway's routes (webhooks, operator API, ops).
pub fn router(
    config: GatewayConfig,
    intake: Arc<Intake>,
    producer: quorum_runtime::BusProducer,
    admission: Admission,
    operator: operator::OperatorApi,
    metrics: Metrics,
) -> Router {
    let limit = config.max_body_bytes;
    let state = AppState {
        config: Arc::new(config),
        intake,
        producer,
        admission,
        metrics: metrics.clone(),
    };
    Router::new()
        .route("/webhooks/github", post(github_webhook))
        .with_state(state)
        .merge(operator.router())
        .layer(DefaultBodyLimit::max(limit))
        .merge(ops::ops_router(metrics))
}

/// Starts the gateway on `config.http_addr` (port 0 picks one).
pub async fn start(
    config: GatewayConfig,
    ctx: &ServiceContext,
    store: Arc<dyn StateStore>,
    source: Arc<dyn ChangeSource>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    if config.webhook_secret.is_empty() {
        return Err(RuntimeError::Config(
            "the webhook secret (GITHUB_WEBHOOK_SECRET) must not be empty".into(),
        ));
    }
    let addr = config.http_addr;
    let intake = Arc::new(Intake::new(store.clone(), ctx.producer.clone(), source));
    let (backlog, monitor) = match config.max_backlog {
        Some(_) => {
            let (backlog, task) = quorum_runtime::backlog::spawn_monitor(
                &ctx.bus,
                ctx.metrics.clone(),
                config.backlog_every,
                shutdown.clone(),
            )?;
            (Some(backlog), Some(task))
        }
        None => (None, None),
    };
    let admission = Admission {
        limit: config.max_backlog,
        backlog,
    };
    let operator = operator::OperatorApi::new(
        config.operator_token.as_deref(),
        store,
        intake.clone(),
        ctx.producer.clone(),
        config.policy.clone(),
        admission.clone(),
    );
    let app = router(
        config,
        intake,
        ctx.producer.clone(),
        admission,
        operator,
        ctx.metrics.clone(),
    );
    let server = ops::serve(addr, app, shutdown).await?;
    let http_addr = server.addr;
    let mut tasks = vec![tokio::spawn(async move {
        match server.task.await {
            Ok(r) => r.map_err(RuntimeError::Io),
            Err(e) => Err(RuntimeError::Io(std::io::Error::other(e))),
        }
    })];
    if let Some(monitor) = monitor {
        tasks.push(tokio::spawn(async move {
            monitor.await.map_err(|e| RuntimeError::Io(std::io::Error::other(e)))
        }));
    }
    Ok(ServiceHandle {
        name: "gateway".into(),
        http_addr,
        tasks,
    })
}
