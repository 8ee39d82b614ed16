//! `quorum-lab eval`: every case of a case directory through the real pipeline
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
use std::collections::BTreeMap;

use quorum_core::{AgentRole, ContextMode, Finding, JobPolicy, Provider};
use quorum_eval::explained::{ExplainedScore, Pair, explained_score, explained_totals, located_pairs};
use quorum_eval::score::{CaseScore, Reported, matches, resolve_expected, score_case, totals};
use quorum_eval::{Case, build_case_repo, load_cases};
pub use quorum_events::payloads::ModelCalls;
use quorum_gateway::intake::{ChangeRequest, Intake};
use quorum_llm::explain::{ExplainJudge, FindingText};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::MemoryStore;
use serde::Serialize;

use quorum_cli::fleet::{Fleet, FleetOptions, wait_for_review};

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
    /// Agent roles that review (default: all four). With a model, the
    /// reviewer, security and tests roles use it; `static` stays offline.
    #[arg(long, value_delimiter = ',')]
    pub roles: Vec<AgentRole>,
    /// Only these case ids (a subset for slow model runs).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// The model engine (`--model-url`, `--model`, …); unset: offline.
    #[command(flatten)]
    pub llm: quorum_llm::LlmArgs,
    /// The explained-judge (`--judge-url`, `--judge-model`); unset: only
    /// located scores.
    #[command(flatten)]
    pub judge: crate::judge_cmd::JudgeArgs,
}

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
    /// With a model: the same review scored on the model's findings only
    /// (no offline rule's), what the model adds on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_alone: Option<CaseScore>,
    /// With a model: the model's findings before the critic (kept and
    /// rejected), so the report shows what the critic removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_before_critic: Option<CaseScore>,
    /// With a judge: located findings that also name the defect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained: Option<ExplainedScore>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_alone_explained: Option<ExplainedScore>,
    /// The judge's verdict on each located (finding, expected) pair.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<PairVerdict>,
}

impl EvalArgs {
    /// The command line's defaults for `fixture`, results under `out`.
    pub fn new(fixture: PathBuf, out: PathBuf) -> EvalArgs {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            args: EvalArgs,
        }
        let mut args = <Line as clap::Parser>::parse_from(["eval"]).args;
        args.fixture = fixture;
        args.out = out;
        args
    }
}

/// One judged pair, for the reader.
#[derive(Debug, Serialize)]
pub struct PairVerdict {
    pub finding: usize,
    pub expected: usize,
    /// `None`: the judge failed on this pair.
    pub explains: Option<bool>,
    pub reason: String,
}

/// Precision / recall / F1 of one view of a mode's reviews.
#[derive(Debug, Clone, Serialize)]
pub struct ViewScores {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub clean_false_positives: usize,
    /// Pairs the judge could not decide (explained views only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unjudged: Option<usize>,
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
    /// Offline + model findings, explained (with a judge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explained: Option<ViewScores>,
    /// The model's findings alone, located (with a model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_alone: Option<ViewScores>,
    /// The model's findings before the critic, located (with a model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_before_critic: Option<ViewScores>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_alone_explained: Option<ViewScores>,
}

#[derive(Debug, Serialize)]
pub struct EvalReport {
    pub schema_version: u32,
    pub fixture: String,
    pub engine: String,
    /// The judge's measured agreement with the labelled sample, reported
    /// beside every explained figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<crate::judge_cmd::MeasuredAgreement>,
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
        explanation: f.explanation.clone(),
        rule: f.rule.clone(),
    }
}

/// The model's own findings of a review (no offline rule's), with their
/// indices in `kept`.
fn model_findings(kept: &[Reported]) -> (Vec<Reported>, Vec<usize>) {
    kept.iter()
        .enumerate()
        .filter(|(_, f)| f.rule.is_none())
        .map(|(i, f)| (f.clone(), i))
        .unzip()
}

/// The judge's verdicts on every located pair of a review.
async fn judge_pairs(
    judge: &ExplainJudge,
    case: &Case,
    root: &Path,
    kept: &[Reported],
) -> anyhow::Result<BTreeMap<Pair, (Option<bool>, String)>> {
    let mut out = BTreeMap::new();
    for pair in located_pairs(case, root, kept).map_err(anyhow::Error::msg)? {
        let f = &kept[pair.finding];
        let text = FindingText {
            title: f.title.clone(),
            explanation: f.explanation.clone(),
        };
        let description = case.expected[pair.expected].description.clone().unwrap_or_default();
        let verdict = match judge.judge(&text, &description).await {
            Ok((v, _)) => (Some(v.explains), v.reason),
            Err((e, _)) => (None, e),
        };
        out.insert(pair, verdict);
    }
    Ok(out)
}

/// Explained scores of a view of `kept` (`index[i]` = the view's finding
/// `i` in `kept`).
fn explained_view(
    case: &Case,
    view: &[Reported],
    index: &[usize],
    verdicts: &BTreeMap<Pair, (Option<bool>, String)>,
) -> ExplainedScore {
    let mine: BTreeMap<Pair, Option<bool>> = index
        .iter()
        .enumerate()
        .flat_map(|(i, &k)| {
            verdicts
                .iter()
                .filter(move |(p, _)| p.finding == k)
                .map(move |(p, (v, _))| {
                    (
                        Pair {
                            finding: i,
                            expected: p.expected,
                        },
                        *v,
                    )
                })
        })
        .collect();
    explained_score(case, view, &mine)
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
    let llm = args.llm.config()?;
    let engine_model = llm
        .as_ref()
        .map_or(quorum_runtime::metrics::OFFLINE_MODEL.to_string(), |c| c.model.clone());
    // Fail before the run, not after it, when the model has no price.
    prices.cost(&engine_model, Default::default())?;
    let judge = args.judge.judge()?;
    // The judge's reliability first: its figures mean little without it.
    let agreement = match &judge {
        Some(j) => {
            let labels = args.judge.labels()?;
            let bar = quorum_cli::progress::bar("judge agreement", labels.pairs.len() as u64, "pairs");
            let m = crate::judge_cmd::measure(j, &labels, &bar).await;
            eprintln!(
                "judge {}: agreement {:.2}, kappa {:.2} on {} labelled pairs ({} errors)",
                m.judge_model, m.agreement.accuracy, m.agreement.kappa, m.labels, m.agreement.errors
            );
            Some(m)
        }
        None => None,
    };
    let review_timeout = quorum_cli::fleet::review_timeout(llm.as_ref());
    let agents = if args.roles.is_empty() {
        JobPolicy::default().agents
    } else {
        args.roles.clone()
    };
    let cases_dir = args.cases.clone().unwrap_or_else(|| args.fixture.join("cases"));
    let loaded = load_cases(&cases_dir).with_context(|| format!("reading {}", cases_dir.display()))?;
    let ctx = ServiceContext::embedded(|bus| bus.fetch_wait_max = Duration::from_millis(10))?;
    let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
    // The fleet's own gateway is unused here: each case is submitted through
    // intake; its repository is registered under its own name so the agents
    // can read it.
    let repos = Arc::new(LocalRepos::new());
    let mut options = FleetOptions::local(ctx.clone(), store.clone(), repos.clone());
    options.llm = llm.clone();
    if llm.is_some() {
        options.aggregator_deadline = review_timeout;
    }
    let fleet = Fleet::start(options, CancellationToken::new()).await?;
    let loaded: Vec<_> = loaded
        .into_iter()
        .filter(|c| match c {
            Ok(c) => args.only.is_empty() || args.only.contains(&c.id),
            Err(_) => true,
        })
        .collect();
    let mut invalid = Vec::new();
    let mut results = Vec::new();
    let mut pr = 0u64;
    let total = loaded.len() * args.modes.len() * args.repeat as usize;
    let mut done = 0;
    // The bar on a terminal; the per-review lines always (CI logs keep them).
    let pb = quorum_cli::progress::bar("eval", total as u64, "reviews");
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
                            agents: agents.clone(),
                            ..JobPolicy::default()
                        },
                        files: None,
                        dedupe_suffix: None,
                    })
                    .await?;
                let review = wait_for_review(store.as_ref(), &submitted.job_id, review_timeout).await?;
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
                let usd = prices.cost(&engine_model, tokens)?;
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
                let (model_view, model_index) = model_findings(&kept);
                let model_alone = match &llm {
                    Some(_) => Some(score_case(&case, &repo.path, &model_view).map_err(anyhow::Error::msg)?),
                    None => None,
                };
                let model_before_critic = match &llm {
                    Some(_) => {
                        let before: Vec<Reported> = model_view
                            .iter()
                            .chain(rejected.iter().filter(|f| f.rule.is_none()))
                            .cloned()
                            .collect();
                        Some(score_case(&case, &repo.path, &before).map_err(anyhow::Error::msg)?)
                    }
                    None => None,
                };
                let verdicts = match &judge {
                    Some(j) => {
                        pb.set_message(format!("judging {} {mode}", case.id));
                        Some(judge_pairs(j, &case, &repo.path, &kept).await?)
                    }
                    None => None,
                };
                let all_index: Vec<usize> = (0..kept.len()).collect();
                let explained = verdicts.as_ref().map(|v| explained_view(&case, &kept, &all_index, v));
                let model_alone_explained = match (&llm, &verdicts) {
                    (Some(_), Some(v)) => Some(explained_view(&case, &model_view, &model_index, v)),
                    _ => None,
                };
                let verdicts: Vec<PairVerdict> = verdicts
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(p, (explains, reason))| PairVerdict {
                        finding: p.finding,
                        expected: p.expected,
                        explains,
                        reason,
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
                    model_alone,
                    model_before_critic,
                    explained,
                    model_alone_explained,
                    verdicts,
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
        engine: match &llm {
            Some(c) => format!("offline + model {}", c.model),
            None => "offline".into(),
        },
        judge: agreement,
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
        explained: explained_scores(mine.iter().filter_map(|r| r.explained.as_ref()).collect()),
        model_alone: located_scores(mine.iter().filter_map(|r| r.model_alone.as_ref()).collect()),
        model_before_critic: located_scores(mine.iter().filter_map(|r| r.model_before_critic.as_ref()).collect()),
        model_alone_explained: explained_scores(mine.iter().filter_map(|r| r.model_alone_explained.as_ref()).collect()),
    }
}

fn located_scores(scores: Vec<&CaseScore>) -> Option<ViewScores> {
    if scores.is_empty() {
        return None;
    }
    let (precision, recall, f1) = totals(&scores);
    Some(ViewScores {
        precision,
        recall,
        f1,
        clean_false_positives: scores
            .iter()
            .filter(|s| s.expected == 0)
            .map(|s| s.false_positives.len())
            .sum(),
        unjudged: None,
    })
}

fn explained_scores(scores: Vec<&ExplainedScore>) -> Option<ViewScores> {
    if scores.is_empty() {
        return None;
    }
    let (precision, recall, f1) = explained_totals(&scores);
    Some(ViewScores {
        precision,
        recall,
        f1,
        // Every counted finding on a clean control is a false positive,
        // explained or not.
        clean_false_positives: scores.iter().filter(|s| s.expected == 0).map(|s| s.counted).sum(),
        unjudged: Some(scores.iter().map(|s| s.unjudged).sum()),
    })
}
