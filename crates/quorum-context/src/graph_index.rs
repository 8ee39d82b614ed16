//! Graphs per (repo, commit): load, or build incrementally and store.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use quorum_graph::{BuildStats, Graph, blob, build};
use quorum_scm::TreeSource;
use quorum_store::StateStore;

use crate::ContextError;

/// Decoded graphs kept per process, so the jobs of one commit decode once.
const CACHE: usize = 8;

/// What getting a graph took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphOutcome {
    /// Built now (else loaded from the store or the process cache).
    pub built: bool,
    /// The build started from an earlier graph of the branch.
    pub incremental_from: Option<String>,
    pub stats: Option<BuildStats>,
    pub read_tree_ms: u64,
    pub build_ms: u64,
    pub blob_bytes: usize,
    /// The files read for the build (`None` when the graph was loaded), so
    /// the hybrid index need not read them again.
    pub tree: Option<Arc<Vec<(String, String)>>>,
}

/// (repo, commit) → decoded graph, most recent first.
type Cache = Vec<((String, String), Arc<Graph>)>;

pub struct GraphIndex {
    store: Arc<dyn StateStore>,
    trees: Arc<dyn TreeSource>,
    cache: Mutex<Cache>,
}

impl GraphIndex {
    pub fn new(store: Arc<dyn StateStore>, trees: Arc<dyn TreeSource>) -> Self {
        GraphIndex {
            store,
            trees,
            cache: Mutex::new(vec![]),
        }
    }

    pub fn store(&self) -> &Arc<dyn StateStore> {
        &self.store
    }

    pub fn trees(&self) -> &Arc<dyn TreeSource> {
        &self.trees
    }

    fn cached(&self, repo: &str, commit: &str) -> Option<Arc<Graph>> {
        let c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        c.iter()
            .find(|((r, k), _)| r == repo && k == commit)
            .map(|(_, g)| g.clone())
    }

    fn remember(&self, repo: &str, commit: &str, g: Arc<Graph>) {
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        c.retain(|((r, k), _)| !(r == repo && k == commit));
        c.insert(0, ((repo.into(), commit.into()), g));
        c.truncate(CACHE);
    }

    /// The stored graph of `repo@commit`, if any. A blob of another format
    /// reads as absent (it is rebuilt), never as an error.
    pub async fn load(&self, repo: &str, commit: &str) -> Result<Option<Arc<Graph>>, ContextError> {
        if let Some(g) = self.cached(repo, commit) {
            return Ok(Some(g));
        }
        let Some(bytes) = self.store.get_graph(repo, commit).await? else {
            return Ok(None);
        };
        match blob::decode(&bytes) {
            Ok(g) => {
                let g = Arc::new(g);
                self.remember(repo, commit, g.clone());
                Ok(Some(g))
            }
            Err(e) => {
                tracing::warn!(repo, commit, error = %e, "stored graph unreadable; rebuilding");
                Ok(None)
            }
        }
    }

    /// The graph of `repo` at `commit` (a full commit id), built if needed.
    /// With `branch`, the build starts from the branch's last graph (only
    /// changed files are parsed) and the branch then points at `commit`.
    /// Idempotent per commit.
    pub async fn ensure(
        &self,
        repo: &str,
        commit: &str,
        branch: Option<&str>,
    ) -> Result<(Arc<Graph>, GraphOutcome), ContextError> {
        if let Some(g) = self.load(repo, commit).await? {
            if let Some(b) = branch {
                self.store.set_branch_graph(repo, b, commit).await?;
            }
            return Ok((g, GraphOutcome::default()));
        }
        let mut outcome = GraphOutcome {
            built: true,
            ..Default::default()
        };
        let previous = match branch {
            Some(b) => match self.store.branch_graph(repo, b).await? {
                Some(prev) if prev != commit => {
                    let g = self.load(repo, &prev).await?;
                    if g.is_some() {
                        outcome.incremental_from = Some(prev);
                    }
                    g
                }
                _ => None,
            },
            None => None,
        };
        let t = Instant::now();
        let tree = Arc::new(self.trees.read_tree(repo, commit).await?);
        outcome.read_tree_ms = t.elapsed().as_millis() as u64;
        outcome.tree = Some(tree.clone());
        let t = Instant::now();
        let prev = previous.clone();
        let (graph, stats) = tokio::task::spawn_blocking(move || build(tree.iter().cloned(), prev.as_deref()))
            .await
            .map_err(|e| ContextError::from_join("the graph build", e))?;
        outcome.build_ms = t.elapsed().as_millis() as u64;
        let bytes = blob::encode(&graph);
        outcome.blob_bytes = bytes.len();
        self.store.put_graph(repo, commit, &bytes).await?;
        if let Some(b) = branch {
            self.store.set_branch_graph(repo, b, commit).await?;
        }
        tracing::info!(
            repo,
            commit,
            files = stats.files,
            parsed = stats.parsed,
            reused = stats.reused,
            symbols = stats.symbols,
            edges = stats.edges,
            blob_bytes = bytes.len(),
            build_ms = outcome.build_ms,
            "code graph built"
        );
        outcome.stats = Some(stats);
        let graph = Arc::new(graph);
        self.remember(repo, commit, graph.clone());
        Ok((graph, outcome))
    }
}
