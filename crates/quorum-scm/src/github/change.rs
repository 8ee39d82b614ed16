//! Reading a pull request: its metadata, its changed files (every page, up
//! to GitHub's 3,000), and who may ask for a review.

use async_trait::async_trait;
use http::Method;
use quorum_core::{FileChange, FileStatus};
use serde::Deserialize;

use super::GitHub;
use crate::{Change, ChangeSource, PullRequestInfo, ScmError};

/// GitHub lists at most this many files of a pull request.
pub const MAX_PR_FILES: usize = 3000;
const PER_PAGE: usize = 100;

#[derive(Deserialize)]
struct PrFile {
    filename: String,
    status: String,
    #[serde(default)]
    patch: Option<String>,
    #[serde(default)]
    previous_filename: Option<String>,
    #[serde(default)]
    changes: u64,
}

/// Why a file has no patch on GitHub: binary, or a diff too large to show.
fn no_patch_reason(f: &PrFile) -> String {
    if f.changes == 0 {
        "GitHub sent no patch (binary file)".into()
    } else {
        format!(
            "GitHub sent no patch for {} changed lines (binary or too large)",
            f.changes
        )
    }
}

fn to_change(f: PrFile) -> Result<Option<FileChange>, ScmError> {
    // The path is data here; every read of it goes through `validate_path`.
    let status = match f.status.as_str() {
        "added" | "copied" => FileStatus::Added,
        "removed" => FileStatus::Removed,
        "renamed" => FileStatus::Renamed,
        "modified" | "changed" => FileStatus::Modified,
        // Listed but unchanged (a mode change): nothing to review.
        "unchanged" => return Ok(None),
        other => {
            return Err(ScmError::Invalid(format!(
                "GitHub lists {} with status `{other}`, which its API does not describe",
                f.filename
            )));
        }
    };
    let omitted = f.patch.is_none().then(|| no_patch_reason(&f));
    Ok(Some(FileChange {
        path: f.filename,
        old_path: f.previous_filename,
        status,
        patch: f.patch,
        omitted,
    }))
}

impl GitHub {
    /// Every changed file of PR `number`, page by page.
    pub async fn pull_request_files(&self, repo: &str, number: u64) -> Result<Vec<FileChange>, ScmError> {
        let mut files = Vec::new();
        let mut listed = 0usize;
        for page in 1.. {
            let resp = self
                .call(
                    repo,
                    Method::GET,
                    &format!("/repos/{repo}/pulls/{number}/files?per_page={PER_PAGE}&page={page}"),
                    None,
                )
                .await?;
            let entries: Vec<PrFile> = resp.json()?;
            let n = entries.len();
            listed += n;
            for f in entries {
                if let Some(c) = to_change(f)? {
                    files.push(c);
                }
            }
            if !resp.has_next_page() || n == 0 || listed >= MAX_PR_FILES {
                break;
            }
        }
        Ok(files)
    }
}

#[async_trait]
impl ChangeSource for GitHub {
    async fn fetch_change(&self, repo: &str, number: u64, base: &str, head: &str) -> Result<Change, ScmError> {
        quorum_core::job::validate_repo_name(repo).map_err(ScmError::Invalid)?;
        let pr = self.pull_request(repo, number).await?;
        if pr.head_sha != head {
            // The files GitHub lists are the PR's *current* diff; reviewing
            // them against an older head would misplace every comment. The
            // newer push has its own delivery on the way.
            tracing::info!(repo, number, requested = head, current = %pr.head_sha, "the PR moved on; reviewing its current head");
        }
        let _ = base;
        let files = self.pull_request_files(repo, number).await?;
        Ok(Change {
            base_sha: pr.base_sha,
            head_sha: pr.head_sha,
            files,
        })
    }

    async fn pull_request(&self, repo: &str, number: u64) -> Result<PullRequestInfo, ScmError> {
        quorum_core::job::validate_repo_name(repo).map_err(ScmError::Invalid)?;
        let pr: super::pull::PullRequest = self
            .call(repo, Method::GET, &format!("/repos/{repo}/pulls/{number}"), None)
            .await?
            .json()?;
        pr.into_info()
            .map_err(|e| ScmError::Invalid(format!("GitHub's {repo}#{number} {e}")))
    }

    async fn can_write(&self, repo: &str, user: &str) -> Result<bool, ScmError> {
        quorum_core::job::validate_repo_name(repo).map_err(ScmError::Invalid)?;
        if user.is_empty()
            || !user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '[' || c == ']')
        {
            return Ok(false);
        }
        #[derive(Deserialize)]
        struct Permission {
            permission: String,
        }
        match self
            .call(
                repo,
                Method::GET,
                &format!("/repos/{repo}/collaborators/{user}/permission"),
                None,
            )
            .await
        {
            Ok(r) => Ok(matches!(
                r.json::<Permission>()?.permission.as_str(),
                "admin" | "maintain" | "write"
            )),
            // Not a collaborator at all.
            Err(e) if e.status() == Some(404) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}
