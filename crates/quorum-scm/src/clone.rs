//! Repositories the indexer and agents are not configured with locally:
//! cloned (bare) from `<base URL>/<owner>/<name>.git` into a cache directory
//! on first use and fetched before a branch is resolved.
//!
//! The URL and the cache path are built only from a validated `owner/name`
//! (letters, digits, `-`, `_`, `.`; no leading `-` or `.`), refs are
//! validated, and every git call puts `--` before URLs and paths, so a
//! repository name or ref cannot become an option or leave the cache.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tokio::process::Command;

use quorum_core::is_commit_id;

use crate::{LocalGit, LocalRepos, ScmError, TreeSource, validate_ref};

/// Bare clones under one directory.
#[derive(Debug)]
pub struct CloneCache {
    base_url: String,
    dir: PathBuf,
    /// One clone or fetch at a time: two jobs of a new repo must not race on its directory.
    lock: tokio::sync::Mutex<()>,
}

impl CloneCache {
    /// `base_url`: `https://…`, `http://…` or `file://…` (e.g. `https://github.com`).
    pub fn new(base_url: &str, dir: impl Into<PathBuf>) -> Result<Self, ScmError> {
        let base = base_url.trim_end_matches('/');
        if !(base.starts_with("https://") || base.starts_with("http://") || base.starts_with("file://")) {
            return Err(ScmError::Invalid(format!(
                "clone base URL `{base_url}` must start with https://, http:// or file://"
            )));
        }
        Ok(CloneCache {
            base_url: base.to_string(),
            dir: dir.into(),
            lock: tokio::sync::Mutex::new(()),
        })
    }

    fn path_of(&self, repo: &str) -> Result<(PathBuf, String), ScmError> {
        quorum_core::job::validate_repo_name(repo).map_err(ScmError::Invalid)?;
        let (owner, name) = repo.split_once('/').expect("validated owner/name");
        Ok((
            self.dir.join(owner).join(format!("{name}.git")),
            format!("{}/{owner}/{name}.git", self.base_url),
        ))
    }

    async fn git(dir: Option<&Path>, args: &[&str]) -> Result<(), ScmError> {
        let mut cmd = Command::new("git");
        if let Some(d) = dir {
            cmd.arg("-C").arg(d);
        }
        let out = cmd
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .await
            .map_err(|e| ScmError::Unavailable(format!("cannot run git: {e}")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(ScmError::Unavailable(format!(
                "git {}: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    }

    /// The repository's clone, created or (with `fetch`) brought up to date.
    pub async fn repo(&self, repo: &str, fetch: bool) -> Result<LocalGit, ScmError> {
        let (path, url) = self.path_of(repo)?;
        let _guard = self.lock.lock().await;
        if !path.join("HEAD").is_file() {
            std::fs::create_dir_all(path.parent().expect("under the cache"))
                .map_err(|e| ScmError::Unavailable(format!("cannot create {}: {e}", self.dir.display())))?;
            let p = path.to_string_lossy().into_owned();
            Self::git(None, &["clone", "--bare", "--quiet", "--", &url, &p]).await?;
        } else if fetch {
            Self::git(
                Some(&path),
                &["fetch", "--quiet", "--prune", "--", &url, "+refs/heads/*:refs/heads/*"],
            )
            .await?;
        }
        LocalGit::open(&path)
    }
}

#[async_trait]
impl TreeSource for CloneCache {
    async fn resolve(&self, repo: &str, git_ref: &str) -> Result<String, ScmError> {
        validate_ref(git_ref)?;
        // A branch moves: fetch first. A commit id is fetched only when missing.
        let git = self.repo(repo, !is_commit_id(git_ref)).await?;
        match LocalGit::resolve(&git, git_ref).await {
            Ok(c) => Ok(c),
            Err(_) => LocalGit::resolve(&self.repo(repo, true).await?, git_ref).await,
        }
    }

    async fn read_tree(&self, repo: &str, commit: &str) -> Result<Vec<(String, String)>, ScmError> {
        let commit = TreeSource::resolve(self, repo, commit).await?;
        self.repo(repo, false).await?.read_tree(repo, &commit).await
    }

    async fn read_file(&self, repo: &str, commit: &str, path: &str) -> Result<Option<String>, ScmError> {
        let commit = TreeSource::resolve(self, repo, commit).await?;
        self.repo(repo, false).await?.read_file(repo, &commit, path).await
    }
}

/// The repository-access flags of every binary that reads trees (agents,
/// critic, indexer); flatten into a clap parser.
#[derive(Debug, Clone, clap::Args)]
pub struct TreeArgs {
    /// Local repositories this service may read, `owner/name=/path,…`.
    #[arg(long, env = "QUORUM_LOCAL_REPOS", default_value = "")]
    pub local_repos: String,
    /// Clone repositories that are not local from `<URL>/<owner>/<name>.git`
    /// (e.g. `https://github.com`); unset: local repositories only.
    #[arg(long, env = "QUORUM_CLONE_BASE_URL")]
    pub clone_base_url: Option<String>,
    /// Where clones are kept.
    #[arg(long, env = "QUORUM_CLONE_DIR", default_value = "/tmp/quorum-clones")]
    pub clone_dir: std::path::PathBuf,
    /// GitHub's or GitLab's API: files of repositories that are neither
    /// local nor cloned.
    #[command(flatten)]
    pub scm: crate::ScmArgs,
}

impl TreeArgs {
    /// Must run inside a tokio runtime (the GitHub client's).
    pub fn trees(&self) -> Result<Trees, ScmError> {
        let mut trees = Trees::configure(&self.local_repos, self.clone_base_url.as_deref(), &self.clone_dir)?;
        trees.api = self.scm.api()?;
        Ok(trees)
    }
}

/// The configured local repositories first; then clones for whole trees and
/// the SCM's API for single files (each falls back to the other).
#[derive(Debug, Default)]
pub struct Trees {
    pub local: LocalRepos,
    pub clones: Option<CloneCache>,
    pub api: Option<crate::ScmApi>,
}

impl Trees {
    /// From the binaries' settings: `QUORUM_LOCAL_REPOS`, and clones when a
    /// base URL is given.
    pub fn configure(local_repos: &str, clone_base_url: Option<&str>, clone_dir: &Path) -> Result<Trees, ScmError> {
        Ok(Trees {
            local: LocalRepos::parse(local_repos)?,
            clones: clone_base_url
                .filter(|u| !u.trim().is_empty())
                .map(|u| CloneCache::new(u, clone_dir))
                .transpose()?,
            api: None,
        })
    }
}

/// Where one read goes.
enum Via<'a> {
    Local(LocalGit),
    Clone(&'a CloneCache),
    Api(std::sync::Arc<dyn TreeSource>),
}

impl Trees {
    /// Local first; then clones (whole trees) or the API (single files).
    fn pick(&self, repo: &str, whole_tree: bool) -> Result<Via<'_>, ScmError> {
        match self.local.get(repo) {
            Ok(g) => Ok(Via::Local(g)),
            Err(e) => match (&self.clones, &self.api, whole_tree) {
                (Some(c), _, true) | (Some(c), None, false) => Ok(Via::Clone(c)),
                (_, Some(a), _) => Ok(Via::Api(a.trees())),
                (None, None, _) => Err(e),
            },
        }
    }
}

#[async_trait]
impl TreeSource for Trees {
    async fn resolve(&self, repo: &str, git_ref: &str) -> Result<String, ScmError> {
        match self.pick(repo, false)? {
            Via::Local(g) => TreeSource::resolve(&g, repo, git_ref).await,
            Via::Clone(c) => c.resolve(repo, git_ref).await,
            Via::Api(a) => a.resolve(repo, git_ref).await,
        }
    }

    async fn read_tree(&self, repo: &str, commit: &str) -> Result<Vec<(String, String)>, ScmError> {
        match self.pick(repo, true)? {
            Via::Local(g) => g.read_tree(repo, commit).await,
            Via::Clone(c) => c.read_tree(repo, commit).await,
            Via::Api(a) => a.read_tree(repo, commit).await,
        }
    }

    async fn read_file(&self, repo: &str, commit: &str, path: &str) -> Result<Option<String>, ScmError> {
        match self.pick(repo, false)? {
            Via::Local(g) => g.read_file(repo, commit, path).await,
            Via::Clone(c) => c.read_file(repo, commit, path).await,
            Via::Api(a) => a.read_file(repo, commit, path).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use quorum_testkit::git;

    #[tokio::test]
    async fn clones_on_first_use_and_fetches_branches() {
        let tmp = tempfile::tempdir().unwrap();
        let origin = tmp.path().join("origin/acme/shop.git");
        std::fs::create_dir_all(&origin).unwrap();
        git(&origin, &["init", "-q", "--bare", "-b", "main"]);
        let work = tmp.path().join("work");
        std::fs::create_dir(&work).unwrap();
        git(&work, &["init", "-q", "-b", "main"]);
        std::fs::write(work.join("a.py"), "x = 1\n").unwrap();
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-qm", "one"]);
        git(&work, &["push", "-q", origin.to_str().unwrap(), "main"]);

        let base = format!("file://{}", tmp.path().join("origin").display());
        let cache = CloneCache::new(&base, tmp.path().join("cache")).unwrap();
        let first = cache.resolve("acme/shop", "main").await.unwrap();
        assert!(
            tmp.path().join("cache/acme/shop.git/HEAD").is_file(),
            "a bare clone in the cache"
        );
        assert_eq!(
            cache.read_file("acme/shop", &first, "a.py").await.unwrap().as_deref(),
            Some("x = 1\n")
        );

        // A new commit upstream is seen on the next branch resolve.
        std::fs::write(work.join("a.py"), "x = 2\n").unwrap();
        git(&work, &["commit", "-qam", "two"]);
        git(&work, &["push", "-q", origin.to_str().unwrap(), "main"]);
        let second = cache.resolve("acme/shop", "main").await.unwrap();
        assert_ne!(first, second);
        assert_eq!(cache.read_tree("acme/shop", &second).await.unwrap()[0].1, "x = 2\n");

        // Names and refs that could escape or inject are refused before git runs.
        for bad in ["../etc", "acme/../x", "-x/y", "acme/.hidden", "a/b/c"] {
            assert!(
                matches!(cache.resolve(bad, "main").await, Err(ScmError::Invalid(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            cache.resolve("acme/shop", "--upload-pack=x").await,
            Err(ScmError::Invalid(_))
        ));
        assert!(!tmp.path().join("etc").exists());
        // An unknown repository is unavailable (the remote says no), not a panic.
        assert!(cache.resolve("acme/none", "main").await.is_err());
        assert!(CloneCache::new("ssh://host", tmp.path()).is_err());

        // Local repositories win; clones serve the rest.
        let trees = Trees {
            local: LocalRepos::new(),
            clones: Some(cache),
            api: None,
        };
        assert_eq!(TreeSource::resolve(&trees, "acme/shop", "main").await.unwrap(), second);
        let none = Trees::default();
        assert!(TreeSource::resolve(&none, "acme/shop", "main").await.is_err());
    }
}
