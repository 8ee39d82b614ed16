//! The operator API (F-GW-7) on port 0 against the embedded broker: bearer
//! auth, triggering a review, listing and inspecting runs, deciding a draft
//! (published for the publisher, never applied by the gateway) and
//! requesting a re-index; bad input gets a 4xx that says what is wrong and
//! enqueues nothing.

use quorum_testkit::git;
use std::sync::Arc;
use std::time::Duration;

use quorum_core::{AgentRole, AgentStatus, RunState};
use quorum_events::{AgentResult, DraftDecided, DraftDecision, IndexRequested, Payload, ReviewRequested, Topic};
use quorum_gateway::{GatewayConfig, start};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::store_contract::sample_job;

const TOKEN: &str = "op-token-123";

async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut req = client.request(method, url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_trigger_inspect_decide_and_reindex() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return 1\n").unwrap();
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "base"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return eval(input())\n").unwrap();
    git(repo.path(), &["commit", "-qam", "head"]);

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert("acme/shop", LocalGit::open(repo.path()).unwrap());
    let stop = CancellationToken::new();
    let mut config = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), b"secret".to_vec());
    config.operator_token = Some(TOKEN.into());
    let gw = start(config, &ctx, store.clone(), Arc::new(repos.clone()), stop.clone())
        .await
        .unwrap();
    let base = format!("http://{}", gw.http_addr);
    let c = reqwest::Client::new();
    use reqwest::Method;

    // Auth: no token, a wrong token.
    let (s, b) = call(&c, Method::GET, format!("{base}/api/runs"), None, None).await;
    assert_eq!(s, 401, "{b}");
    let (s, _) = call(&c, Method::GET, format!("{base}/api/runs"), Some("nope"), None).await;
    assert_eq!(s, 401);

    // Trigger a review of a local range.
    let review = serde_json::json!({"repo": "acme/shop", "number": 7, "base": "HEAD~1", "head": "HEAD", "title": "t", "publish_mode": "draft"});
    let (s, b) = call(
        &c,
        Method::POST,
        format!("{base}/api/reviews"),
        Some(TOKEN),
        Some(review.clone()),
    )
    .await;
    assert_eq!(s, 202, "{b}");
    let job = b["job_id"].as_str().unwrap().to_string();
    let (s, b) = call(
        &c,
        Method::POST,
        format!("{base}/api/reviews"),
        Some(TOKEN),
        Some(review),
    )
    .await;
    assert_eq!(
        (s, b["job_id"].as_str()),
        (200, Some(job.as_str())),
        "a repeat is the same job"
    );

    // Bad input: each is a 4xx with a reason.
    for (body, status, want) in [
        (
            serde_json::json!({"repo": "../etc", "base": "a", "head": "b"}),
            400,
            "may only use letters",
        ),
        (
            serde_json::json!({"repo": "acme/shop", "base": "a"}),
            400,
            "missing field `head`",
        ),
        (
            serde_json::json!({"repo": "acme/shop", "base": "a", "head": "b", "colour": 1}),
            400,
            "unknown field",
        ),
        (
            serde_json::json!({"repo": "acme/shop", "base": "--output=x", "head": "HEAD"}),
            422,
            "not allowed",
        ),
        (
            serde_json::json!({"repo": "acme/other", "base": "HEAD~1", "head": "HEAD"}),
            422,
            "not configured",
        ),
    ] {
        let (s, b) = call(
            &c,
            Method::POST,
            format!("{base}/api/reviews"),
            Some(TOKEN),
            Some(body.clone()),
        )
        .await;
        assert_eq!(s, status, "{body}: {b}");
        assert!(b["error"].as_str().unwrap_or("").contains(want), "{body}: {b}");
    }

    // Runs: the list and one run.
    let (s, b) = call(&c, Method::GET, format!("{base}/api/runs?limit=5"), Some(TOKEN), None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["runs"][0]["job_id"], job.as_str());
    assert_eq!(b["runs"][0]["repo"], "acme/shop");
    assert_eq!(b["runs"][0]["pr"], 7);
    let total = b["total"].as_u64().unwrap();
    assert!(total >= 1, "{b}");
    let (s, past) = call(
        &c,
        Method::GET,
        format!("{base}/api/runs?limit=5&offset={total}"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(s, 200, "{past}");
    assert_eq!(
        past["runs"].as_array().map(Vec::len),
        Some(0),
        "a page past the end is empty: {past}"
    );
    assert_eq!(
        (past["total"].as_u64(), past["offset"].as_u64()),
        (Some(total), Some(total))
    );
    let (s, _) = call(&c, Method::GET, format!("{base}/api/runs?limit=0"), Some(TOKEN), None).await;
    assert_eq!(s, 400);
    let (s, b) = call(&c, Method::GET, format!("{base}/api/runs/{job}"), Some(TOKEN), None).await;
    assert_eq!((s, b["state"].as_str()), (200, Some("queued")), "{b}");
    let (s, _) = call(
        &c,
        Method::GET,
        format!("{base}/api/runs/no-such-job"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(s, 404);

    // Drafts: deciding one that is not a draft is refused; a draft's decision goes to the publisher.
    let (s, b) = call(
        &c,
        Method::POST,
        format!("{base}/api/runs/{job}/approve"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(s, 404, "{b}");
    assert!(b["error"].as_str().unwrap().contains("state: queued"), "{b}");
    store.put_job(&sample_job("drafted", 1)).await.unwrap();
    store.set_run_state("drafted", RunState::Draft, None).await.unwrap();
    store.put_draft("drafted", "{}").await.unwrap();
    let (s, b) = call(
        &c,
        Method::POST,
        format!("{base}/api/runs/drafted/discard"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(s, 202, "{b}");
    // The gateway applied nothing: the draft is still there for the publisher.
    assert!(store.get_draft("drafted").await.unwrap().is_some());

    // Filters, applied by the store: a state, a repository, both; an unknown
    // state is an error, not an empty list.
    let ids = |b: &serde_json::Value| -> Vec<String> {
        b["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["job_id"].as_str().unwrap().to_string())
            .collect()
    };
    for (query, want, total) in [
        ("state=draft", vec!["drafted"], 1),
        ("repo=acme/shop", vec![job.as_str()], 1),
        ("repo=octo/shop&state=draft", vec!["drafted"], 1),
        ("repo=acme/shop&state=draft", vec![], 0),
        ("state=queued", vec![job.as_str()], 1),
    ] {
        let (s, b) = call(&c, Method::GET, format!("{base}/api/runs?{query}"), Some(TOKEN), None).await;
        assert_eq!(s, 200, "{query}: {b}");
        assert_eq!(ids(&b), want, "{query}: {b}");
        assert_eq!(b["total"], total, "{query}: {b}");
    }
    let (s, b) = call(
        &c,
        Method::GET,
        format!("{base}/api/runs?state=drafts"),
        Some(TOKEN),
        None,
    )
    .await;
    assert_eq!(s, 400, "{b}");
    assert!(
        b["error"].as_str().unwrap().contains("unknown run state `drafts`"),
        "{b}"
    );

    // The impact report the agents saw: shown once, with the agents that had it.
    let (_, b) = call(&c, Method::GET, format!("{base}/api/runs/{job}"), Some(TOKEN), None).await;
    assert_eq!(b["impact"], serde_json::Value::Null, "no results, no report: {b}");
    assert_eq!(b["context_mode"], "graph_rag", "{b}");
    for (role, impact) in [
        (AgentRole::Static, None),
        (
            AgentRole::Reviewer,
            Some("## Impact report\n- function `f` (modified) app.py:1-2"),
        ),
        (
            AgentRole::Security,
            Some("## Impact report\n- function `f` (modified) app.py:1-2"),
        ),
    ] {
        let result = AgentResult {
            schema_version: quorum_events::SCHEMA_VERSION,
            job_id: "drafted".into(),
            agent: role,
            status: AgentStatus::Done,
            findings: vec![],
            duration_ms: 1,
            error: None,
            tokens: Default::default(),
            model_calls: Default::default(),
            tool_calls: 0,
            impact: impact.map(str::to_string),
        };
        store.put_result(&result).await.unwrap();
    }
    let (_, b) = call(&c, Method::GET, format!("{base}/api/runs/drafted"), Some(TOKEN), None).await;
    assert_eq!(
        b["impact"]["agents"],
        serde_json::json!(["reviewer", "security"]),
        "{b}"
    );
    assert!(b["impact"]["text"].as_str().unwrap().contains("`f` (modified)"), "{b}");

    // Re-index.
    let (s, b) = call(
        &c,
        Method::POST,
        format!("{base}/api/index"),
        Some(TOKEN),
        Some(serde_json::json!({"repo": "acme/shop", "ref": "main"})),
    )
    .await;
    assert_eq!(s, 202, "{b}");
    let (s, _) = call(
        &c,
        Method::POST,
        format!("{base}/api/index"),
        Some(TOKEN),
        Some(serde_json::json!({"repo": "acme/shop", "ref": "-x"})),
    )
    .await;
    assert_eq!(s, 400);

    let read = |t| quorum_runtime::inspect::read_topic(&ctx.bus, t, Duration::from_secs(2));
    let decided: Vec<DraftDecided> = read(Topic::DraftDecided)
        .await
        .unwrap()
        .iter()
        .map(|m| DraftDecided::decode(&m.payload).unwrap())
        .collect();
    assert_eq!(decided.len(), 1);
    assert_eq!(
        (decided[0].job_id.as_str(), decided[0].decision),
        ("drafted", DraftDecision::Discard)
    );
    let index: Vec<IndexRequested> = read(Topic::IndexRequested)
        .await
        .unwrap()
        .iter()
        .map(|m| IndexRequested::decode(&m.payload).unwrap())
        .collect();
    assert_eq!(index.len(), 1);
    assert_eq!(index[0].git_ref, "main");
    let requested: Vec<ReviewRequested> = read(Topic::ReviewRequested)
        .await
        .unwrap()
        .iter()
        .map(|m| ReviewRequested::decode(&m.payload).unwrap())
        .collect();
    assert_eq!(
        requested.len(),
        1,
        "one job for the two identical triggers, none for bad input"
    );
    assert_eq!(
        requested[0].request.policy.publish_mode,
        quorum_core::PublishMode::Draft
    );
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_the_api_is_off() {
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let stop = CancellationToken::new();
    let config = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), b"secret".to_vec());
    let gw = start(config, &ctx, store, Arc::new(LocalRepos::new()), stop.clone())
        .await
        .unwrap();
    let (s, b) = call(
        &reqwest::Client::new(),
        reqwest::Method::GET,
        format!("http://{}/api/runs", gw.http_addr),
        Some(""),
        None,
    )
    .await;
    assert_eq!(s, 404, "{b}");
    assert!(b["error"].as_str().unwrap().contains("QUORUM_OPERATOR_TOKEN"));
    stop.cancel();
}
