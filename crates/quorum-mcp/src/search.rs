//! `search_code` / `search_docs` behind the server: the repository's hybrid
//! index, brought up to date in the background when the server starts (a
//! first index of a large tree takes minutes; the graph tools answer at
//! once meanwhile), and a state every search answer reports honestly.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use quorum_search::{HybridIndex, Kind, SearchOptions, SourceFile};

/// Where the index stands.
enum Phase {
    /// No index: why, and what would turn it on.
    Off(String),
    Building,
    Ready,
    Failed(String),
}

/// The server's search side.
pub struct Search {
    index: Option<Arc<HybridIndex>>,
    /// The key the index stores this repository under.
    key: String,
    phase: Mutex<Phase>,
    done: AtomicUsize,
    total: AtomicUsize,
}

/// Lines of each chunk an answer shows.
const LINES_PER_HIT: usize = 12;

impl Search {
    /// No search: `reason` says why (and how to turn it on).
    pub fn off(reason: impl Into<String>) -> Arc<Self> {
        Arc::new(Search {
            index: None,
            key: String::new(),
            phase: Mutex::new(Phase::Off(reason.into())),
            done: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
        })
    }

    /// Starts bringing `index` up to `commit` for `files` under `key` on a
    /// background task; searches answer once it is done.
    pub fn start(index: Arc<HybridIndex>, key: &str, commit: &str, files: Vec<SourceFile>) -> Arc<Self> {
        let search = Arc::new(Search {
            index: Some(index.clone()),
            key: key.to_string(),
            phase: Mutex::new(Phase::Building),
            done: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
        });
        let (me, key, commit) = (search.clone(), key.to_string(), commit.to_string());
        tokio::spawn(async move {
            let progress = |d: usize, t: usize| {
                me.done.store(d, Ordering::Relaxed);
                me.total.store(t, Ordering::Relaxed);
            };
            let result = index.index(&key, &commit, &files, &progress).await;
            let phase = match result {
                Ok(stats) => {
                    tracing::info!(chunks = stats.chunks, files = stats.files_changed, "search index ready");
                    Phase::Ready
                }
                Err(e) => Phase::Failed(e.to_string()),
            };
            *me.phase.lock().expect("phase lock") = phase;
        });
        search
    }

    /// Ranked chunks for `query`, as text, or why there are none yet.
    pub async fn query(
        &self,
        kind: Kind,
        query: &str,
        path_glob: Option<&str>,
        limit: usize,
    ) -> Result<String, String> {
        if query.trim().is_empty() {
            return Err("`query` is empty: describe what you look for, in words or identifiers".into());
        }
        {
            let phase = self.phase.lock().expect("phase lock");
            match &*phase {
                Phase::Off(reason) => return Err(format!("hybrid search is off: {reason}")),
                Phase::Failed(e) => return Err(format!("the search index could not be built: {e}")),
                Phase::Building => {
                    let (d, t) = (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed));
                    return Err(format!(
                        "the search index is still being built ({d} of {t} chunks embedded); \
                         try again shortly, or use get_callers / read_snippet meanwhile"
                    ));
                }
                Phase::Ready => {}
            }
        }
        let index = self.index.as_ref().expect("a ready search has an index");
        let mut opts = SearchOptions::new(kind, limit);
        opts.path_glob = path_glob.map(str::to_string);
        let hits = index
            .search(&self.key, query, &opts)
            .await
            .map_err(|e| quorum_core::error::chain(&e))?;
        if hits.is_empty() {
            return Ok(format!("no {} chunk matches {query:?}", kind_name(kind)));
        }
        Ok(quorum_search::format_hits(&hits, LINES_PER_HIT))
    }

    /// The index, when search is on (it answers past reviews while the
    /// code is still being indexed).
    pub fn index(&self) -> Option<Arc<HybridIndex>> {
        self.index.clone()
    }

    /// Whether searches answer now (tests wait for it).
    pub fn is_ready(&self) -> bool {
        matches!(*self.phase.lock().expect("phase lock"), Phase::Ready)
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Code => "code",
        Kind::Docs => "documentation",
        Kind::Reviews => "past review",
    }
}
