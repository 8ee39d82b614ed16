//! A local git repository as a change source, through the git CLI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use quorum_core::FileChange;
use quorum_core::diff::parse_unified;
use tokio::process::Command;

use crate::{Change, ChangeSource, ScmError};

/// Rejects anything that could be read as a git option or a pathspec trick.
pub fn validate_ref(r: &str) -> Result<(), ScmError> {
    let ok = !r.is_empty()
        && !r.starts_with('-')
        && r.len() <= 250
        && r.chars().all(|c| c.is_ascii_alphanumeric() || "._/@^~-".contains(c))
        && !r.contains("..");
    if ok {
        Ok(())
    } else {
        Err(ScmError::Invalid(format!(
            "git ref `{r}` is not allowed (letters, digits and ._/@^~- only, no leading `-`, no `..`)"
        )))
    }
}

/// One local repository.
#[derive(Debug, Clone)]
pub struct LocalGit {
    root: PathBuf,
}

impl LocalGit {
    /// A work tree (with `.git`) or a bare repository (a clone cache's).
    pub fn open(root: impl AsRef<Path>) -> Result<Self, ScmError> {
        let root = root.as_ref();
        let bare = root.join("HEAD").is_file() && root.join("objects").is_dir();
        if !root.join(".git").exists() && !bare {
            return Err(ScmError::Invalid(format!(
                "{} is not a git repository (no .git)",
                root.display()
            )));
        }
        Ok(LocalGit {
            root: root.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    async fn git(&self, args: &[&str]) -> Result<String, ScmError> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .output()
            .await
            .map_err(|e| ScmError::Unavailable(format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(ScmError::Invalid(format!(
                "git {} failed in {}: {}",
                args.join(" "),
                self.root.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The full commit id of a ref.
    pub async fn resolve(&self, r: &str) -> Result<String, ScmError> {
        validate_ref(r)?;
        let spec = format!("{r}^{{commit}}");
        Ok(self
            .git(&["rev-parse", "--verify", "--end-of-options", &spec])
            .await?
            .trim()
            .to_string())
    }

    /// The change from `base` to `head` as per-file patches.
    pub async fn diff(&self, base: &str, head: &str) -> Result<Change, ScmError> {
        let base_sha = self.resolve(base).await?;
        let head_sha = self.resolve(head).await?;
        let text = self
            .git(&[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "-M",
                "--end-of-options",
                &base_sha,
                &head_sha,
            ])
            .await?;
        Ok(Change {
            base_sha,
            head_sha,
            files: split_patches(&text),
        })
    }
}

#[async_trait]
impl ChangeSource for LocalGit {
    async fn fetch_change(&self, _repo: &str, _number: u64, base: &str, head: &str) -> Result<Change, ScmError> {
        self.diff(base, head).await
    }
}

/// Local repositories by `owner/name`: the gateway's change source when it
/// runs without a GitHub token (the demo, the tests).
/// Clones share one registry, so a repository added later (an eval case)
/// is visible to every service holding it.
#[derive(Debug, Clone, Default)]
pub struct LocalRepos {
    repos: std::sync::Arc<std::sync::RwLock<BTreeMap<String, LocalGit>>>,
}

impl LocalRepos {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&self, name: &str, repo: LocalGit) {
        self.repos
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), repo);
    }

    pub fn remove(&self, name: &str) {
        self.repos.write().unwrap_or_else(|p| p.into_inner()).remove(name);
    }

    /// The repository configured as `name`.
    pub fn get(&self, name: &str) -> Result<LocalGit, ScmError> {
        self.repos
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
            .ok_or_else(|| ScmError::Invalid(format!("repository `{name}` is not configured")))
    }

    /// Parses `owner/name=/path,owner2/name2=/path2` (`QUORUM_LOCAL_REPOS`).
    pub fn parse(spec: &str) -> Result<Self, ScmError> {
        let repos = LocalRepos::new();
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (name, path) = entry
                .split_once('=')
                .ok_or_else(|| ScmError::Invalid(format!("`{entry}` must be owner/name=/path")))?;
            quorum_core::job::validate_repo_name(name).map_err(ScmError::Invalid)?;
            repos.insert(name, LocalGit::open(path)?);
        }
        Ok(repos)
    }
}

#[async_trait]
impl ChangeSource for LocalRepos {
    async fn fetch_change(&self, repo: &str, number: u64, base: &str, head: &str) -> Result<Change, ScmError> {
        self.get(repo)?.fetch_change(repo, number, base, head).await
    }
}

/// Splits `git diff` output into per-file changes whose `patch` is the hunk
/// text (the shape GitHub's pull-request files API returns).
pub fn split_patches(text: &str) -> Vec<FileChange> {
    let (parsed, _) = parse_unified(text);
    let mut sections: Vec<String> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            sections.push(String::new());
        }
        if let Some(s) = sections.last_mut() {
            s.push_str(line);
        }
    }
    parsed
        .into_iter()
        .zip(sections)
        .map(|(file, section)| {
            let patch = section
                .find("\n@@")
                .map(|i| section[i + 1..].to_string())
                .filter(|_| !file.binary);
            FileChange {
                path: file.path,
                old_path: file.old_path,
                status: file.status,
                patch: patch.or_else(|| (!file.binary).then(String::new)),
                omitted: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_validated() {
        for ok in ["main", "HEAD~1", "feature/x", "v1.2", "abc123"] {
            assert!(validate_ref(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-n", "--output=/tmp/x", "a..b", "a b", "$(id)"] {
            assert!(validate_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn splits_patches_per_file() {
        let text = "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/b.png b/b.png\nBinary files a/b.png and b/b.png differ\n";
        let files = split_patches(text);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].patch.as_deref(), Some("@@ -1 +1 @@\n-x\n+y\n"));
        assert_eq!(files[1].patch, None);
    }

    #[tokio::test]
    async fn diffs_a_real_repository() {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .output()
                .unwrap();
            assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
        };
        run(&["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        run(&["add", "."]);
        run(&["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base"]);
        std::fs::write(dir.path().join("a.py"), "x = 2\n").unwrap();
        run(&["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "head"]);
        let git = LocalGit::open(dir.path()).unwrap();
        let change = git.diff("HEAD~1", "HEAD").await.unwrap();
        assert_eq!(change.files.len(), 1);
        assert!(change.files[0].patch.as_deref().unwrap().contains("+x = 2"));
        assert_eq!(change.head_sha.len(), 40);
        assert!(matches!(git.diff("-x", "HEAD").await, Err(ScmError::Invalid(_))));
        assert!(matches!(git.diff("nope", "HEAD").await, Err(ScmError::Invalid(_))));
    }
}
