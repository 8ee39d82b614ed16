//! The gateway (F-GW-1..3): the fleet's front door.
//!
//! `POST /webhooks/github` verifies the signature over the raw body (and
//! `POST /webhooks/gitlab` the secret token) before reading anything else, parses the event, applies the policy, and submits
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

mod console;
mod fleet_api;
pub mod github;
pub mod gitlab;
pub mod intake;
mod memory_api;
pub mod operator;
pub mod policy;
pub mod signature;
mod webhook;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use quorum_core::JobPolicy;
use quorum_runtime::{CancellationToken, Metrics, RuntimeError, ServiceContext, ServiceHandle, ops};
use quorum_scm::{ChangeSource, TreeSource};

use crate::intake::Intake;
use quorum_store::StateStore;
use serde_json::json;

/// Gateway settings.
#[derive(Clone)]
pub struct GatewayConfig {
    pub http_addr: SocketAddr,
    /// The webhook secret shared with GitHub.
    pub webhook_secret: Vec<u8>,
    /// The secret token of GitLab's webhooks; `None` turns
    /// `/webhooks/gitlab` off.
    pub gitlab_webhook_token: Option<Vec<u8>>,
    /// The SCM changes are read from (GitHub's or GitLab's API); hooks of
    /// the other one are refused. `None`: local repositories, any hook.
    pub scm: Option<quorum_core::Provider>,
    /// Largest accepted body (GitHub caps payloads at 25 MiB; reviews need far less).
    pub max_body_bytes: usize,
    /// Review draft PRs too (unless a repository's `.quorum.yml` says).
    pub review_drafts: bool,
    /// Review PRs opened by bots too (unless `.quorum.yml` says).
    pub review_bots: bool,
    /// The server's defaults for every job; a repository's `.quorum.yml`
    /// is merged over them.
    pub policy: JobPolicy,
    /// Where `.quorum.yml` is read from (the default branch); `None`: the
    /// server's defaults apply to every repository.
    pub policy_source: Option<Arc<dyn TreeSource>>,
    /// Bearer token of the operator API; `None` turns the API off.
    pub operator_token: Option<String>,
    /// The gates review-memory items are shown with (`/api/memory`).
    pub memory_policy: quorum_memory::Policy,
    /// Refuse new reviews (503 + Retry-After) while more than this many
    /// requests wait for the slowest agent group (F-GW-6); `None`: no limit.
    pub max_backlog: Option<u64>,
    /// How often the backlog is measured.
    pub backlog_every: std::time::Duration,
    /// An MCP endpoint (`quorum_mcp::http_router`, which guards itself
    /// with its own bearer token and `Host` check), served at `/mcp`.
    pub mcp: Option<Router>,
}

impl GatewayConfig {
    pub fn new(http_addr: SocketAddr, webhook_secret: impl Into<Vec<u8>>) -> Self {
        GatewayConfig {
            http_addr,
            webhook_secret: webhook_secret.into(),
            gitlab_webhook_token: None,
            scm: None,
            max_body_bytes: 1 << 20,
            review_drafts: false,
            review_bots: false,
            policy: JobPolicy::default(),
            policy_source: None,
            operator_token: None,
            memory_policy: quorum_memory::Policy::default(),
            max_backlog: Some(1000),
            backlog_every: std::time::Duration::from_secs(2),
            mcp: None,
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
    let mcp = config.mcp.clone();
    let state = webhook::AppState {
        config: Arc::new(config),
        source: intake.source().clone(),
        intake,
        producer,
        admission,
        metrics: metrics.clone(),
    };
    let app = Router::new()
        .route("/webhooks/github", post(webhook::github_webhook))
        .route("/webhooks/gitlab", post(webhook::gitlab_webhook))
        .with_state(state)
        .merge(operator.router())
        .merge(console::router())
        .layer(DefaultBodyLimit::max(limit))
        .merge(ops::ops_router(metrics));
    match mcp {
        Some(mcp) => app.nest_service("/mcp", mcp),
        None => app,
    }
}

/// Starts the gateway on `config.http_addr` (port 0 picks one).
pub async fn start(
    config: GatewayConfig,
    ctx: &ServiceContext,
    store: Arc<dyn StateStore>,
    source: Arc<dyn ChangeSource>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    if config.webhook_secret.is_empty() && config.gitlab_webhook_token.as_ref().is_none_or(|t| t.is_empty()) {
        return Err(RuntimeError::Config(
            "no webhook secret: set GITHUB_WEBHOOK_SECRET (GitHub) or GITLAB_WEBHOOK_TOKEN (GitLab)".into(),
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
    )
    .with_memory_policy(config.memory_policy.clone())
    .with_bus(ctx.bus.clone());
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
