//! Reading and replaying `review.dlq` (F-BUS-3).
//!
//! A dead-lettered message keeps its payload and headers plus the DLQ
//! headers (error, kind, origin topic/partition/offset, group). Replaying
//! re-publishes it to its original topic, scoped with `quorum-retry-for` to
//! the group that gave up, so the other groups of a fan-out (which handled
//! it already) do not see it twice.

use std::time::Duration;

use quorum_events::{Topic, headers};

use crate::config::BusConfig;
use crate::error::RuntimeError;
use crate::producer::{BusProducer, OutMessage};

/// One dead-lettered message.
pub type DlqEntry = crate::inspect::Consumed;

impl DlqEntry {
    /// The message as it is re-published: original topic, key and payload,
    /// original headers without the DLQ ones, attempt 1, scoped to the group
    /// that gave up.
    pub fn replay_message(&self) -> Result<OutMessage, RuntimeError> {
        let topic = self
            .header(headers::DLQ_TOPIC)
            .filter(|t| Topic::from_name(t).is_some())
            .ok_or_else(|| RuntimeError::Config(format!("DLQ offset {} has no valid origin topic", self.offset)))?;
        let mut h: Vec<(String, Vec<u8>)> = self
            .headers
            .iter()
            .filter(|(k, _)| {
                !headers::DLQ_HEADERS.contains(&k.as_str()) && k != headers::ATTEMPT && k != headers::RETRY_FOR
            })
            .cloned()
            .collect();
        h.push((headers::ATTEMPT.into(), b"1".to_vec()));
        if let Some(group) = self.header(headers::DLQ_GROUP) {
            h.push((headers::RETRY_FOR.into(), group.into_bytes()));
        }
        Ok(OutMessage {
            topic,
            key: self.key.clone(),
            payload: self.payload.clone(),
            headers: h,
        })
    }
}

/// Every message on the DLQ (see [`crate::inspect::read_topic`]).
pub async fn read_all(bus: &BusConfig, quiet: Duration) -> Result<Vec<DlqEntry>, RuntimeError> {
    crate::inspect::read_topic(bus, Topic::Dlq, quiet).await
}

/// Re-publishes one entry (see [`DlqEntry::replay_message`]).
pub async fn replay(producer: &BusProducer, entry: &DlqEntry) -> Result<(), RuntimeError> {
    producer.send(&entry.replay_message()?).await
}
