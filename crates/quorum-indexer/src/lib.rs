//! The indexer. For now it validates and records each index request (repo,
//! ref, time) so operators can see what was asked; building the code graph
//! and the hybrid index comes with their own issues. Idempotent: recording
//! the same request twice leaves the same state.

use std::sync::Arc;

use async_trait::async_trait;
use quorum_events::{ConsumerGroup, IndexRequested};
use quorum_runtime::{
    CancellationToken, Delivery, Handler, HandlerError, OutMessage, RuntimeError, ServiceContext, ServiceHandle,
    WorkerSpec, now_ms, start_worker_service,
};
use quorum_store::StateStore;

struct IndexHandler {
    store: Arc<dyn StateStore>,
}

#[async_trait]
impl Handler for IndexHandler {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let req: IndexRequested = d.decode()?;
        self.store
            .record_index_request(&req.repo.full_name, &req.git_ref, now_ms())
            .await
            .map_err(HandlerError::retryable)?;
        tracing::info!(repo = %req.repo.full_name, git_ref = %req.git_ref, "index request recorded (graph building not implemented yet)");
        Ok(vec![])
    }
}

pub async fn start(
    http_addr: std::net::SocketAddr,
    ctx: &ServiceContext,
    store: Arc<dyn StateStore>,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let spec = WorkerSpec::for_group(ConsumerGroup::Indexer);
    start_worker_service(ctx, spec, Arc::new(IndexHandler { store }), http_addr, shutdown).await
}
