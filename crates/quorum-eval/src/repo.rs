//! A temporary git repository per case: base commit = the fixture, head
//! commit = the fixture with the case's edits.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::case::{Case, CaseError};

/// A case's repository; deleted on drop.
pub struct CaseRepo {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub base: String,
    pub head: String,
}

/// Runs git in `dir` with a fixed identity; the error carries its stderr.
pub fn git(dir: &Path, args: &[&str]) -> std::io::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=quorum-eval",
            "-c",
            "user.email=eval@quorum.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Copies `fixture` (without `cases/`, which holds the answers, and without
/// VCS or cache directories) into a new repository, commits it as the base,
/// applies `case` and commits the head.
pub fn build_case_repo(fixture: &Path, case: &Case) -> Result<CaseRepo, CaseError> {
    let io = |source: std::io::Error| CaseError::Io {
        path: fixture.to_path_buf(),
        source,
    };
    let dir = tempfile::tempdir().map_err(io)?;
    let path = dir.path().join("repo");
    copy_tree(fixture, &path, true).map_err(io)?;
    git(&path, &["init", "-q", "-b", "main"]).map_err(io)?;
    git(&path, &["add", "-A"]).map_err(io)?;
    git(&path, &["commit", "-q", "--allow-empty", "-m", "base"]).map_err(io)?;
    let base = git(&path, &["rev-parse", "HEAD"]).map_err(io)?;
    case.apply(&path)?;
    git(&path, &["commit", "-q", "--allow-empty", "-am", &case.title]).map_err(io)?;
    let head = git(&path, &["rev-parse", "HEAD"]).map_err(io)?;
    Ok(CaseRepo {
        _dir: dir,
        path,
        base,
        head,
    })
}

fn copy_tree(from: &Path, to: &Path, top: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let name_s = name.to_string_lossy();
        if matches!(name_s.as_ref(), ".git" | "__pycache__" | ".pytest_cache") || (top && name_s == "cases") {
            continue;
        }
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_tree(&entry.path(), &to.join(&name), false)?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::load_case;

    #[test]
    fn builds_base_and_head_without_the_answers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture");
        let case = load_case(&root.join("cases/01-sql-fstring-email-lookup.json")).unwrap();
        let repo = build_case_repo(&root, &case).unwrap();
        assert_ne!(repo.base, repo.head);
        assert!(
            !repo.path.join("cases").exists(),
            "cases must not be visible to the reviewer"
        );
        let diff = git(&repo.path, &["diff", "--stat", &repo.base, &repo.head]).unwrap();
        assert!(diff.contains(&case.edits[0].file), "{diff}");
    }
}
