//! Reading a project through GitLab's repository API, for services that
//! have no clone: one file by the raw files API, a whole tree by the
//! (recursive, paged) tree API and raw blobs — one call per file, so a large
//! project is better served by a clone.

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use reqwest::Method;
use serde::Deserialize;

use super::GitLab;
use super::client::{GitLabError, project_id};
use crate::{MAX_FILE_BYTES, ScmError, TreeSource, is_commit_id, percent_encode, validate_path, validate_ref};

/// Blobs fetched at once while reading a tree.
const BLOB_CONCURRENCY: usize = 8;
/// Tree pages read (100 entries each).
const MAX_TREE_PAGES: u32 = 500;

#[derive(Deserialize)]
struct TreeEntry {
    id: String,
    path: String,
    #[serde(rename = "type")]
    kind: String,
    mode: String,
}

/// Text, or `None` for binary and oversized content (not reviewed code).
fn text(bytes: &[u8]) -> Option<String> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return None;
    }
    String::from_utf8(bytes.to_vec()).ok().filter(|s| !s.contains('\0'))
}

#[async_trait]
impl TreeSource for GitLab {
    async fn resolve(&self, repo: &str, git_ref: &str) -> Result<String, ScmError> {
        quorum_core::job::validate_project_path(repo).map_err(ScmError::Invalid)?;
        validate_ref(git_ref)?;
        #[derive(Deserialize)]
        struct Commit {
            id: String,
        }
        let c: Commit = self
            .call(
                Method::GET,
                &format!(
                    "/projects/{}/repository/commits/{}",
                    project_id(repo),
                    percent_encode(git_ref, false)
                ),
                None,
            )
            .await?
            .json()?;
        if !is_commit_id(&c.id) {
            return Err(ScmError::Invalid(format!(
                "GitLab resolved {git_ref} to `{}`, not a commit id",
                c.id
            )));
        }
        Ok(c.id)
    }

    async fn read_tree(&self, repo: &str, commit: &str) -> Result<Vec<(String, String)>, ScmError> {
        let commit = self.resolve(repo, commit).await?;
        let entries: Vec<TreeEntry> = self
            .all_pages(
                &format!(
                    "/projects/{}/repository/tree?recursive=true&ref={commit}",
                    project_id(repo)
                ),
                MAX_TREE_PAGES,
            )
            .await?;
        // Regular files only (no symlinks 120000, no submodules 160000).
        let wanted: Vec<TreeEntry> = entries
            .into_iter()
            .filter(|e| e.kind == "blob" && (e.mode == "100644" || e.mode == "100755"))
            .filter(|e| validate_path(&e.path).is_ok() && e.id.chars().all(|c| c.is_ascii_hexdigit()))
            .collect();
        let mut files: Vec<(String, String)> = futures::stream::iter(wanted)
            .map(|e| async move {
                let resp = self
                    .call(
                        Method::GET,
                        &format!("/projects/{}/repository/blobs/{}/raw", project_id(repo), e.id),
                        None,
                    )
                    .await?;
                Ok::<_, ScmError>(text(&resp.body).map(|t| (e.path, t)))
            })
            .buffer_unordered(BLOB_CONCURRENCY)
            .try_filter_map(|f| async move { Ok(f) })
            .try_collect()
            .await?;
        files.sort();
        Ok(files)
    }

    async fn read_file(&self, repo: &str, commit: &str, path: &str) -> Result<Option<String>, ScmError> {
        validate_path(path)?;
        let commit = self.resolve(repo, commit).await?;
        match self
            .call(
                Method::GET,
                &format!(
                    "/projects/{}/repository/files/{}/raw?ref={commit}",
                    project_id(repo),
                    percent_encode(path, false)
                ),
                None,
            )
            .await
        {
            Ok(resp) => Ok(text(&resp.body)),
            Err(GitLabError::Status { status: 404, .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}
