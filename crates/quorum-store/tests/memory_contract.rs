//! The store contract against the in-memory store (the embedded default).

use std::sync::Arc;

use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::store_contract;

#[tokio::test]
async fn memory_store_passes_the_contract() {
    store_contract::run_all(&MemoryStore::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claims_have_one_winner() {
    store_contract::concurrent_dedupe(Arc::new(MemoryStore::new()) as Arc<dyn StateStore>).await;
}
