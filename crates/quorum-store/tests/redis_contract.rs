//! The store contract against a real `redis-server` (started here on a free
//! loopback port; `make test` installs the Debian package).

use std::sync::Arc;

use quorum_store::{RedisStore, StateStore};
use quorum_testkit::RedisServer;
use quorum_testkit::store_contract as contract;

#[tokio::test]
#[ignore = "needs redis-server; `make test` runs it"]
async fn redis_store_passes_the_contract() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), "contract:").await.unwrap();
    contract::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server; `make test` runs it"]
async fn redis_concurrent_claims_have_one_winner() {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url(), "race:").await.unwrap();
    contract::concurrent_dedupe(Arc::new(store) as Arc<dyn StateStore>).await;
}
