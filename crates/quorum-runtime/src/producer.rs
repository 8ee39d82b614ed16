//! The idempotent producer every service publishes through (F-BUS-2).

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};

use quorum_events::{Payload, headers};

use crate::config::BusConfig;
use crate::error::RuntimeError;
use crate::trace;

/// A message to publish: the handler's output, produced by the runtime before
/// the input's offset is committed.
#[derive(Debug, Clone, PartialEq)]
pub struct OutMessage {
    pub topic: String,
    pub key: String,
    pub payload: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
}

impl OutMessage {
    /// A payload on its own topic, keyed as the contract says.
    pub fn of<P: Payload>(payload: &P) -> Self {
        OutMessage {
            topic: P::TOPIC.name().to_string(),
            key: payload.key(),
            payload: payload.encode(),
            headers: vec![(headers::PAYLOAD_TYPE.to_string(), P::NAME.as_bytes().to_vec())],
        }
    }

    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_slice())
    }

    pub fn with_header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Self {
        self.headers.retain(|(k, _)| k != name);
        self.headers.push((name.to_string(), value.into()));
        self
    }
}

/// The fleet's producer: idempotent, `acks=all`, waits for delivery.
#[derive(Clone)]
pub struct BusProducer {
    inner: FutureProducer,
}

impl BusProducer {
    pub fn new(config: &BusConfig) -> Result<Self, RuntimeError> {
        let inner: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", &config.brokers)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "2")
            .set("message.timeout.ms", "30000")
            .set("log_level", "4")
            .create()?;
        Ok(BusProducer { inner })
    }

    /// Publishes and waits for the broker's acknowledgement. A message with no
    /// `traceparent` gets the current span's (or starts a new trace).
    pub async fn send(&self, msg: &OutMessage) -> Result<(), RuntimeError> {
        let mut hdrs = OwnedHeaders::new();
        let mut has_trace = false;
        for (k, v) in &msg.headers {
            has_trace |= k == headers::TRACEPARENT;
            hdrs = hdrs.insert(Header { key: k, value: Some(v) });
        }
        let fresh;
        if !has_trace {
            fresh = trace::outgoing(&tracing::Span::current(), None);
            hdrs = hdrs.insert(Header {
                key: headers::TRACEPARENT,
                value: Some(fresh.as_bytes()),
            });
        }
        let record = FutureRecord::to(&msg.topic)
            .key(&msg.key)
            .payload(&msg.payload)
            .headers(hdrs);
        self.inner
            .send(record, Duration::from_secs(30))
            .await
            .map(|_| ())
            .map_err(|(e, _)| RuntimeError::Kafka(e))
    }

    /// Publishes a payload on its topic.
    pub async fn publish<P: Payload>(&self, payload: &P) -> Result<(), RuntimeError> {
        self.send(&OutMessage::of(payload)).await
    }

    /// Waits for queued messages (used at shutdown).
    pub fn flush(&self) {
        let _ = self.inner.flush(Duration::from_secs(5));
    }
}
