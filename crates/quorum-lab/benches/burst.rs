//! `make bench-burst`: a burst of pull requests through the fleet at model
//! speed. Every service is its own process on `quorum broker` and a real
//! `redis-server`, one replica per role; the LLM roles and the critic talk
//! to a stand-in OpenAI-compatible endpoint that answers every call after a
//! fixed latency (no model needed). The PRs are delivered as fast as the
//! gateway takes them.
//!
//! Reports time to the last review, reviews/s, p50/p99 webhook → review
//! (the gateway's 202 to the run being published, polled), the model calls
//! made, peak in-flight messages and peak RSS per service, and the
//! latency-bound limit the fleet is measured against. Figures depend on the
//! machine: they go in `docs/benchmarks.md`, never into an assertion.
//!
//! Settings (environment): `BURST_PRS` (200), `BURST_LATENCY_MS` (2000),
//! `BURST_OUT` (a JSON file to write), and `QUORUM_MAX_IN_FLIGHT`, which the
//! services read themselves (unset: each group's default).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;
use quorum_cli::webhook::{open_pull_request, pull_request_payload};
use quorum_core::RunState;
use quorum_eval::{build_case_repo, case::load_case};
use quorum_lab::bench::percentile;
use quorum_store::{RedisStore, StateStore};
use quorum_testkit::{RedisServer, bin_dir, free_port, wait_for_port};
use serde_json::json;
use support::{CASE, REPO, SERVICES, anchor_line, env_or, stand_in};

mod support;

const SECRET: &[u8] = b"bench-burst";
const MODEL: &str = "stand-in";

struct Procs(Vec<(String, u16, Child)>);

impl Drop for Procs {
    fn drop(&mut self) {
        for (_, _, c) in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run())
}

/// `quorum_worker_in_flight` per service label in a `/metrics` text.
fn in_flight(metrics: &str) -> Vec<(String, i64)> {
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix("quorum_worker_in_flight{service=\""))
        .filter_map(|rest| {
            let (service, value) = rest.split_once("\"} ")?;
            Some((service.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// CPU seconds a process has used (user + system, from `/proc/PID/stat`).
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // USER_HZ is 100 on Linux for every architecture this runs on.
    Some(ticks / 100.0)
}

async fn run() -> anyhow::Result<()> {
    let prs: u64 = env_or("BURST_PRS", 200);
    let latency = Duration::from_millis(env_or("BURST_LATENCY_MS", 2000));
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture");
    let case = load_case(&fixture.join(format!("cases/{CASE}.json")))?;
    let repo = build_case_repo(&fixture, &case)?;
    let (file, line) = anchor_line(&fixture)?;
    let model = stand_in(latency, file, line).await;
    let redis = RedisServer::start();
    let logs = tempfile::tempdir()?;
    let mut procs = Procs(Vec::new());
    let spawn =
        |procs: &mut Procs, name: &str, args: &[&str], env: &[(&str, String)], port: u16| -> anyhow::Result<()> {
            let path: PathBuf = bin_dir().join(name);
            anyhow::ensure!(
                path.exists(),
                "{} is not built (make bench-burst builds it)",
                path.display()
            );
            let log = std::fs::File::create(logs.path().join(format!("{name}.log")))?;
            let mut cmd = Command::new(path);
            cmd.args(args).stdout(Stdio::null()).stderr(log);
            for (k, v) in env {
                cmd.env(k, v);
            }
            procs.0.push((name.to_string(), port, cmd.spawn()?));
            Ok(())
        };
    let broker_port = free_port();
    spawn(
        &mut procs,
        "quorum",
        &["broker", "--port", &broker_port.to_string()],
        &[],
        0,
    )?;
    anyhow::ensure!(
        wait_for_port(broker_port, Duration::from_secs(20)),
        "broker did not start"
    );
    let prefix = "burst:".to_string();
    // The indexer's own index, not the user's (~/.cache/quorum/index).
    let index_dir = tempfile::tempdir()?;
    let index_path = index_dir.path().display().to_string();
    let common = |http: u16| {
        vec![
            ("KAFKA_BROKERS", format!("127.0.0.1:{broker_port}")),
            ("REDIS_URL", redis.url()),
            ("QUORUM_REDIS_PREFIX", prefix.clone()),
            ("HTTP_ADDR", format!("127.0.0.1:{http}")),
            ("QUORUM_LOCAL_REPOS", format!("{REPO}={}", repo.path.display())),
            ("QUORUM_MODEL_URL", model.url.clone()),
            ("QUORUM_MODEL", MODEL.to_string()),
            ("QUORUM_MODEL_TIMEOUT_SECS", "120".to_string()),
            ("QUORUM_INDEX_DIR", index_path.clone()),
        ]
    };
    let gateway_port = free_port();
    let mut gw_env = common(gateway_port);
    gw_env.push(("GITHUB_WEBHOOK_SECRET", String::from_utf8_lossy(SECRET).into_owned()));
    spawn(&mut procs, "gateway", &[], &gw_env, gateway_port)?;
    for name in SERVICES {
        let port = free_port();
        spawn(&mut procs, name, &[], &common(port), port)?;
    }
    for (name, port, _) in &procs.0 {
        if *port != 0 {
            anyhow::ensure!(wait_for_port(*port, Duration::from_secs(30)), "{name} did not start");
        }
    }
    let store = RedisStore::connect(&redis.url(), &prefix).await?;
    let client = reqwest::Client::new();
    let gateway = format!("127.0.0.1:{gateway_port}").parse()?;

    // One review first: the first consumer-group joins take seconds and are
    // not throughput.
    eprintln!("warming up (group joins)…");
    let body = pull_request_payload(REPO, 1, &repo.base, &repo.head, &case.title, &case.body);
    let warm = open_pull_request(&client, gateway, SECRET, body).await?;
    quorum_cli::fleet::wait_for_review(&store, &warm.job_id, Duration::from_secs(180)).await?;
    let calls_before = model.requests().len();
    let cpu_before: BTreeMap<String, f64> = procs
        .0
        .iter()
        .filter_map(|(name, _, child)| Some((name.clone(), cpu_seconds(child.id())?)))
        .collect();

    // Peak in-flight per service, sampled from each service's /metrics.
    let peaks: Arc<Mutex<BTreeMap<String, i64>>> = Arc::default();
    let sampling = quorum_runtime::CancellationToken::new();
    let sampler = {
        let ports: Vec<u16> = procs.0.iter().map(|p| p.1).filter(|p| *p != 0).collect();
        let (peaks, stop, client) = (peaks.clone(), sampling.clone(), client.clone());
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                for port in &ports {
                    let Ok(r) = client.get(format!("http://127.0.0.1:{port}/metrics")).send().await else {
                        continue;
                    };
                    let text = r.text().await.unwrap_or_default();
                    let mut p = peaks.lock().unwrap();
                    for (service, n) in in_flight(&text) {
                        let e = p.entry(service).or_insert(0);
                        *e = (*e).max(n);
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };

    eprintln!("delivering {prs} pull requests…");
    let start = Instant::now();
    let mut deliveries = tokio::task::JoinSet::new();
    for n in 0..prs {
        let body = pull_request_payload(REPO, 1000 + n, &repo.base, &repo.head, &case.title, &case.body);
        let client = client.clone();
        deliveries.spawn(async move {
            let accepted = open_pull_request(&client, gateway, SECRET, body).await;
            (accepted, Instant::now())
        });
    }
    let mut pending: HashMap<String, Instant> = HashMap::new();
    while let Some(d) = deliveries.join_next().await {
        let (accepted, at) = d?;
        let accepted = accepted?;
        anyhow::ensure!(!accepted.duplicate, "a new PR was taken for a duplicate");
        pending.insert(accepted.job_id, at);
    }
    let delivered_in = start.elapsed();
    eprintln!(
        "delivered in {:.2} s; waiting for the reviews…",
        delivered_in.as_secs_f64()
    );

    let mut latencies = Vec::new();
    let mut last = start;
    let deadline = Instant::now() + Duration::from_secs(1800);
    while !pending.is_empty() {
        if Instant::now() > deadline {
            bail!("{} reviews not published after 30 min", pending.len());
        }
        let ids: Vec<String> = pending.keys().cloned().collect();
        for id in ids {
            let Some(run) = store.get_run(&id).await? else { continue };
            match run.state {
                RunState::Published => {
                    let now = Instant::now();
                    let accepted_at = pending.remove(&id).expect("pending");
                    latencies.push(now.duration_since(accepted_at).as_secs_f64());
                    last = now;
                }
                RunState::Failed => bail!("review {id} failed: {}", run.reason.unwrap_or_default()),
                _ => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    sampling.cancel();
    let _ = sampler.await;
    let total = last.duration_since(start).as_secs_f64();
    latencies.sort_by(|a, b| a.total_cmp(b));
    // Model calls of the burst, by the service that made them.
    let mut calls_by: BTreeMap<&str, usize> = BTreeMap::new();
    for req in &model.requests()[calls_before..] {
        let system = req["messages"][0]["content"].as_str().unwrap_or_default();
        *calls_by.entry(service_of(system)).or_insert(0) += 1;
    }
    let calls: usize = calls_by.values().sum();
    let calls_per_review = calls as f64 / prs as f64;

    let peaks = peaks.lock().unwrap().clone();
    let mut rss = BTreeMap::new();
    let mut cpu = BTreeMap::new();
    for (name, _, child) in &procs.0 {
        if let Some(mib) = quorum_lab::bench::peak_rss_mib(&child.id().to_string()) {
            rss.insert(name.clone(), (mib * 10.0).round() / 10.0);
        }
        if let Some(s) = cpu_seconds(child.id()) {
            cpu.insert(name.clone(), round(s - cpu_before.get(name).copied().unwrap_or(0.0)));
        }
    }
    // The latency-bound limit: each model-backed service works through its
    // calls `in_flight` at a time, each call costing the latency; services
    // work in parallel, so the slowest bounds the burst, plus one review's
    // own chain (the roles in parallel, then the critic) to fill and drain
    // the pipeline.
    let lat = latency.as_secs_f64();
    let bound = calls_by
        .iter()
        .map(|(service, n)| *n as f64 * lat / in_flight_of(service) as f64)
        .fold(0.0, f64::max)
        + 2.0 * lat;
    let report = json!({
        "prs": prs,
        "model_latency_ms": latency.as_millis() as u64,
        "max_in_flight": std::env::var("QUORUM_MAX_IN_FLIGHT").ok(),
        "delivered_in_s": round(delivered_in.as_secs_f64()),
        "time_to_last_review_s": round(total),
        "reviews_per_s": round(prs as f64 / total),
        "webhook_to_review_p50_s": round(percentile(&latencies, 0.5)),
        "webhook_to_review_p99_s": round(percentile(&latencies, 0.99)),
        "model_calls": calls,
        "model_calls_by_service": calls_by,
        "model_calls_per_review": round(calls_per_review),
        "latency_bound_s": round(bound),
        "ratio_to_bound": round(total / bound),
        "peak_in_flight": peaks,
        "peak_rss_mib": rss,
        "cpu_s_during_burst": cpu,
        "cores": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Ok(out) = std::env::var("BURST_OUT") {
        std::fs::write(&out, serde_json::to_string_pretty(&report)? + "\n")?;
        eprintln!("wrote {out}");
    }
    Ok(())
}

/// Which service made a model call, from its system prompt.
fn service_of(system: &str) -> &'static str {
    if system.contains("critic of a code review bot") {
        "critic"
    } else if system.contains("security reviewer") {
        "agent-security"
    } else if system.contains("correctness reviewer") {
        "agent-reviewer"
    } else {
        "agent-tests"
    }
}

/// Messages a service handles at once: `QUORUM_MAX_IN_FLIGHT` when set (the
/// services read it too), otherwise its group's default.
fn in_flight_of(service: &str) -> usize {
    if let Some(n) = std::env::var("QUORUM_MAX_IN_FLIGHT").ok().and_then(|v| v.parse().ok()) {
        return n;
    }
    let group = quorum_events::ConsumerGroup::ALL
        .into_iter()
        .find(|g| g.name() == service)
        .unwrap_or(quorum_events::ConsumerGroup::Critic);
    quorum_runtime::default_in_flight(group)
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
