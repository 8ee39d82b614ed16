//! Hybrid retrieval (F-IDX-4): "how does the rest of this codebase do X"
//! and "what do our docs say the rule is".
//!
//! - [`chunk`]: files cut into chunks aligned to the code graph's symbols
//!   (code) or to Markdown headings (docs), tiling each file.
//! - [`sparse`]: BM25 sparse vectors with Qdrant's code tokenizer.
//! - [`embed`]: dense vectors: all-MiniLM-L6-v2 in-process by default, an
//!   OpenAI-compatible endpoint in production.
//! - [`store`]: the [`store::VectorStore`] trait, with two engines — Qdrant
//!   in-process ([`edge::EdgeStore`], `qdrant-edge`) and a Qdrant server
//!   ([`server::ServerStore`], `qdrant-client`).
//! - [`index`]: incremental indexing and hybrid (dense + sparse) search;
//!   [`fusion`]: the two rankings made one, weighing a word match by how
//!   much of the query it holds (the model's `search_code` / `search_docs` are the agent's
//!   `repo_search.rs`, over this crate).
//! - [`reviews`]: the team's past review threads (review memory) as a third
//!   collection, ranked the same way and filtered by who wrote them.

pub mod chunk;
pub mod config;
pub mod edge;
pub mod embed;
pub mod fusion;
pub mod index;
pub mod reviews;
pub mod server;
pub mod skip;
pub mod sparse;
pub mod store;
pub mod testing;

pub use chunk::{Kind, SymbolSpan};
pub use config::{SearchArgs, open_index};
pub use index::{Candidates, Hit, HybridIndex, IndexStats, SearchOptions, SourceFile, format_hits, source_files};

/// What can go wrong, classified for the service runtime.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// Configuration or installation: fatal until fixed.
    #[error("search configuration: {0}")]
    Config(String),
    /// The embedding model or endpoint failed (retryable).
    #[error("embedding: {0}")]
    Embed(String),
    /// The vector store failed (retryable).
    #[error("vector store: {0}")]
    Store(String),
    /// A bad query or request: said to the caller, never retried.
    #[error("invalid search: {0}")]
    Invalid(String),
}

impl SearchError {
    pub fn is_invalid(&self) -> bool {
        matches!(self, SearchError::Invalid(_))
    }
}
