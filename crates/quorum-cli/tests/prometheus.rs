//! The Grafana dashboard against a real Prometheus (Debian's package): the
//! fleet runs on the embedded broker while reviews, an index request and a
//! poison message flow; Prometheus scrapes every service; then every query
//! of `deploy/grafana/dashboards/quorum.json` is evaluated through
//! Prometheus' HTTP API and must parse and return data. `promtool check
//! metrics` must pass on every service's `/metrics`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quorum_cli::demo::DEMO_REPO;
use quorum_cli::fleet::{Fleet, FleetOptions, wait_for_review};
use quorum_cli::webhook::{open_pull_request, pull_request_payload};
use quorum_core::{Provider, RepoRef};
use quorum_eval::{build_case_repo, case::load_case};
use quorum_events::{IndexRequested, SCHEMA_VERSION, Topic};
use quorum_runtime::{CancellationToken, OutMessage, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::MemoryStore;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every `expr` in the dashboard, with the panel it belongs to.
fn dashboard_queries() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("deploy/grafana/dashboards/quorum.json")).unwrap();
    let d: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out = vec![];
    fn walk(panels: &serde_json::Value, out: &mut Vec<(String, String)>) {
        for p in panels.as_array().into_iter().flatten() {
            for t in p["targets"].as_array().into_iter().flatten() {
                out.push((
                    p["title"].as_str().unwrap_or("?").to_string(),
                    t["expr"].as_str().unwrap().to_string(),
                ));
            }
            walk(&p["panels"], out);
        }
    }
    walk(&d["panels"], &mut out);
    out
}

async fn query(client: &reqwest::Client, prom: SocketAddr, expr: &str) -> serde_json::Value {
    let response = client
        .get(format!("http://{prom}/api/v1/query"))
        .query(&[("query", expr)])
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body = response.text().await.unwrap();
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("query {expr:?}: HTTP {status}, not JSON ({e}): {body}"))
}

/// Prometheus listens before its TSDB is open and answers 503 until then
/// (slow on a machine's first start); `/-/ready` says when queries work.
async fn wait_until_ready(client: &reqwest::Client, prom: SocketAddr) {
    let start = Instant::now();
    loop {
        let ready = client.get(format!("http://{prom}/-/ready")).send().await;
        if ready.is_ok_and(|r| r.status().is_success()) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "prometheus on {prom} was not ready within 120 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs prometheus and promtool (`make test` installs them)"]
async fn every_dashboard_query_returns_data_from_a_real_prometheus() {
    let fixture = root().join("storefront-fixture");
    let case = load_case(&fixture.join("cases/05-tax-signature-break.json")).unwrap();
    let repo = build_case_repo(&fixture, &case).unwrap();
    let ctx = ServiceContext::embedded(|bus| bus.fetch_wait_max = Duration::from_millis(10)).unwrap();
    let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert(DEMO_REPO, LocalGit::open(&repo.path).unwrap());
    let secret = b"prometheus-test".to_vec();
    // The hybrid index, so its panels have data (the hashing embedder: this
    // tests the metrics' plumbing, not retrieval quality).
    let search_dir = tempfile::tempdir().unwrap();
    let search = quorum_search::testing::hashing_index(search_dir.path()).await.unwrap();
    let fleet = Fleet::start(
        FleetOptions {
            webhook_secret: secret.clone(),
            search: Some(search),
            ..FleetOptions::local(ctx.clone(), store.clone(), Arc::new(repos))
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let targets: Vec<SocketAddr> = fleet.handles.iter().map(|h| h.http_addr).collect();
    assert_eq!(targets.len(), 9, "every service serves /metrics");

    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: quorum\n    static_configs:\n      - targets: [{}]\n",
        targets.iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(", ")
    );
    std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
    let port = quorum_testkit::free_port();
    let prom: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let _prometheus = KillOnDrop(
        Command::new("prometheus")
            .arg(format!("--config.file={}", dir.path().join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address={prom}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus on PATH"),
    );
    assert!(
        quorum_testkit::wait_for_port(port, Duration::from_secs(60)),
        "prometheus did not listen on {prom}"
    );
    let client = reqwest::Client::new();
    wait_until_ready(&client, prom).await;
    let start = Instant::now();
    loop {
        let up = query(&client, prom, "count(up == 1)").await;
        if up["data"]["result"][0]["value"][1].as_str() == Some("9") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "prometheus did not scrape all 9 targets: {up}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // Traffic: reviews spread over a few scrapes, an index request, and a
    // message no agent can read (it goes to the DLQ).
    ctx.producer
        .publish(&IndexRequested {
            schema_version: SCHEMA_VERSION,
            repo: RepoRef {
                provider: Provider::Local,
                full_name: DEMO_REPO.into(),
            },
            git_ref: "HEAD".into(),
            memory_pull_requests: vec![],
        })
        .await
        .unwrap();
    ctx.producer
        .send(&OutMessage {
            topic: Topic::ReviewRequested.name().into(),
            key: "poison".into(),
            payload: b"not json".to_vec(),
            headers: vec![],
        })
        .await
        .unwrap();
    for i in 0..6u64 {
        let body = pull_request_payload(DEMO_REPO, i + 1, &repo.base, &repo.head, &case.title, &case.body);
        let accepted = open_pull_request(&client, fleet.gateway, &secret, body).await.unwrap();
        wait_for_review(store.as_ref(), &accepted.job_id, Duration::from_secs(60))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    // Lag is reported every 5 s; let two more scrapes land.
    tokio::time::sleep(Duration::from_secs(7)).await;

    let mut failures = vec![];
    let queries = dashboard_queries();
    assert!(queries.len() > 40, "{} queries", queries.len());
    for (panel, expr) in &queries {
        let q = expr.replace("$__rate_interval", "1m");
        let r = query(&client, prom, &q).await;
        if r["status"] != "success" {
            failures.push(format!("{panel}: `{q}` failed: {r}"));
        } else if r["data"]["result"].as_array().is_none_or(|a| a.is_empty()) {
            failures.push(format!("{panel}: `{q}` returned no data"));
        }
    }
    for t in &targets {
        let body = client
            .get(format!("http://{t}/metrics"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool on PATH");
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&body).unwrap();
        let out = child.wait_with_output().unwrap();
        if !out.status.success() {
            failures.push(format!(
                "promtool check metrics {t}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    fleet.stop().await.unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
