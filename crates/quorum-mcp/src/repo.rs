//! One repository the server answers about: a local checkout read once
//! (its files at HEAD when it is a git repository, else the directory) and
//! its code graph built from them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use quorum_graph::Graph;
use quorum_graph::tools::SourceTree;
use quorum_scm::{LocalGit, TreeSource, read_dir_tree};

/// Why a checkout could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("reading the git repository at {path}: {source}")]
    Git {
        path: String,
        #[source]
        source: quorum_scm::ScmError,
    },
    #[error("the graph build panicked on this checkout's source: {0}")]
    Panicked(String),
}

/// A loaded checkout: its name as tools take it, files and graph.
pub struct Repo {
    pub name: String,
    /// The commit read, when the checkout is a git repository.
    pub commit: Option<String>,
    files: HashMap<String, String>,
    pub graph: Arc<Graph>,
    /// The git work tree, when the checkout is one (changes need history).
    dir: Option<PathBuf>,
    /// The graph of the last other commit asked about (HEAD moved since the
    /// server started, or a range's base), built on top of `graph`.
    other: Mutex<Option<(String, Arc<Graph>)>>,
}

impl Repo {
    /// Reads `dir` (HEAD's tree when it is a git repository: what is
    /// committed, not the working copy) and builds its graph on the
    /// blocking pool. Symlinks and submodules are never followed.
    pub async fn load(name: &str, dir: &Path) -> Result<Repo, LoadError> {
        Repo::load_reusing(name, dir, None).await
    }

    /// [`Repo::load`], re-parsing only the files that differ from
    /// `previous` (the graph of an earlier load, from a cache).
    pub async fn load_reusing(name: &str, dir: &Path, previous: Option<Graph>) -> Result<Repo, LoadError> {
        let shown = dir.display().to_string();
        if !dir.is_dir() {
            return Err(LoadError::NotADirectory(shown));
        }
        let (tree, commit) = if dir.join(".git").exists() {
            let git_err = |source| LoadError::Git {
                path: shown.clone(),
                source,
            };
            let git = LocalGit::open(dir).map_err(git_err)?;
            let commit = git.resolve("HEAD").await.map_err(git_err)?;
            (git.read_tree("local", &commit).await.map_err(git_err)?, Some(commit))
        } else {
            let tree = read_dir_tree(dir).map_err(|source| LoadError::Read {
                path: shown.clone(),
                source,
            })?;
            (tree, None)
        };
        let is_git = commit.is_some();
        let mut repo = Repo::build(name, commit, tree, previous).await?;
        if is_git {
            repo.dir = Some(dir.to_path_buf());
        }
        Ok(repo)
    }

    /// A repository from its files (tests, and `load`).
    pub async fn from_files(
        name: &str,
        commit: Option<String>,
        tree: Vec<(String, String)>,
    ) -> Result<Repo, LoadError> {
        Repo::build(name, commit, tree, None).await
    }

    async fn build(
        name: &str,
        commit: Option<String>,
        tree: Vec<(String, String)>,
        previous: Option<Graph>,
    ) -> Result<Repo, LoadError> {
        let for_build = tree.clone();
        let graph = tokio::task::spawn_blocking(move || {
            quorum_graph::build_parallel(
                for_build,
                previous.as_ref(),
                quorum_graph::default_threads(),
                &mut |_, _| {},
            )
            .0
        })
        .await
        .map_err(|e| LoadError::Panicked(e.to_string()))?;
        Ok(Repo {
            name: name.into(),
            commit,
            files: tree.into_iter().collect(),
            graph: Arc::new(graph),
            dir: None,
            other: Mutex::new(None),
        })
    }

    /// The git work tree, when the server was started on one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    pub(crate) fn git(&self) -> Result<LocalGit, String> {
        let dir = self
            .dir
            .as_deref()
            .ok_or("this server was started on a directory that is not a git repository")?;
        LocalGit::open(dir).map_err(|e| quorum_core::error::chain(&e))
    }

    /// The graph at `commit`: the loaded one, or one built from that
    /// commit's files re-using every unchanged file of the loaded graph.
    pub(crate) async fn graph_at(&self, commit: &str) -> Result<Arc<Graph>, String> {
        if self.commit.as_deref() == Some(commit) {
            return Ok(self.graph.clone());
        }
        if let Some((c, g)) = &*self.other.lock().expect("graph cache lock")
            && c == commit
        {
            return Ok(g.clone());
        }
        let tree = self
            .git()?
            .read_tree("local", commit)
            .await
            .map_err(|e| quorum_core::error::chain(&e))?;
        let previous = self.graph.clone();
        let graph = tokio::task::spawn_blocking(move || quorum_graph::build(tree, Some(&previous)).0)
            .await
            .map_err(|e| format!("the graph build failed: {e}"))?;
        let graph = Arc::new(graph);
        *self.other.lock().expect("graph cache lock") = Some((commit.to_string(), graph.clone()));
        Ok(graph)
    }

    /// Every file as `(path, text)` (what the search index is built from).
    pub fn files(&self) -> Vec<(String, String)> {
        self.files.iter().map(|(p, t)| (p.clone(), t.clone())).collect()
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

impl SourceTree for Repo {
    fn read(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }
}
