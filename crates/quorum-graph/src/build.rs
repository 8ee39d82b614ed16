//! Building a graph from a tree of sources, reusing the facts of files whose
//! content hash did not change.

use std::collections::HashMap;
use std::sync::Arc;

use crate::extract::{FileFacts, content_hash, extract};
use crate::lang::Lang;
use crate::model::Graph;
use crate::resolve::resolve;

/// What a build did, for logs, metrics and the benchmark.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BuildStats {
    pub files: usize,
    /// Files parsed in this build.
    pub parsed: usize,
    /// Files whose facts were reused from the previous graph.
    pub reused: usize,
    /// Files skipped (no grammar for them).
    pub skipped: usize,
    pub lines: u64,
    pub symbols: usize,
    pub edges: usize,
    /// Files whose tree had syntax errors.
    pub with_errors: usize,
    /// Files whose references were resolved in this build (the others'
    /// edges were carried over from the previous graph).
    pub resolved: usize,
}

/// Builds the graph of `sources` (path, content); `previous` is the graph of
/// an earlier commit whose unchanged files are not parsed again.
pub fn build<I>(sources: I, previous: Option<&Graph>) -> (Graph, BuildStats)
where
    I: IntoIterator<Item = (String, String)>,
{
    build_with_progress(sources.into_iter().collect(), previous, &mut |_, _| {})
}

/// [`build`], calling `progress(done, total)` after each file.
pub fn build_with_progress(
    sources: Vec<(String, String)>,
    previous: Option<&Graph>,
    progress: &mut dyn FnMut(usize, usize),
) -> (Graph, BuildStats) {
    build_parallel(sources, previous, default_threads(), progress)
}

/// Threads that parse files by default: the machine's parallelism.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What happened to one source file.
enum FileOutcome {
    Skipped,
    Reused(Arc<FileFacts>),
    Parsed(Arc<FileFacts>),
}

/// [`build_with_progress`] on `threads` threads. Files are parsed in
/// parallel (each file is independent: a parser per file, facts out) and
/// put back in input order; resolution then runs per file on the same
/// threads over the read-only index, its edges concatenated in file order.
/// So the graph is the same, byte for byte, whatever `threads` is. With a
/// `previous` graph of the same files, only the files a change can affect
/// are resolved again (`resolve::incremental`); the graph is the same as a
/// build from nothing.
pub fn build_parallel(
    sources: Vec<(String, String)>,
    previous: Option<&Graph>,
    threads: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> (Graph, BuildStats) {
    let total = sources.len();
    // By path: two files with the same content (empty `__init__.py`s) each
    // keep their own facts.
    let old: HashMap<&str, &Arc<FileFacts>> = previous
        .map(|g| g.files().iter().map(|f| (f.path.as_str(), f)).collect())
        .unwrap_or_default();
    let one = |(path, src): &(String, String)| -> FileOutcome {
        let Some(lang) = Lang::detect(path) else {
            return FileOutcome::Skipped;
        };
        match old.get(path.as_str()) {
            Some(f) if f.hash == content_hash(src) => FileOutcome::Reused(Arc::clone(f)),
            _ => FileOutcome::Parsed(Arc::new(extract(path, lang, src))),
        }
    };
    let outcomes = crate::par::map_ordered(total, threads, |i| one(&sources[i]), &mut |done| progress(done, total));
    let mut stats = BuildStats::default();
    let mut files = Vec::with_capacity(total);
    for outcome in outcomes {
        match outcome {
            FileOutcome::Skipped => stats.skipped += 1,
            FileOutcome::Reused(f) => {
                stats.reused += 1;
                files.push(f);
            }
            FileOutcome::Parsed(f) => {
                stats.parsed += 1;
                files.push(f);
            }
        }
    }
    finish(files, stats, threads, previous)
}

/// The graph of `base` with some files replaced (`Some(content)`) or deleted
/// (`None`): the PR head overlay, re-parsing only the changed files.
pub fn overlay(base: &Graph, changes: &[(String, Option<String>)]) -> (Graph, BuildStats) {
    let changed: HashMap<&str, &Option<String>> = changes.iter().map(|(p, c)| (p.as_str(), c)).collect();
    let mut stats = BuildStats::default();
    let mut files: Vec<Arc<FileFacts>> = base
        .files()
        .iter()
        .filter(|f| !changed.contains_key(f.path.as_str()))
        .cloned()
        .collect();
    stats.reused = files.len();
    for (path, content) in changes {
        let (Some(src), Some(lang)) = (content, Lang::detect(path)) else {
            continue;
        };
        stats.parsed += 1;
        files.push(Arc::new(extract(path, lang, src)));
    }
    finish(files, stats, default_threads(), Some(base))
}

fn finish(
    mut files: Vec<Arc<FileFacts>>,
    mut stats: BuildStats,
    threads: usize,
    previous: Option<&Graph>,
) -> (Graph, BuildStats) {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    stats.files = files.len();
    stats.lines = files.iter().map(|f| f.lines as u64).sum();
    stats.with_errors = files.iter().filter(|f| f.has_errors).count();
    let (graph, resolved) = resolve(files, threads, previous);
    stats.resolved = resolved;
    stats.symbols = graph.symbol_count();
    stats.edges = graph.edges().len();
    (graph, stats)
}
