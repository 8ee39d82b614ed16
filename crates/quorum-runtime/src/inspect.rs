//! Reading a topic from the start without joining any real group or
//! committing anything: what `quorum dlq` and the black-box tests use to see
//! what is on the bus.

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message};

use quorum_events::Topic;

use crate::config::BusConfig;
use crate::error::RuntimeError;

/// A message as it sits on a topic.
#[derive(Debug, Clone, PartialEq)]
pub struct Consumed {
    pub partition: i32,
    pub offset: i64,
    pub key: String,
    pub payload: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
}

impl Consumed {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }
}

/// Every message on `topic`, ordered by (partition, offset); stops once
/// `quiet` passes with no new message (at least 10 s before the first one).
///
/// The partitions are assigned directly, from the beginning: no consumer
/// group is joined, so nothing waits on a group coordinator (a first join
/// took over 20 s on a real broker, tansu, where this used to give up) and
/// no offsets are committed anywhere.
pub async fn read_topic(bus: &BusConfig, topic: Topic, quiet: Duration) -> Result<Vec<Consumed>, RuntimeError> {
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bus.brokers)
        .set("group.id", format!("quorum-inspect-{}", uuid::Uuid::new_v4()))
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("log_level", "3")
        .create()?;
    let metadata = consumer.fetch_metadata(Some(topic.name()), Duration::from_secs(10))?;
    let mut assignment = rdkafka::TopicPartitionList::new();
    for t in metadata.topics().iter().filter(|t| t.name() == topic.name()) {
        for p in t.partitions() {
            assignment.add_partition_offset(topic.name(), p.id(), rdkafka::Offset::Beginning)?;
        }
    }
    if assignment.count() == 0 {
        return Err(RuntimeError::Broker(format!(
            "topic {} has no partitions on the broker",
            topic.name()
        )));
    }
    consumer.assign(&assignment)?;
    let mut out = Vec::new();
    let mut wait = quiet.max(Duration::from_secs(10));
    while let Ok(m) = tokio::time::timeout(wait, consumer.recv()).await {
        let m = m?;
        out.push(Consumed {
            partition: m.partition(),
            offset: m.offset(),
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
    out.sort_by_key(|e| (e.partition, e.offset));
    Ok(out)
}
