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
    /// The past review threads learned state holds.
    pub threads: Vec<quorum_memory::PastThread>,
}

/// Past threads per changed file a prompt gets, and in all.
const PAST_PER_FILE: usize = 2;
const PAST_IN_ALL: usize = 6;
/// Changed files asked about: a prompt takes [`PAST_IN_ALL`] threads, and a
/// query costs an embedding, so a 300-file PR is not 300 queries.
const PAST_FILES_ASKED: usize = 24;
/// Characters of a file's patch in its query (the embedding model reads
/// ~256 tokens; BM25 gains little from more).
const PAST_QUERY_CHARS: usize = 2_000;

/// Ranks a repository's past threads by meaning: the `reviews` collection
/// of hybrid search, behind a trait so context does not depend on search.
#[async_trait::async_trait]
pub trait PastRanker: Send + Sync {
    /// The best of `threads` for `query` about `path`, at most `limit`;
    /// `Ok(None)` when none of `repo`'s threads are embedded (the caller
    /// ranks by words).
    async fn rank(
        &self,
        repo: &str,
        threads: &[quorum_memory::PastThread],
        query: &str,
        path: &str,
        limit: usize,
    ) -> Result<Option<Vec<quorum_memory::SearchHit>>, String>;
}

/// The team's past threads most relevant to a change: for each changed
/// file, the best-ranked threads for its patch (by meaning when `ranker`
/// has the repository's threads embedded, else by words; same file and
/// directory first, re-ranked by reactions), each once, at most
/// `PAST_IN_ALL`. A ranker that fails is a note and the words rank.
pub async fn past_reviews_for(
    threads: &[quorum_memory::PastThread],
    req: &ReviewRequest,
    ranker: Option<&dyn PastRanker>,
    notes: &mut Vec<String>,
) -> Vec<quorum_memory::PastThread> {
    let mut out: Vec<quorum_memory::PastThread> = vec![];
    if threads.is_empty() {
        return out;
    }
    let mut ranker = ranker;
    for f in req.files.iter().take(PAST_FILES_ASKED) {
        if out.len() >= PAST_IN_ALL {
            break;
        }
        let patch = f.patch.as_deref().unwrap_or("");
        let cut = patch.floor_char_boundary(PAST_QUERY_CHARS);
        let query = format!("{} {}", f.path, &patch[..cut]);
        let by_meaning = match ranker {
            Some(r) => match r
                .rank(&req.repo.full_name, threads, &query, &f.path, PAST_PER_FILE)
                .await
            {
                Ok(hits) => hits,
                Err(e) => {
                    notes.push(format!(
                        "past reviews ranked by words: the reviews collection failed ({e})"
                    ));
                    ranker = None;
                    None
                }
            },
            None => None,
        };
        let hits = by_meaning.unwrap_or_else(|| {
            quorum_memory::search(
                threads,
                &quorum_memory::Asker::Anyone,
                &query,
                Some(&f.path),
                PAST_PER_FILE,
            )
        });
        for hit in hits {
            if out.len() < PAST_IN_ALL && !out.iter().any(|t| t.id == hit.thread.id) {
                out.push(hit.thread);
            }
        }
    }
    out
}

/// `repo`'s learned state as stored (`None`: nothing learned yet).
async fn stored_state(store: &dyn StateStore, repo: &str) -> Result<Option<MemoryState>, String> {
    match store
        .get_memory(repo)
        .await
        .map_err(|e| quorum_core::error::chain(&e))?
    {
        Some(json) => serde_json::from_str(&json)
            .map(Some)
            .map_err(|e| format!("the stored memory state is not readable: {e}")),
        None => Ok(None),
    }
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
    ReviewMemory {
        set,
        notes,
        threads: state.threads.into_values().collect(),
    }
}

pub use quorum_memory::learn::MemoryArgs;

/// Saves ingest checkpoints into the store.
pub struct StoreCheckpoint<'a> {
    pub store: &'a dyn StateStore,
    pub repo: &'a str,
}

#[async_trait::async_trait]
impl quorum_memory::Checkpoint for StoreCheckpoint<'_> {
    async fn save(&self, state: &MemoryState) -> Result<(), String> {
        let json = serde_json::to_string(state).map_err(|e| quorum_core::error::chain(&e))?;
        self.store
            .put_memory(self.repo, &json)
            .await
            .map_err(|e| quorum_core::error::chain(&e))
    }
}

/// A lease long enough for one bounded refresh; a crashed holder frees it.
const REFRESH_LEASE_MS: u64 = 300_000;

/// The default branch's files at a new commit, for the staleness check of
/// a refresh: every text file, path → content (the indexer's tree).
pub struct BranchHead<'a> {
    pub commit: &'a str,
    pub files: &'a [(String, String)],
}

/// Brings a repository's memory up to date from its SCM: at most `max_prs`
/// pull requests from the checkpointed cursor, under the `memory:{repo}`
/// lease that `quorum memory` also takes. With `head`, also checks every
/// line of code evidence was given on against it (an item whose code is all
/// gone is stale). Returns what the run did and the state it saved;
/// `Ok(None)`: someone else holds the lease.
pub async fn refresh(
    store: &dyn StateStore,
    source: &dyn quorum_memory::HistorySource,
    repo: &str,
    max_prs: usize,
    also: &[u64],
    head: Option<BranchHead<'_>>,
) -> Result<Option<(quorum_memory::IngestSummary, MemoryState)>, String> {
    let lease = quorum_memory::lease_name(repo);
    let holder = quorum_store::new_lease_holder();
    if !store
        .acquire_lease(&lease, &holder, REFRESH_LEASE_MS)
        .await
        .map_err(|e| quorum_core::error::chain(&e))?
    {
        return Ok(None);
    }
    let result = async {
        let mut state = stored_state(store, repo).await?.unwrap_or_default();
        let opts = quorum_memory::IngestOptions {
            max_prs: Some(max_prs),
            also: also.to_vec(),
            ..Default::default()
        };
        let summary = quorum_memory::ingest(
            source,
            &StoreCheckpoint { store, repo },
            repo,
            &mut state,
            &opts,
            &|_, _| {},
        )
        .await
        .map_err(|e| quorum_core::error::chain(&e))?;
        if let Some(head) = head {
            let files: std::collections::BTreeMap<&str, &str> =
                head.files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
            let checked = state.check_sources(&files, head.commit, chrono::Utc::now());
            if checked.newly_gone + checked.back > 0 {
                quorum_memory::Checkpoint::save(&StoreCheckpoint { store, repo }, &state).await?;
            }
            tracing::info!(
                repo,
                commit = head.commit,
                sources = checked.checked,
                newly_gone = checked.newly_gone,
                back = checked.back,
                "review memory's sources checked against the default branch"
            );
        }
        Ok((summary, state))
    }
    .await;
    if let Err(e) = store.release_lease(&lease, &holder).await {
        tracing::warn!(repo, error = %e, "memory lease not released; it lapses by itself");
    }
    result.map(Some)
}
