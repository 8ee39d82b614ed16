//! The model agents' `search_code` / `search_docs` over one repository's
//! hybrid index: the agent plugs the search crate into the model's tool
//! box, so neither depends on the other.

use std::sync::Arc;

use async_trait::async_trait;
use quorum_llm::SearchIndex;

use quorum_search::{HybridIndex, Kind, SearchOptions, format_hits};

/// Results per tool call, and lines shown of each.
const TOOL_HITS: usize = 5;
const TOOL_LINES: usize = 12;

/// [`SearchIndex`] for one repository.
pub struct RepoSearch {
    index: Arc<HybridIndex>,
    repo: String,
    available: bool,
}

impl RepoSearch {
    /// `available`: whether the repository has been indexed (a tool with
    /// nothing behind it is not offered to the model).
    pub async fn new(index: Arc<HybridIndex>, repo: &str) -> Self {
        let available = index.has_repo(repo).await.unwrap_or_else(|e| {
            tracing::warn!(repo, error = %e, "search index unavailable");
            false
        });
        RepoSearch {
            index,
            repo: repo.to_string(),
            available,
        }
    }

    async fn run(&self, kind: Kind, query: &str, path_glob: Option<&str>) -> Result<String, String> {
        let mut opts = SearchOptions::new(kind, TOOL_HITS);
        opts.path_glob = path_glob.map(str::to_string);
        let hits = self
            .index
            .search(&self.repo, query, &opts)
            .await
            .map_err(|e| quorum_core::error::chain(&e))?;
        Ok(format_hits(&hits, TOOL_LINES))
    }
}

#[async_trait]
impl SearchIndex for RepoSearch {
    fn available(&self) -> bool {
        self.available
    }
    async fn search_code(&self, query: &str, path_glob: Option<&str>) -> Result<String, String> {
        self.run(Kind::Code, query, path_glob).await
    }
    async fn search_docs(&self, query: &str) -> Result<String, String> {
        self.run(Kind::Docs, query, None).await
    }
}
