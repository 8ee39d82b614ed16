//! `make bench-gateway`: signed webhook deliveries per second through the
//! gateway alone, with the real Redis dedupe (a `redis-server` on a free
//! port) and the embedded broker. Two phases: new pull requests (signature,
//! parse, dedupe claim, the change read from a local git repository, the job
//! stored and published) and redeliveries of the same ones (signature, parse,
//! dedupe hit). Figures depend on the machine (the load generator shares its
//! cores): they go in `docs/benchmarks.md`, never into an assertion.
//!
//! Settings (environment): `GATEWAY_NEW` (1000), `GATEWAY_REDELIVER` (5000),
//! `GATEWAY_CLIENTS` (32 concurrent connections), `GATEWAY_OUT` (a JSON file).
//!
//! The two phases above are closed loops: 32 connections send as fast as
//! answers come back, so their latencies include the queue a saturated
//! 2-core machine builds. A third phase offers new pull requests at fixed
//! rates (`GATEWAY_RATES`, per second, each for `GATEWAY_RATE_SECONDS`):
//! every request is sent at its scheduled time whether or not earlier ones
//! were answered, and its latency counts from that time (no coordinated
//! omission), so each rate's p99 is what a sender at that rate sees.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quorum_cli::webhook::{deliver, pull_request_payload};
use quorum_eval::{build_case_repo, case::load_case};
use quorum_gateway::GatewayConfig;
use quorum_lab::bench::percentile;
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::RedisStore;
use quorum_testkit::RedisServer;
use serde_json::json;

const REPO: &str = "storefront/shop";
const SECRET: &[u8] = b"bench-gateway";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run())
}

/// Delivers `bodies` over `clients` connections at once; returns the
/// wall time, every request's latency in ms, and the statuses seen.
async fn phase(
    gateway: std::net::SocketAddr,
    bodies: Vec<Vec<u8>>,
    clients: usize,
) -> anyhow::Result<(Duration, Vec<f64>, Vec<u16>)> {
    let queue = Arc::new(std::sync::Mutex::new(bodies));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let queue = queue.clone();
        tasks.spawn(async move {
            let client = reqwest::Client::new();
            let mut out = vec![];
            loop {
                let Some(body) = queue.lock().unwrap().pop() else { break };
                let t = Instant::now();
                let (status, _) = deliver(&client, gateway, SECRET, "pull_request", body).await?;
                out.push((t.elapsed().as_secs_f64() * 1000.0, status));
            }
            anyhow::Ok(out)
        });
    }
    let mut latencies = vec![];
    let mut statuses = vec![];
    while let Some(r) = tasks.join_next().await {
        for (ms, status) in r?? {
            latencies.push(ms);
            statuses.push(status);
        }
    }
    let wall = start.elapsed();
    latencies.sort_by(|a, b| a.total_cmp(b));
    Ok((wall, latencies, statuses))
}

/// Sends `bodies` at `rate` per second on a fixed schedule, each on its
/// own task; latency counts from the scheduled time, so a late send (the
/// generator itself behind) is charged to the latency.
async fn open_loop(
    gateway: std::net::SocketAddr,
    bodies: Vec<Vec<u8>>,
    rate: f64,
) -> anyhow::Result<(Duration, Vec<f64>, Vec<u16>)> {
    let client = reqwest::Client::builder().pool_max_idle_per_host(256).build()?;
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, body) in bodies.into_iter().enumerate() {
        let due = start + Duration::from_secs_f64(i as f64 / rate);
        tokio::time::sleep_until(due.into()).await;
        let client = client.clone();
        tasks.spawn(async move {
            let (status, _) = deliver(&client, gateway, SECRET, "pull_request", body).await?;
            anyhow::Ok((due.elapsed().as_secs_f64() * 1000.0, status))
        });
    }
    let mut latencies = vec![];
    let mut statuses = vec![];
    while let Some(r) = tasks.join_next().await {
        let (ms, status) = r??;
        latencies.push(ms);
        statuses.push(status);
    }
    let wall = start.elapsed();
    latencies.sort_by(|a, b| a.total_cmp(b));
    Ok((wall, latencies, statuses))
}

fn summary(name: &str, (wall, lat, statuses): &(Duration, Vec<f64>, Vec<u16>)) -> serde_json::Value {
    let mut by_status = std::collections::BTreeMap::new();
    for s in statuses {
        *by_status.entry(s.to_string()).or_insert(0u64) += 1;
    }
    let round = |x: f64| (x * 100.0).round() / 100.0;
    json!({
        "phase": name,
        "deliveries": lat.len(),
        "wall_s": round(wall.as_secs_f64()),
        "per_s": round(lat.len() as f64 / wall.as_secs_f64()),
        "p50_ms": round(percentile(lat, 0.5)),
        "p99_ms": round(percentile(lat, 0.99)),
        "max_ms": round(percentile(lat, 1.0)),
        "statuses": by_status,
    })
}

async fn run() -> anyhow::Result<()> {
    let new: u64 = env_or("GATEWAY_NEW", 1000);
    let redeliver: usize = env_or("GATEWAY_REDELIVER", 5000);
    let clients: usize = env_or("GATEWAY_CLIENTS", 32);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture");
    let case = load_case(&fixture.join("cases/01-sql-fstring-email-lookup.json"))?;
    let repo = build_case_repo(&fixture, &case)?;
    let redis = RedisServer::start();
    let store = Arc::new(RedisStore::connect(&redis.url(), "bench-gw:").await?);
    let ctx = ServiceContext::embedded(|_| {})?;
    let repos = LocalRepos::new();
    repos.insert(REPO, LocalGit::open(&repo.path)?);
    let mut config = GatewayConfig::new("127.0.0.1:0".parse()?, SECRET.to_vec());
    // Nothing consumes the requests here, so the backlog limit would start
    // refusing after its first thousand: this measures intake alone.
    config.max_backlog = None;
    let shutdown = CancellationToken::new();
    let gateway = quorum_gateway::start(config, &ctx, store, Arc::new(repos), shutdown.clone()).await?;
    let addr = gateway.http_addr;

    let bodies: Vec<Vec<u8>> = (0..new)
        .map(|n| pull_request_payload(REPO, 10_000 + n, &repo.base, &repo.head, &case.title, &case.body))
        .collect();
    // Warm-up: connections, the first producer round trip, git's caches.
    phase(addr, bodies[..20.min(bodies.len())].to_vec(), 4).await?;
    eprintln!("{new} new pull requests over {clients} connections…");
    let fresh = phase(addr, bodies[20.min(bodies.len())..].to_vec(), clients).await?;
    let again: Vec<Vec<u8>> = (0..redeliver).map(|i| bodies[i % bodies.len()].clone()).collect();
    eprintln!("{redeliver} redeliveries…");
    let dup = phase(addr, again, clients).await?;
    let rates: Vec<f64> = std::env::var("GATEWAY_RATES")
        .unwrap_or_else(|_| "250,500,1000,1500,2000,2500,3000".into())
        .split(',')
        .filter_map(|r| r.trim().parse().ok())
        .collect();
    let seconds: f64 = env_or("GATEWAY_RATE_SECONDS", 3.0);
    let mut next_number = 100_000;
    let mut at_rates = vec![];
    for rate in rates {
        let n = (rate * seconds) as u64;
        let bodies: Vec<Vec<u8>> = (next_number..next_number + n)
            .map(|k| pull_request_payload(REPO, k, &repo.base, &repo.head, &case.title, &case.body))
            .collect();
        next_number += n;
        eprintln!("new pull requests offered at {rate}/s for {seconds} s…");
        // A pause between rates so one rate's backlog does not spill over.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let run = open_loop(addr, bodies, rate).await?;
        let mut s = summary("new, open loop", &run);
        s["offered_per_s"] = json!(rate);
        at_rates.push(s);
    }
    let report = json!({
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "cores": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "clients": clients,
        "new_pull_requests": summary("new", &fresh),
        "redeliveries": summary("redelivery", &dup),
        "new_pull_requests_at_fixed_rates": at_rates,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Ok(out) = std::env::var("GATEWAY_OUT") {
        std::fs::write(&out, serde_json::to_string_pretty(&report)? + "\n")?;
        eprintln!("wrote {out}");
    }
    shutdown.cancel();
    gateway.wait().await?;
    Ok(())
}
