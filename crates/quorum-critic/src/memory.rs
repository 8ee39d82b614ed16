//! Review memory in the critic (F-MEM-3): the repository's active
//! `suppress` items drop the findings they cover, each with the item as its
//! reason ("memory M-1a2b3c: rejected ×3 by @a, @b"). The finding stays in
//! the review's rejected list, the metrics (`decision="memory"`) and the
//! log — never silently gone. Memory that cannot be read is a note on the
//! summary, never a failed review.

use std::sync::Arc;

use quorum_context::ContextBuilder;
use quorum_core::ReviewRequest;
use quorum_memory::{MEMORY_PATH, MemoryFile, MemorySet, MemoryState, Policy, items_for};
use quorum_store::StateStore;

/// The memory that applies to one review, and what could not be read.
pub struct ReviewMemory {
    pub set: MemorySet,
    pub notes: Vec<String>,
}

/// Learned state from the store, laid under the `.quorum/memory.yaml`
/// committed at the PR's base (a PR cannot change its own memory, as with
/// `.quorum.yml`).
pub async fn load(
    store: &dyn StateStore,
    context: Option<&Arc<ContextBuilder>>,
    req: &ReviewRequest,
    policy: &Policy,
) -> ReviewMemory {
    let repo = req.repo.full_name.as_str();
    let mut notes = vec![];
    let mut state = match store.get_memory(repo).await {
        Ok(Some(json)) => serde_json::from_str::<MemoryState>(&json).unwrap_or_else(|e| {
            notes.push(format!(
                "learned memory not applied: the stored state is not readable ({e})"
            ));
            MemoryState::default()
        }),
        Ok(None) => MemoryState::default(),
        Err(e) => {
            notes.push(format!("learned memory not applied: {e}"));
            MemoryState::default()
        }
    };
    match store.memory_matches(repo).await {
        Ok(m) => state.last_matched = m,
        Err(e) => tracing::warn!(repo, error = %e, "memory matches not read; staleness judged without them"),
    }
    let committed = match context {
        Some(ctx) => match ctx.index().trees().read_file(repo, &req.base_sha, MEMORY_PATH).await {
            Ok(Some(text)) => match MemoryFile::parse(&text) {
                Ok(f) => Some(f),
                Err(e) => {
                    notes.push(format!("committed memory not applied: {e}"));
                    None
                }
            },
            Ok(None) => None,
            Err(e) => {
                notes.push(format!("committed memory not read: {e}"));
                None
            }
        },
        None => None,
    };
    let items = items_for(&state, policy, chrono::Utc::now(), committed.as_ref());
    let set = MemorySet::new(items).unwrap_or_else(|e| {
        notes.push(format!("memory not applied: {e}"));
        MemorySet::default()
    });
    ReviewMemory { set, notes }
}
