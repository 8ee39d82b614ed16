//! Reading a repository through the API, for services that have no clone:
//! one file by the contents API (what agents read), a whole tree by the
//! git trees and blobs APIs (what the indexer reads: one call per file, so
//! a large repository is better served by `QUORUM_CLONE_BASE_URL`).

use async_trait::async_trait;
use base64::Engine as _;
use futures::{StreamExt, TryStreamExt};
use http::Method;
use serde::Deserialize;

use super::GitHub;
use crate::{MAX_FILE_BYTES, ScmError, TreeSource, is_commit_id, validate_path, validate_ref};

/// Blobs fetched at once while reading a tree.
const BLOB_CONCURRENCY: usize = 8;

/// Percent-encodes a repository path for a URL, keeping its slashes.
pub(super) fn encode_path(path: &str) -> String {
    crate::percent_encode(path, true)
}

fn decode(content: &str, what: &str) -> Result<Option<String>, ScmError> {
    let clean: String = content.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| ScmError::Invalid(format!("GitHub's content of {what} is not base64: {e}")))?;
    // Binary files are not reviewed code.
    Ok(String::from_utf8(bytes).ok().filter(|s| !s.contains('\0')))
}

#[derive(Deserialize)]
struct Contents {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    size: u64,
    #[serde(default)]
    encoding: Option<String>,
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Tree {
    tree: Vec<TreeEntry>,
    #[serde(default)]
    truncated: bool,
}

#[derive(Deserialize)]
struct TreeEntry {
    path: String,
    mode: String,
    #[serde(rename = "type")]
    kind: String,
    sha: String,
    #[serde(default)]
    size: Option<u64>,
}

#[derive(Deserialize)]
struct Blob {
    content: String,
    #[serde(default)]
    encoding: String,
}

#[async_trait]
impl TreeSource for GitHub {
    async fn resolve(&self, repo: &str, git_ref: &str) -> Result<String, ScmError> {
        quorum_core::job::validate_repo_name(repo).map_err(ScmError::Invalid)?;
        validate_ref(git_ref)?;
        if is_commit_id(git_ref) {
            return Ok(git_ref.to_ascii_lowercase());
        }
        #[derive(Deserialize)]
        struct Commit {
            sha: String,
        }
        let c: Commit = self
            .call(
                repo,
                Method::GET,
                &format!("/repos/{repo}/commits/{}", encode_path(git_ref)),
                None,
            )
            .await?
            .json()?;
        if !is_commit_id(&c.sha) {
            return Err(ScmError::Invalid(format!(
                "GitHub resolved {git_ref} to `{}`, not a commit id",
                c.sha
            )));
        }
        Ok(c.sha)
    }

    async fn read_tree(&self, repo: &str, commit: &str) -> Result<Vec<(String, String)>, ScmError> {
        let commit = self.resolve(repo, commit).await?;
        let tree: Tree = self
            .call(
                repo,
                Method::GET,
                &format!("/repos/{repo}/git/trees/{commit}?recursive=1"),
                None,
            )
            .await?
            .json()?;
        if tree.truncated {
            return Err(ScmError::Invalid(format!(
                "{repo}@{commit} has more files than GitHub's trees API lists; set QUORUM_CLONE_BASE_URL to read it from a clone"
            )));
        }
        // Regular files only (no symlinks 120000, no submodules 160000).
        let wanted: Vec<TreeEntry> = tree
            .tree
            .into_iter()
            .filter(|e| e.kind == "blob" && (e.mode == "100644" || e.mode == "100755"))
            .filter(|e| e.size.unwrap_or(0) <= MAX_FILE_BYTES && validate_path(&e.path).is_ok())
            .collect();
        let mut files: Vec<(String, String)> = futures::stream::iter(wanted)
            .map(|e| async move {
                let blob: Blob = self
                    .call(repo, Method::GET, &format!("/repos/{repo}/git/blobs/{}", e.sha), None)
                    .await?
                    .json()?;
                let text = if blob.encoding == "base64" {
                    decode(&blob.content, &e.path)?
                } else {
                    Some(blob.content)
                };
                Ok::<_, ScmError>(text.map(|t| (e.path, t)))
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
        let resp = self
            .call(
                repo,
                Method::GET,
                &format!("/repos/{repo}/contents/{}?ref={commit}", encode_path(path)),
                None,
            )
            .await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) if e.status() == Some(404) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        // A directory answers with an array: not a file.
        let Ok(c) = resp.json::<Contents>() else {
            return Ok(None);
        };
        if c.kind != "file" || c.size > MAX_FILE_BYTES {
            return Ok(None);
        }
        match (c.encoding.as_deref(), c.content) {
            (Some("base64"), Some(content)) => decode(&content, path),
            // Over 1 MB GitHub sends `encoding: none` and no content.
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_encoded_for_urls() {
        assert_eq!(encode_path("src/a b#c.py"), "src/a%20b%23c.py");
        assert_eq!(encode_path("feature/x"), "feature/x");
        assert_eq!(decode("eD0x\nCg==", "a").unwrap().as_deref(), Some("x=1\n"));
        assert_eq!(decode("AAE=", "a").unwrap(), None, "binary is not text");
    }
}
