//! The agents' graph tools for one job (F-AG-2): `get_callers` and
//! `find_tests` on the PR head (the base graph with the changed files
//! overlaid), `read_snippet` from the PR head's tree. This is what the
//! model's tool loop calls; every input is validated and every refusal is a message a model can act on.

use std::sync::Arc;

use quorum_core::{FileStatus, ReviewRequest};
use quorum_graph::tools::{self, CallersAnswer, ToolError};
use quorum_graph::{Graph, overlay};

use crate::{ContextError, GraphIndex};

/// The tools bound to one review request.
pub struct JobTools {
    index: Arc<GraphIndex>,
    repo: String,
    head_sha: String,
    head: Arc<Graph>,
}

/// A tool failure: bad input (the model's to fix) or the back-end.
#[derive(Debug, thiserror::Error)]
pub enum ToolFailure {
    #[error(transparent)]
    Input(#[from] ToolError),
    #[error("{0}")]
    Backend(String),
}

impl JobTools {
    /// Loads (or builds) the base graph and overlays the PR head.
    pub async fn for_request(index: Arc<GraphIndex>, req: &ReviewRequest) -> Result<JobTools, ContextError> {
        let repo = req.repo.full_name.clone();
        let (base, _) = index.ensure(&repo, &req.base_sha, None).await?;
        let mut changes = vec![];
        for f in &req.files {
            let content = match f.status {
                FileStatus::Removed => None,
                _ => index.trees().read_file(&repo, &req.head_sha, &f.path).await?,
            };
            changes.push((f.path.clone(), content));
            if let Some(old) = f.old_path.as_ref().filter(|o| **o != f.path) {
                changes.push((old.clone(), None));
            }
        }
        let head = tokio::task::spawn_blocking(move || overlay(&base, &changes).0)
            .await
            .map_err(|e| ContextError::from_join("the graph overlay", e))?;
        Ok(JobTools {
            index,
            repo,
            head_sha: req.head_sha.clone(),
            head: Arc::new(head),
        })
    }

    pub fn get_callers(&self, symbol: &str, hops: u8) -> Result<CallersAnswer, ToolFailure> {
        Ok(tools::get_callers(&self.head, symbol, hops)?)
    }

    pub fn find_tests(&self, symbol: &str) -> Result<Vec<String>, ToolFailure> {
        Ok(tools::find_tests(&self.head, symbol)?)
    }

    /// Lines `start..=end` of `path` at the PR head; never outside the
    /// repository (the path is checked before anything is read, and git
    /// trees do not follow symlinks).
    pub async fn read_snippet(&self, path: &str, start: u32, end: u32) -> Result<String, ToolFailure> {
        tools::check_snippet_request(path, start, end)?;
        let src = self
            .index
            .trees()
            .read_file(&self.repo, &self.head_sha, path)
            .await
            .map_err(|e| ToolFailure::Backend(e.to_string()))?
            .ok_or_else(|| ToolError::NoSuchFile(path.into()))?;
        Ok(tools::number_lines(&src, start, end))
    }
}
