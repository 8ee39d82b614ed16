//! `quorum-lab bench-search`: the hybrid index on a real codebase (Django's
//! sdist by default, well over 10,000 chunks). Reports indexing throughput
//! with the embedding included (chunks/s, and embed vs store time),
//! hybrid-query latency p50/p99 over queries drawn from the codebase's own
//! identifiers and docstrings, the re-index of one edited file, and peak
//! memory. Figures depend on the machine; recorded in `docs/benchmarks.md`,
//! never asserted.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use quorum_search::{HybridIndex, Kind, SearchArgs, SearchOptions};
use serde::Serialize;

use crate::bench::percentile;
use quorum_cli::progress::LazyBar;

#[derive(Debug, Clone, clap::Args)]
pub struct BenchSearchArgs {
    #[arg(long, default_value = "django")]
    pub package: String,
    #[arg(long, default_value = "5.2")]
    pub version: String,
    /// Use this directory instead of fetching an sdist.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Hybrid queries to time.
    #[arg(long, default_value_t = 300)]
    pub queries: usize,
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub search: SearchArgs,
}

#[derive(Debug, Serialize)]
pub struct BenchSearchReport {
    pub source: String,
    pub engine: String,
    pub model: String,
    pub files: usize,
    pub code_chunks: usize,
    pub docs_chunks: usize,
    pub index_secs: f64,
    pub embed_secs: f64,
    pub store_secs: f64,
    /// Chunks indexed per second, embedding included.
    pub chunks_per_s: f64,
    pub queries: usize,
    pub query_p50_ms: f64,
    pub query_p99_ms: f64,
    pub query_max_ms: f64,
    /// The engine's part (dense and sparse candidates, fused), query embedded.
    pub engine_p50_ms: f64,
    pub engine_p99_ms: f64,
    pub reindex_one_file_ms: f64,
    pub reindex_one_file_chunks: usize,
    pub peak_rss_mib: f64,
    pub build_profile: &'static str,
}

/// Queries a reviewer's model would ask: function names as written, and
/// the first sentence of docstrings (a natural-language description).
fn sample_queries(files: &[quorum_search::SourceFile], n: usize) -> Vec<String> {
    let mut names = vec![];
    let mut phrases = vec![];
    for f in files.iter().filter(|f| f.language.is_some()) {
        for s in &f.symbols {
            names.push(s.name.clone());
            let body: Vec<&str> = f.text.lines().skip(s.start_line as usize).take(6).collect();
            if let Some(doc) = body.iter().find(|l| l.trim_start().starts_with("\"\"\"")) {
                let text = doc.trim().trim_matches('"').trim();
                if text.split_whitespace().count() >= 4 {
                    phrases.push(text.to_string());
                }
            }
        }
    }
    // Evenly spread, half identifiers, half phrases.
    let pick = |v: &Vec<String>, k: usize| -> Vec<String> {
        if v.is_empty() {
            return vec![];
        }
        (0..k).map(|i| v[i * v.len() / k.max(1) % v.len()].clone()).collect()
    };
    let mut q = pick(&names, n / 2);
    q.extend(pick(&phrases, n - n / 2));
    q
}

pub async fn run(args: BenchSearchArgs) -> anyhow::Result<BenchSearchReport> {
    let tmp = tempfile::tempdir()?;
    let (dir, source) = match &args.dir {
        Some(d) => (d.clone(), d.display().to_string()),
        None => (
            crate::bench_index::fetch_sdist(&args.package, &args.version, tmp.path())?,
            format!("{}=={} (sdist)", args.package, args.version),
        ),
    };
    let tree = quorum_scm::read_dir_tree(&dir).with_context(|| format!("reading {}", dir.display()))?;
    let graph_tree = tree.clone();
    let (graph, _) = tokio::task::spawn_blocking(move || {
        let parsing = LazyBar::new("parsing", "files");
        quorum_graph::build_parallel(graph_tree, None, quorum_graph::default_threads(), &mut |d, t| {
            parsing.update(d, t)
        })
    })
    .await?;
    let mut files = quorum_search::source_files(&graph, tree);
    // A fresh index for the run, unless a server is configured.
    let mut search_args = args.search.clone();
    search_args.mode = quorum_search::config::SearchMode::On;
    if search_args.qdrant_url.is_none() {
        search_args.index_dir = Some(tmp.path().join("index"));
    }
    let index: std::sync::Arc<HybridIndex> = quorum_search::open_index(&search_args)
        .await?
        .context("search is off")?;
    let repo = format!("bench/{}", args.package);
    let indexing = LazyBar::new("indexing", "chunks");
    let t = Instant::now();
    let stats = index.index(&repo, "c1", &files, &|d, t| indexing.update(d, t)).await?;
    drop(indexing);
    let index_secs = t.elapsed().as_secs_f64();
    let count = |k: Kind| {
        files
            .iter()
            .filter(|f| (k == Kind::Docs) == quorum_search::chunk::is_doc(&f.path))
            .map(|f| match k {
                Kind::Code => quorum_search::chunk::chunk_code(&f.path, &f.text, &f.symbols).len(),
                Kind::Docs => quorum_search::chunk::chunk_docs(&f.path, &f.text).len(),
                Kind::Reviews => 0,
            })
            .sum::<usize>()
    };
    let (code_chunks, docs_chunks) = (count(Kind::Code), count(Kind::Docs));

    let queries = sample_queries(&files, args.queries);
    // Each query timed whole (the model embeds it, the engine ranks), and
    // the engine's part alone.
    let (mut lat, mut engine) = (vec![], vec![]);
    for (i, q) in queries.iter().enumerate() {
        let kind = if i % 5 == 4 { Kind::Docs } else { Kind::Code };
        let opts = SearchOptions::new(kind, 10);
        let t = Instant::now();
        let dense = index.embed_query(q).await?;
        let t2 = Instant::now();
        index.search_embedded(&repo, q, dense, &opts).await?;
        engine.push(t2.elapsed().as_secs_f64() * 1000.0);
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    lat.sort_by(f64::total_cmp);
    engine.sort_by(f64::total_cmp);

    // One file edited: only its chunks are re-embedded.
    let f = files
        .iter_mut()
        .filter(|f| f.language.is_some())
        .max_by_key(|f| f.symbols.len())
        .context("no code files")?;
    f.text.push_str("\n# edited by bench-search\n");
    let t = Instant::now();
    let re = index.index(&repo, "c2", &files, &|_, _| {}).await?;
    let reindex_one_file_ms = t.elapsed().as_secs_f64() * 1000.0;

    Ok(BenchSearchReport {
        source,
        engine: index.engine().into(),
        model: index.model().into(),
        files: stats.files,
        code_chunks,
        docs_chunks,
        index_secs,
        embed_secs: stats.embed_secs,
        store_secs: stats.upsert_secs,
        chunks_per_s: stats.chunks as f64 / index_secs,
        queries: lat.len(),
        query_p50_ms: percentile(&lat, 0.50),
        query_p99_ms: percentile(&lat, 0.99),
        query_max_ms: lat.last().copied().unwrap_or(0.0),
        engine_p50_ms: percentile(&engine, 0.50),
        engine_p99_ms: percentile(&engine, 0.99),
        reindex_one_file_ms,
        reindex_one_file_chunks: re.chunks,
        peak_rss_mib: crate::bench::peak_rss_mib("self").unwrap_or(0.0),
        build_profile: if cfg!(debug_assertions) { "debug" } else { "release" },
    })
}
