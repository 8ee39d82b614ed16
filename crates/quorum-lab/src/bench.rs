//! `quorum-lab bench`: the pipeline's own overhead, from "webhook accepted" to
//! "review published", with the offline engine on the embedded broker. Not a
//! test: figures depend on the machine; record them in `docs/benchmarks.md`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quorum_eval::{build_case_repo, case::load_case};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::MemoryStore;
use serde::Serialize;

use quorum_cli::demo::DEMO_REPO;
use quorum_cli::fleet::{Fleet, FleetOptions, wait_for_review};
use quorum_cli::webhook::{open_pull_request, pull_request_payload};

#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Reviews to run (one after another).
    #[arg(long, default_value_t = 100)]
    pub reviews: u64,
    /// `fetch.wait.max.ms` of every consumer (the main per-hop cost on a quiet topic).
    #[arg(long, default_value_t = 100)]
    pub fetch_wait_ms: u64,
    #[arg(long, default_value = "storefront-fixture")]
    pub fixture: PathBuf,
    #[arg(long, default_value = "01-sql-fstring-email-lookup")]
    pub case: String,
    /// Write the figures as JSON here too.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
pub struct BenchReport {
    pub reviews: u64,
    pub fetch_wait_ms: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

/// The `p` quantile (0..=1) of sorted figures, nearest rank; every
/// benchmark of the CLI reports with it.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Peak resident set of a process (`"self"` or a pid), in MiB, from
/// `/proc/<pid>/status` (`VmHWM`); `None` off Linux or once it has exited.
pub fn peak_rss_mib(pid: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

pub async fn run(args: BenchArgs) -> anyhow::Result<BenchReport> {
    anyhow::ensure!(args.reviews > 0, "--reviews must be at least 1");
    let case = load_case(&args.fixture.join("cases").join(format!("{}.json", args.case)))?;
    let repo = build_case_repo(&args.fixture, &case)?;
    let wait = Duration::from_millis(args.fetch_wait_ms);
    let ctx = ServiceContext::embedded(|bus| bus.fetch_wait_max = wait)?;
    let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert(DEMO_REPO, LocalGit::open(&repo.path)?);
    let secret = b"bench-secret".to_vec();
    let fleet = Fleet::start(
        FleetOptions {
            webhook_secret: secret.clone(),
            ..FleetOptions::local(ctx, store.clone(), Arc::new(repos))
        },
        CancellationToken::new(),
    )
    .await?;
    let client = reqwest::Client::new();
    // One warm-up review: the first consumer-group joins take seconds on the
    // mock cluster and are not pipeline overhead.
    let mut latencies = Vec::new();
    let pb = quorum_cli::progress::bar("bench", args.reviews + 1, "reviews");
    for i in 0..=args.reviews {
        let body = pull_request_payload(DEMO_REPO, i + 1, &repo.base, &repo.head, &case.title, &case.body);
        let accepted = open_pull_request(&client, fleet.gateway, &secret, body).await?;
        let t = Instant::now();
        wait_for_review(store.as_ref(), &accepted.job_id, Duration::from_secs(60)).await?;
        if i > 0 {
            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    fleet.stop().await?;
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    let report = BenchReport {
        reviews: args.reviews,
        fetch_wait_ms: args.fetch_wait_ms,
        p50_ms: percentile(&sorted, 0.50),
        p90_ms: percentile(&sorted, 0.90),
        p99_ms: percentile(&sorted, 0.99),
        max_ms: *sorted.last().expect("at least one review"),
        mean_ms: latencies.iter().sum::<f64>() / latencies.len() as f64,
    };
    println!(
        "webhook accepted → review published, {} reviews, fetch.wait.max.ms={}: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        report.reviews, report.fetch_wait_ms, report.p50_ms, report.p90_ms, report.p99_ms, report.max_ms
    );
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(report)
}
