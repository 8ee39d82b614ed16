//! Uncommitted changes of a local checkout as a commit, so they can be
//! reviewed and impact-analysed like any range (`HEAD..snapshot`).
//!
//! The snapshot is a commit object whose parent is HEAD; no ref, no index
//! and no file of the working tree is touched: git writes the tree through
//! a *copy* of the index (`GIT_INDEX_FILE`) and `commit-tree` creates an
//! unreferenced commit, which `git gc` removes in time. This uses the git
//! CLI on purpose: staging the working tree (`add -A` with `.gitignore`,
//! filters, sparse checkouts) and applying a patch are git's own rules,
//! which a re-implementation would get subtly wrong.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::ScmError;

/// Which uncommitted changes to take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Snapshot {
    /// What `git diff --cached` shows: the index.
    Staged,
    /// Everything not committed: staged, unstaged and new files that
    /// `.gitignore` does not exclude (what `git add -A` would stage).
    Worktree,
    /// A unified diff (`git diff` output), applied on HEAD.
    Patch(String),
}

/// The fixed identity of snapshot commits (no user configuration needed).
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "quorum"),
    ("GIT_AUTHOR_EMAIL", "quorum@localhost"),
    ("GIT_COMMITTER_NAME", "quorum"),
    ("GIT_COMMITTER_EMAIL", "quorum@localhost"),
];

/// Most bytes of a patch a snapshot accepts.
pub const MAX_PATCH_BYTES: usize = 4 << 20;

/// The commit holding `what` on top of HEAD of the work tree at `root`,
/// or an `Invalid` error saying why there is none (no changes, a patch that
/// does not apply, not a work tree).
pub fn snapshot(root: &Path, what: &Snapshot) -> Result<String, ScmError> {
    let head = git(root, &["rev-parse", "--verify", "HEAD^{commit}"], &[], None)
        .map_err(|e| ScmError::Invalid(format!("{} has no HEAD commit to compare with: {e}", root.display())))?;
    let index = git(root, &["rev-parse", "--git-path", "index"], &[], None).map_err(ScmError::Unavailable)?;
    let index = root.join(index);
    let tmp = tempfile::Builder::new()
        .prefix("quorum-index-")
        .tempfile()
        .map_err(|e| ScmError::Unavailable(format!("a temporary index: {e}")))?;
    let tmp_path = tmp.path().to_string_lossy().into_owned();
    let env = [("GIT_INDEX_FILE", tmp_path.as_str())];
    match what {
        Snapshot::Staged | Snapshot::Worktree => {
            if index.is_file() {
                copy_index(&index, tmp.path())
                    .map_err(|e| ScmError::Unavailable(format!("copying the index {}: {e}", index.display())))?;
            } else {
                git(root, &["read-tree", "HEAD"], &env, None).map_err(ScmError::Unavailable)?;
            }
            if *what == Snapshot::Worktree {
                git(root, &["add", "-A"], &env, None).map_err(ScmError::Unavailable)?;
            }
        }
        Snapshot::Patch(patch) => {
            if patch.trim().is_empty() {
                return Err(ScmError::Invalid("the diff is empty".into()));
            }
            if patch.len() > MAX_PATCH_BYTES {
                return Err(ScmError::Invalid(format!(
                    "the diff is {} bytes; at most {MAX_PATCH_BYTES} are accepted",
                    patch.len()
                )));
            }
            git(root, &["read-tree", "HEAD"], &env, None).map_err(ScmError::Unavailable)?;
            git(
                root,
                &["apply", "--cached", "--recount", "-"],
                &env,
                Some(patch.as_bytes()),
            )
            .map_err(|e| ScmError::Invalid(format!("the diff does not apply on HEAD: {e}")))?;
        }
    }
    let tree = git(root, &["write-tree"], &env, None).map_err(ScmError::Unavailable)?;
    let head_tree = git(root, &["rev-parse", "HEAD^{tree}"], &[], None).map_err(ScmError::Unavailable)?;
    if tree == head_tree {
        let what = match what {
            Snapshot::Staged => "nothing is staged",
            Snapshot::Worktree => "the working tree has no uncommitted changes",
            Snapshot::Patch(_) => "the diff changes nothing",
        };
        return Err(ScmError::Invalid(format!(
            "{what} (compared with HEAD {})",
            &head[..12]
        )));
    }
    let mut env = env.to_vec();
    env.extend(IDENTITY);
    git(
        root,
        &["commit-tree", &tree, "-p", &head, "-m", "quorum: uncommitted changes"],
        &env,
        None,
    )
    .map_err(ScmError::Unavailable)
}

/// Copies the index keeping its modification time: git trusts a file's
/// cached stat data only when the file is older than the index ("racy git"),
/// so a copy stamped *now* would make a file edited in the same second as
/// the last `git add` look unchanged.
fn copy_index(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to)?;
    let modified = std::fs::metadata(from)?.modified()?;
    std::fs::OpenOptions::new().write(true).open(to)?.set_modified(modified)
}

/// Runs git in `root`; its trimmed stdout, or its stderr as the error.
fn git(root: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Result<String, String> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(root).args(args);
    // Never let the user's hooks, pager or prompts run inside a tool call.
    cmd.env("GIT_TERMINAL_PROMPT", "0").env("GIT_PAGER", "cat");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(bytes)
            .map_err(|e| format!("writing to git {}: {e}", args[0]))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for git {}: {e}", args[0]))?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let mut env = IDENTITY.to_vec();
            env.push(("GIT_CONFIG_GLOBAL", "/dev/null"));
            git(dir.path(), args, &env, None).unwrap()
        };
        run(&["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        run(&["add", "-A"]);
        run(&["commit", "-q", "-m", "base"]);
        dir
    }

    fn show(root: &Path, commit: &str, path: &str) -> Result<String, String> {
        git(root, &["show", &format!("{commit}:{path}")], &[], None)
    }

    #[test]
    fn worktree_snapshots_take_new_and_changed_files_but_not_ignored_ones_and_touch_nothing() {
        let dir = repo();
        let root = dir.path();
        std::fs::write(root.join("a.py"), "def f():\n    return 2\n").unwrap();
        std::fs::write(root.join("b.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("debug.log"), "noise\n").unwrap();
        let status_before = git(root, &["status", "--porcelain"], &[], None).unwrap();
        let commit = snapshot(root, &Snapshot::Worktree).unwrap();
        assert_eq!(show(root, &commit, "a.py").unwrap(), "def f():\n    return 2");
        assert_eq!(show(root, &commit, "b.py").unwrap(), "x = 1");
        assert!(show(root, &commit, "debug.log").is_err(), "ignored files stay out");
        let parent = git(root, &["rev-parse", &format!("{commit}^")], &[], None).unwrap();
        assert_eq!(parent, git(root, &["rev-parse", "HEAD"], &[], None).unwrap());
        // Nothing was staged, committed or moved.
        assert_eq!(git(root, &["status", "--porcelain"], &[], None).unwrap(), status_before);
        assert_eq!(git(root, &["rev-list", "--count", "HEAD"], &[], None).unwrap(), "1");
    }

    #[test]
    fn staged_snapshots_take_only_the_index() {
        let dir = repo();
        let root = dir.path();
        assert!(
            snapshot(root, &Snapshot::Staged)
                .unwrap_err()
                .to_string()
                .contains("nothing is staged")
        );
        std::fs::write(root.join("a.py"), "def f():\n    return 2\n").unwrap();
        git(root, &["add", "a.py"], &[], None).unwrap();
        std::fs::write(root.join("a.py"), "def f():\n    return 3\n").unwrap();
        let commit = snapshot(root, &Snapshot::Staged).unwrap();
        assert_eq!(show(root, &commit, "a.py").unwrap(), "def f():\n    return 2");
    }

    #[test]
    fn a_patch_is_applied_on_head_or_refused_with_gits_reason() {
        let dir = repo();
        let root = dir.path();
        let patch = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 5\n";
        let commit = snapshot(root, &Snapshot::Patch(patch.into())).unwrap();
        assert_eq!(show(root, &commit, "a.py").unwrap(), "def f():\n    return 5");
        let stale = patch.replace("return 1", "return 9");
        let err = snapshot(root, &Snapshot::Patch(stale)).unwrap_err().to_string();
        assert!(err.contains("does not apply on HEAD"), "{err}");
        let err = snapshot(root, &Snapshot::Patch("  \n".into())).unwrap_err().to_string();
        assert!(err.contains("empty"), "{err}");
        let err = snapshot(root, &Snapshot::Worktree).unwrap_err().to_string();
        assert!(err.contains("no uncommitted changes"), "{err}");
    }
}
