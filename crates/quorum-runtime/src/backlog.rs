//! The intake backlog (F-GW-6): review requests on `pr.review.requested`
//! that the slowest agent group has not consumed yet — high watermark minus
//! the group's committed offset, summed over partitions. Measured from the
//! broker (no group is joined), so any gateway replica sees the same figure.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::consumer::BaseConsumer;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::BusConfig;
use crate::error::RuntimeError;
use crate::metrics::Metrics;
use crate::worker::partition_lags;
use quorum_events::{ConsumerGroup, Topic};

/// The latest backlog measurement (−1 until the first one).
#[derive(Clone, Debug)]
pub struct Backlog(Arc<AtomicI64>);

impl Backlog {
    pub fn get(&self) -> Option<u64> {
        u64::try_from(self.0.load(Ordering::Relaxed)).ok()
    }
}

/// Measures the backlog every `every` until `shutdown`, publishing it as
/// `quorum_backlog_requests`. The task owns Kafka clients: a service waits
/// for it on shutdown, so no client outlives the broker it talks to.
pub fn spawn_monitor(
    bus: &BusConfig,
    metrics: Metrics,
    every: Duration,
    shutdown: CancellationToken,
) -> Result<(Backlog, JoinHandle<()>), RuntimeError> {
    let groups = ConsumerGroup::ALL
        .into_iter()
        .filter(|g| matches!(g, ConsumerGroup::Agent(_)))
        .map(|g| {
            ClientConfig::new()
                .set("bootstrap.servers", &bus.brokers)
                .set("group.id", g.name())
                .set("enable.auto.commit", "false")
                .set("log_level", "4")
                .create::<BaseConsumer>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let groups = Arc::new(groups);
    let value = Arc::new(AtomicI64::new(-1));
    let out = Backlog(value.clone());
    let task = tokio::spawn(async move {
        loop {
            let g = groups.clone();
            let measured = tokio::task::spawn_blocking(move || {
                g.iter()
                    .map(|c| partition_lags(c, Topic::ReviewRequested).map(|l| l.iter().map(|(_, n)| n).sum::<i64>()))
                    .collect::<Result<Vec<i64>, _>>()
            })
            .await;
            match measured {
                Ok(Ok(lags)) => {
                    let worst = lags.into_iter().max().unwrap_or(0);
                    value.store(worst, Ordering::Relaxed);
                    metrics.backlog.set(worst);
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "backlog not measured"),
                Err(e) => tracing::warn!(error = %e, "backlog task failed"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
        }
    });
    Ok((out, task))
}
