//! The gateway started in the test on port 0, against the embedded broker,
//! driven with real octokit payloads over HTTP.

use quorum_testkit::git;
use std::sync::Arc;
use std::time::Duration;

use quorum_events::{Payload, ReviewRequested, Topic};
use quorum_gateway::{GatewayConfig, signature::sign, start};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::{MemoryStore, StateStore};

const SECRET: &[u8] = b"test-secret";

struct Setup {
    addr: std::net::SocketAddr,
    ctx: ServiceContext,
    store: Arc<dyn StateStore>,
    base: String,
    head: String,
    _repo: tempfile::TempDir,
    _stop: CancellationToken,
}

async fn setup() -> Setup {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return 1\n").unwrap();
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "base"]);
    let base = git(repo.path(), &["rev-parse", "HEAD"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return eval(input())\n").unwrap();
    git(repo.path(), &["commit", "-qam", "head"]);
    let head = git(repo.path(), &["rev-parse", "HEAD"]);

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert("Codertocat/Hello-World", LocalGit::open(repo.path()).unwrap());
    let stop = CancellationToken::new();
    let mut config = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), SECRET);
    config.max_body_bytes = 64 * 1024;
    let handle = start(config, &ctx, store.clone(), Arc::new(repos), stop.clone())
        .await
        .unwrap();
    Setup {
        addr: handle.http_addr,
        ctx,
        store,
        base,
        head,
        _repo: repo,
        _stop: stop,
    }
}

/// octokit's real `pull_request.opened` example, pointed at our repository's commits.
fn opened(base: &str, head: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/github/octokit-webhooks/payload-examples/api.github.com/pull_request/opened.payload.json"
    );
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["pull_request"]["base"]["sha"] = base.into();
    v["pull_request"]["head"]["sha"] = head.into();
    serde_json::to_vec(&v).unwrap()
}

async fn post(
    addr: std::net::SocketAddr,
    event: &str,
    body: Vec<u8>,
    signature: Option<String>,
) -> (u16, serde_json::Value) {
    let mut req = reqwest::Client::new()
        .post(format!("http://{addr}/webhooks/github"))
        .header("x-github-event", event)
        .header("content-type", "application/json");
    if let Some(sig) = signature {
        req = req.header("x-hub-signature-256", sig);
    }
    let resp = req.body(body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

async fn signed(addr: std::net::SocketAddr, event: &str, body: Vec<u8>) -> (u16, serde_json::Value) {
    let sig = sign(SECRET, &body);
    post(addr, event, body, Some(sig)).await
}

/// Every message on `ReviewRequested`, read until the topic is quiet.
async fn requests(ctx: &ServiceContext) -> Vec<ReviewRequested> {
    quorum_runtime::inspect::read_topic(&ctx.bus, Topic::ReviewRequested, Duration::from_secs(2))
        .await
        .unwrap()
        .iter()
        .map(|m| ReviewRequested::decode(&m.payload).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_refused_and_nothing_is_enqueued() {
    let s = setup().await;
    let body = opened(&s.base, &s.head);
    assert_eq!(post(s.addr, "pull_request", body.clone(), None).await.0, 401);
    let (status, err) = post(s.addr, "pull_request", body.clone(), Some(sign(b"wrong", &body))).await;
    assert_eq!(status, 401);
    assert!(err["error"].as_str().unwrap().contains("does not match"), "{err}");
    assert_eq!(
        post(s.addr, "pull_request", body.clone(), Some("sha256=nothex".into()))
            .await
            .0,
        401
    );
    let (status, err) = signed(s.addr, "pull_request", b"{not json".to_vec()).await;
    assert_eq!(status, 400);
    assert!(err["error"].as_str().unwrap().contains("malformed"), "{err}");
    assert_eq!(signed(s.addr, "pull_request", vec![b' '; 70 * 1024]).await.0, 413);
    // A commit the repository does not have: the change cannot be reviewed.
    let unknown = opened(&s.base, "0123456789abcdef0123456789abcdef01234567");
    assert_eq!(signed(s.addr, "pull_request", unknown).await.0, 422);
    assert_no_jobs(&s).await;
    assert!(requests(&s.ctx).await.is_empty());
}

/// Nothing reached the store: no job, no run.
async fn assert_no_jobs(s: &Setup) {
    let jobs = s.store.list_jobs(&quorum_store::RunFilter::all(), 0, 10).await.unwrap();
    assert!(jobs.is_empty(), "{jobs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_and_unhandled_events_are_acknowledged() {
    let s = setup().await;
    let ping = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/github/octokit-webhooks/payload-examples/api.github.com/ping/payload.json"
    ))
    .unwrap();
    assert_eq!(signed(s.addr, "ping", ping).await.0, 200);
    let closed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/github/octokit-webhooks/payload-examples/api.github.com/pull_request/closed.payload.json"
    ))
    .unwrap();
    let (status, body) = signed(s.addr, "pull_request", closed).await;
    assert_eq!((status, body["action"].as_str()), (202, Some("closed")));
    assert_no_jobs(&s).await;
    let metrics = reqwest::get(format!("http://{}/metrics", s.addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("quorum_gateway_requests_total{status=\"202\"} 1"),
        "{metrics}"
    );
    assert_eq!(
        reqwest::get(format!("http://{}/healthz", s.addr))
            .await
            .unwrap()
            .status(),
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redelivered_webhooks_return_the_same_job_and_enqueue_once() {
    let s = setup().await;
    let body = opened(&s.base, &s.head);
    let (status, first) = signed(s.addr, "pull_request", body.clone()).await;
    assert_eq!(status, 202, "{first}");
    let job_id = first["job_id"].as_str().unwrap().to_string();
    // Sequential and concurrent redeliveries of the same delivery.
    let (status, again) = signed(s.addr, "pull_request", body.clone()).await;
    assert_eq!(
        (status, again["job_id"].as_str(), again["duplicate"].as_bool()),
        (200, Some(job_id.as_str()), Some(true))
    );
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (addr, body) = (s.addr, body.clone());
        tasks.push(tokio::spawn(async move { signed(addr, "pull_request", body).await }));
    }
    for t in tasks {
        let (status, r) = t.await.unwrap();
        assert_eq!((status, r["job_id"].as_str()), (200, Some(job_id.as_str())));
    }
    let published = requests(&s.ctx).await;
    assert_eq!(published.len(), 1, "one job on the bus");
    let req = &published[0].request;
    assert_eq!(req.job_id, job_id);
    assert_eq!(req.repo.full_name, "Codertocat/Hello-World");
    assert_eq!(req.head_sha, s.head);
    assert!(
        req.files[0]
            .patch
            .as_deref()
            .unwrap()
            .contains("+    return eval(input())")
    );
    let job = s.store.get_job(&job_id).await.unwrap().unwrap();
    assert_eq!(job.request.number, 2);
}

/// A push to the default branch becomes one re-index request; other pushes
/// are acknowledged and ignored. A resolved review thread becomes an index
/// request of the default branch that names its pull request for memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_to_the_default_branch_requests_a_reindex() {
    let s = setup().await;
    let push = |r: &str| {
        serde_json::to_vec(&serde_json::json!({
            "ref": r, "after": "a".repeat(40), "deleted": false,
            "repository": {"full_name": "Codertocat/Hello-World", "default_branch": "main"}
        }))
        .unwrap()
    };
    let (status, body) = signed(s.addr, "push", push("refs/heads/main")).await;
    assert_eq!((status, body["ref"].as_str()), (202, Some("main")), "{body}");
    let (status, body) = signed(s.addr, "push", push("refs/heads/topic")).await;
    assert_eq!(status, 202);
    assert_eq!(body["ignored"], "push");
    let (status, _) = post(s.addr, "push", push("refs/heads/main"), None).await;
    assert_eq!(status, 401, "pushes are signed like everything else");
    let c: serde_json::Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/github/octokit-webhooks/payload-examples/api.github.com/pull_request_review_comment/created.payload.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let thread = serde_json::to_vec(&serde_json::json!({
        "action": "resolved", "pull_request": c["pull_request"], "repository": c["repository"],
        "sender": c["sender"], "thread": {"node_id": "PRRT_x", "comments": [c["comment"]]},
    }))
    .unwrap();
    let (status, body) = signed(s.addr, "pull_request_review_thread", thread).await;
    assert_eq!(
        (status, body["memory_pull_requests"][0].as_u64()),
        (202, Some(2)),
        "{body}"
    );
    let index: Vec<quorum_events::IndexRequested> =
        quorum_runtime::inspect::read_topic(&s.ctx.bus, Topic::IndexRequested, Duration::from_secs(2))
            .await
            .unwrap()
            .iter()
            .map(|m| quorum_events::IndexRequested::decode(&m.payload).unwrap())
            .collect();
    assert_eq!(index.len(), 2);
    assert_eq!(
        (index[0].repo.full_name.as_str(), index[0].git_ref.as_str()),
        ("Codertocat/Hello-World", "main")
    );
    assert!(index[0].memory_pull_requests.is_empty());
    assert_eq!(
        (index[1].git_ref.as_str(), index[1].memory_pull_requests.as_slice()),
        ("master", [2].as_slice())
    );
}

/// F-GW-6: over the backlog limit the gateway answers 503 with Retry-After
/// and enqueues nothing; no agent consumes here, so the backlog only grows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_backlog_limit_new_reviews_get_503_with_retry_after() {
    let s = setup().await;
    let repos = LocalRepos::new();
    repos.insert("Codertocat/Hello-World", LocalGit::open(s._repo.path()).unwrap());
    let mut config = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), SECRET);
    config.max_backlog = Some(1);
    config.backlog_every = Duration::from_millis(100);
    let stop = CancellationToken::new();
    let gw = start(config, &s.ctx, s.store.clone(), Arc::new(repos), stop.clone())
        .await
        .unwrap();
    let pr = |n: u64| {
        let mut v: serde_json::Value = serde_json::from_slice(&opened(&s.base, &s.head)).unwrap();
        v["number"] = n.into();
        v["pull_request"]["number"] = n.into();
        serde_json::to_vec(&v).unwrap()
    };
    for n in [101, 102] {
        let (status, body) = signed(gw.http_addr, "pull_request", pr(n)).await;
        assert_eq!(status, 202, "{body}");
    }
    // Wait until the monitor has seen both requests, then the next is refused.
    let start_wait = std::time::Instant::now();
    let refused = loop {
        let body = pr(103);
        let sig = sign(SECRET, &body);
        let resp = reqwest::Client::new()
            .post(format!("http://{}/webhooks/github", gw.http_addr))
            .header("x-github-event", "pull_request")
            .header("x-hub-signature-256", sig)
            .body(body)
            .send()
            .await
            .unwrap();
        if resp.status() == 503 {
            break resp;
        }
        // Accepted (then a duplicate of itself) until the monitor has measured.
        assert!(matches!(resp.status().as_u16(), 200 | 202), "{}", resp.status());
        assert!(start_wait.elapsed() < Duration::from_secs(30), "never refused");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(refused.headers()["retry-after"], "30");
    let body: serde_json::Value = refused.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("limit 1"), "{body}");
    let metrics = reqwest::get(format!("http://{}/metrics", gw.http_addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("quorum_backlog_requests ") && !l.ends_with(" 0")),
        "{metrics}"
    );
    stop.cancel();
}
