//! `/healthz` and `/metrics`, served by every service (the gateway merges
//! them into its own router).

use std::net::SocketAddr;

use axum::Router;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// The operational routes.
pub fn ops_router(metrics: Metrics) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(render_metrics))
        .with_state(metrics)
}

async fn render_metrics(State(m): State<Metrics>) -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/plain; version=0.0.4")], m.render())
}

/// A bound HTTP server; `addr` is the real address (tests bind port 0).
pub struct HttpServer {
    pub addr: SocketAddr,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Binds `addr` and serves `router` until `shutdown`.
pub async fn serve(addr: SocketAddr, router: Router, shutdown: CancellationToken) -> std::io::Result<HttpServer> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
    });
    Ok(HttpServer { addr, task })
}
