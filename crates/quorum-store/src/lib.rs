//! Shared state of the fleet (F-GW-3, F-AGG-1, F-PUB-2, F-PUB-4).
//!
//! Services are stateless; what must survive a message or be seen by another
//! replica lives here. Every write that guards against duplicates is an
//! atomic set-if-absent, so two replicas racing on the same job agree on one
//! winner. [`RedisStore`] is the real implementation; [`MemoryStore`] is the
//! embedded default (per process), and both pass one contract suite
//! (`quorum_testkit::store_contract`).

mod memory;
mod model;
mod redis_store;

use std::collections::BTreeMap;

use async_trait::async_trait;
use quorum_core::{AgentRole, AgentStatus, RunState};
use quorum_events::AgentResult;

pub use memory::MemoryStore;
pub use model::{Claim, JobRecord, RunFilter, RunRecord};
pub use redis_store::RedisStore;

/// A fresh lease-holder name, unique across processes and hosts (a pid alone
/// is 1 in every container).
pub fn new_lease_holder() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The store the environment asks for: Redis at `redis_url`, else in memory.
pub async fn connect(redis_url: Option<&str>, prefix: &str) -> Result<std::sync::Arc<dyn StateStore>> {
    Ok(match redis_url {
        Some(url) => std::sync::Arc::new(RedisStore::connect(url, prefix).await?),
        None => std::sync::Arc::new(MemoryStore::new()),
    })
}

/// A store failure. Callers treat it as retryable: the store being briefly
/// unreachable is no reason to drop a message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("stored value under `{key}` is corrupt: {reason}")]
    Corrupt { key: String, reason: String },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Every operation the fleet needs from shared state.
#[async_trait]
pub trait StateStore: Send + Sync + 'static {
    /// Claims `dedupe_key` for `job_id` unless another job holds it.
    async fn claim_dedupe(&self, dedupe_key: &str, job_id: &str) -> Result<Claim>;
    /// Releases a claim (intake could not enqueue the job).
    async fn release_dedupe(&self, dedupe_key: &str) -> Result<()>;

    /// Stores a job; its run starts `queued` with every expected agent `pending`.
    async fn put_job(&self, job: &JobRecord) -> Result<()>;
    async fn get_job(&self, job_id: &str) -> Result<Option<JobRecord>>;
    /// Most recent jobs first among those `filter` admits: `limit` of them
    /// after skipping `offset` (a page of the run list; cost independent of
    /// how many there are, filtered or not).
    async fn list_jobs(&self, filter: &RunFilter, offset: usize, limit: usize) -> Result<Vec<String>>;
    /// How many jobs `filter` admits (the run list's total).
    async fn count_jobs(&self, filter: &RunFilter) -> Result<usize>;

    /// Run state; `reason` is kept for `failed`.
    async fn set_run_state(&self, job_id: &str, state: RunState, reason: Option<&str>) -> Result<()>;
    async fn set_agent_status(&self, job_id: &str, agent: AgentRole, status: AgentStatus) -> Result<()>;
    async fn get_run(&self, job_id: &str) -> Result<Option<RunRecord>>;

    /// Stores an agent's result once; `false` when one was already stored.
    async fn put_result(&self, result: &AgentResult) -> Result<bool>;
    async fn get_results(&self, job_id: &str) -> Result<BTreeMap<AgentRole, AgentResult>>;

    /// Takes a once-only guard; `false` when someone already holds it.
    async fn acquire_guard(&self, name: &str) -> Result<bool>;
    /// Releases a guard so a retry can take it again.
    async fn release_guard(&self, name: &str) -> Result<()>;

    /// Takes a lease for `holder` that lapses by itself after `ttl_ms` unless
    /// released: a holder that crashes cannot block the work forever. `true`
    /// when it was free or `holder` already held it (the lease is renewed:
    /// a retry that could not release its lease, say because the store was
    /// down, must not wait for itself); `false` when someone else holds it.
    async fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64) -> Result<bool>;
    /// Releases the lease if `holder` still holds it; a holder whose lease
    /// lapsed and was taken by another must not free the other's.
    async fn release_lease(&self, name: &str, holder: &str) -> Result<()>;

    /// Registers a job as waiting for aggregation since `since_ms` (Unix ms);
    /// the aggregator's deadline sweeper reads this.
    async fn mark_pending(&self, job_id: &str, since_ms: u64) -> Result<()>;
    /// Pending jobs registered at or before `before_ms`, oldest first.
    async fn pending_before(&self, before_ms: u64) -> Result<Vec<String>>;
    /// The job is no longer pending (it was flushed).
    async fn clear_pending(&self, job_id: &str) -> Result<()>;

    /// The published (or draft) review of a job, as the sink rendered it.
    async fn put_review(&self, job_id: &str, review_json: &str) -> Result<()>;
    async fn get_review(&self, job_id: &str) -> Result<Option<String>>;
    /// Draft reviews waiting for an operator (F-PUB-4).
    async fn put_draft(&self, job_id: &str, review_json: &str) -> Result<()>;
    async fn get_draft(&self, job_id: &str) -> Result<Option<String>>;
    async fn delete_draft(&self, job_id: &str) -> Result<()>;

    /// Fingerprints of comments already posted on a PR (F-PUB-3).
    async fn add_fingerprints(&self, pr_key: &str, fingerprints: &[String]) -> Result<()>;
    async fn fingerprints(&self, pr_key: &str) -> Result<Vec<String>>;

    /// Records that a repo was asked to be indexed at a ref.
    async fn record_index_request(&self, repo: &str, git_ref: &str, at_ms: u64) -> Result<()>;
    async fn last_index_request(&self, repo: &str) -> Result<Option<(String, u64)>>;
    /// Repositories with a recorded index request, the most recently
    /// requested first, at most `limit` (the console's index freshness).
    async fn indexed_repos(&self, limit: usize) -> Result<Vec<String>>;

    /// The code-graph blob of `repo` at `commit` (F-IDX-2). Blobs are
    /// immutable per commit, so a second put of the same commit is harmless.
    async fn put_graph(&self, repo: &str, commit: &str, blob: &[u8]) -> Result<()>;
    async fn get_graph(&self, repo: &str, commit: &str) -> Result<Option<Vec<u8>>>;
    /// The latest indexed commit of a branch, so an incremental build knows
    /// which graph to start from.
    async fn set_branch_graph(&self, repo: &str, branch: &str, commit: &str) -> Result<()>;
    async fn branch_graph(&self, repo: &str, branch: &str) -> Result<Option<String>>;

    /// A repository's learned review memory (`quorum_memory::MemoryState`
    /// as JSON), written whole by ingest and by operator decisions under
    /// the `memory:{repo}` lease.
    async fn put_memory(&self, repo: &str, state_json: &str) -> Result<()>;
    async fn get_memory(&self, repo: &str) -> Result<Option<String>>;
    /// When a review last matched a memory item (`at`: RFC 3339). Kept
    /// apart from the state so the critic never rewrites what ingest owns.
    async fn touch_memory_item(&self, repo: &str, item_id: &str, at: &str) -> Result<()>;
    async fn memory_matches(&self, repo: &str) -> Result<BTreeMap<String, String>>;
}
