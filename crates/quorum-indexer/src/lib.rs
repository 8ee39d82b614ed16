//! The indexer (F-IDX-1, F-IDX-2): consumes `repo.index.requested`, reads
//! the repository at the ref, builds the code graph (incrementally from the
//! branch's previous graph) and stores it for every reader. Idempotent per
//! commit: a graph already stored is not rebuilt.
//!
//! With a hybrid index ([`quorum_search`]), the same files are then
//! chunked and embedded into it, incrementally: only files whose content
//! changed since the repository's last indexed commit are re-embedded.
//!
//! Only repositories the indexer is configured with are read; a request
//! names a repository, never a path, so a message cannot point the indexer
//! at the filesystem.
//!
//! With an SCM API, a branch's index request (a push to the default
//! branch, which is what a merge is) also refreshes the repository's review
//! memory from the SCM's review history (F-MEM-1), bounded per request and
//! best-effort: a failed refresh is logged and tried again on the next push,
//! never a failed index.

use std::sync::Arc;

use async_trait::async_trait;
use quorum_context::GraphIndex;
use quorum_events::{ConsumerGroup, IndexRequested};
use quorum_runtime::{
    CancellationToken, Delivery, Handler, HandlerError, Metrics, OutMessage, RuntimeError, ServiceContext,
    ServiceHandle, WorkerSpec, now_ms, start_worker_service,
};
use quorum_search::{HybridIndex, SearchError};
use quorum_store::StateStore;

struct IndexHandler {
    store: Arc<dyn StateStore>,
    index: Arc<GraphIndex>,
    search: Option<Arc<HybridIndex>>,
    memory: Option<MemoryRefresh>,
    metrics: Metrics,
}

/// Where review history comes from, and how much of it one index request reads.
#[derive(Clone)]
pub struct MemoryRefresh {
    pub source: Arc<dyn quorum_memory::HistorySource>,
    /// Pull requests read per request (the cursor carries the rest over).
    pub max_prs: usize,
}

impl MemoryRefresh {
    /// From the SCM API the indexer reads trees with, if any.
    pub fn from_api(api: Option<&quorum_scm::ScmApi>, max_prs: usize) -> Option<MemoryRefresh> {
        let cache = quorum_scm::HttpCache::in_memory;
        let source: Arc<dyn quorum_memory::HistorySource> = match api? {
            quorum_scm::ScmApi::GitHub(gh) => Arc::new(quorum_scm::github::GitHubHistory::new(gh.clone(), cache())),
            quorum_scm::ScmApi::GitLab(gl) => Arc::new(quorum_scm::gitlab::GitLabHistory::new(gl.clone(), cache())),
        };
        Some(MemoryRefresh { source, max_prs })
    }
}

fn classify_search(e: SearchError) -> HandlerError {
    match e {
        SearchError::Invalid(_) => HandlerError::invalid(e),
        SearchError::Config(_) => HandlerError::fatal(e),
        SearchError::Embed(_) | SearchError::Store(_) => HandlerError::retryable(e),
    }
}

#[async_trait]
impl Handler for IndexHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let req: IndexRequested = d.decode()?;
        let repo = req.repo.full_name.as_str();
        req.repo.validate().map_err(HandlerError::invalid)?;
        quorum_scm::validate_ref(&req.git_ref).map_err(HandlerError::invalid)?;
        self.store
            .record_index_request(repo, &req.git_ref, now_ms())
            .await
            .map_err(HandlerError::retryable)?;
        let classify = |e: quorum_context::ContextError| {
            if e.is_invalid() {
                HandlerError::invalid(e)
            } else {
                HandlerError::retryable(e)
            }
        };
        let commit = self
            .index
            .trees()
            .resolve(repo, &req.git_ref)
            .await
            .map_err(|e| classify(e.into()))?;
        let branch = req.git_ref.strip_prefix("refs/heads/").unwrap_or(&req.git_ref);
        let branch = (!quorum_core::is_commit_id(branch)).then_some(branch);
        let (graph, mut outcome) = self.index.ensure(repo, &commit, branch).await.map_err(classify)?;
        let label = match (&outcome.stats, &outcome.incremental_from) {
            (None, _) => "loaded",
            (Some(_), Some(_)) => "incremental",
            (Some(_), None) => "built",
        };
        self.metrics.index_builds.with_label_values(&[label]).inc();
        if let Some(stats) = &outcome.stats {
            self.metrics
                .index_files
                .with_label_values(&["parsed"])
                .inc_by(stats.parsed as u64);
            self.metrics
                .index_files
                .with_label_values(&["reused"])
                .inc_by(stats.reused as u64);
            self.metrics
                .index_duration
                .with_label_values(&["read_tree"])
                .observe(outcome.read_tree_ms as f64 / 1000.0);
            self.metrics
                .index_duration
                .with_label_values(&["build"])
                .observe(outcome.build_ms as f64 / 1000.0);
        }
        tracing::info!(repo, git_ref = %req.git_ref, commit = %commit, outcome = label, "indexed");
        let mut refreshed_state = None;
        if let (Some(memory), Some(_)) = (&self.memory, branch) {
            match quorum_context::memory::refresh(
                self.store.as_ref(),
                memory.source.as_ref(),
                repo,
                memory.max_prs,
                &req.memory_pull_requests,
                // A new commit of the branch: its files were just read for
                // the graph. A graph loaded as it was has nothing new.
                outcome
                    .tree
                    .as_deref()
                    .map(|files| quorum_context::memory::BranchHead { commit: &commit, files }),
            )
            .await
            {
                Ok(Some((s, state))) => {
                    if s.failed.is_empty() {
                        tracing::info!(repo, summary = %s.line(), "review memory refreshed")
                    } else {
                        tracing::warn!(repo, summary = %s.line(), failed = ?s.failed, "review memory refreshed in part")
                    }
                    refreshed_state = Some(state);
                }
                Ok(None) => tracing::info!(repo, "review memory is being refreshed elsewhere"),
                Err(e) => tracing::warn!(repo, error = %e, "review memory not refreshed; the next push tries again"),
            }
        }
        if let Some(search) = &self.search {
            // Also after a crash between the graph and the search index:
            // the graph then loads, and the index catches up here.
            if search.indexed_commit(repo).await.map_err(classify_search)?.as_deref() != Some(commit.as_str()) {
                let tree = match outcome.tree.take() {
                    Some(t) => t,
                    None => Arc::new(
                        self.index
                            .trees()
                            .read_tree(repo, &commit)
                            .await
                            .map_err(|e| classify(e.into()))?,
                    ),
                };
                // The outcome's tree is ours alone by now: moved, not copied.
                let tree = Arc::try_unwrap(tree).unwrap_or_else(|shared| shared.as_ref().clone());
                let files = quorum_search::source_files(&graph, tree);
                let progress = EmbedProgress::new(repo, &commit);
                let stats = search
                    .index(repo, &commit, &files, &|done, total| progress.update(done, total))
                    .await
                    .map_err(classify_search)?;
                let m = &self.metrics;
                m.search_chunks
                    .with_label_values(&["embedded"])
                    .inc_by(stats.chunks as u64);
                m.search_chunks
                    .with_label_values(&["deleted_files"])
                    .inc_by(stats.files_deleted as u64);
                m.index_duration.with_label_values(&["embed"]).observe(stats.embed_secs);
                m.index_duration
                    .with_label_values(&["upsert"])
                    .observe(stats.upsert_secs);
                tracing::info!(
                    repo,
                    commit = %commit,
                    files_changed = stats.files_changed,
                    files_deleted = stats.files_deleted,
                    files_skipped = stats.files_skipped,
                    chunks = stats.chunks,
                    embed_secs = stats.embed_secs,
                    "search index updated"
                );
            }
            if let Some(state) = &refreshed_state {
                self.sync_reviews(search, repo, state).await;
            }
        }
        Ok(vec![])
    }
}

impl IndexHandler {
    /// Brings the `reviews` collection to the threads of the state memory's
    /// refresh just saved. Like the
    /// refresh itself, best effort: a failure is logged and the next
    /// refresh catches up (only what changed is embedded).
    async fn sync_reviews(&self, search: &HybridIndex, repo: &str, state: &quorum_memory::MemoryState) {
        let docs: Vec<quorum_search::reviews::ReviewDoc> = state.threads.values().map(Into::into).collect();
        match search.index_reviews(repo, &docs, &|_, _| {}).await {
            Ok(s) => {
                self.metrics
                    .search_chunks
                    .with_label_values(&["review_threads"])
                    .inc_by(s.embedded as u64);
                tracing::info!(
                    repo,
                    threads = s.threads,
                    embedded = s.embedded,
                    removed = s.removed,
                    "reviews collection updated"
                )
            }
            Err(e) => tracing::warn!(repo, error = %e, "reviews collection not updated; the next refresh tries again"),
        }
    }
}

pub async fn start(
    http_addr: std::net::SocketAddr,
    ctx: &ServiceContext,
    store: Arc<dyn StateStore>,
    index: Arc<GraphIndex>,
    search: Option<Arc<HybridIndex>>,
    memory: Option<MemoryRefresh>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let spec = WorkerSpec::for_group(ConsumerGroup::Indexer);
    for kind in ["embedded", "deleted_files"] {
        ctx.metrics.search_chunks.with_label_values(&[kind]);
    }
    let handler = Arc::new(IndexHandler {
        store,
        index,
        search,
        memory,
        metrics: ctx.metrics.clone(),
    });
    start_worker_service(ctx, spec, handler, http_addr, shutdown).await
}

/// How often a long first index says how far it is.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// A log line every [`PROGRESS_EVERY`] while the search index embeds: done
/// of total, the rate so far and the time left at that rate. A first index
/// of a large repository takes minutes; a service that says nothing for
/// minutes looks hung.
struct EmbedProgress<'a> {
    repo: &'a str,
    commit: &'a str,
    started: std::time::Instant,
    last: std::sync::Mutex<std::time::Instant>,
}

impl<'a> EmbedProgress<'a> {
    fn new(repo: &'a str, commit: &'a str) -> Self {
        let now = std::time::Instant::now();
        EmbedProgress {
            repo,
            commit,
            started: now,
            last: std::sync::Mutex::new(now),
        }
    }

    fn update(&self, done: usize, total: usize) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if done == 0 || done >= total || last.elapsed() < PROGRESS_EVERY {
            return;
        }
        *last = std::time::Instant::now();
        let (rate, eta_secs) = rate_and_eta(done, total, self.started.elapsed());
        tracing::info!(
            repo = self.repo,
            commit = self.commit,
            done,
            total,
            chunks_per_sec = format!("{rate:.1}"),
            eta_secs,
            "embedding chunks for the search index"
        );
    }
}

/// Chunks a second so far, and the whole seconds left at that rate.
fn rate_and_eta(done: usize, total: usize, elapsed: std::time::Duration) -> (f64, u64) {
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-3);
    let left = total.saturating_sub(done) as f64 / rate.max(1e-9);
    (rate, left.ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_is_what_is_left_at_the_rate_so_far() {
        let (rate, eta) = rate_and_eta(250, 1_000, std::time::Duration::from_secs(10));
        assert_eq!((rate, eta), (25.0, 30));
        assert_eq!(rate_and_eta(1_000, 1_000, std::time::Duration::from_secs(10)).1, 0);
        let (_, eta) = rate_and_eta(1, 3, std::time::Duration::from_millis(0));
        assert!(eta <= 1, "a first tick does not divide by zero: {eta}");
    }
}
