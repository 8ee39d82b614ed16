//! For other crates' plumbing tests: an index on the in-process engine in a
//! directory, with the hashing embedder (no model to install, no meaning:
//! retrieval quality is tested in this crate with the real model).

use std::path::Path;
use std::sync::Arc;

use crate::edge::EdgeStore;
use crate::embed::HashingEmbedder;
use crate::{HybridIndex, SearchError};

pub async fn hashing_index(dir: &Path) -> Result<Arc<HybridIndex>, SearchError> {
    let index = HybridIndex::open(Arc::new(EdgeStore::new(dir)?), Arc::new(HashingEmbedder::new(32))).await?;
    Ok(Arc::new(index))
}
