//! No secret in anything an operator reads: `quorum up` runs with every
//! secret it takes set to a value found nowhere else — the webhook secret, a
//! GitHub App's private key (and the installation tokens GitHub hands it), a
//! model API key, the operator token — at `RUST_LOG=debug`, exporting traces
//! over OTLP, reviews a pull request on the emulated GitHub end to end; then
//! its logs, its metrics, every span it exported and its `--help` are
//! searched for each secret. The secrets must also have been used (a signed
//! webhook accepted, a review posted with an App token, the model asked, the
//! operator API answering), so the search looks at a run that held them.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod shop;
use shop::{BASE, HEAD, NEW, OLD, REPO, emulated_pr, pr_event};

use axum::body::Bytes;
use axum::routing::post;
use quorum_testkit::github::{GitHubEmulator, test_app_private_key};
use quorum_testkit::scripted_model::{Scripted, ScriptedModel};
use quorum_testkit::{free_port, wait_for_port};

const WEBHOOK_SECRET: &str = "whsec-7f3a9c1e55d24b08";
const MODEL_KEY: &str = "sk-model-c0ffee4f00d91b7e";
const OPERATOR_TOKEN: &str = "op-token-5b2e8d41aa73c6f0";
/// Where each secret appears in `text`, by name.
fn leaks<'a>(secrets: &'a [(String, String)], text: &str) -> Vec<&'a str> {
    secrets
        .iter()
        .filter(|(_, value)| text.contains(value.as_str()))
        .map(|(name, _)| name.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_logs_metrics_traces_or_help() {
    let emu = GitHubEmulator::with_app(77).await;
    emu.set_pr(REPO, emulated_pr(7, "app/users.py", HEAD));
    emu.set_ref(REPO, "main", BASE);
    emu.add_file(REPO, BASE, "app/users.py", OLD);
    emu.add_file(REPO, HEAD, "app/users.py", NEW);
    let model = ScriptedModel::respond(|_, _| Scripted::content(r#"{"findings":[]}"#)).await;

    // Every span the fleet exports, as the raw OTLP bodies (protobuf keeps
    // strings as UTF-8 bytes, so a secret in an attribute shows as itself).
    let exported: Arc<Mutex<Vec<u8>>> = Arc::default();
    let sink = exported.clone();
    let otlp = axum::Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let sink = sink.clone();
            async move {
                sink.lock().unwrap().extend_from_slice(&body);
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let otlp_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, otlp).await.unwrap() });

    let work = tempfile::tempdir().unwrap();
    let log_path = work.path().join("quorum-up.log");
    let port = free_port();
    let env: Vec<(&str, String)> = vec![
        ("GITHUB_WEBHOOK_SECRET", WEBHOOK_SECRET.into()),
        ("GITHUB_API_URL", emu.url()),
        ("GITHUB_APP_ID", "77".into()),
        ("GITHUB_APP_PRIVATE_KEY", test_app_private_key().into()),
        ("QUORUM_MODEL_URL", model.url.clone()),
        ("QUORUM_MODEL", "scripted-model".into()),
        ("QUORUM_MODEL_API_KEY", MODEL_KEY.into()),
        ("QUORUM_OPERATOR_TOKEN", OPERATOR_TOKEN.into()),
        ("QUORUM_INDEX_DIR", work.path().join("index").display().to_string()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{otlp_addr}")),
        ("RUST_LOG", "debug".into()),
    ];
    let quorum = env!("CARGO_BIN_EXE_quorum");
    let mut child = Command::new(quorum)
        .args(["up", "--gateway-addr", &format!("127.0.0.1:{port}")])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    assert!(wait_for_port(port, Duration::from_secs(60)), "quorum up did not start");

    // Use every secret: a signed webhook, the review posted with the App's
    // token, the model asked, the operator API with its token.
    let gateway: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let http = reqwest::Client::new();
    let (status, body) = quorum_cli::webhook::deliver(
        &http,
        gateway,
        WEBHOOK_SECRET.as_bytes(),
        "pull_request",
        pr_event("opened", 7, HEAD),
    )
    .await
    .unwrap();
    assert_eq!(status, 202, "{body}");
    let start = Instant::now();
    while emu.reviews().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(90), "no review was posted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(!model.requests().is_empty(), "the model roles asked the model");
    let runs = http
        .get(format!("http://{gateway}/api/runs"))
        .bearer_auth(OPERATOR_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(runs.status(), 200);
    let refused = http
        .get(format!("http://{gateway}/api/runs"))
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    // The publisher records the webhook-to-review time after the SCM has
    // answered its post, so the emulator can see the review a moment
    // before the histogram exists: read /metrics until it does.
    let scraped = Instant::now();
    let metrics = loop {
        let metrics = http
            .get(format!("http://{gateway}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if metrics.contains("quorum_webhook_to_review_seconds") || scraped.elapsed() > Duration::from_secs(30) {
            break metrics;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(metrics.contains("quorum_webhook_to_review_seconds"), "{metrics}");

    // Stop it (SIGTERM: a clean shutdown flushes the last spans).
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let stopped = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if stopped.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(100));
    }

    let tokens = emu.issued_tokens();
    assert!(!tokens.is_empty(), "the App was given installation tokens");
    let key_body = test_app_private_key()
        .lines()
        .find(|l| l.len() > 40 && !l.starts_with("-----"))
        .unwrap()
        .to_string();
    let mut secrets: Vec<(String, String)> = vec![
        ("webhook secret".into(), WEBHOOK_SECRET.into()),
        ("model API key".into(), MODEL_KEY.into()),
        ("operator token".into(), OPERATOR_TOKEN.into()),
        ("App private key".into(), key_body),
    ];
    secrets.extend(tokens.iter().map(|t| ("installation token".to_string(), t.clone())));

    let logs = std::fs::read_to_string(&log_path).unwrap();
    assert!(logs.lines().count() > 50, "debug logs were written:\n{logs}");
    assert!(logs.contains("review published"), "the run is in the logs");
    let spans = String::from_utf8_lossy(&exported.lock().unwrap()).into_owned();
    assert!(spans.contains("handle"), "spans were exported ({} bytes)", spans.len());
    let help = Command::new(quorum)
        .args(["up", "--help"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned() + &String::from_utf8_lossy(&help.stderr);
    assert!(help.contains("GITHUB_WEBHOOK_SECRET"), "{help}");

    assert_eq!(leaks(&secrets, &logs), Vec::<&str>::new(), "in the logs");
    assert_eq!(leaks(&secrets, &metrics), Vec::<&str>::new(), "in the metrics");
    assert_eq!(leaks(&secrets, &spans), Vec::<&str>::new(), "in the exported spans");
    assert_eq!(leaks(&secrets, &help), Vec::<&str>::new(), "in `quorum up --help`");
    // The search itself can find: a line carrying a secret is caught.
    assert_eq!(leaks(&secrets, &format!("token={OPERATOR_TOKEN}")), ["operator token"]);
}
