//! The fleet's health as the broker sees it, for the console and the
//! operator API: per consumer group, whether any member is up (a service
//! role with no member is down, wherever it runs), its state and its lag on
//! the topic it consumes; and how many messages sit on the DLQ. Measured
//! from the broker without joining any group, so any gateway replica can
//! answer and nothing is committed.

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use serde::Serialize;

use crate::config::BusConfig;
use crate::error::RuntimeError;
use crate::worker::partition_lags;
use quorum_events::{ConsumerGroup, Topic};

/// One consumer group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupHealth {
    pub group: &'static str,
    pub topic: &'static str,
    /// Members the group coordinator reports (0: the service is down);
    /// `None` when the broker does not say: librdkafka's mock refuses to
    /// list groups, tansu 0.6.0 lists none, and a group a broker does not
    /// list is reported as unknown rather than as down.
    pub members: Option<usize>,
    /// The coordinator's state (`Stable`, `PreparingRebalance`, `Empty`, `Dead`, …),
    /// or why it is unknown.
    pub state: String,
    /// Messages on `topic` the group has not committed past.
    pub lag: i64,
}

/// The whole fleet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetHealth {
    pub groups: Vec<GroupHealth>,
    /// Messages on the DLQ (it is never trimmed by Quorum: replaying
    /// re-publishes a message, it does not remove it).
    pub dlq_messages: i64,
}

const TIMEOUT: Duration = Duration::from_secs(3);

/// Measures the fleet (blocking: call it on a blocking thread).
pub fn measure(bus: &BusConfig) -> Result<FleetHealth, RuntimeError> {
    let mut groups = vec![];
    for g in ConsumerGroup::ALL {
        // A client named after the group reads its committed offsets; it
        // never subscribes, so it never joins.
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &bus.brokers)
            .set("group.id", g.name())
            .set("enable.auto.commit", "false")
            .set("log_level", "3")
            .create()?;
        let lag = partition_lags(&consumer, g.topic())?.iter().map(|(_, n)| n).sum();
        let (members, state) = match consumer.fetch_group_list(Some(g.name()), TIMEOUT) {
            Ok(list) => list
                .groups()
                .iter()
                .find(|x| x.name() == g.name())
                .map(|x| (Some(x.members().len()), x.state().to_string()))
                .unwrap_or((None, "unknown: the broker does not list this group".into())),
            Err(KafkaError::GroupListFetch(RDKafkaErrorCode::UnsupportedFeature)) => {
                (None, "unknown: this broker cannot list groups".into())
            }
            Err(e) => return Err(e.into()),
        };
        groups.push(GroupHealth {
            group: g.name(),
            topic: g.topic().name(),
            members,
            state,
            lag,
        });
    }
    Ok(FleetHealth {
        groups,
        dlq_messages: dlq_size(bus)?,
    })
}

/// Messages on the DLQ, from its watermarks (blocking).
pub fn dlq_size(bus: &BusConfig) -> Result<i64, RuntimeError> {
    let probe: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bus.brokers)
        .set("log_level", "3")
        .create()?;
    let mut size = 0;
    for p in 0..Topic::Dlq.partitions() {
        let (low, high) = probe.fetch_watermarks(Topic::Dlq.name(), p, TIMEOUT)?;
        size += (high - low).max(0);
    }
    Ok(size)
}
