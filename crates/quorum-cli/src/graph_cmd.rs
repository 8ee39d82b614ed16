//! `quorum index DIR` and `quorum impact --repo DIR --base A --head B`: the
//! code graph and the impact report from the command line, with the same
//! code the indexer and the agents run.
//!
//! Graphs are kept on disk (`--cache`, one compressed blob per repository
//! and commit plus a `latest` per directory), so a second `quorum index`
//! of the same directory re-parses only the files that changed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use quorum_graph::{EdgeKind, Graph, Target, blob, build_with_progress};
use quorum_scm::{LocalGit, TreeSource, read_dir_tree};

use crate::progress::LazyBar;

pub fn default_cache() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join(".cache/quorum/graphs")
}

#[derive(Debug, Clone, clap::Args)]
pub struct IndexArgs {
    /// A directory (a git repository is read at `--ref`; any other directory from disk).
    pub dir: PathBuf,
    /// The commit or branch to index when DIR is a git repository.
    #[arg(long, default_value = "HEAD")]
    pub git_ref: String,
    /// Where graph blobs are kept between runs.
    #[arg(long, default_value_os_t = default_cache())]
    pub cache: PathBuf,
    /// Print the stats as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ImpactArgs {
    /// A local git repository.
    #[arg(long)]
    pub repo: PathBuf,
    #[arg(long)]
    pub base: String,
    #[arg(long)]
    pub head: String,
    /// Reverse-BFS depth (1-3).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub hops: u8,
    /// Token budget of the rendered report.
    #[arg(long, default_value_t = 1500)]
    pub budget: usize,
    #[arg(long, default_value_os_t = default_cache())]
    pub cache: PathBuf,
    /// Print the report as JSON instead of the agents' text block.
    #[arg(long)]
    pub json: bool,
}

/// A file name for a directory path (the cache key of non-git directories).
pub(crate) fn slug(p: &Path) -> String {
    let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    abs.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

pub(crate) fn load(path: &Path) -> Option<Graph> {
    let bytes = std::fs::read(path).ok()?;
    blob::decode(&bytes).ok()
}

pub(crate) fn save(path: &Path, g: &Graph) -> anyhow::Result<usize> {
    std::fs::create_dir_all(path.parent().expect("cache paths have a parent"))?;
    let bytes = blob::encode(g);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, &bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(bytes.len())
}

/// Reads the sources of DIR (at a commit when it is a git repository).
pub(crate) async fn sources(dir: &Path, git_ref: &str) -> anyhow::Result<(Vec<(String, String)>, Option<String>)> {
    if dir.join(".git").exists() {
        let git = LocalGit::open(dir)?;
        let commit = git.resolve(git_ref).await?;
        let tree = git.read_tree("local", &commit).await?;
        Ok((tree, Some(commit)))
    } else {
        anyhow::ensure!(dir.is_dir(), "{} is not a directory", dir.display());
        Ok((
            read_dir_tree(dir).with_context(|| format!("reading {}", dir.display()))?,
            None,
        ))
    }
}

pub async fn index(args: IndexArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let (tree, commit) = sources(&args.dir, &args.git_ref).await?;
    let read_ms = started.elapsed().as_secs_f64() * 1000.0;
    let dir_key = args.cache.join(slug(&args.dir));
    let latest = dir_key.join("latest.qgr");
    let previous = load(&latest);
    let t = Instant::now();
    let parsing = LazyBar::new("parsing", "files");
    let (graph, stats) = build_with_progress(tree, previous.as_ref(), &mut |d, t| parsing.update(d, t));
    let build_ms = t.elapsed().as_secs_f64() * 1000.0;
    let blob_bytes = save(&latest, &graph)?;
    if let Some(c) = &commit {
        save(&dir_key.join(format!("{c}.qgr")), &graph)?;
    }
    let count = |k: EdgeKind| graph.edges().iter().filter(|e| e.kind == k).count();
    let calls = count(EdgeKind::Calls);
    let resolved = graph
        .edges()
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls && matches!(e.to, Target::Symbol(_)))
        .count();
    let tests = (0..graph.symbol_count() as u32)
        .filter(|&i| graph.symbol(i).is_test)
        .count();
    let summary = serde_json::json!({
        "dir": args.dir.display().to_string(),
        "commit": commit,
        "files": stats.files,
        "parsed": stats.parsed,
        "reused": stats.reused,
        "skipped": stats.skipped,
        "with_syntax_errors": stats.with_errors,
        "lines": stats.lines,
        "symbols": stats.symbols,
        "tests": tests,
        "edges": { "calls": calls, "calls_resolved": resolved, "imports": count(EdgeKind::Imports),
                   "inherits": count(EdgeKind::Inherits), "tests": count(EdgeKind::Tests) },
        "blob_bytes": blob_bytes,
        "read_ms": read_ms.round(),
        "build_ms": build_ms.round(),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    println!(
        "code graph of {}{}",
        args.dir.display(),
        commit.map(|c| format!(" @ {}", &c[..12])).unwrap_or_default()
    );
    println!(
        "  files    {} indexed ({} parsed, {} reused from the last index, {} with syntax errors); {} skipped (no grammar)",
        stats.files, stats.parsed, stats.reused, stats.with_errors, stats.skipped
    );
    println!("  lines    {}", stats.lines);
    println!("  symbols  {} ({tests} tests)", stats.symbols);
    println!(
        "  edges    {} calls ({} resolved, {:.0}%), {} imports, {} inherits, {} tests",
        calls,
        resolved,
        100.0 * resolved as f64 / calls.max(1) as f64,
        count(EdgeKind::Imports),
        count(EdgeKind::Inherits),
        count(EdgeKind::Tests)
    );
    println!("  blob     {blob_bytes} bytes (zstd)");
    println!("  time     read {read_ms:.0} ms, build {build_ms:.0} ms");
    Ok(())
}

pub async fn impact_cmd(args: ImpactArgs) -> anyhow::Result<()> {
    let git = LocalGit::open(&args.repo)?;
    let change = git.diff(&args.base, &args.head).await?;
    let cached = args
        .cache
        .join(slug(&args.repo))
        .join(format!("{}.qgr", change.base_sha));
    let base = match load(&cached) {
        Some(g) => g,
        None => {
            let tree = git.read_tree("local", &change.base_sha).await?;
            let parsing = LazyBar::new("parsing", "files");
            let (g, _) = build_with_progress(tree, None, &mut |d, t| parsing.update(d, t));
            save(&cached, &g)?;
            g
        }
    };
    let report = quorum_mcp::change_impact(&git, &base, &change, args.hops).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render(args.budget));
    }
    Ok(())
}
