//! Streamable HTTP (the MCP transport for remote clients) as an axum
//! router to mount at `/mcp`: the SDK's own service, behind a bearer token
//! compared in constant time, with the SDK's `Host` guard (DNS-rebinding
//! protection) set from configuration so a Kubernetes service name works.

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::Digest;
use tokio_util::sync::CancellationToken;

use crate::QuorumMcp;

/// How the HTTP endpoint is guarded.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The bearer token clients must send (`None`: no token, for a
    /// loopback-only server; the CLI refuses that on other addresses).
    pub token: Option<String>,
    /// `Host` values accepted besides loopback (`quorum-mcp`,
    /// `quorum-mcp.review.svc`, `mcp.example.com:443`).
    pub allowed_hosts: Vec<String>,
}

/// The loopback names the SDK accepts by default.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The MCP endpoint as a router (mount it with `nest("/mcp", …)` or serve it
/// alone); sessions end when `shutdown` is cancelled.
pub fn router(server: QuorumMcp, opts: HttpOptions, shutdown: CancellationToken) -> Router {
    let hosts: Vec<String> = LOOPBACK
        .iter()
        .map(|h| h.to_string())
        .chain(opts.allowed_hosts.iter().cloned())
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown)
        .with_allowed_hosts(hosts);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let digest = opts.token.map(|t| sha2::Sha256::digest(t.as_bytes()));
    Router::new()
        .fallback_service(service)
        .layer(from_fn(move |req: Request, next: Next| async move {
            if let Some(expected) = digest
                && !token_matches(&expected, req.headers())
            {
                return unauthorized();
            }
            next.run(req).await
        }))
}

/// Serves the endpoint at `/mcp` on `listener` until `shutdown` is
/// cancelled (sessions first, then the listener).
pub async fn serve_http(
    server: QuorumMcp,
    listener: tokio::net::TcpListener,
    opts: HttpOptions,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = Router::new().nest_service("/mcp", router(server, opts, shutdown.clone()));
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

/// Whether the request's bearer token hashes to `expected`; digests are
/// compared in constant time, so timing says nothing about the token.
fn token_matches(expected: &[u8], headers: &HeaderMap) -> bool {
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| sha2::Sha256::digest(t.trim().as_bytes()));
    given.is_some_and(|g| g.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0)
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [("www-authenticate", "Bearer")],
        "missing or wrong bearer token: send `Authorization: Bearer <QUORUM_MCP_TOKEN>`\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_bearer_token_matches() {
        let expected = sha2::Sha256::digest(b"s3cret");
        let headers = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert("authorization", v.parse().unwrap());
            h
        };
        assert!(token_matches(&expected, &headers("Bearer s3cret")));
        assert!(!token_matches(&expected, &headers("Bearer s3cre")));
        assert!(!token_matches(&expected, &headers("Basic s3cret")));
        assert!(!token_matches(&expected, &HeaderMap::new()));
    }
}
