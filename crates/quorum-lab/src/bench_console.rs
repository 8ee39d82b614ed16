//! `quorum-lab bench-console`: how the console's run list behaves as the store
//! grows. Seeds a Redis with N runs, starts the gateway (operator API) on
//! it, and times the page the console polls (`/api/runs?limit=100`) at the
//! newest runs and at the oldest, at 100 runs and at N, unfiltered and
//! filtered to drafts (one run in ten), in one process, so the figure is a
//! ratio on one machine rather than an absolute claim.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use quorum_core::{JobPolicy, Provider, RepoRef, ReviewRequest};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_store::JobRecord;

use crate::bench::percentile;
use quorum_cli::fleet::{Fleet, FleetOptions};

#[derive(Debug, Clone, clap::Args)]
pub struct BenchConsoleArgs {
    /// A Redis to fill, under a fresh key prefix (`make bench-console`
    /// starts a throwaway one).
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: String,
    /// Runs in the store for the large measurement.
    #[arg(long, default_value_t = 10_000)]
    pub runs: usize,
    /// Requests timed per page.
    #[arg(long, default_value_t = 50)]
    pub requests: usize,
}

#[derive(Debug, serde::Serialize)]
pub struct PageTiming {
    pub runs_in_store: usize,
    /// The list's query filter (`state=draft`), empty for every run.
    pub filter: String,
    pub offset: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

const PAGE: usize = 100;
const TOKEN: &str = "bench-console";

fn job(i: usize) -> JobRecord {
    let created_ms = 1_700_000_000_000 + i as u64;
    JobRecord {
        request: ReviewRequest {
            job_id: format!("bench-{i:06}"),
            repo: RepoRef {
                provider: Provider::Github,
                full_name: "bench/shop".into(),
            },
            number: i as u64 + 1,
            title: format!("Change {i}"),
            body: String::new(),
            author: "bench".into(),
            base_sha: "a".repeat(40),
            head_sha: "b".repeat(40),
            files: vec![],
            policy: JobPolicy::default(),
            requested_at_ms: created_ms,
        },
        created_ms,
    }
}

/// One run in this many is a draft awaiting a decision.
const DRAFT_EVERY: usize = 10;

async fn time_page(
    client: &reqwest::Client,
    base: &str,
    filter: &str,
    offset: usize,
    requests: usize,
) -> anyhow::Result<(f64, f64)> {
    let mut ms = vec![];
    for _ in 0..requests {
        let t = Instant::now();
        let r = client
            .get(format!("{base}/api/runs?limit={PAGE}&offset={offset}&{filter}"))
            .bearer_auth(TOKEN)
            .send()
            .await?;
        anyhow::ensure!(r.status().is_success(), "the run list answered {}", r.status());
        let body: serde_json::Value = r.json().await?;
        anyhow::ensure!(
            body["runs"].as_array().is_some_and(|a| a.len() == PAGE),
            "a full page was expected"
        );
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    Ok((percentile(&ms, 0.5), percentile(&ms, 0.99)))
}

pub async fn run(args: BenchConsoleArgs) -> anyhow::Result<Vec<PageTiming>> {
    anyhow::ensure!(
        args.runs >= DRAFT_EVERY * PAGE,
        "--runs must be at least {} (a full page of drafts)",
        DRAFT_EVERY * PAGE
    );
    let prefix = format!("bench-console-{}:", uuid::Uuid::new_v4().simple());
    let store = quorum_store::connect(Some(&args.redis_url), &prefix)
        .await
        .context("connecting to Redis")?;
    let ctx = ServiceContext::embedded(|_| {})?;
    let shutdown = CancellationToken::new();
    let fleet = Fleet::start(
        FleetOptions {
            operator_token: Some(TOKEN.into()),
            ..FleetOptions::local(ctx, store.clone(), Arc::new(quorum_scm::LocalRepos::new()))
        },
        shutdown.clone(),
    )
    .await?;
    let base = format!("http://{}", fleet.gateway);
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build()?;
    let mut out = vec![];
    let mut seeded = 0;
    for size in [DRAFT_EVERY * PAGE, args.runs] {
        while seeded < size {
            let j = job(seeded);
            store.put_job(&j).await?;
            if seeded % DRAFT_EVERY == 0 {
                store
                    .set_run_state(&j.request.job_id, quorum_core::RunState::Draft, None)
                    .await?;
            }
            seeded += 1;
        }
        let drafts = size.div_ceil(DRAFT_EVERY);
        for (filter, matching) in [("", size), ("state=draft", drafts)] {
            for offset in [0, matching - PAGE] {
                let (p50_ms, p99_ms) = time_page(&client, &base, filter, offset, args.requests).await?;
                out.push(PageTiming {
                    runs_in_store: size,
                    filter: filter.to_string(),
                    offset,
                    p50_ms,
                    p99_ms,
                });
            }
        }
    }
    fleet.stop().await?;
    Ok(out)
}
