//! `quorum search --repo DIR "QUERY"`: brings DIR's hybrid index up to date
//! (graph first, then only changed files re-embedded, with a progress bar)
//! and prints the ranked chunks with their dense, sparse and fused scores.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use quorum_search::{Kind, SearchArgs, SearchOptions};

use crate::progress::LazyBar;

#[derive(Debug, Clone, clap::Args)]
pub struct SearchCmdArgs {
    /// A directory (a git repository is read at HEAD).
    #[arg(long)]
    pub repo: PathBuf,
    /// What to look for, in words or identifiers.
    pub query: String,
    #[arg(long, default_value = "code", value_parser = ["code", "docs"])]
    pub kind: String,
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Only paths matching this glob (e.g. 'tests/**').
    #[arg(long)]
    pub path: Option<String>,
    /// Only chunks of this language (python, typescript, go, …).
    #[arg(long)]
    pub language: Option<String>,
    /// Lines of each chunk to print (0: none).
    #[arg(long, default_value_t = 4)]
    pub lines: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub search: SearchArgs,
}

pub async fn run(args: SearchCmdArgs) -> anyhow::Result<()> {
    let mut search_args = args.search.clone();
    search_args.mode = quorum_search::config::SearchMode::On;
    let index = quorum_search::open_index(&search_args)
        .await?
        .context("hybrid search is off")?;
    let dir = std::fs::canonicalize(&args.repo).with_context(|| format!("{} not found", args.repo.display()))?;
    let repo = format!("local{}", dir.display());
    let (tree, commit) = crate::graph_cmd::sources(&dir, "HEAD").await?;
    let commit = commit.unwrap_or_else(|| "worktree".into());
    let t = Instant::now();
    let tree_for_graph = tree.clone();
    let (graph, _) = tokio::task::spawn_blocking(move || {
        let parsing = LazyBar::new("parsing", "files");
        quorum_graph::build_parallel(tree_for_graph, None, quorum_graph::default_threads(), &mut |d, t| {
            parsing.update(d, t)
        })
    })
    .await?;
    let files = quorum_search::source_files(&graph, tree);
    let graph_secs = t.elapsed().as_secs_f64();
    let embedding = LazyBar::new("embedding", "chunks");
    let stats = index
        .index(&repo, &commit, &files, &|d, t| embedding.update(d, t))
        .await?;
    drop(embedding);
    if stats.chunks > 0 || stats.files_deleted > 0 {
        eprintln!(
            "indexed {} ({} files changed, {} removed, {} left out as vendored, generated or minified): {} chunks embedded in {:.1}s, stored in {:.1}s; graph {:.1}s; {} engine, model {}",
            args.repo.display(),
            stats.files_changed,
            stats.files_deleted,
            stats.files_skipped,
            stats.chunks,
            stats.embed_secs,
            stats.upsert_secs,
            graph_secs,
            index.engine(),
            index.model()
        );
    }
    let mut opts = SearchOptions::new(Kind::parse(&args.kind).expect("clap checked the kind"), args.limit);
    opts.path_glob = args.path.clone();
    opts.language = args.language.clone();
    let t = Instant::now();
    let hits = index.search(&repo, &args.query, &opts).await?;
    let took = t.elapsed();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&hits)?);
        return Ok(());
    }
    if hits.is_empty() {
        println!("no results for {:?} in {}", args.query, args.repo.display());
    }
    let score = |s: Option<f32>| s.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into());
    for (i, h) in hits.iter().enumerate() {
        println!(
            "{:>2}. {}:{}-{}{}  fused {:.3}  dense {}  sparse {}",
            i + 1,
            h.path,
            h.start_line,
            h.end_line,
            h.symbol.as_deref().map(|s| format!("  {s}")).unwrap_or_default(),
            h.fused,
            score(h.dense),
            score(h.sparse)
        );
        for line in h.text.lines().filter(|l| !l.trim().is_empty()).take(args.lines) {
            println!("      {}", line.chars().take(110).collect::<String>());
        }
    }
    eprintln!("({} results in {})", hits.len(), fmt_ms(took));
    Ok(())
}

fn fmt_ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
