//! `quorum-lab eval-memory`: does review memory change reviews the way it
//! should? Each case of `eval/memory/cases/` (format and scoring in
//! `eval/memory/README.md`) is reviewed twice through the embedded fleet —
//! without memory, then with the memory its history teaches — and the
//! difference is scored: dismissed findings repeated (goal 0), conventions
//! from past threads applied (recall), clean controls unchanged (precision).
//!
//! The history becomes memory through `quorum_memory::ingest`, the code
//! `quorum memory ingest` runs; only the HTTP layer (tested against the
//! emulated GitHub) is replaced by the case's own data.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use async_trait::async_trait;
use quorum_core::Review;
use quorum_memory::ingest::{HistoryError, HistorySource, IngestOptions, PrHistory, SweepPage, ThreadInfo};
use quorum_memory::{Association, MemoryState, PastComment, Person, Reaction, Reactions};
use quorum_store::{MemoryStore, StateStore};
use serde::{Deserialize, Serialize};

mod model;
pub use model::{ModelTotals, ModelView};
use model::{model_totals, model_view};

#[derive(Debug, clap::Args)]
pub struct EvalMemoryArgs {
    /// The cases.
    #[arg(long, default_value = "eval/memory/cases")]
    pub cases: PathBuf,
    /// Where the results go (JSON).
    #[arg(long, default_value = "eval/memory/results.json")]
    pub out: PathBuf,
    /// The model engine (`--model-url`, `--model`, `--model-effort`, …);
    /// unset: the offline engine alone. With a model the results also
    /// score the model's own findings (see `ModelView`).
    #[command(flatten)]
    pub llm: quorum_llm::LlmArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseKind {
    Dismissed,
    Convention,
    Clean,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryEntry {
    pr: u64,
    id: u64,
    #[serde(default)]
    reply_to: Option<u64>,
    user: String,
    association: String,
    path: String,
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    reactions: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    resolved_by: Option<String>,
    #[serde(default)]
    outdated: Option<bool>,
    #[serde(default)]
    hunk: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    #[serde(default)]
    rule: Option<String>,
    path: String,
    #[serde(default)]
    line: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryCase {
    pub id: String,
    pub kind: CaseKind,
    pub description: String,
    #[serde(default)]
    members: BTreeMap<String, String>,
    history: Vec<HistoryEntry>,
    #[serde(default)]
    merged: Option<Vec<u64>>,
    base: BTreeMap<String, String>,
    change: BTreeMap<String, String>,
    #[serde(default)]
    expect: Option<Expect>,
}

impl MemoryCase {
    pub fn load(path: &Path) -> anyhow::Result<MemoryCase> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let case: MemoryCase = serde_norway::from_str(&text).with_context(|| format!("{}", path.display()))?;
        let at = |m: &str| anyhow::anyhow!("{}: {m}", path.display());
        match (case.kind, &case.expect) {
            (CaseKind::Dismissed, Some(Expect { rule: Some(_), .. })) => {}
            (CaseKind::Convention, Some(Expect { line: Some(_), .. })) => {}
            (CaseKind::Clean, None) => {}
            (CaseKind::Dismissed, _) => return Err(at("a dismissed case needs `expect: {rule, path}`")),
            (CaseKind::Convention, _) => return Err(at("a convention case needs `expect: {path, line}`")),
            (CaseKind::Clean, Some(_)) => return Err(at("a clean case has no `expect`")),
        }
        for h in &case.history {
            if h.body.is_some() == h.rule.is_some() {
                return Err(at(&format!(
                    "history comment {}: give a `body` (a human's) or a `rule` (Quorum's)",
                    h.id
                )));
            }
            Association::parse(&h.association).map_err(|e| at(&e.to_string()))?;
        }
        Ok(case)
    }
}

/// The case's history as a [`HistorySource`].
struct CaseHistory {
    prs: BTreeMap<u64, PrHistory>,
}

fn quorum_body(rule: &str, title: &str, id: u64) -> String {
    format!(
        "**{title}** (major, bug, confidence 0.90) — from static\n\nSee the rule.\n{}{}",
        quorum_core::review::fingerprint_marker(&format!("{id:016x}")),
        quorum_core::review::rule_marker(rule)
    )
}

impl CaseHistory {
    fn new(case: &MemoryCase) -> anyhow::Result<CaseHistory> {
        let person = |login: &str| Person {
            login: login.to_string(),
            association: case
                .members
                .get(login)
                .map_or(Association::None, |p| Association::from_permission(p)),
        };
        let merged: BTreeSet<u64> = match &case.merged {
            Some(m) => m.iter().copied().collect(),
            None => case.history.iter().map(|h| h.pr).collect(),
        };
        let mut prs: BTreeMap<u64, PrHistory> = BTreeMap::new();
        for (n, h) in case.history.iter().enumerate() {
            let at = format!("2026-01-{:02}T10:{:02}:00Z", 1 + (h.pr % 28), n % 60);
            let body = match (&h.body, &h.rule) {
                (Some(b), _) => b.clone(),
                (None, Some(rule)) => quorum_body(rule, h.title.as_deref().unwrap_or(rule), h.id),
                (None, None) => bail!("history comment {} has neither body nor rule", h.id),
            };
            let count = |k: &str| h.reactions.get(k).map_or(0, |v| v.len() as u32);
            let pr = prs.entry(h.pr).or_default();
            pr.merged = merged.contains(&h.pr);
            pr.comments.push(PastComment {
                id: h.id,
                in_reply_to: h.reply_to,
                pr: h.pr,
                author: h.user.clone(),
                is_bot: h.user.ends_with("[bot]"),
                association: Association::parse(&h.association)?,
                body,
                path: h.path.clone(),
                line: Some(10),
                original_line: Some(10),
                diff_hunk: h.hunk.clone().unwrap_or_default(),
                created_at: at.clone(),
                updated_at: at,
                url: format!("https://github.com/case/repo/pull/{}#discussion_r{}", h.pr, h.id),
                reactions: Reactions {
                    plus_one: count("+1"),
                    minus_one: count("-1"),
                },
            });
            let reactions: Vec<Reaction> = h
                .reactions
                .iter()
                .flat_map(|(k, who)| who.iter().map(move |w| (k.clone(), w.clone())))
                .map(|(content, w)| Reaction {
                    who: person(&w),
                    content,
                })
                .collect();
            if !reactions.is_empty() {
                pr.reactions.insert(h.id, reactions);
            }
            if let Some(r) = &h.resolved_by {
                pr.threads.push(ThreadInfo {
                    comment_ids: vec![h.id],
                    resolved: true,
                    outdated: h.outdated.unwrap_or(false),
                    resolved_by: Some(person(r)),
                });
            }
        }
        Ok(CaseHistory { prs })
    }
}

#[async_trait]
impl HistorySource for CaseHistory {
    async fn sweep_page(&self, _repo: &str, _since: Option<&str>, _page: u32) -> Result<SweepPage, HistoryError> {
        Ok(SweepPage {
            items: self
                .prs
                .iter()
                .flat_map(|(n, p)| p.comments.iter().map(move |c| (*n, c.updated_at.clone())))
                .collect(),
            malformed: vec![],
            has_next: false,
        })
    }

    async fn pull_request(&self, _repo: &str, pr: u64) -> Result<PrHistory, HistoryError> {
        self.prs
            .get(&pr)
            .cloned()
            .ok_or_else(|| HistoryError::Invalid(format!("no pull request #{pr}")))
    }
}

/// One case's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryCaseResult {
    pub id: String,
    pub kind: CaseKind,
    /// The case's target without memory (dismissed: the finding posted;
    /// convention: the finding posted) — the baseline.
    pub without: bool,
    /// The same with memory.
    pub with: bool,
    /// Clean cases: kept findings identical with and without memory.
    pub unchanged: bool,
    pub items: Vec<String>,
    pub kept_without: Vec<String>,
    pub kept_with: Vec<String>,
    /// With a model: what its own findings (those no offline rule made) did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemoryEvalReport {
    pub cases: Vec<MemoryCaseResult>,
    /// `dismissed` cases whose finding was still posted with memory (goal 0).
    pub dismissed_repeated_with: usize,
    pub dismissed_repeated_without: usize,
    pub dismissed_total: usize,
    pub conventions_applied_with: usize,
    pub conventions_applied_without: usize,
    pub conventions_total: usize,
    pub clean_unchanged: usize,
    pub clean_total: usize,
    /// With a model: its findings summed over the cases of each kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelTotals>,
}

fn kept_keys(r: &Review) -> Vec<String> {
    let mut v: Vec<String> = r
        .kept
        .iter()
        .map(|f| {
            format!(
                "{}:{} {}",
                f.file,
                f.line,
                f.rule.clone().unwrap_or_else(|| f.title.clone())
            )
        })
        .collect();
    v.sort();
    v
}

/// Whether the case's target is among the kept findings: the dismissed
/// rule on its path, or a convention finding near the expected line (a
/// convention, not any finding: the "behaviour changed without a test"
/// note lands on most changed lines).
fn hits(r: &Review, case: &MemoryCase) -> bool {
    let Some(e) = &case.expect else { return false };
    r.kept.iter().any(|f| {
        f.file == e.path
            && match case.kind {
                CaseKind::Dismissed => e.rule.as_ref().is_some_and(|rule| f.rule.as_ref() == Some(rule)),
                CaseKind::Convention => {
                    f.category == quorum_core::Category::Convention && e.line.is_some_and(|l| f.line.abs_diff(l) <= 1)
                }
                CaseKind::Clean => false,
            }
    })
}

/// Builds base and head commits of the case in a new repository.
fn case_repo(case: &MemoryCase) -> anyhow::Result<(tempfile::TempDir, PathBuf, String, String)> {
    use quorum_eval::repo::git;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join(&case.id);
    let write = |files: &BTreeMap<String, String>| -> anyhow::Result<()> {
        for (p, text) in files {
            quorum_scm::validate_path(p).map_err(|e| anyhow::anyhow!("{}: {e}", case.id))?;
            let full = path.join(p);
            std::fs::create_dir_all(full.parent().expect("a file has a parent"))?;
            std::fs::write(full, text)?;
        }
        Ok(())
    };
    std::fs::create_dir_all(&path)?;
    write(&case.base)?;
    git(&path, &["init", "-q", "-b", "main"])?;
    git(&path, &["add", "-A"])?;
    git(&path, &["commit", "-q", "-m", "base"])?;
    let base = git(&path, &["rev-parse", "HEAD"])?;
    write(&case.change)?;
    git(&path, &["add", "-A"])?;
    git(&path, &["commit", "-q", "-m", &case.id])?;
    let head = git(&path, &["rev-parse", "HEAD"])?;
    Ok((dir, path, base, head))
}

pub async fn run_case(case: &MemoryCase, llm: Option<&quorum_llm::LlmConfig>) -> anyhow::Result<MemoryCaseResult> {
    let (_dir, path, base, head) = case_repo(case)?;
    let name = format!("local/{}", case.id);
    let review = |store: Arc<dyn StateStore>| {
        quorum_cli::review::review_range(
            &path,
            &name,
            &base,
            &head,
            case.description.clone(),
            store,
            llm.cloned(),
        )
    };
    let without = review(Arc::new(MemoryStore::new())).await?;
    // Learn from the history, as `quorum memory ingest` would.
    let source = CaseHistory::new(case)?;
    let mut state = MemoryState::default();
    let summary = quorum_memory::ingest(&source, &(), &name, &mut state, &IngestOptions::default(), &|_, _| {})
        .await
        .map_err(|e| anyhow::anyhow!("{}: {e}", case.id))?;
    if !summary.failed.is_empty() {
        bail!("{}: learning failed: {:?}", case.id, summary.failed);
    }
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_memory(&name, &serde_json::to_string(&state)?).await?;
    let items: Vec<String> =
        quorum_memory::items_for(&state, &quorum_memory::Policy::default(), chrono::Utc::now(), None)
            .iter()
            .map(|m| format!("{} {} {} {}", m.id, m.status, m.key.kind, m.text))
            .collect();
    let with = review(store).await?;
    let (kw, kk) = (kept_keys(&without), kept_keys(&with));
    let model = llm.map(|_| model_view(case, &without, &with));
    Ok(MemoryCaseResult {
        model,
        id: case.id.clone(),
        kind: case.kind,
        without: hits(&without, case),
        with: hits(&with, case),
        unchanged: kw == kk,
        items,
        kept_without: kw,
        kept_with: kk,
    })
}

pub async fn run(args: &EvalMemoryArgs) -> anyhow::Result<MemoryEvalReport> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&args.cases)
        .with_context(|| format!("reading {}", args.cases.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("no cases (*.yaml) in {}", args.cases.display());
    }
    let loaded: Vec<MemoryCase> = paths
        .iter()
        .map(|p| MemoryCase::load(p))
        .collect::<anyhow::Result<_>>()?;
    let llm = args.llm.config()?;
    // Cases wait mostly on the embedded fleet's consumer groups, not the
    // CPU: three at a time, results in case order.
    use futures::StreamExt as _;
    let results: Vec<anyhow::Result<MemoryCaseResult>> =
        futures::stream::iter(loaded.iter().map(|c| run_case(c, llm.as_ref())))
            .buffered(3)
            .collect()
            .await;
    let mut cases = vec![];
    for r in results {
        let r = r?;
        eprintln!(
            "  {:<28} {:<10} without={:<5} with={:<5} unchanged={}",
            r.id,
            format!("{:?}", r.kind).to_lowercase(),
            r.without,
            r.with,
            r.unchanged
        );
        cases.push(r);
    }
    let count =
        |kind: CaseKind, f: &dyn Fn(&MemoryCaseResult) -> bool| cases.iter().filter(|c| c.kind == kind && f(c)).count();
    let report = MemoryEvalReport {
        dismissed_repeated_with: count(CaseKind::Dismissed, &|c| c.with),
        dismissed_repeated_without: count(CaseKind::Dismissed, &|c| c.without),
        dismissed_total: count(CaseKind::Dismissed, &|_| true),
        conventions_applied_with: count(CaseKind::Convention, &|c| c.with),
        conventions_applied_without: count(CaseKind::Convention, &|c| c.without),
        conventions_total: count(CaseKind::Convention, &|_| true),
        clean_unchanged: count(CaseKind::Clean, &|c| c.unchanged),
        clean_total: count(CaseKind::Clean, &|_| true),
        model: llm.as_ref().map(|_| model_totals(&cases)),
        cases,
    };
    std::fs::write(&args.out, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("writing {}", args.out.display()))?;
    Ok(report)
}

impl MemoryEvalReport {
    pub fn summary(&self) -> String {
        let mut out = format!(
            "dismissed findings repeated: {}/{} with memory ({}/{} without)\n\
             conventions from past reviews applied: {}/{} with memory ({}/{} without)\n\
             clean controls unchanged: {}/{}",
            self.dismissed_repeated_with,
            self.dismissed_total,
            self.dismissed_repeated_without,
            self.dismissed_total,
            self.conventions_applied_with,
            self.conventions_total,
            self.conventions_applied_without,
            self.conventions_total,
            self.clean_unchanged,
            self.clean_total
        );
        if let Some(m) = &self.model {
            out.push('\n');
            out.push_str(&m.summary(self.dismissed_total, self.conventions_total));
        }
        out
    }
}
