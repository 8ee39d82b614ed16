//! `quorum-lab bench-retrieval`: how good hybrid search's answers are, measured
//! the way code-search research measures it (CodeSearchNet): a function's
//! docstring (its first sentence) is the query, and that function, indexed
//! **with its docstring removed**, is the answer; plus identifier queries
//! (a function's name as written, for names that occur once). Or, with
//! `--questions`, a hand-written set of questions and their answers.
//!
//! Every query asks the index once for each side's candidates (dense and
//! sparse, 40 each); each method then ranks the same candidates: dense
//! alone, sparse alone and every fusion compared. Queries are split in two
//! halves by a hash of their answer: a fusion is chosen on the `dev` half
//! and reported on the `test` half (and on other codebases). MRR@10 and
//! recall@1/@5, per query kind.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::Context;
use quorum_search::fusion::Fusion;
use quorum_search::{Candidates, Hit, HybridIndex, Kind, SearchArgs, SearchOptions};
use serde::{Deserialize, Serialize};

use quorum_cli::progress::LazyBar;

#[derive(Debug, Clone, clap::Args)]
pub struct BenchRetrievalArgs {
    /// The source tree (an unpacked sdist or npm package, a checkout).
    #[arg(long)]
    pub dir: PathBuf,
    /// Only files under these paths (relative to `--dir`), to keep a run
    /// within minutes.
    #[arg(long = "only")]
    pub only: Vec<String>,
    /// A name for the corpus in the report.
    #[arg(long)]
    pub name: Option<String>,
    /// Hand-written questions (JSON, eval/search/*.json) instead of
    /// docstring and identifier queries drawn from the code.
    #[arg(long)]
    pub questions: Option<PathBuf>,
    /// At most this many queries of each kind drawn from the code.
    #[arg(long, default_value_t = 400)]
    pub max_queries: usize,
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A report to hold the shipped fusion to (`make search-check`): each
    /// query group's MRR@10 may fall at most `--tolerance` below it, and no
    /// more weak sparse matches may come first.
    #[arg(long)]
    pub check: Option<PathBuf>,
    #[arg(long, default_value_t = 0.02)]
    pub tolerance: f64,
    #[command(flatten)]
    pub search: SearchArgs,
}

/// A query and where its answer is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Query {
    pub kind: String,
    pub query: String,
    pub answers: Vec<Answer>,
}

/// A hit answers when it is in `path` and its lines hold `line`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answer {
    pub path: String,
    pub line: u32,
}

#[derive(Debug, Deserialize)]
struct QuestionFile {
    queries: Vec<Query>,
}

/// One method's figures on one group of queries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Figures {
    pub queries: usize,
    pub mrr10: f64,
    pub recall1: f64,
    pub recall5: f64,
    /// Queries whose first result was found by the sparse side alone and
    /// holds less than half of the query's terms (a common-word match put
    /// above what the meaning found).
    pub weak_sparse_firsts: usize,
}

#[derive(Debug, Serialize)]
pub struct RetrievalReport {
    pub corpus: String,
    pub model: String,
    pub files: usize,
    pub chunks: usize,
    pub index_secs: f64,
    /// Functions whose docstring was removed before indexing.
    pub docstrings_removed: usize,
    /// `kind/split → method → figures`.
    pub results: BTreeMap<String, BTreeMap<String, Figures>>,
    pub shipped: String,
    pub build_profile: &'static str,
}

/// What a gate reads of an earlier report.
#[derive(Debug, Deserialize)]
pub struct Baseline {
    pub results: BTreeMap<String, BTreeMap<String, Figures>>,
    pub shipped: String,
}

/// Holds the shipped fusion of `report` to `baseline`'s shipped fusion, group
/// by group: the lines that fail (empty: it holds). A group missing from
/// either side fails too: the query set changed, so the baseline must be
/// regenerated on purpose, not drift.
pub fn check(report: &RetrievalReport, baseline: &Baseline, tolerance: f64) -> Vec<String> {
    let mut failures = vec![];
    let groups: std::collections::BTreeSet<&String> = report.results.keys().chain(baseline.results.keys()).collect();
    for g in groups {
        let now = report.results.get(g).and_then(|m| m.get(&report.shipped));
        let then = baseline.results.get(g).and_then(|m| m.get(&baseline.shipped));
        match (now, then) {
            (Some(now), Some(then)) => {
                if now.queries != then.queries {
                    failures.push(format!(
                        "{g}: {} queries, the baseline has {}",
                        now.queries, then.queries
                    ));
                }
                if now.mrr10 < then.mrr10 - tolerance {
                    failures.push(format!(
                        "{g}: MRR@10 {:.3} with {}, below the baseline's {:.3} ({}) by more than {tolerance}",
                        now.mrr10, report.shipped, then.mrr10, baseline.shipped
                    ));
                }
                if now.weak_sparse_firsts > then.weak_sparse_firsts {
                    failures.push(format!(
                        "{g}: {} weak sparse matches ranked first, the baseline had {}",
                        now.weak_sparse_firsts, then.weak_sparse_firsts
                    ));
                }
            }
            (None, _) => failures.push(format!("{g}: in the baseline, not in this run")),
            (_, None) => failures.push(format!("{g}: in this run, not in the baseline")),
        }
    }
    failures
}

/// A query's outcome under one method: the rank of the first right hit in
/// the first ten, and whether a weak sparse match came first.
type Outcome = (Option<usize>, bool);

/// The fusions compared (the shipped one among them).
pub fn fusions() -> Vec<Fusion> {
    vec![
        Fusion::Rrf { k: 2.0 },
        Fusion::Rrf { k: 60.0 },
        Fusion::CoverageRrf { k: 2.0 },
        Fusion::CoverageRrf { k: 10.0 },
        Fusion::CoverageRrf { k: 60.0 },
        Fusion::Convex { alpha: 0.3 },
        Fusion::Convex { alpha: 0.5 },
        Fusion::Convex { alpha: 0.7 },
    ]
}

pub async fn run(args: BenchRetrievalArgs) -> anyhow::Result<RetrievalReport> {
    let tree = quorum_scm::read_dir_tree(&args.dir).with_context(|| format!("reading {}", args.dir.display()))?;
    let tree: Vec<(String, String)> = tree
        .into_iter()
        .filter(|(p, _)| args.only.is_empty() || args.only.iter().any(|o| p.starts_with(o.as_str())))
        .collect();
    anyhow::ensure!(!tree.is_empty(), "no files under {} match --only", args.dir.display());
    let graph_tree = tree.clone();
    let (graph, _) = tokio::task::spawn_blocking(move || {
        quorum_graph::build_parallel(graph_tree, None, quorum_graph::default_threads(), &mut |_, _| {})
    })
    .await?;

    // Queries, and the tree as indexed (docstrings blanked, lines kept).
    let (queries, indexed_tree, removed) = match &args.questions {
        Some(q) => {
            let text = std::fs::read_to_string(q).with_context(|| format!("reading {}", q.display()))?;
            let file: QuestionFile = serde_json::from_str(&text).with_context(|| format!("parsing {}", q.display()))?;
            (file.queries, tree, 0)
        }
        None => {
            let mined = crate::docstrings::mine(&graph, &tree);
            let removed = mined.removed;
            let mut queries = spread(mined.docstring_queries, args.max_queries);
            queries.extend(spread(mined.identifier_queries, args.max_queries));
            (queries, mined.tree, removed)
        }
    };
    anyhow::ensure!(!queries.is_empty(), "no queries");

    let files = quorum_search::source_files(&graph, indexed_tree);
    let mut search_args = args.search.clone();
    search_args.mode = quorum_search::config::SearchMode::On;
    let tmp = tempfile::tempdir()?;
    if search_args.qdrant_url.is_none() {
        search_args.index_dir = Some(tmp.path().join("index"));
    }
    let index: std::sync::Arc<HybridIndex> = quorum_search::open_index(&search_args)
        .await?
        .context("search is off")?;
    let repo = "bench/retrieval";
    let bar = LazyBar::new("indexing", "chunks");
    let t = std::time::Instant::now();
    let stats = index.index(repo, "c1", &files, &|d, t| bar.update(d, t)).await?;
    drop(bar);
    let index_secs = t.elapsed().as_secs_f64();

    let bar = LazyBar::new("querying", "queries");
    let mut ranks: HashMap<(String, String), Vec<Outcome>> = HashMap::new();
    let opts = SearchOptions::new(Kind::Code, 10);
    for (i, q) in queries.iter().enumerate() {
        bar.update(i, queries.len());
        let dense = index.embed_query(&q.query).await?;
        let c = index.candidates_embedded(repo, &q.query, dense, &opts).await?;
        let group = format!("{}/{}", q.kind, split_of(q));
        for (method, hits) in methods(&c, &q.query) {
            let first = hits.first();
            let weak = first.is_some_and(|h| {
                h.dense.is_none()
                    && c.sparse
                        .iter()
                        .any(|(s, cov)| s.payload.path == h.path && s.payload.start_line == h.start_line && *cov < 0.5)
            });
            let rank = hits.iter().position(|h| answers(q, h));
            ranks.entry((group.clone(), method)).or_default().push((rank, weak));
        }
    }
    drop(bar);

    let mut results: BTreeMap<String, BTreeMap<String, Figures>> = BTreeMap::new();
    for ((group, method), rs) in ranks {
        results.entry(group).or_default().insert(method, figures(&rs));
    }
    Ok(RetrievalReport {
        corpus: args.name.clone().unwrap_or_else(|| args.dir.display().to_string()),
        model: index.model().into(),
        files: stats.files,
        chunks: stats.chunks,
        index_secs,
        docstrings_removed: removed,
        results,
        shipped: "by_query".into(),
        build_profile: if cfg!(debug_assertions) { "debug" } else { "release" },
    })
}

/// Every method's first ten, from the same candidates.
fn methods(c: &Candidates, query: &str) -> Vec<(String, Vec<Hit>)> {
    // Dense alone and sparse alone are the fusions that ignore the other side.
    let dense_only = Candidates {
        dense: c.dense.clone(),
        sparse: vec![],
    };
    let sparse_only = Candidates {
        dense: vec![],
        sparse: c.sparse.clone(),
    };
    let one_side = Fusion::Rrf { k: 0.0 };
    let mut out = vec![
        ("dense".to_string(), dense_only.rank(one_side, 10)),
        ("sparse".to_string(), sparse_only.rank(one_side, 10)),
    ];
    for f in fusions() {
        out.push((f.label(), c.rank(f, 10)));
    }
    // What ships: the fusion chosen by the query's form.
    out.push(("by_query".into(), c.rank(quorum_search::fusion::for_query(query), 10)));
    out
}

fn answers(q: &Query, h: &Hit) -> bool {
    q.answers
        .iter()
        .any(|a| a.path == h.path && h.start_line <= a.line && a.line <= h.end_line)
}

/// `dev` or `test`, fixed by the query's first answer.
fn split_of(q: &Query) -> &'static str {
    let key = q
        .answers
        .first()
        .map(|a| format!("{}:{}", a.path, a.line))
        .unwrap_or_default();
    if crate::sampling::stable_hash(&key).is_multiple_of(2) {
        "dev"
    } else {
        "test"
    }
}

/// At most `n`, evenly spread over the list (which is in file order).
fn spread(v: Vec<Query>, n: usize) -> Vec<Query> {
    if v.len() <= n {
        return v;
    }
    (0..n).map(|i| v[i * v.len() / n].clone()).collect()
}

fn figures(rs: &[Outcome]) -> Figures {
    let n = rs.len().max(1) as f64;
    Figures {
        queries: rs.len(),
        mrr10: rs
            .iter()
            .map(|(r, _)| r.map_or(0.0, |r| 1.0 / (r + 1) as f64))
            .sum::<f64>()
            / n,
        recall1: rs.iter().filter(|(r, _)| *r == Some(0)).count() as f64 / n,
        recall5: rs.iter().filter(|(r, _)| r.is_some_and(|r| r < 5)).count() as f64 / n,
        weak_sparse_firsts: rs.iter().filter(|(_, w)| *w).count(),
    }
}

/// The report as a Markdown table: one row per method, MRR@10 per group.
pub fn table(r: &RetrievalReport) -> String {
    let groups: Vec<&String> = r.results.keys().collect();
    let mut out = format!(
        "{} — {} chunks, {} docstrings removed\n\n| method |",
        r.corpus, r.chunks, r.docstrings_removed
    );
    for g in &groups {
        out.push_str(&format!(" {g} MRR@10 (R@1, R@5) |"));
    }
    out.push_str(" weak sparse firsts |\n|---|");
    for _ in &groups {
        out.push_str("---|");
    }
    out.push_str("---|\n");
    let mut methods: Vec<String> = vec!["dense".into(), "sparse".into()];
    methods.extend(fusions().iter().map(Fusion::label));
    methods.push("by_query".into());
    for m in methods {
        let mut weak = 0;
        out.push_str(&format!("| {m} |"));
        for g in &groups {
            let f = r.results[*g].get(&m).cloned().unwrap_or_default();
            weak += f.weak_sparse_firsts;
            out.push_str(&format!(
                " {:.3} ({:.2}, {:.2}) n={} |",
                f.mrr10, f.recall1, f.recall5, f.queries
            ));
        }
        out.push_str(&format!(" {weak} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(shipped: &str, groups: &[(&str, f64, usize)]) -> RetrievalReport {
        RetrievalReport {
            corpus: "c".into(),
            model: "m".into(),
            files: 1,
            chunks: 1,
            index_secs: 0.0,
            docstrings_removed: 0,
            results: groups
                .iter()
                .map(|(g, mrr10, weak)| {
                    let f = Figures {
                        queries: 8,
                        mrr10: *mrr10,
                        weak_sparse_firsts: *weak,
                        ..Default::default()
                    };
                    (g.to_string(), BTreeMap::from([(shipped.to_string(), f)]))
                })
                .collect(),
            shipped: shipped.into(),
            build_profile: "debug",
        }
    }

    fn baseline(r: &RetrievalReport) -> Baseline {
        serde_json::from_str(&serde_json::to_string(r).unwrap()).unwrap()
    }

    #[test]
    fn the_gate_holds_within_tolerance_and_fails_past_it() {
        let base = baseline(&report("f", &[("question/dev", 0.70, 0), ("identifier/test", 0.80, 1)]));
        assert!(
            check(
                &report("f", &[("question/dev", 0.69, 0), ("identifier/test", 0.85, 1)]),
                &base,
                0.02
            )
            .is_empty()
        );
        let drop = check(
            &report("f", &[("question/dev", 0.60, 0), ("identifier/test", 0.80, 1)]),
            &base,
            0.02,
        );
        assert_eq!(drop.len(), 1, "{drop:?}");
        assert!(drop[0].starts_with("question/dev: MRR@10 0.600"), "{drop:?}");
        let weak = check(
            &report("f", &[("question/dev", 0.70, 2), ("identifier/test", 0.80, 1)]),
            &base,
            0.02,
        );
        assert!(weak[0].contains("2 weak sparse matches"), "{weak:?}");
        let missing = check(&report("f", &[("question/dev", 0.70, 0)]), &base, 0.02);
        assert_eq!(missing, ["identifier/test: in the baseline, not in this run"]);
    }
}
