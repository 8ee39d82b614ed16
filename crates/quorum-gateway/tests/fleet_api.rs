//! Fleet health and the DLQ over the operator API, against the embedded
//! broker: with only the gateway running every service group has no member
//! (down) and a triggered review is lag on the agents' topic; a message
//! dead-lettered by a group shows in the count and the list, and replaying it
//! puts it back on its topic scoped to that group.
//!
//! With `QUORUM_TEST_TANSU` (`make broker-smoke`) the same test runs on
//! tansu, a real broker.

use std::sync::Arc;
use std::time::Duration;

use quorum_events::{Topic, headers};
use quorum_gateway::{GatewayConfig, start};
use quorum_runtime::producer::OutMessage;
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::git;

const TOKEN: &str = "fleet-token";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_health_dlq_list_and_replay() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return 1\n").unwrap();
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "base"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return 2\n").unwrap();
    git(repo.path(), &["commit", "-qam", "head"]);

    let tansu = match quorum_testkit::tansu::binary() {
        Some(bin) => Some(quorum_testkit::tansu::Tansu::start(&bin).await),
        None => None,
    };
    let ctx = match &tansu {
        Some(t) => ServiceContext::new(
            quorum_runtime::BusConfig::for_tests(t.bootstrap.clone()),
            quorum_runtime::Metrics::new(),
        )
        .unwrap(),
        None => ServiceContext::embedded(|_| {}).unwrap(),
    };
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert("acme/shop", LocalGit::open(repo.path()).unwrap());
    let stop = CancellationToken::new();
    let mut config = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), b"secret".to_vec());
    config.operator_token = Some(TOKEN.into());
    let gw = start(config, &ctx, store, Arc::new(repos), stop.clone()).await.unwrap();
    let base = format!("http://{}", gw.http_addr);
    let c = reqwest::Client::new();
    let get = |path: &str| c.get(format!("{base}{path}")).bearer_auth(TOKEN).send();

    assert_eq!(c.get(format!("{base}/api/fleet")).send().await.unwrap().status(), 401);
    let review = serde_json::json!({"repo": "acme/shop", "number": 3, "base": "HEAD~1", "head": "HEAD", "title": "t"});
    let r = c
        .post(format!("{base}/api/reviews"))
        .bearer_auth(TOKEN)
        .json(&review)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);

    let health: serde_json::Value = get("/api/fleet").await.unwrap().json().await.unwrap();
    let groups = health["groups"].as_array().unwrap_or_else(|| panic!("{health}"));
    assert_eq!(groups.len(), 10, "{health}");
    let static_group = groups.iter().find(|g| g["group"] == "agent-static").unwrap();
    // Neither broker here reports group members (the mock refuses ListGroups,
    // tansu 0.6.0 answers it with no group): membership is unknown, and
    // says so, rather than a made-up 0.
    assert!(static_group["members"].is_null(), "{health}");
    assert!(
        static_group["state"].as_str().unwrap().starts_with("unknown"),
        "{health}"
    );
    assert_eq!(static_group["topic"], Topic::ReviewRequested.name());
    assert!(static_group["lag"].as_i64().unwrap() >= 1, "the review waits: {health}");
    assert_eq!(health["dlq_messages"], 0);
    let empty: serde_json::Value = get("/api/dlq").await.unwrap().json().await.unwrap();
    assert_eq!(empty["messages"], serde_json::json!([]));

    // A message the indexer gave up on, as the runtime dead-letters it.
    let dead = OutMessage {
        topic: Topic::Dlq.name().into(),
        key: "acme/shop".into(),
        payload: br#"{"not":"an index request"}"#.to_vec(),
        headers: vec![
            (
                headers::DLQ_TOPIC.into(),
                Topic::IndexRequested.name().as_bytes().to_vec(),
            ),
            (headers::DLQ_GROUP.into(), b"indexer".to_vec()),
            (
                headers::DLQ_ERROR.into(),
                b"invalid payload: missing field `repo`".to_vec(),
            ),
            (headers::DLQ_ERROR_KIND.into(), b"invalid".to_vec()),
        ],
    };
    ctx.producer.send(&dead).await.unwrap();
    let mut health = serde_json::Value::Null;
    for _ in 0..50 {
        health = get("/api/fleet").await.unwrap().json().await.unwrap();
        if health["dlq_messages"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(health["dlq_messages"], 1, "{health}");
    let listed: serde_json::Value = get("/api/dlq").await.unwrap().json().await.unwrap();
    let m = &listed["messages"][0];
    assert_eq!(
        (m["group"].as_str(), m["topic"].as_str(), m["kind"].as_str()),
        (Some("indexer"), Some(Topic::IndexRequested.name()), Some("invalid")),
        "{listed}"
    );
    assert!(m["error"].as_str().unwrap().contains("missing field"), "{listed}");

    let at = serde_json::json!({"partition": m["partition"], "offset": m["offset"]});
    let replayed = c
        .post(format!("{base}/api/dlq/replay"))
        .bearer_auth(TOKEN)
        .json(&at)
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), 200);
    let on_topic = quorum_runtime::inspect::read_topic(&ctx.bus, Topic::IndexRequested, Duration::from_secs(2))
        .await
        .unwrap();
    let back = on_topic
        .iter()
        .find(|x| x.payload == dead.payload)
        .expect("replayed onto its topic");
    assert_eq!(back.header(headers::RETRY_FOR).as_deref(), Some("indexer"));

    let missing = c
        .post(format!("{base}/api/dlq/replay"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({"partition": 0, "offset": 999}))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let bad = c
        .post(format!("{base}/api/dlq/replay"))
        .bearer_auth(TOKEN)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    stop.cancel();
}

/// Index freshness: what the indexer was last asked per repository, most
/// recent first, and the commit the branch's graph is at (none for a
/// commit request, which moves no branch, or before a graph is built).
#[tokio::test]
async fn index_freshness_lists_the_last_request_and_the_graphs_commit() {
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let sha = "93069e5aa1e3c019a700fd67484e3d6c86ad39c9";
    store
        .record_index_request("acme/shop", "refs/heads/main", 1_000)
        .await
        .unwrap();
    store.set_branch_graph("acme/shop", "main", sha).await.unwrap();
    store.record_index_request("acme/web", sha, 2_000).await.unwrap();
    store.record_index_request("acme/api", "dev", 500).await.unwrap();
    let stop = CancellationToken::new();
    let mut config = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), b"secret".to_vec());
    config.operator_token = Some(TOKEN.into());
    let gw = start(config, &ctx, store, Arc::new(LocalRepos::new()), stop.clone())
        .await
        .unwrap();
    let url = format!("http://{}/api/index", gw.http_addr);
    let c = reqwest::Client::new();
    assert_eq!(c.get(&url).send().await.unwrap().status(), 401);
    let body: serde_json::Value = c
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rows = body["repositories"].as_array().unwrap();
    let shown: Vec<(&str, &str, Option<&str>)> = rows
        .iter()
        .map(|r| {
            (
                r["repo"].as_str().unwrap(),
                r["ref"].as_str().unwrap(),
                r["indexed_commit"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("acme/web", sha, None),
            ("acme/shop", "refs/heads/main", Some(sha)),
            ("acme/api", "dev", None),
        ]
    );
    assert_eq!(rows[1]["requested_at_ms"], 1_000);
    stop.cancel();
}
