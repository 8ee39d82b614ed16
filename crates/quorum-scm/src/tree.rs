//! Reading a repository's files at a commit: the indexer builds the graph
//! from it, agents read the PR head's changed files and `.quorum.yml`.
//! Read-only: reading is not writing to the SCM.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::{LocalGit, LocalRepos, ScmError, validate_ref};

/// Files larger than this are skipped: generated or vendored, not reviewed code.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A repository's tree at a commit.
#[async_trait]
pub trait TreeSource: Send + Sync + 'static {
    /// The full commit id of `git_ref` in `repo`.
    async fn resolve(&self, repo: &str, git_ref: &str) -> Result<String, ScmError>;
    /// Every regular text file at `commit` (symlinks, submodules, binaries and
    /// files over [`MAX_FILE_BYTES`] skipped), sorted by path.
    async fn read_tree(&self, repo: &str, commit: &str) -> Result<Vec<(String, String)>, ScmError>;
    /// One file at `commit`; `None` when it does not exist there.
    async fn read_file(&self, repo: &str, commit: &str, path: &str) -> Result<Option<String>, ScmError>;
}

/// A repository-relative path that cannot leave the repository or be read
/// as an option.
pub fn validate_path(path: &str) -> Result<(), ScmError> {
    let bad = path.is_empty()
        || path.starts_with(['/', '-'])
        || path.contains(['\\', '\0', ':'])
        || path.split('/').any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(ScmError::Invalid(format!(
            "path `{path}` is not a plain relative path inside the repository"
        )));
    }
    Ok(())
}

impl LocalGit {
    async fn output(&self, args: &[&str]) -> Result<std::process::Output, ScmError> {
        Command::new("git")
            .arg("-C")
            .arg(self.root())
            .args(args)
            .output()
            .await
            .map_err(|e| ScmError::Unavailable(format!("cannot run git: {e}")))
    }

    /// Regular files at `commit`: (path, blob id, size).
    async fn ls_tree(&self, commit: &str) -> Result<Vec<(String, String, u64)>, ScmError> {
        validate_ref(commit)?;
        let out = self
            .output(&[
                "ls-tree",
                "-r",
                "-z",
                "--long",
                "--full-tree",
                "--end-of-options",
                commit,
            ])
            .await?;
        if !out.status.success() {
            return Err(ScmError::Invalid(format!(
                "git ls-tree {commit}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let mut files = vec![];
        for entry in out.stdout.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            // `<mode> SP <type> SP <object> SP+ <size> TAB <path>`
            let Some((meta, path)) = entry.split_once('\t') else {
                continue;
            };
            let mut m = meta.split_whitespace();
            let (Some(mode), Some(kind), Some(id), Some(size)) = (m.next(), m.next(), m.next(), m.next()) else {
                continue;
            };
            // 120000 = symlink, 160000 = submodule: never followed.
            if kind != "blob" || !(mode == "100644" || mode == "100755") {
                continue;
            }
            let size: u64 = size.parse().unwrap_or(u64::MAX);
            if size <= MAX_FILE_BYTES {
                files.push((path.to_string(), id.to_string(), size));
            }
        }
        Ok(files)
    }

    /// Reads many blobs through one `git cat-file --batch`.
    async fn cat_blobs(&self, ids: &[String]) -> Result<Vec<Vec<u8>>, ScmError> {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(self.root())
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| ScmError::Unavailable(format!("cannot run git: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped");
        let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let writer = tokio::spawn(async move {
            let r = stdin.write_all(input.as_bytes()).await;
            drop(stdin);
            r
        });
        let mut raw = vec![];
        child
            .stdout
            .take()
            .expect("piped")
            .read_to_end(&mut raw)
            .await
            .map_err(|e| ScmError::Unavailable(format!("git cat-file: {e}")))?;
        let _ = writer.await;
        let _ = child.wait().await;
        let mut out = vec![];
        let mut rest = raw.as_slice();
        for _ in ids {
            // `<id> SP blob SP <size> LF <content> LF`
            let nl = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| ScmError::Unavailable("git cat-file: truncated output".into()))?;
            let header = String::from_utf8_lossy(&rest[..nl]).to_string();
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| ScmError::Unavailable(format!("git cat-file: bad header `{header}`")))?;
            let start = nl + 1;
            if rest.len() < start + size {
                return Err(ScmError::Unavailable("git cat-file: truncated blob".into()));
            }
            out.push(rest[start..start + size].to_vec());
            rest = &rest[(start + size + 1).min(rest.len())..];
        }
        Ok(out)
    }
}

#[async_trait]
impl TreeSource for LocalGit {
    async fn resolve(&self, _repo: &str, git_ref: &str) -> Result<String, ScmError> {
        LocalGit::resolve(self, git_ref).await
    }

    async fn read_tree(&self, _repo: &str, commit: &str) -> Result<Vec<(String, String)>, ScmError> {
        let files = self.ls_tree(commit).await?;
        let ids: Vec<String> = files.iter().map(|(_, id, _)| id.clone()).collect();
        let blobs = self.cat_blobs(&ids).await?;
        let mut out: Vec<(String, String)> = files
            .into_iter()
            .zip(blobs)
            .filter(|(_, b)| !b.contains(&0))
            .filter_map(|((path, _, _), b)| String::from_utf8(b).ok().map(|t| (path, t)))
            .collect();
        out.sort();
        Ok(out)
    }

    async fn read_file(&self, _repo: &str, commit: &str, path: &str) -> Result<Option<String>, ScmError> {
        validate_ref(commit)?;
        validate_path(path)?;
        let spec = format!("{commit}:{path}");
        let out = self.output(&["cat-file", "blob", "--end-of-options", &spec]).await?;
        if !out.status.success() {
            return Ok(None);
        }
        Ok(String::from_utf8(out.stdout).ok())
    }
}

#[async_trait]
impl TreeSource for LocalRepos {
    async fn resolve(&self, repo: &str, git_ref: &str) -> Result<String, ScmError> {
        TreeSource::resolve(&self.get(repo)?, repo, git_ref).await
    }

    async fn read_tree(&self, repo: &str, commit: &str) -> Result<Vec<(String, String)>, ScmError> {
        self.get(repo)?.read_tree(repo, commit).await
    }

    async fn read_file(&self, repo: &str, commit: &str, path: &str) -> Result<Option<String>, ScmError> {
        self.get(repo)?.read_file(repo, commit, path).await
    }
}

/// Directories an on-disk walk never enters.
const SKIP_DIRS: &[&str] = &[".git", "node_modules", "target", "__pycache__", ".venv", "venv", ".tox"];

/// Every regular text file under `root` (no symlinks followed, hidden and
/// build directories skipped), as sorted (relative path, content) pairs:
/// `quorum index DIR` on a directory that is not a repository.
pub fn read_dir_tree(root: &Path) -> std::io::Result<Vec<(String, String)>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let ty = entry.file_type()?;
            let name = entry.file_name().to_string_lossy().to_string();
            if ty.is_symlink() {
                continue;
            }
            if ty.is_dir() {
                if !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with('.') {
                    stack.push(entry.path());
                }
                continue;
            }
            if !ty.is_file() || entry.metadata()?.len() > MAX_FILE_BYTES {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            if text.contains('\0') {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, text);
        }
    }
    Ok(out.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_validated() {
        for bad in ["", "/etc/passwd", "../x", "a/../b", "-rf", "a//b", "C:x", "a\\b"] {
            assert!(validate_path(bad).is_err(), "{bad:?}");
        }
        assert!(validate_path("shop/a.py").is_ok());
    }

    use quorum_testkit::git;

    #[tokio::test]
    async fn reads_a_tree_at_a_commit_without_following_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main"]);
        std::fs::create_dir(d.join("pkg")).unwrap();
        std::fs::write(d.join("pkg/a.py"), "x = 1\n").unwrap();
        std::fs::write(d.join("bin.dat"), [0u8, 1, 2]).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.join("link")).unwrap();
        git(d, &["add", "-A"]);
        git(
            d,
            &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"],
        );
        std::fs::write(d.join("pkg/a.py"), "x = 2\n").unwrap();
        git(
            d,
            &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two"],
        );
        let repo = LocalGit::open(d).unwrap();
        let first = TreeSource::resolve(&repo, "o/r", "HEAD~1").await.unwrap();
        let tree = repo.read_tree("o/r", &first).await.unwrap();
        assert_eq!(tree, vec![("pkg/a.py".to_string(), "x = 1\n".to_string())]);
        assert_eq!(
            repo.read_file("o/r", "HEAD", "pkg/a.py").await.unwrap().as_deref(),
            Some("x = 2\n")
        );
        assert_eq!(repo.read_file("o/r", "HEAD", "pkg/none.py").await.unwrap(), None);
        assert!(repo.read_file("o/r", "HEAD", "../etc/passwd").await.is_err());
        assert!(repo.read_tree("o/r", "--output=x").await.is_err());
        let on_disk = read_dir_tree(d).unwrap();
        assert_eq!(on_disk, vec![("pkg/a.py".to_string(), "x = 2\n".to_string())]);
    }
}
