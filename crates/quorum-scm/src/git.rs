//! A local git repository as a change source, read in-process (gitoxide).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
#[cfg(test)]
use quorum_core::FileChange;
#[cfg(test)]
use quorum_core::diff::parse_unified;

use crate::{Change, ChangeSource, ScmError, gix_diff};

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

thread_local! {
    /// Each blocking thread keeps its handle per repository: a fresh handle
    /// per call re-opens the object store (mappings, file handles) and
    /// starts with an empty object cache, which measured at about a third of
    /// the intake's time for a new pull request.
    static HANDLES: std::cell::RefCell<BTreeMap<PathBuf, gix::Repository>> =
        const { std::cell::RefCell::new(BTreeMap::new()) };
}

/// Handles one thread keeps (an eval opens a repository per case).
const MAX_HANDLES: usize = 16;
/// Decoded objects each handle keeps: the trees of a repository's recent
/// base commits, read again by every pull request against them.
const OBJECT_CACHE_BYTES: usize = 8 << 20;

/// One local repository, opened once: refs are read from disk on every
/// call and missing objects trigger a re-scan of the object store, so
/// commits added after opening (a fetch, an eval case) are seen.
#[derive(Clone)]
pub struct LocalGit {
    root: PathBuf,
    repo: std::sync::Arc<gix::ThreadSafeRepository>,
}

impl std::fmt::Debug for LocalGit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalGit").field("root", &self.root).finish()
    }
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
        let repo = gix::ThreadSafeRepository::open(root)
            .map_err(|e| ScmError::Invalid(format!("cannot open the git repository {}: {e}", root.display())))?;
        Ok(LocalGit {
            root: root.to_path_buf(),
            repo: std::sync::Arc::new(repo),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs `read` on a thread-local handle off the async runtime (gitoxide
    /// is blocking; object reads of a large change take milliseconds).
    async fn with_repo<T: Send + 'static>(
        &self,
        read: impl FnOnce(&gix::Repository) -> Result<T, ScmError> + Send + 'static,
    ) -> Result<T, ScmError> {
        let (shared, root) = (self.repo.clone(), self.root.clone());
        tokio::task::spawn_blocking(move || {
            HANDLES.with(|handles| {
                let mut handles = handles.borrow_mut();
                if handles.len() >= MAX_HANDLES && !handles.contains_key(&root) {
                    handles.clear();
                }
                let repo = handles.entry(root).or_insert_with(|| {
                    let mut repo = shared.to_thread_local();
                    repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
                    repo
                });
                read(repo)
            })
        })
        .await
        .map_err(|e| ScmError::Unavailable(format!("git reader task failed: {e}")))?
    }

    /// The full commit id of a ref.
    pub async fn resolve(&self, r: &str) -> Result<String, ScmError> {
        validate_ref(r)?;
        let r = r.to_string();
        self.with_repo(move |repo| gix_diff::resolve(repo, &r)).await
    }

    /// The change from `base` to `head` as per-file patches (what
    /// `git diff -M base head` shows).
    pub async fn diff(&self, base: &str, head: &str) -> Result<Change, ScmError> {
        validate_ref(base)?;
        validate_ref(head)?;
        let (base, head) = (base.to_string(), head.to_string());
        self.with_repo(move |repo| {
            let base_sha = gix_diff::resolve(repo, &base)?;
            let head_sha = gix_diff::resolve(repo, &head)?;
            let files = gix_diff::diff(repo, &base_sha, &head_sha)?;
            Ok(Change {
                base_sha,
                head_sha,
                files,
            })
        })
        .await
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
/// text (the shape GitHub's pull-request files API returns): what the
/// in-process reader is checked against.
#[cfg(test)]
fn split_patches(text: &str) -> Vec<FileChange> {
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

    /// A scratch repository driven through the git CLI.
    struct Scratch(tempfile::TempDir);

    impl Scratch {
        fn new() -> Scratch {
            let s = Scratch(tempfile::tempdir().unwrap());
            s.git(&["init", "-q", "-b", "main"]);
            s
        }
        fn git(&self, args: &[&str]) -> String {
            let out = std::process::Command::new("git")
                .arg("-C")
                .arg(self.0.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@e", "-c", "core.autocrlf=false"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
        fn write(&self, path: &str, data: &[u8]) {
            let p = self.0.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, data).unwrap();
        }
        fn commit(&self, msg: &str) -> String {
            self.git(&["add", "-A"]);
            self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
            self.git(&["rev-parse", "HEAD"]).trim().to_string()
        }
        /// What `git diff -M` prints for `base..head`, split per file.
        fn cli_diff(&self, base: &str, head: &str) -> Vec<FileChange> {
            split_patches(&self.git(&["diff", "--no-color", "--no-ext-diff", "-M", base, head]))
        }
    }

    #[tokio::test]
    async fn in_process_diff_matches_the_git_cli() {
        let repo = Scratch::new();
        let body: String = (1..=40)
            .map(|i| format!("def f{i}(x):\n    return x + {i}\n\n"))
            .collect();
        repo.write("shop/a.py", body.as_bytes());
        repo.write("shop/moved.py", body.replace("x +", "x -").as_bytes());
        repo.write("gone.txt", b"bye\n");
        repo.write("logo.png", b"\x89PNG\0\0binary");
        repo.write("tail.txt", b"one\ntwo");
        let base = repo.commit("base");
        // Modified in two places, renamed with an edit, deleted, added,
        // binary changed, a last line without a newline edited, a new empty file.
        repo.write(
            "shop/a.py",
            body.replace("x + 3\n", "x * 3\n")
                .replace("x + 37\n", "x + 37\n    # done\n")
                .as_bytes(),
        );
        std::fs::remove_file(repo.0.path().join("shop/moved.py")).unwrap();
        repo.write(
            "shop/renamed.py",
            body.replace("x +", "x -").replace("x - 20", "x - 21").as_bytes(),
        );
        std::fs::remove_file(repo.0.path().join("gone.txt")).unwrap();
        repo.write("new/b.py", b"import os\nprint(os.getcwd())\n");
        repo.write("logo.png", b"\x89PNG\0\0other");
        repo.write("tail.txt", b"one\nthree");
        repo.write("empty.txt", b"");
        let head = repo.commit("head");

        let git = LocalGit::open(repo.0.path()).unwrap();
        let ours = git.diff(&base, &head).await.unwrap();
        assert_eq!(
            (ours.base_sha.as_str(), ours.head_sha.as_str()),
            (base.as_str(), head.as_str())
        );
        let cli = repo.cli_diff(&base, &head);
        assert_eq!(ours.files, cli);
        let renamed = ours.files.iter().find(|f| f.path == "shop/renamed.py").unwrap();
        assert_eq!(renamed.old_path.as_deref(), Some("shop/moved.py"));
        assert!(ours.files.iter().any(|f| f.path == "logo.png" && f.patch.is_none()));
        assert!(
            ours.files
                .iter()
                .any(|f| f.path == "tail.txt" && f.patch.as_deref().unwrap().contains("\\ No newline at end of file"))
        );
        // Refs resolve as git resolves them.
        assert_eq!(git.resolve("main~1").await.unwrap(), base);
        assert_eq!(git.resolve("main").await.unwrap(), head);
    }

    /// Random line edits of one file, 200 commits, each diffed both ways:
    /// hunks, context and line numbers must be what git prints.
    #[tokio::test]
    async fn random_edits_diff_like_git() {
        let repo = Scratch::new();
        let mut lines: Vec<String> = (0..60).map(|i| format!("line {}", i % 17)).collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        repo.write("f.txt", (lines.join("\n") + "\n").as_bytes());
        let mut prev = repo.commit("0");
        let git = LocalGit::open(repo.0.path()).unwrap();
        for round in 0..200 {
            for _ in 0..1 + next(4) {
                let at = next(lines.len().max(1));
                match next(3) {
                    0 if lines.len() > 5 => {
                        lines.remove(at);
                    }
                    1 => lines.insert(at, format!("new {} {round}", next(5))),
                    _ => lines[at] = format!("line {}", next(17)),
                }
            }
            repo.write("f.txt", (lines.join("\n") + "\n").as_bytes());
            let head = repo.commit(&round.to_string());
            let ours = git.diff(&prev, &head).await.unwrap();
            assert_eq!(ours.files, repo.cli_diff(&prev, &head), "round {round}");
            prev = head;
        }
    }
}
