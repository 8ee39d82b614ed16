//! `/webhooks/gitlab`: the gateway started in the test on port 0 against the
//! embedded broker, driven with GitLab's documented merge-request hook.

use quorum_testkit::git;
use std::sync::Arc;
use std::time::Duration;

use quorum_core::Provider;
use quorum_events::{Payload, ReviewRequested, Topic};
use quorum_gateway::{GatewayConfig, start};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::{MemoryStore, StateStore};

const TOKEN: &str = "gitlab-hook-token";
const PROJECT: &str = "gitlabhq/gitlab-test";

struct Setup {
    addr: std::net::SocketAddr,
    ctx: ServiceContext,
    head: String,
    _repo: tempfile::TempDir,
    _stop: CancellationToken,
}

async fn setup(configure: impl FnOnce(&mut GatewayConfig)) -> Setup {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "master"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return 1\n").unwrap();
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "base"]);
    git(repo.path(), &["checkout", "-qb", "ms-viewport"]);
    std::fs::write(repo.path().join("app.py"), "def f():\n    return eval(input())\n").unwrap();
    git(repo.path(), &["commit", "-qam", "head"]);
    let head = git(repo.path(), &["rev-parse", "HEAD"]);

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert(PROJECT, LocalGit::open(repo.path()).unwrap());
    let stop = CancellationToken::new();
    let mut config = GatewayConfig::new("127.0.0.1:0".parse().unwrap(), Vec::new());
    config.gitlab_webhook_token = Some(TOKEN.as_bytes().to_vec());
    configure(&mut config);
    let handle = start(config, &ctx, store, Arc::new(repos), stop.clone()).await.unwrap();
    Setup {
        addr: handle.http_addr,
        ctx,
        head,
        _repo: repo,
        _stop: stop,
    }
}

/// GitLab's documented merge-request hook, pointed at our repository's head.
fn opened(head: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gitlab/merge_request.open.json"
    );
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["object_attributes"]["last_commit"]["id"] = head.into();
    serde_json::to_vec(&v).unwrap()
}

async fn post(
    addr: std::net::SocketAddr,
    route: &str,
    event: Option<&str>,
    token: Option<&str>,
    body: Vec<u8>,
) -> (u16, serde_json::Value) {
    let mut req = reqwest::Client::new()
        .post(format!("http://{addr}/webhooks/{route}"))
        .header("content-type", "application/json");
    if let Some(e) = event {
        req = req.header("x-gitlab-event", e);
    }
    if let Some(t) = token {
        req = req.header("x-gitlab-token", t);
    }
    let resp = req.body(body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

async fn requests(ctx: &ServiceContext) -> Vec<ReviewRequested> {
    quorum_runtime::inspect::read_topic(&ctx.bus, Topic::ReviewRequested, Duration::from_secs(2))
        .await
        .unwrap()
        .iter()
        .map(|m| ReviewRequested::decode(&m.payload).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_request_hook_with_the_right_token_becomes_one_job() {
    let s = setup(|_| {}).await;
    let mr = "Merge Request Hook";
    // Token missing, token wrong, header missing: nothing is enqueued.
    for (event, token, want) in [
        (Some(mr), None, 401),
        (Some(mr), Some("gitlab-hook-tokeN"), 401),
        (Some(mr), Some(""), 401),
        (None, Some(TOKEN), 400),
    ] {
        let (status, body) = post(s.addr, "gitlab", event, token, opened(&s.head)).await;
        assert_eq!(status, want, "{token:?}: {body}");
    }
    let (status, body) = post(s.addr, "gitlab", Some(mr), Some(TOKEN), b"{not json".to_vec()).await;
    assert_eq!(status, 400, "{body}");
    assert!(requests(&s.ctx).await.is_empty());

    let (status, body) = post(s.addr, "gitlab", Some(mr), Some(TOKEN), opened(&s.head)).await;
    assert_eq!(status, 202, "{body}");
    let job = body["job_id"].as_str().unwrap().to_string();
    // A redelivery is the same job.
    let (status, again) = post(s.addr, "gitlab", Some(mr), Some(TOKEN), opened(&s.head)).await;
    assert_eq!((status, again["job_id"].as_str()), (200, Some(job.as_str())));

    let reqs = requests(&s.ctx).await;
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0].request;
    assert_eq!(
        (r.repo.provider, r.repo.full_name.as_str()),
        (Provider::Gitlab, PROJECT)
    );
    assert_eq!(
        (r.number, r.head_sha.as_str(), r.author.as_str()),
        (1, s.head.as_str(), "root")
    );
    assert_eq!(r.files.len(), 1);
    assert!(
        r.files[0]
            .patch
            .as_deref()
            .unwrap()
            .contains("+    return eval(input())")
    );

    // A hook GitLab sends that we do not act on is acknowledged.
    let (status, body) = post(s.addr, "gitlab", Some("Pipeline Hook"), Some(TOKEN), b"{}".to_vec()).await;
    assert_eq!(status, 202, "{body}");
    // GitHub webhooks are off on this gateway (no GitHub secret).
    let (status, body) = post(s.addr, "github", None, None, b"{}".to_vec()).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_of_an_scm_the_gateway_does_not_read_are_refused_clearly() {
    let s = setup(|c| c.scm = Some(Provider::Github)).await;
    let (status, body) = post(
        s.addr,
        "gitlab",
        Some("Merge Request Hook"),
        Some(TOKEN),
        opened(&s.head),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("reads changes from GitHub, not GitLab"),
        "{body}"
    );
    assert!(requests(&s.ctx).await.is_empty());

    let off = setup(|c| {
        c.gitlab_webhook_token = None;
        c.webhook_secret = b"github-secret".to_vec();
    })
    .await;
    let (status, body) = post(
        off.addr,
        "gitlab",
        Some("Merge Request Hook"),
        Some(TOKEN),
        opened(&off.head),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(body["error"].as_str().unwrap().contains("GITLAB_WEBHOOK_TOKEN"));
}
