//! `quorum demo`: one storefront case reviewed end to end — a signed webhook
//! into the gateway, Kafka (embedded), all four agents, the aggregator, the
//! critic and the publisher — on the embedded defaults.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use quorum_core::Review;
use quorum_eval::{build_case_repo, case::load_case};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::MemoryStore;

use crate::fleet::{Fleet, FleetOptions, wait_for_review};
use crate::webhook::{open_pull_request, pull_request_payload};

#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// The fixture to review.
    #[arg(long, default_value = "storefront-fixture")]
    pub fixture: PathBuf,
    /// Which case of `<fixture>/cases/` to submit as the PR.
    #[arg(long, default_value = "01-sql-fstring-email-lookup")]
    pub case: String,
    #[command(flatten)]
    pub llm: quorum_llm::LlmArgs,
}

/// The demo's repository name in webhooks.
pub const DEMO_REPO: &str = "storefront/shop";

pub async fn run(args: DemoArgs) -> anyhow::Result<Review> {
    let llm = args.llm.config()?;
    let timeout = crate::fleet::review_timeout(llm.as_ref());
    let case_path = args.fixture.join("cases").join(format!("{}.json", args.case));
    if !case_path.is_file() {
        let mut known: Vec<String> = std::fs::read_dir(args.fixture.join("cases"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        known.sort();
        anyhow::bail!(
            "there is no case `{}` in {}; the cases are:\n  {}",
            args.case,
            args.fixture.join("cases").display(),
            known.join("\n  ")
        );
    }
    let case = load_case(&case_path).with_context(|| format!("loading case {}", case_path.display()))?;
    println!("▸ case {}: \"{}\"", case.id, case.title);
    let repo = build_case_repo(&args.fixture, &case)?;
    println!(
        "▸ PR head {} on base {} (temporary git repo)",
        &repo.head[..12],
        &repo.base[..12]
    );

    let started = Instant::now();
    let ctx = ServiceContext::embedded(|_| {})?;
    println!("▸ embedded Kafka broker at {}", ctx.bus.brokers);
    let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert(DEMO_REPO, LocalGit::open(&repo.path)?);
    let secret = uuid::Uuid::new_v4().to_string().into_bytes();
    let shutdown = CancellationToken::new();
    let fleet = Fleet::start(
        FleetOptions {
            webhook_secret: secret.clone(),
            llm,
            ..FleetOptions::local(ctx, store.clone(), Arc::new(repos))
        },
        shutdown,
    )
    .await?;
    println!(
        "▸ fleet up in {} ms; gateway on http://{}",
        started.elapsed().as_millis(),
        fleet.gateway
    );

    let client = reqwest::Client::new();
    let body = pull_request_payload(DEMO_REPO, 1, &repo.base, &repo.head, &case.title, &case.body);
    let sent = Instant::now();
    let accepted = open_pull_request(&client, fleet.gateway, &secret, body).await?;
    println!("▸ webhook accepted: job {}", accepted.job_id);
    let review = wait_for_review(store.as_ref(), &accepted.job_id, timeout).await?;
    let latency = sent.elapsed();
    println!(
        "▸ review published {} ms after the webhook was accepted\n",
        latency.as_millis()
    );
    println!("{}", crate::terminal::render(&review));
    fleet.stop().await?;
    Ok(review)
}
