//! `quorum-lab bench-index`: the code graph on a real open-source Python
//! codebase fetched with pip (an sdist, `click` by default). Reports lines/s
//! for (a) tree-sitter parse only, (b) the full graph build (extraction and
//! resolution), (c) an incremental re-index after one file changed, (d)
//! impact-query latency p50/p99, and peak memory. Figures depend on the
//! machine; they are recorded in `docs/benchmarks.md`, never asserted.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::bench::percentile;
use anyhow::Context;
use quorum_core::{DiffLine, FileDiff, FileStatus, Hunk, LineKind};
use quorum_graph::extract::parse;
use quorum_graph::{ImpactOptions, Lang, SymbolKind, build, impact};
use serde::Serialize;

#[derive(Debug, Clone, clap::Args)]
pub struct BenchIndexArgs {
    /// The PyPI project whose sdist is indexed.
    #[arg(long, default_value = "click")]
    pub package: String,
    #[arg(long, default_value = "8.1.7")]
    pub version: String,
    /// Use this directory instead of fetching an sdist.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Timed repetitions of (a)-(c); the median is reported.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Impact queries to time (one per sampled function).
    #[arg(long, default_value_t = 200)]
    pub queries: usize,
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
pub struct BenchIndexReport {
    pub source: String,
    pub files: usize,
    pub lines: u64,
    pub symbols: usize,
    pub edges: usize,
    pub parse_only_ms: f64,
    pub parse_only_lines_per_s: f64,
    pub full_build_ms: f64,
    pub full_build_lines_per_s: f64,
    /// Full build time over parse-only time.
    pub build_over_parse: f64,
    /// Threads the full build parsed files on.
    pub threads: usize,
    /// The full build with files parsed on one thread.
    pub full_build_one_thread_ms: f64,
    /// One-thread build time over the parallel build's.
    pub parallel_speedup: f64,
    /// One file edited, the whole tree handed over (each file's content
    /// hashed, only the edited one parsed), resolving only the files the
    /// change can affect.
    pub incremental_ms: f64,
    pub incremental_parsed_files: usize,
    /// Files whose references the incremental build resolved again.
    pub incremental_resolved_files: usize,
    /// The same build resolving every file, as before resolution was
    /// incremental (the previous graph without its record of reads).
    pub incremental_full_resolve_ms: f64,
    /// The review path: the edited file laid over the graph (`overlay`),
    /// no other file hashed.
    pub overlay_ms: f64,
    /// The same overlay for files spread evenly over the tree (a popular
    /// module has many readers to resolve again; a leaf has none).
    pub overlay_sample: OverlaySample,
    /// The same overlay of the file most others import (the worst case:
    /// every reader is resolved again).
    pub overlay_most_imported: OverlayOne,
    /// A file added next to the edited one, that file removed, and that
    /// file renamed, each laid over the graph: only the files that looked
    /// up the paths' keys (or read the removed file) are resolved again.
    pub overlay_path_changes: Vec<PathChange>,
    pub impact_queries: usize,
    pub impact_p50_ms: f64,
    pub impact_p99_ms: f64,
    pub blob_bytes: usize,
    /// Peak resident set of the process (VmHWM).
    pub peak_rss_mib: f64,
    pub build_profile: &'static str,
}

#[derive(Debug, Serialize)]
pub struct OverlayOne {
    pub path: String,
    pub importers: usize,
    pub ms: f64,
    pub resolved: usize,
}

/// A file replaced (`Some`) or removed (`None`), as `overlay` takes it.
type Change = (String, Option<String>);

/// How many import edges point into each file.
fn importer_counts(graph: &quorum_graph::Graph) -> std::collections::HashMap<&str, usize> {
    let mut importers = std::collections::HashMap::new();
    for e in graph.edges() {
        if let (quorum_graph::EdgeKind::Imports, quorum_graph::Target::Symbol(t)) = (e.kind, &e.to) {
            *importers.entry(graph.symbol(*t).path).or_default() += 1;
        }
    }
    importers
}

/// `edits` laid over `base` `repeat` times: the median time (the graph's
/// freeing not counted) and the files resolved.
fn timed_overlay(base: &quorum_graph::Graph, edits: &[Change], repeat: usize) -> (f64, usize) {
    let mut resolved = 0;
    let ms = median(
        (0..repeat)
            .map(|_| {
                let t = Instant::now();
                let (head, stats) = quorum_graph::overlay(base, edits);
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                drop(head);
                resolved = stats.resolved;
                ms
            })
            .collect(),
    );
    (ms, resolved)
}

/// The file with the most import edges into it, edited and laid over.
fn overlay_most_imported(graph: &quorum_graph::Graph, tree: &[(String, String)], repeat: usize) -> Option<OverlayOne> {
    let (path, count) = importer_counts(graph)
        .into_iter()
        .max_by_key(|&(p, n)| (n, std::cmp::Reverse(p)))?;
    let src = &tree.iter().find(|(p, _)| p == path)?.1;
    let change = [(
        path.to_string(),
        Some(format!("{src}\n\ndef _bench_added():\n    return 1\n")),
    )];
    let (ms, resolved) = timed_overlay(graph, &change, repeat);
    Some(OverlayOne {
        path: path.to_string(),
        importers: count,
        ms,
        resolved,
    })
}

#[derive(Debug, Serialize)]
pub struct PathChange {
    pub change: String,
    pub ms: f64,
    pub resolved: usize,
    /// The same overlay resolving every file, as every path change did
    /// before (the graph without its record of reads).
    pub resolving_everything_ms: f64,
}

/// The file whose importer count is the median among the files imported at
/// all: a module some files read, neither a leaf nor the worst case.
fn median_imported<'t>(graph: &quorum_graph::Graph, tree: &'t [(String, String)]) -> Option<(&'t str, &'t str)> {
    let mut ranked: Vec<(usize, &str)> = importer_counts(graph).into_iter().map(|(p, n)| (n, p)).collect();
    ranked.sort_unstable();
    let (_, path) = *ranked.get(ranked.len() / 2)?;
    tree.iter()
        .find(|(p, _)| p == path)
        .map(|(p, s)| (p.as_str(), s.as_str()))
}

/// File `path` (content `src`) removed, a file added beside it, and it
/// renamed, each laid over `graph`: the median time of `repeat` and the
/// files resolved.
fn overlay_path_changes(graph: &quorum_graph::Graph, path: &str, src: &str, repeat: usize) -> Vec<PathChange> {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let (stem, ext) = file.rsplit_once('.').unwrap_or((file, ""));
    let at = |name: String| if dir.is_empty() { name } else { format!("{dir}/{name}") };
    let added = at(format!("_bench_new.{ext}"));
    let renamed = at(format!("{stem}_renamed.{ext}"));
    let cases: Vec<(String, Vec<Change>)> = vec![
        (
            format!("added {added}"),
            vec![(added.clone(), Some("def _bench_new():\n    return 1\n".to_string()))],
        ),
        (format!("removed {path}"), vec![(path.to_string(), None)]),
        (
            format!("renamed {path} to {renamed}"),
            vec![(path.to_string(), None), (renamed, Some(src.to_string()))],
        ),
    ];
    let unrecorded = graph.without_resolution_record();
    cases
        .into_iter()
        .map(|(change, edits)| {
            // Back to back, the way every path change resolved before first.
            let (resolving_everything_ms, _) = timed_overlay(&unrecorded, &edits, repeat);
            let (ms, resolved) = timed_overlay(graph, &edits, repeat);
            PathChange {
                change,
                ms,
                resolved,
                resolving_everything_ms,
            }
        })
        .collect()
}

#[derive(Debug, Serialize)]
pub struct OverlaySample {
    pub files: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    pub resolved_p50: usize,
    pub resolved_p90: usize,
    pub resolved_max: usize,
}

/// One edit (a function appended) to each of `n` files spread evenly over
/// `tree`, each laid over `graph` on its own: time and files resolved.
fn overlay_sample(graph: &quorum_graph::Graph, tree: &[(String, String)], n: usize) -> OverlaySample {
    let step = (tree.len() / n.max(1)).max(1);
    let mut times = vec![];
    let mut resolved = vec![];
    for (path, src) in tree.iter().step_by(step).take(n) {
        let addition = match Lang::detect(path) {
            Some(Lang::Python) => "\n\ndef _bench_added():\n    return 1\n",
            _ => "\nfunction _benchAdded() { return 1; }\n",
        };
        let change = [(path.clone(), Some(format!("{src}{addition}")))];
        let t = Instant::now();
        let (head, stats) = quorum_graph::overlay(graph, &change);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        drop(head);
        resolved.push(stats.resolved);
    }
    times.sort_by(f64::total_cmp);
    resolved.sort_unstable();
    let at = |q: f64| ((resolved.len() as f64 - 1.0) * q).round() as usize;
    OverlaySample {
        files: times.len(),
        p50_ms: percentile(&times, 0.5),
        p90_ms: percentile(&times, 0.9),
        max_ms: times.last().copied().unwrap_or(0.0),
        resolved_p50: resolved.get(at(0.5)).copied().unwrap_or(0),
        resolved_p90: resolved.get(at(0.9)).copied().unwrap_or(0),
        resolved_max: resolved.last().copied().unwrap_or(0),
    }
}

pub(crate) fn fetch_sdist(package: &str, version: &str, into: &Path) -> anyhow::Result<PathBuf> {
    let spec = format!("{package}=={version}");
    let ok = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            &spec,
            "-d",
        ])
        .arg(into)
        .status()
        .context("running pip")?
        .success();
    anyhow::ensure!(ok, "pip download {spec} failed");
    let archive = std::fs::read_dir(into)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .context("pip saved no .tar.gz sdist")?;
    let ok = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(into)
        .status()?
        .success();
    anyhow::ensure!(ok, "cannot unpack {}", archive.display());
    // The sdist's directory is named as the project spells itself
    // (`Django-5.2` for `django`): the one directory the archive unpacked.
    std::fs::read_dir(into)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())
        .with_context(|| format!("{} unpacked no directory", archive.display()))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// A one-line "edit" inside a symbol: enough for the impact query to start there.
fn touch(path: &str, line: u32) -> FileDiff {
    FileDiff {
        path: path.into(),
        old_path: None,
        status: FileStatus::Modified,
        binary: false,
        hunks: vec![Hunk {
            old_start: line,
            old_len: 1,
            new_start: line,
            new_len: 1,
            lines: vec![DiffLine {
                kind: LineKind::Added,
                old_line: None,
                new_line: Some(line),
                text: String::new(),
            }],
        }],
    }
}

pub fn run(args: BenchIndexArgs) -> anyhow::Result<BenchIndexReport> {
    anyhow::ensure!(
        args.repeat > 0 && args.queries > 0,
        "--repeat and --queries must be at least 1"
    );
    let tmp = tempfile::tempdir()?;
    let (root, source) = match &args.dir {
        Some(d) => (d.clone(), d.display().to_string()),
        None => (
            fetch_sdist(&args.package, &args.version, tmp.path())?,
            format!("{}-{} sdist (PyPI)", args.package, args.version),
        ),
    };
    let tree: Vec<(String, String)> = quorum_scm::read_dir_tree(&root)?
        .into_iter()
        .filter(|(p, _)| Lang::detect(p).is_some())
        .collect();
    anyhow::ensure!(!tree.is_empty(), "no indexable files under {}", root.display());
    let lines: u64 = tree.iter().map(|(_, s)| s.lines().count() as u64).sum();
    eprintln!("bench-index: {source}: {} files, {lines} lines", tree.len());
    // One step per timed repetition and per impact query; the bar is
    // updated between timings, never inside one.
    let pb = quorum_cli::progress::bar("bench-index", 5 * args.repeat as u64 + args.queries as u64, "steps");

    pb.set_message("parse only");
    let parse_ms = median(
        (0..args.repeat)
            .map(|_| {
                let t = Instant::now();
                for (p, src) in &tree {
                    std::hint::black_box(parse(Lang::detect(p).expect("filtered"), src));
                }
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                pb.inc(1);
                ms
            })
            .collect(),
    );
    let mut graph = None;
    pb.set_message("full build");
    let build_ms = median(
        (0..args.repeat)
            .map(|_| {
                let t = Instant::now();
                let (g, _) = build(tree.clone(), None);
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                graph = Some(g);
                pb.inc(1);
                ms
            })
            .collect(),
    );
    let graph = graph.expect("repeat >= 1");
    // (b') the same build with files parsed on one thread: what parallel
    // parsing gains, as a ratio from the same run.
    let threads = quorum_graph::default_threads();
    pb.set_message("one-thread build");
    let one_thread_ms = median(
        (0..args.repeat)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(quorum_graph::build_parallel(tree.clone(), None, 1, &mut |_, _| {}));
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                pb.inc(1);
                ms
            })
            .collect(),
    );
    // (c) one file edited: only it is parsed again.
    let mut edited = tree.clone();
    let i = edited.len() / 2;
    edited[i].1.push_str("\n\ndef _bench_added():\n    return 1\n");
    let (mut parsed, mut resolved) = (0, 0);
    let mut timed_build = |previous: &quorum_graph::Graph| {
        median(
            (0..args.repeat)
                .map(|_| {
                    let sources = edited.clone();
                    let t = Instant::now();
                    let (g, stats) = build(sources, Some(previous));
                    // The graph is built; freeing it is not part of that.
                    let ms = t.elapsed().as_secs_f64() * 1000.0;
                    drop(g);
                    parsed = stats.parsed;
                    resolved = stats.resolved;
                    pb.inc(1);
                    ms
                })
                .collect(),
        )
    };
    pb.set_message("incremental build, resolving everything");
    let incremental_full_resolve_ms = timed_build(&graph.without_resolution_record());
    pb.set_message("incremental build");
    let incremental_ms = timed_build(&graph);
    pb.set_message("overlay");
    let change = [(edited[i].0.clone(), Some(edited[i].1.clone()))];
    let overlay_ms = median(
        (0..args.repeat)
            .map(|_| {
                let t = Instant::now();
                let head = std::hint::black_box(quorum_graph::overlay(&graph, &change));
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                drop(head);
                pb.inc(1);
                ms
            })
            .collect(),
    );
    pb.set_message("overlay, files spread over the tree");
    let overlay_sample = overlay_sample(&graph, &tree, 40);
    let overlay_most_imported =
        overlay_most_imported(&graph, &tree, args.repeat).context("no file is imported by another")?;
    pb.set_message("overlay, a path added, removed, renamed");
    let (path, src) = median_imported(&graph, &tree).context("no file is imported by another")?;
    let overlay_path_changes = overlay_path_changes(&graph, path, src, args.repeat);
    // (d) impact queries from functions spread over the codebase.
    let functions: Vec<u32> = (0..graph.symbol_count() as u32)
        .filter(|&id| matches!(graph.symbol(id).kind, SymbolKind::Function | SymbolKind::Method))
        .collect();
    anyhow::ensure!(!functions.is_empty(), "no functions to query");
    let step = (functions.len() / args.queries).max(1);
    let mut times = vec![];
    pb.set_message("impact queries");
    for &id in functions.iter().step_by(step).take(args.queries) {
        let s = graph.symbol(id);
        let diff = [touch(s.path, s.start_line)];
        let t = Instant::now();
        std::hint::black_box(impact(&graph, &graph, &diff, ImpactOptions::default()).render(1500));
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        pb.inc(1);
    }
    pb.finish_and_clear();
    times.sort_by(f64::total_cmp);
    let report = BenchIndexReport {
        source,
        files: tree.len(),
        lines,
        symbols: graph.symbol_count(),
        edges: graph.edges().len(),
        parse_only_ms: parse_ms,
        parse_only_lines_per_s: lines as f64 / (parse_ms / 1000.0),
        full_build_ms: build_ms,
        full_build_lines_per_s: lines as f64 / (build_ms / 1000.0),
        build_over_parse: build_ms / parse_ms,
        threads,
        full_build_one_thread_ms: one_thread_ms,
        parallel_speedup: one_thread_ms / build_ms,
        incremental_ms,
        incremental_parsed_files: parsed,
        incremental_resolved_files: resolved,
        incremental_full_resolve_ms,
        overlay_ms,
        overlay_sample,
        overlay_most_imported,
        overlay_path_changes,
        impact_queries: times.len(),
        impact_p50_ms: percentile(&times, 0.5),
        impact_p99_ms: percentile(&times, 0.99),
        blob_bytes: quorum_graph::blob::encode(&graph).len(),
        peak_rss_mib: crate::bench::peak_rss_mib("self").unwrap_or(0.0),
        build_profile: if cfg!(debug_assertions) { "debug" } else { "release" },
    };
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    Ok(report)
}
