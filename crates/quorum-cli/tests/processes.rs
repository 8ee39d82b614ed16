//! Every service as its own process: a Kafka-protocol broker, a real
//! `redis-server`, and the nine service binaries, sharing state through
//! Redis. A signed webhook must come out as a published review.
//!
//! The broker is `quorum broker` (librdkafka's mock cluster), or a real
//! one — tansu — when `QUORUM_TEST_TANSU` names its binary (`make
//! broker-smoke`, part of `make test`, runs this test that way too).
//!
//! Needs the binaries built (`cargo build --workspace --bins`, which
//! `make test` does) and redis-server (installed by `make test`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use quorum_cli::webhook::{open_pull_request, pull_request_payload};
use quorum_eval::{build_case_repo, case::load_case};
use quorum_store::{RedisStore, StateStore};
use quorum_testkit::{RedisServer, bin_dir, free_port, tansu, wait_for_port};

struct Procs(Vec<(String, Child)>);

impl Drop for Procs {
    fn drop(&mut self) {
        for (_, c) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn binary(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.exists(),
        "{} is not built: run `cargo build --workspace --bins` (make test does)",
        p.display()
    );
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server and the built binaries; `make test` runs it"]
async fn a_review_completes_across_separate_processes() {
    let redis = RedisServer::start();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture");
    // The graph case: the reviewer process builds the base commit's code graph
    // into Redis and finds the callers the signature change breaks.
    let case = load_case(&fixture.join("cases/05-tax-signature-break.json")).unwrap();
    let repo = build_case_repo(&fixture, &case).unwrap();
    let logs = tempfile::tempdir().unwrap();

    let mut procs = Procs(Vec::new());
    let spawn = |procs: &mut Procs, name: &str, args: &[&str], env: &[(&str, String)]| {
        let log = std::fs::File::create(logs.path().join(format!("{name}.log"))).unwrap();
        let mut cmd = Command::new(binary(name));
        cmd.args(args).stdout(Stdio::null()).stderr(log);
        for (k, v) in env {
            cmd.env(k, v);
        }
        procs.0.push((name.to_string(), cmd.spawn().unwrap()));
    };
    // Kept alive to the end of the test (dropping it stops tansu).
    let _tansu;
    let bootstrap = match tansu::binary() {
        Some(bin) => {
            let t = tansu::Tansu::start(&bin).await;
            let b = t.bootstrap.clone();
            _tansu = Some(t);
            b
        }
        None => {
            _tansu = None;
            let broker_port = free_port();
            spawn(
                &mut procs,
                "quorum",
                &["broker", "--port", &broker_port.to_string()],
                &[],
            );
            assert!(
                wait_for_port(broker_port, Duration::from_secs(20)),
                "broker did not start"
            );
            format!("127.0.0.1:{broker_port}")
        }
    };

    let prefix = "e2e:".to_string();
    // The indexer's own index, not the user's (~/.cache/quorum/index).
    let index_dir = tempfile::tempdir().unwrap();
    let index_path = index_dir.path().display().to_string();
    let common = |http: u16| {
        vec![
            ("KAFKA_BROKERS", bootstrap.clone()),
            ("REDIS_URL", redis.url()),
            ("QUORUM_REDIS_PREFIX", prefix.clone()),
            ("HTTP_ADDR", format!("127.0.0.1:{http}")),
            ("KAFKA_SESSION_TIMEOUT_MS", "6000".to_string()),
            ("KAFKA_FETCH_WAIT_MAX_MS", "10".to_string()),
            ("QUORUM_LOCAL_REPOS", format!("storefront/shop={}", repo.path.display())),
            ("QUORUM_INDEX_DIR", index_path.clone()),
        ]
    };
    let gateway_port = free_port();
    let mut gw_env = common(gateway_port);
    gw_env.push(("GITHUB_WEBHOOK_SECRET", "multi-process".into()));
    spawn(&mut procs, "gateway", &[], &gw_env);
    let mut health = vec![gateway_port];
    for name in [
        "agent-static",
        "agent-reviewer",
        "agent-security",
        "agent-tests",
        "aggregator",
        "critic",
        "publisher",
        "indexer",
    ] {
        let port = free_port();
        health.push(port);
        spawn(&mut procs, name, &[], &common(port));
    }
    for port in &health {
        assert!(
            wait_for_port(*port, Duration::from_secs(30)),
            "a service did not open its port {port}"
        );
    }
    let client = reqwest::Client::new();
    for port in &health {
        let r = client
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }

    let body = pull_request_payload("storefront/shop", 7, &repo.base, &repo.head, &case.title, &case.body);
    let gateway = format!("127.0.0.1:{gateway_port}").parse().unwrap();
    let accepted = open_pull_request(&client, gateway, b"multi-process", body)
        .await
        .unwrap();

    let store = RedisStore::connect(&redis.url(), &prefix).await.unwrap();
    let review = match quorum_cli::fleet::wait_for_review(&store, &accepted.job_id, Duration::from_secs(90)).await {
        Ok(r) => r,
        Err(e) => {
            let mut all = String::new();
            for (name, _) in &procs.0 {
                let log = std::fs::read_to_string(logs.path().join(format!("{name}.log"))).unwrap_or_default();
                all.push_str(&format!(
                    "--- {name}\n{}\n",
                    log.lines().rev().take(15).collect::<Vec<_>>().join("\n")
                ));
            }
            panic!("{e}\n{all}");
        }
    };
    assert!(
        review.inline.iter().any(|c| c.path == "shop/pricing.py"
            && c.body.contains("Signature change of `compute_tax`")
            && c.body.contains("shop/checkout.py:69")),
        "{review:#?}"
    );
    let job = store.get_job(&accepted.job_id).await.unwrap().unwrap();
    let blob = store.get_graph("storefront/shop", &job.request.base_sha).await.unwrap();
    assert!(
        blob.is_some_and(|b| quorum_graph::blob::decode(&b).is_ok()),
        "the base graph is in Redis"
    );
    let run = store.get_run(&accepted.job_id).await.unwrap().unwrap();
    assert_eq!(run.state, quorum_core::RunState::Published);
    assert_eq!(run.agents.len(), 4);
    // The publisher counted the webhook-to-review latency.
    let publisher_port = health[7];
    let metrics = client
        .get(format!("http://127.0.0.1:{publisher_port}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("quorum_webhook_to_review_seconds_count{mode=\"direct\"} 1"),
        "{metrics}"
    );
}
