//! The MCP endpoint mounted on the gateway (`quorum up --mcp-repo`): a
//! streamable-HTTP session through the gateway's own listener, behind the
//! operator token, next to the webhooks.

use std::path::Path;
use std::sync::Arc;

use quorum_cli::fleet::{Fleet, FleetOptions};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::LocalRepos;
use quorum_store::MemoryStore;

/// The JSON-RPC message of a streamable-HTTP answer (SSE or plain JSON).
fn message(body: &str) -> serde_json::Value {
    let json = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| d.starts_with('{'))
        .unwrap_or(body);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_mcp_behind_the_operator_token() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture");
    let mut search = quorum_search::SearchArgs::defaults();
    search.mode = quorum_search::config::SearchMode::Off;
    let graphs = tempfile::tempdir().unwrap();
    let (server, name) = quorum_cli::mcp_cmd::server(&fixture, Some("storefront"), graphs.path(), &search, None, None)
        .await
        .unwrap();
    assert_eq!(name, "storefront");
    let shutdown = CancellationToken::new();
    let mcp = quorum_mcp::http_router(
        server,
        quorum_mcp::HttpOptions {
            token: Some("op-token".into()),
            allowed_hosts: vec![],
        },
        shutdown.clone(),
    );
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let fleet = Fleet::start(
        FleetOptions {
            operator_token: Some("op-token".into()),
            mcp: Some(mcp),
            ..FleetOptions::local(ctx, Arc::new(MemoryStore::new()), Arc::new(LocalRepos::new()))
        },
        shutdown.clone(),
    )
    .await
    .unwrap();
    let url = format!("http://{}/mcp", fleet.gateway);
    let http = reqwest::Client::new();
    let post = |body: serde_json::Value, session: Option<String>, token: Option<&str>| {
        let mut req = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(s) = session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-06-18");
        }
        req.send()
    };
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});

    let refused = post(init.clone(), None, None).await.unwrap();
    assert_eq!(refused.status(), 401);
    let wrong = post(init.clone(), None, Some("nope")).await.unwrap();
    assert_eq!(wrong.status(), 401);

    let started = post(init, None, Some("op-token")).await.unwrap();
    assert_eq!(started.status(), 200);
    let session = started
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let hello = message(&started.text().await.unwrap());
    assert!(
        hello["result"]["instructions"].as_str().unwrap().contains("storefront"),
        "{hello}"
    );
    let ack = post(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        session.clone(),
        Some("op-token"),
    )
    .await
    .unwrap();
    assert!(ack.status().is_success(), "{}", ack.status());
    let called = post(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "get_callers", "arguments": {"repo": "storefront", "symbol": "shop.pricing.compute_tax", "hops": 1}}}),
        session,
        Some("op-token"),
    )
    .await
    .unwrap();
    assert_eq!(called.status(), 200);
    let answer = message(&called.text().await.unwrap());
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("shop.checkout.checkout"), "{answer}");

    // The gateway's own routes are unchanged beside it.
    let health = http
        .get(format!("http://{}/healthz", fleet.gateway))
        .send()
        .await
        .unwrap();
    assert!(health.status().is_success());
    fleet.stop().await.unwrap();
}
