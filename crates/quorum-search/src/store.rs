//! What a vector store must do for the hybrid index, whichever Qdrant runs
//! it: the embedded engine ([`crate::edge::EdgeStore`]) or a server
//! ([`crate::server::ServerStore`]). Both hold one collection per [`Kind`]
//! with a named dense vector (cosine) and a named sparse vector (IDF
//! modifier), payload indexes on repo, path, kind and language, and answer
//! a hybrid query as prefetch dense + prefetch sparse fused by RRF.

use std::collections::HashMap;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::SearchError;
use crate::chunk::Kind;
use crate::sparse::Sparse;

pub const DENSE: &str = "dense";
pub const SPARSE: &str = "bm25";

/// Payload fields with an index (filters on them are exact and fast); the
/// last two are review threads' ([`ReviewFields`]).
pub const INDEXED_FIELDS: [&str; 6] = ["repo", "path", "kind", "language", "reviewer", "association"];

/// What each point carries besides its vectors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkPayload {
    pub repo: String,
    pub commit: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub language: Option<String>,
    pub kind: Kind,
    /// SHA-256 of the whole file: an unchanged file is not re-embedded.
    pub file_hash: String,
    pub text: String,
    /// A past review thread's filter fields, flattened into the payload
    /// beside the chunk's (only in the `reviews` collection).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewFields>,
}

/// What a point of the `reviews` collection carries to filter and re-rank
/// on, and the thread itself as its memory keeps it (`thread`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewFields {
    pub thread_id: u64,
    pub pr: u64,
    /// Lower-cased login of who started the thread (logins are
    /// case-insensitive; keyword filters are exact).
    pub reviewer: String,
    /// `OWNER`, `MEMBER`, `COLLABORATOR`, `CONTRIBUTOR`, …
    pub association: String,
    pub merged: bool,
    #[serde(default)]
    pub resolved: Option<bool>,
    pub plus_one: u32,
    pub minus_one: u32,
    pub created_at: String,
    /// The whole thread as review memory stores it (JSON), returned as is.
    pub thread: serde_json::Value,
}

/// One point to upsert.
#[derive(Debug, Clone)]
pub struct ChunkPoint {
    pub id: uuid::Uuid,
    pub dense: Vec<f32>,
    pub sparse: Sparse,
    pub payload: ChunkPayload,
}

/// Which side a query ranks by; the two are fused by the caller
/// ([`crate::fusion`]), the same way on every engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    Dense,
    Sparse,
}

/// A query on one collection, always scoped to one repository.
#[derive(Debug, Clone)]
pub struct HybridQuery {
    pub repo: String,
    pub dense: Vec<f32>,
    pub sparse: Sparse,
    /// Only these paths (a path glob resolved against the repository's
    /// files); `None`: every path.
    pub paths: Option<Vec<String>>,
    pub language: Option<String>,
    /// More exact filters: each field must hold one of its values.
    pub any_of: Vec<(&'static str, Vec<String>)>,
    pub ranking: Ranking,
    pub limit: usize,
}

/// A ranked chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredChunk {
    pub id: uuid::Uuid,
    pub score: f32,
    pub payload: ChunkPayload,
}

/// The model a collection's vectors came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexMeta {
    pub model: String,
    pub dim: usize,
}

#[async_trait]
pub trait VectorStore: Send + Sync {
    /// `embedded` or `server`, for logs and metrics.
    fn engine(&self) -> &'static str;

    /// Creates the collection if needed. When it holds vectors of another
    /// model or dimension it is dropped and recreated, and `true` returned
    /// (everything must be re-embedded).
    async fn open(&self, kind: Kind, meta: &IndexMeta) -> Result<bool, SearchError>;

    async fn upsert(&self, kind: Kind, points: Vec<ChunkPoint>) -> Result<(), SearchError>;

    /// Removes every chunk of these files of `repo`.
    async fn delete_files(&self, kind: Kind, repo: &str, paths: &[String]) -> Result<(), SearchError>;

    /// `path → file_hash` of every file of `repo` in the collection.
    async fn file_hashes(&self, kind: Kind, repo: &str) -> Result<HashMap<String, String>, SearchError> {
        self.field_pairs(kind, repo, "path", "file_hash").await
    }

    /// `key → value` of two payload fields over every point of `repo` (a
    /// number is given as its decimal text).
    async fn field_pairs(
        &self,
        kind: Kind,
        repo: &str,
        key: &str,
        value: &str,
    ) -> Result<HashMap<String, String>, SearchError>;

    /// Removes these points (absent ones are no error).
    async fn delete_ids(&self, kind: Kind, ids: &[uuid::Uuid]) -> Result<(), SearchError>;

    async fn query(&self, kind: Kind, q: &HybridQuery) -> Result<Vec<ScoredChunk>, SearchError>;

    /// Small named values kept with the index (the commit each repository
    /// was last indexed at).
    async fn get_state(&self, key: &str) -> Result<Option<String>, SearchError>;
    async fn put_state(&self, key: &str, value: &str) -> Result<(), SearchError>;

    /// Compacts and builds the vector indexes after a bulk load.
    async fn optimize(&self) -> Result<(), SearchError>;
}

/// The id of a chunk: the same chunk of the same file content always gets
/// the same id, so a retried upsert replaces rather than duplicates.
pub fn chunk_id(repo: &str, kind: Kind, path: &str, start_line: u32, file_hash: &str) -> uuid::Uuid {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [repo, kind.as_str(), path, &start_line.to_string(), file_hash] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let d = h.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    uuid::Builder::from_random_bytes(b).into_uuid()
}

/// A payload value as text, for [`VectorStore::field_pairs`]: strings as
/// they are, numbers and booleans in their JSON spelling.
pub(crate) fn value_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => Some(v.to_string()),
        _ => None,
    }
}

/// The collection name of a kind, under a configurable prefix.
pub fn collection(prefix: &str, kind: Kind) -> String {
    format!("{prefix}_{}", kind.as_str())
}
