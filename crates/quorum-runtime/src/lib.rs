//! The runtime every Quorum worker stands on: the idempotent producer, the
//! consume → handle → produce → commit loop with retries and DLQ, the embedded
//! broker, `/healthz` + `/metrics`, JSON logs and shutdown.
//!
//! A service only supplies a [`Handler`]; it never sees consumer offsets,
//! partitions or rebalances.

pub mod backlog;
pub mod broker;
pub mod config;
pub mod dlq;
pub mod error;
pub mod fleet;
pub mod inspect;
pub mod metrics;
pub mod ops;
pub mod producer;
pub mod service;
pub mod shutdown;
pub mod telemetry;
pub mod trace;
pub mod worker;

pub use broker::EmbeddedBroker;
pub use config::BusConfig;
pub use error::{HandlerError, RuntimeError};
pub use metrics::Metrics;
pub use producer::{BusProducer, OutMessage};
pub use service::{
    Boot, CommonArgs, ServiceContext, ServiceHandle, serve, start_worker_service, start_workers_service,
};
pub use tokio_util::sync::CancellationToken;
pub use worker::{Delivery, Handler, Worker, WorkerSpec, default_in_flight};

/// Milliseconds since the Unix epoch (job timestamps, latencies).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
