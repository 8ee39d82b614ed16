//! The model's tools over one job's code graph and tree: [`JobTools`] for
//! `get_callers`, `find_tests`, `read_snippet`, and the hybrid index (or
//! "not indexed") for `search_code` / `search_docs`.

use std::sync::Arc;

use async_trait::async_trait;
use quorum_context::tools::JobTools;
use quorum_llm::{SearchIndex, ToolBox, ToolCall};

pub struct GraphTools {
    pub tools: JobTools,
    pub search: Arc<dyn SearchIndex>,
}

#[async_trait]
impl ToolBox for GraphTools {
    fn offered(&self) -> Vec<&'static str> {
        let search = self.search.available();
        quorum_llm::tools::TOOL_NAMES
            .into_iter()
            .filter(|t| search || !t.starts_with("search_"))
            .collect()
    }

    async fn call(&self, call: &ToolCall) -> Result<String, String> {
        let json = |v: Result<serde_json::Value, String>| v.map(|v| v.to_string());
        match call {
            ToolCall::GetCallers { symbol, hops } => json(
                self.tools
                    .get_callers(symbol, *hops)
                    .map(|a| serde_json::to_value(a).expect("answer serialises"))
                    .map_err(|e| quorum_core::error::chain(&e)),
            ),
            ToolCall::FindTests { symbol } => {
                let tests = self
                    .tools
                    .find_tests(symbol)
                    .map_err(|e| quorum_core::error::chain(&e))?;
                Ok(if tests.is_empty() {
                    format!("no test reaches `{symbol}`")
                } else {
                    tests.join("\n")
                })
            }
            ToolCall::ReadSnippet { path, start, end } => self
                .tools
                .read_snippet(path, *start, *end)
                .await
                .map_err(|e| quorum_core::error::chain(&e)),
            ToolCall::SearchCode { query, path_glob } => self.search.search_code(query, path_glob.as_deref()).await,
            ToolCall::SearchDocs { query } => self.search.search_docs(query).await,
        }
    }
}
