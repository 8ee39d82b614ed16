//! A repository's review memory as one review sees it (F-MEM-3): learned
//! state from the store under the `.quorum/memory.yaml` committed at the
//! PR's base. The critic drops what active `suppress` items cover; the
//! agents check active `avoid` items as conventions. Memory that cannot be
//! read is a note, never a failed review.

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
    trees: Option<&dyn quorum_scm::TreeSource>,
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
    let committed = match trees {
        Some(trees) => match trees.read_file(repo, &req.base_sha, MEMORY_PATH).await {
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

/// The trust gates of learned memory, as flags every service that applies
/// memory (the agents, the critic) flattens in, so both apply the same.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryArgs {
    /// Distinct pull requests with evidence before a learned item is
    /// suggested or made active.
    #[arg(long, env = "QUORUM_MEMORY_MIN_PRS", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub memory_min_prs: u64,
    /// Days a learned item waits as suggested before it applies by itself.
    #[arg(long, env = "QUORUM_MEMORY_APPROVAL_DELAY_DAYS", default_value_t = 0)]
    pub memory_approval_delay_days: u32,
    /// Days without a match after which an active item is re-validated.
    #[arg(long, env = "QUORUM_MEMORY_STALE_AFTER_DAYS", default_value_t = 180)]
    pub memory_stale_after_days: u32,
}

impl MemoryArgs {
    pub fn policy(&self) -> Policy {
        Policy {
            min_prs: self.memory_min_prs as usize,
            approval_delay_days: self.memory_approval_delay_days.into(),
            stale_after_days: self.memory_stale_after_days.into(),
        }
    }
}
