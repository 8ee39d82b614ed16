//! Reading and replaying `review.dlq` (F-BUS-3).
//!
//! A dead-lettered message keeps its payload and headers plus the DLQ
//! headers (error, kind, origin topic/partition/offset, group). Replaying
//! re-publishes it to its original topic, scoped with `quorum-retry-for` to
//! the group that gave up, so the other groups of a fan-out (which handled
//! it already) do not see it twice.

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message};

use quorum_events::{Topic, headers};

use crate::config::BusConfig;
use crate::error::RuntimeError;
use crate::producer::{BusProducer, OutMessage};

/// One dead-lettered message.
#[derive(Debug, Clone, PartialEq)]
pub struct DlqEntry {
    pub dlq_partition: i32,
    pub dlq_offset: i64,
    pub key: String,
    pub payload: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
}

impl DlqEntry {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }

    /// The message as it is re-published: original topic, key and payload,
    /// original headers without the DLQ ones, attempt 1, scoped to the group
    /// that gave up.
    pub fn replay_message(&self) -> Result<OutMessage, RuntimeError> {
        let topic = self
            .header(headers::DLQ_TOPIC)
            .filter(|t| Topic::from_name(t).is_some())
            .ok_or_else(|| RuntimeError::Config(format!("DLQ offset {} has no valid origin topic", self.dlq_offset)))?;
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

/// Every message on the DLQ, read without committing anything; stops after
/// `quiet` passes with no new message.
pub async fn read_all(bus: &BusConfig, quiet: Duration) -> Result<Vec<DlqEntry>, RuntimeError> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bus.brokers)
        .set("group.id", format!("quorum-dlq-reader-{}", uuid::Uuid::new_v4()))
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("log_level", "3")
        .create()?;
    consumer.subscribe(&[Topic::Dlq.name()])?;
    let mut out = Vec::new();
    // The first group join takes a few seconds on the embedded broker.
    let mut wait = quiet.max(Duration::from_secs(10));
    while let Ok(m) = tokio::time::timeout(wait, consumer.recv()).await {
        let m = m?;
        out.push(DlqEntry {
            dlq_partition: m.partition(),
            dlq_offset: m.offset(),
            key: m
                .key()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .unwrap_or_default(),
            payload: m.payload().unwrap_or_default().to_vec(),
            headers: m
                .headers()
                .map(|h| {
                    h.iter()
                        .map(|h| (h.key.to_string(), h.value.unwrap_or_default().to_vec()))
                        .collect()
                })
                .unwrap_or_default(),
        });
        wait = quiet;
    }
    out.sort_by_key(|e| (e.dlq_partition, e.dlq_offset));
    Ok(out)
}

/// Re-publishes one entry (see [`DlqEntry::replay_message`]).
pub async fn replay(producer: &BusProducer, entry: &DlqEntry) -> Result<(), RuntimeError> {
    producer.send(&entry.replay_message()?).await
}
