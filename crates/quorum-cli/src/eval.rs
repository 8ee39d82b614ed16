//! `quorum eval`: every case of a case directory through the real pipeline
//! (normalised request on `pr.review.requested`, all agents, aggregator,
//! critic, publisher) on the embedded broker, scored exactly as the case
//! format says, per context mode.
//!
//! Each case's base is indexed first (the code graph, stored as a real PR's
//! base would be by the indexer), and every mode is a `context_mode` on the
//! job's policy, so the agents assemble exactly the context that mode allows.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use quorum_core::{ContextMode, Finding, JobPolicy, Provider};
use quorum_eval::score::{CaseScore, Reported, matches, resolve_expected, score_case, totals};
use quorum_eval::{Case, build_case_repo, load_cases};
pub use quorum_events::payloads::ModelCalls;
use quorum_gateway::intake::{ChangeRequest, Intake};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::MemoryStore;
use serde::Serialize;

use crate::fleet::{Fleet, FleetOptions, wait_for_review};

pub const MODES: [&str; 3] = ["diff_only", "full_files", "graph_rag"];

#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    #[arg(long, default_value = "storefront-fixture")]
    pub fixture: PathBuf,
    /// Case directory (default: `<fixture>/cases`).
    #[arg(long)]
    pub cases: Option<PathBuf>,
    #[arg(long, value_delimiter = ',', default_value = "diff_only,full_files,graph_rag")]
    pub modes: Vec<String>,
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Results go to `<out>/<timestamp>/`.
    #[arg(long, default_value = "eval/results")]
    pub out: PathBuf,
    /// Fail when precision < 1.0 or recall is below this file's `recall`.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// USD per million tokens by model, replacing the built-in table
    /// (`eval/prices.json` when the binary was built).
    #[arg(long)]
    pub prices: Option<PathBuf>,
}

/// The model the agents ran with (priced through the table). Only the
/// offline engine exists so far; a configured model comes with the LLM agents.
const ENGINE_MODEL: &str = quorum_runtime::metrics::OFFLINE_MODEL;

#[derive(Debug, Serialize)]
pub struct CaseResult {
    pub case: String,
    pub mode: String,
    pub run: u32,
    pub score: CaseScore,
    pub missed: Vec<String>,
    /// Every finding the review kept (scored or not), so a reader sees which hit.
    pub findings: Vec<Reported>,
    /// What the critic dropped, with its reason.
    pub rejected: Vec<RejectedFinding>,
    pub latency_ms: f64,
    pub tokens: crate::prices::Tokens,
    pub usd: f64,
    /// Model calls of the review's agents, live and replayed from the
    /// response cache.
    pub model_calls: ModelCalls,
}

#[derive(Debug, Serialize)]
pub struct RejectedFinding {
    #[serde(flatten)]
    pub finding: Reported,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct ModeSummary {
    pub mode: String,
    /// Reviews scored in the mode (valid cases × repeats); `tokens` is
    /// their sum.
    pub reviews: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub clean_false_positives: usize,
    pub tokens: u64,
    pub usd_per_review: f64,
    pub latency_p50_ms: f64,
    pub latency_max_ms: f64,
    /// Recall spread over repeats (max − min).
    pub recall_spread: f64,
    /// Model calls answered by the server, over every review of the mode.
    pub live_calls: u64,
    /// Model calls replayed from the response cache (`QUORUM_LLM_CACHE`):
    /// figures with replayed calls are a re-scoring, not a new measurement.
    pub replayed_calls: u64,
}

#[derive(Debug, Serialize)]
pub struct EvalReport {
    pub schema_version: u32,
    pub fixture: String,
    pub engine: String,
    pub invalid_cases: Vec<String>,
    pub modes: Vec<ModeSummary>,
    pub cases: Vec<CaseResult>,
}

fn reported(f: &Finding) -> Reported {
    let (start, line) = f.line_range();
    Reported {
        file: f.file.clone(),
        start_line: start,
        line,
        category: f.category.as_str().into(),
        severity: f.severity.as_str().into(),
        title: f.title.clone(),
    }
}

/// Why an expected issue was missed.
fn why_missed(root: &Path, case: &Case, index: usize, kept: &[Reported], rejected: &[Reported]) -> String {
    let places = resolve_expected(root, &case.expected[index]).unwrap_or_default();
    if rejected.iter().any(|f| places.iter().any(|r| matches(f, r))) {
        return "rejected by critic".into();
    }
    if kept.iter().any(|f| places.iter().any(|r| r.file == f.file)) {
        return "no finding near the line".into();
    }
    if kept.is_empty() {
        "no finding".into()
    } else {
        "wrong file".into()
    }
}

pub async fn run(args: EvalArgs) -> anyhow::Result<EvalReport> {
    for m in &args.modes {
        anyhow::ensure!(
            MODES.contains(&m.as_str()),
            "unknown mode `{m}` (expected one of {})",
            MODES.join(", ")
        );
    }
    let prices = crate::prices::PriceTable::load_or_embedded(args.prices.as_deref())?;
    // Fail before the run, not after it, when the model has no price.
    prices.cost(ENGINE_MODEL, Default::default())?;
    let cases_dir = args.cases.clone().unwrap_or_else(|| args.fixture.join("cases"));
    let loaded = load_cases(&cases_dir).with_context(|| format!("reading {}", cases_dir.display()))?;
    let ctx = ServiceContext::embedded(|bus| bus.fetch_wait_max = Duration::from_millis(10))?;
    let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
    // The fleet's own gateway is unused here: each case is submitted through
    // intake; its repository is registered under its own name so the agents
    // can read it.
    let repos = Arc::new(LocalRepos::new());
    let fleet = Fleet::start(
        FleetOptions::local(ctx.clone(), store.clone(), repos.clone()),
        CancellationToken::new(),
    )
    .await?;
    let mut invalid = Vec::new();
    let mut results = Vec::new();
    let mut pr = 0u64;
    let total = loaded.len() * args.modes.len() * args.repeat as usize;
    let mut done = 0;
    // The bar on a terminal; the per-review lines always (CI logs keep them).
    let pb = crate::progress::bar("eval", total as u64, "reviews");
    for case in loaded {
        let case = match case {
            Ok(c) => c,
            Err(e) => {
                pb.suspend(|| eprintln!("  invalid: {e}"));
                pb.inc((args.modes.len() * args.repeat as usize) as u64);
                invalid.push(e.to_string());
                continue;
            }
        };
        let repo = match build_case_repo(&args.fixture, &case) {
            Ok(r) => r,
            Err(e) => {
                pb.suspend(|| eprintln!("  invalid: {e}"));
                pb.inc((args.modes.len() * args.repeat as usize) as u64);
                invalid.push(e.to_string());
                continue;
            }
        };
        pb.set_message(format!("indexing {}", case.id));
        let repo_name = format!("eval/{}", repo_slug(&case.id));
        repos.insert(&repo_name, LocalGit::open(&repo.path)?);
        let base_sha = LocalGit::open(&repo.path)?.resolve(&repo.base).await?;
        fleet
            .index
            .ensure(&repo_name, &base_sha, None)
            .await
            .with_context(|| format!("indexing the base of case {}", case.id))?;
        let intake = Intake::new(store.clone(), ctx.producer.clone(), repos.clone());
        for mode in &args.modes {
            let context_mode: ContextMode = mode.parse().map_err(anyhow::Error::msg)?;
            for run in 0..args.repeat {
                pr += 1;
                pb.set_message(format!("{} {mode}", case.id));
                let started = Instant::now();
                let submitted = intake
                    .submit(ChangeRequest {
                        provider: Provider::Local,
                        repo: repo_name.clone(),
                        number: pr,
                        title: case.title.clone(),
                        body: case.body.clone(),
                        author: "eval".into(),
                        base: repo.base.clone(),
                        head: repo.head.clone(),
                        policy: JobPolicy {
                            context_mode,
                            ..JobPolicy::default()
                        },
                        files: None,
                        dedupe_suffix: None,
                    })
                    .await?;
                let review = wait_for_review(store.as_ref(), &submitted.job_id, Duration::from_secs(60)).await?;
                let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
                let mut tokens = crate::prices::Tokens::default();
                let mut model_calls = ModelCalls::default();
                for r in store.get_results(&submitted.job_id).await?.values() {
                    tokens.prompt += r.tokens.prompt;
                    tokens.cached_prompt += r.tokens.cached_prompt;
                    tokens.completion += r.tokens.completion;
                    model_calls.live += r.model_calls.live;
                    model_calls.replayed += r.model_calls.replayed;
                }
                let usd = prices.cost(ENGINE_MODEL, tokens)?;
                let kept: Vec<Reported> = review.kept.iter().map(reported).collect();
                let rejected: Vec<Reported> = review.rejected.iter().map(|(f, _)| reported(f)).collect();
                let score = match score_case(&case, &repo.path, &kept) {
                    Ok(s) => s,
                    Err(e) => {
                        invalid.push(format!("case {}: {e}", case.id));
                        break;
                    }
                };
                let missed = score
                    .hits
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| !**h)
                    .map(|(i, _)| {
                        format!(
                            "{}: {}",
                            case.expected[i].file,
                            why_missed(&repo.path, &case, i, &kept, &rejected)
                        )
                    })
                    .collect();
                done += 1;
                pb.inc(1);
                pb.suspend(|| {
                    eprintln!(
                        "  [{done}/{total}] {mode:<10} {:<32} found {}/{} counted {} fp {}",
                        case.id,
                        score.found,
                        score.expected,
                        score.counted,
                        score.false_positives.len()
                    )
                });
                let rejected = review
                    .rejected
                    .iter()
                    .zip(rejected)
                    .map(|((_, reason), finding)| RejectedFinding {
                        finding,
                        reason: reason.clone(),
                    })
                    .collect();
                results.push(CaseResult {
                    case: case.id.clone(),
                    mode: mode.clone(),
                    run,
                    score,
                    missed,
                    findings: kept,
                    rejected,
                    latency_ms,
                    tokens,
                    usd,
                    model_calls,
                });
            }
        }
        repos.remove(&repo_name);
    }
    pb.finish_and_clear();
    fleet.stop().await?;
    let modes = args.modes.iter().map(|m| summarise(m, &results, args.repeat)).collect();
    let report = EvalReport {
        schema_version: 3,
        fixture: args.fixture.display().to_string(),
        engine: "offline".into(),
        invalid_cases: invalid,
        modes,
        cases: results,
    };
    crate::eval_report::write(&args.out, &report)?;
    if let Some(path) = &args.baseline {
        crate::eval_report::check_baseline(path, &report)?;
    }
    Ok(report)
}

/// A case id as a repository name part (`owner/name` rules).
fn repo_slug(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(90)
        .collect();
    let s = s.trim_start_matches('-').to_string();
    if s.is_empty() { "case".into() } else { s }
}

fn summarise(mode: &str, results: &[CaseResult], repeat: u32) -> ModeSummary {
    let mine: Vec<&CaseResult> = results.iter().filter(|r| r.mode == mode).collect();
    let scores: Vec<&CaseScore> = mine.iter().map(|r| &r.score).collect();
    let (precision, recall, f1) = totals(&scores);
    let mut lat: Vec<f64> = mine.iter().map(|r| r.latency_ms).collect();
    lat.sort_by(f64::total_cmp);
    let per_run: Vec<f64> = (0..repeat)
        .map(|run| {
            totals(
                &mine
                    .iter()
                    .filter(|r| r.run == run)
                    .map(|r| &r.score)
                    .collect::<Vec<_>>(),
            )
            .1
        })
        .collect();
    let spread = per_run.iter().cloned().fold(f64::MIN, f64::max) - per_run.iter().cloned().fold(f64::MAX, f64::min);
    ModeSummary {
        mode: mode.into(),
        reviews: mine.len(),
        precision,
        recall,
        f1,
        clean_false_positives: mine
            .iter()
            .filter(|r| r.score.expected == 0)
            .map(|r| r.score.false_positives.len())
            .sum(),
        tokens: mine.iter().map(|r| r.tokens.total()).sum(),
        usd_per_review: if mine.is_empty() {
            0.0
        } else {
            mine.iter().map(|r| r.usd).sum::<f64>() / mine.len() as f64
        },
        latency_p50_ms: lat.get(lat.len() / 2).copied().unwrap_or(0.0),
        latency_max_ms: lat.last().copied().unwrap_or(0.0),
        recall_spread: if per_run.is_empty() { 0.0 } else { spread },
        live_calls: mine.iter().map(|r| r.model_calls.live as u64).sum(),
        replayed_calls: mine.iter().map(|r| r.model_calls.replayed as u64).sum(),
    }
}
