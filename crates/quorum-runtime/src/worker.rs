//! The consume → handle → produce → commit loop (F-BUS-2, F-BUS-3).
//!
//! One message at a time. While a handler runs (an LLM review can take
//! minutes) the handler is on its own task and the loop keeps polling —
//! buffering what arrives, and pausing its partitions once the handler has
//! run for a second or the buffer is full — so the member keeps
//! heartbeating and takes part in rebalances: a member that stops
//! polling delays a newcomer's assignment by ~45 s; polling while paused got
//! it assigned in ~3 s. The price is that a message in hand whose partition
//! moves away may be processed twice, which idempotent handlers absorb.
//!
//! The offset is committed only after the handler's output is acknowledged
//! by the broker. A retryable failure re-publishes the message with its attempt
//! count in a header (scoped to this group, so the other groups of a fan-out
//! ignore the copy) and commits the original, so the partition keeps moving;
//! after the last attempt, or at once for an invalid message, the message
//! goes to `review.dlq` with the error and where it came from.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message, OwnedMessage};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span, warn};

use quorum_events::{Payload, Topic, headers};

use crate::config::BusConfig;
use crate::error::{HandlerError, RuntimeError};
use crate::metrics::Metrics;
use crate::producer::{BusProducer, OutMessage};
use crate::trace;

/// How long a handler runs before the loop pauses its partitions.
const PAUSE_AFTER: Duration = Duration::from_secs(1);
/// Messages buffered while a handler runs before the loop pauses.
const MAX_BACKLOG: usize = 64;

/// A consumed message as a handler sees it.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<String>,
    pub payload: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
    /// 1 for the first delivery.
    pub attempt: u32,
}

impl Delivery {
    fn from_message(m: &OwnedMessage) -> Self {
        let headers: Vec<(String, Vec<u8>)> = m
            .headers()
            .map(|h| {
                h.iter()
                    .map(|hd| (hd.key.to_string(), hd.value.unwrap_or_default().to_vec()))
                    .collect()
            })
            .unwrap_or_default();
        let attempt = headers
            .iter()
            .find(|(k, _)| k == headers::ATTEMPT)
            .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(1);
        Delivery {
            topic: m.topic().to_string(),
            partition: m.partition(),
            offset: m.offset(),
            key: m.key().map(|k| String::from_utf8_lossy(k).into_owned()),
            payload: m.payload().unwrap_or_default().to_vec(),
            headers,
            attempt,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }

    /// Decodes the payload; a bad payload is an invalid message.
    pub fn decode<P: Payload>(&self) -> Result<P, HandlerError> {
        Ok(P::decode(&self.payload)?)
    }
}

/// What a service plugs into the loop.
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Handles one message and returns what to publish. Must be idempotent:
    /// the same message can arrive more than once.
    async fn handle(&self, delivery: &Delivery) -> Result<Vec<OutMessage>, HandlerError>;
}

/// Which group a worker is and what it reads.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    /// `service` label of metrics and logs.
    pub service: String,
    pub group: String,
    pub topic: Topic,
}

impl WorkerSpec {
    /// The spec of one of the fleet's groups: service and group share its
    /// name, the topic is the one the contract gives it.
    pub fn for_group(group: quorum_events::ConsumerGroup) -> Self {
        WorkerSpec {
            service: group.name().to_string(),
            group: group.name().to_string(),
            topic: group.topic(),
        }
    }
}

/// A consumer-group member running one handler.
pub struct Worker {
    spec: WorkerSpec,
    config: BusConfig,
    consumer: Arc<StreamConsumer>,
    producer: BusProducer,
    metrics: Metrics,
    handler: Arc<dyn Handler>,
    /// Messages that arrived while a handler ran; handled next, in order.
    backlog: VecDeque<OwnedMessage>,
}

impl Worker {
    pub fn new(
        config: &BusConfig,
        spec: WorkerSpec,
        handler: Arc<dyn Handler>,
        producer: BusProducer,
        metrics: Metrics,
    ) -> Result<Self, RuntimeError> {
        let session = config.session_timeout.as_millis();
        let consumer: StreamConsumer = ClientConfig::new()
            .set("bootstrap.servers", &config.brokers)
            .set("group.id", &spec.group)
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "earliest")
            .set("partition.assignment.strategy", "cooperative-sticky")
            .set("session.timeout.ms", session.to_string())
            .set("heartbeat.interval.ms", (session / 4).max(100).to_string())
            .set("max.poll.interval.ms", "600000")
            .set("fetch.wait.max.ms", config.fetch_wait_max.as_millis().to_string())
            .set("topic.metadata.refresh.interval.ms", "10000")
            .set("log_level", "4")
            .create()?;
        consumer.subscribe(&[spec.topic.name()])?;
        Ok(Worker {
            spec,
            config: config.clone(),
            consumer: Arc::new(consumer),
            producer,
            metrics,
            handler,
            backlog: VecDeque::new(),
        })
    }

    /// Runs until `shutdown`; the message in hand is finished first.
    pub async fn run(mut self, shutdown: CancellationToken) -> Result<(), RuntimeError> {
        // Aborted on drop, so a worker whose task is aborted releases its
        // consumer (and group membership) at once.
        let _lag = AbortOnDrop(tokio::spawn(report_lag(
            Arc::downgrade(&self.consumer),
            self.spec.clone(),
            self.metrics.clone(),
            self.config.lag_every,
            shutdown.clone(),
        )));
        let result = self.run_loop(&shutdown).await;
        self.producer.flush();
        result
    }

    async fn run_loop(&mut self, shutdown: &CancellationToken) -> Result<(), RuntimeError> {
        loop {
            let msg = match self.next_from_backlog() {
                Some(m) => m,
                None => tokio::select! {
                    _ = shutdown.cancelled() => return Ok(()),
                    m = self.consumer.recv() => match m {
                        Ok(m) => m.detach(),
                        Err(e) => {
                            warn!(group = %self.spec.group, error = %e, "consumer error");
                            continue;
                        }
                    },
                },
            };
            self.process(msg, shutdown).await?;
            if shutdown.is_cancelled() {
                return Ok(());
            }
        }
    }

    /// The next buffered message whose partition this member still owns; the
    /// others belong to the new owner, which reads them from the committed offset.
    fn next_from_backlog(&mut self) -> Option<OwnedMessage> {
        let assignment = self.consumer.assignment().ok()?;
        while let Some(m) = self.backlog.pop_front() {
            if assignment.find_partition(m.topic(), m.partition()).is_some() {
                return Some(m);
            }
        }
        None
    }

    async fn process(&mut self, msg: OwnedMessage, shutdown: &CancellationToken) -> Result<(), RuntimeError> {
        let delivery = Delivery::from_message(&msg);
        if delivery
            .header(headers::RETRY_FOR)
            .is_some_and(|owner| owner != self.spec.group)
        {
            self.commit(&delivery).await;
            return Ok(());
        }
        let span = info_span!(
            "handle",
            service = %self.spec.service,
            topic = %delivery.topic,
            job_id = delivery.key.as_deref().unwrap_or(""),
            attempt = delivery.attempt,
            trace_id = delivery.header(headers::TRACEPARENT).and_then(trace::trace_id).unwrap_or(""),
            repo = tracing::field::Empty,
            pr = tracing::field::Empty,
            agent = tracing::field::Empty,
        );
        trace::continue_from(&span, delivery.header(headers::TRACEPARENT));
        let started = Instant::now();
        let result = self.run_handler(&delivery).instrument(span.clone()).await;
        self.metrics
            .handler_duration
            .with_label_values(&[&self.spec.service])
            .observe(started.elapsed().as_secs_f64());
        let _enter = span.enter();
        let outcome = match result {
            Ok(outs) => match self.produce_all(&delivery, &outs).await {
                Ok(()) => "ok",
                // An output the broker refuses as too large is invalid: the
                // same input makes the same output, so it is dead-lettered at once.
                Err(e) => {
                    self.retry_or_dlq(&delivery, HandlerError::from_send(e), shutdown)
                        .await?
                }
            },
            Err(HandlerError::Fatal(message)) => {
                self.count(&delivery, "fatal");
                return Err(RuntimeError::Fatal {
                    group: self.spec.group.clone(),
                    message,
                });
            }
            Err(e) => self.retry_or_dlq(&delivery, e, shutdown).await?,
        };
        if outcome == "unsent" {
            // Shutting down before a retry or DLQ copy could be written: leave
            // the offset uncommitted so the message is read again.
            return Ok(());
        }
        self.count(&delivery, outcome);
        self.commit(&delivery).await;
        Ok(())
    }

    /// Runs the handler on its own task while this task keeps polling.
    ///
    /// Partitions are paused only once the handler has run for
    /// [`PAUSE_AFTER`] or the backlog is full: pausing purges in-flight
    /// fetches, so pausing around every short handler starves the partitions
    /// whose data was not already prefetched (seen here: two of six partitions
    /// served, the rest stalled).
    async fn run_handler(&mut self, delivery: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let handler = self.handler.clone();
        let d = delivery.clone();
        let mut task = tokio::spawn(async move { handler.handle(&d).await }.in_current_span());
        let pause_at = tokio::time::Instant::now() + PAUSE_AFTER;
        let mut paused = false;
        let joined = loop {
            tokio::select! {
                r = &mut task => break r,
                _ = tokio::time::sleep_until(pause_at), if !paused => {
                    paused = self.pause_all();
                }
                m = self.consumer.recv() => match m {
                    Ok(m) => {
                        self.backlog.push_back(m.detach());
                        if !paused && self.backlog.len() >= MAX_BACKLOG {
                            paused = self.pause_all();
                        }
                    }
                    Err(e) => warn!(error = %e, "consumer error while a handler runs"),
                },
            }
        };
        if paused {
            let now = self.consumer.assignment().unwrap_or_default();
            if let Err(e) = self.consumer.resume(&now) {
                warn!(error = %e, "cannot resume partitions");
            }
        }
        match joined {
            Ok(r) => r,
            Err(e) if e.is_panic() => Err(HandlerError::Retryable(format!("handler panicked: {e}"))),
            Err(e) => Err(HandlerError::Retryable(format!("handler task failed: {e}"))),
        }
    }

    fn pause_all(&self) -> bool {
        let assignment = self.consumer.assignment().unwrap_or_default();
        match self.consumer.pause(&assignment) {
            Ok(()) => true,
            Err(e) => {
                warn!(error = %e, "cannot pause partitions");
                false
            }
        }
    }

    async fn produce_all(&self, delivery: &Delivery, outs: &[OutMessage]) -> Result<(), RuntimeError> {
        let parent = delivery.header(headers::TRACEPARENT).map(str::to_string);
        for out in outs {
            let mut out = out.clone();
            if out.header(headers::TRACEPARENT).is_none() {
                let tp = trace::outgoing(&tracing::Span::current(), parent.as_deref());
                out = out.with_header(headers::TRACEPARENT, tp);
            }
            self.producer.send(&out).await?;
            self.metrics
                .produced
                .with_label_values(&[&self.spec.service, &out.topic])
                .inc();
        }
        Ok(())
    }

    /// Re-publishes for another attempt, or dead-letters. Returns the outcome
    /// label, or `"unsent"` when shutdown interrupted the write.
    async fn retry_or_dlq(
        &self,
        delivery: &Delivery,
        error: HandlerError,
        shutdown: &CancellationToken,
    ) -> Result<&'static str, RuntimeError> {
        let retryable = matches!(error, HandlerError::Retryable(_));
        let key = delivery.key.clone().unwrap_or_default();
        let base = delivery
            .headers
            .iter()
            .filter(|(k, _)| k != headers::ATTEMPT && k != headers::RETRY_FOR)
            .cloned();
        let (msg, outcome) = if retryable && delivery.attempt < self.config.max_attempts {
            warn!(error = %error, attempt = delivery.attempt, "handler failed; will retry");
            let backoff = self.config.retry_backoff * delivery.attempt + jitter(self.config.retry_backoff);
            tokio::time::sleep(backoff).await;
            let mut h: Vec<(String, Vec<u8>)> = base.collect();
            h.push((headers::ATTEMPT.into(), (delivery.attempt + 1).to_string().into_bytes()));
            h.push((headers::RETRY_FOR.into(), self.spec.group.clone().into_bytes()));
            let msg = OutMessage {
                topic: delivery.topic.clone(),
                key,
                payload: delivery.payload.clone(),
                headers: h,
            };
            (msg, "retry")
        } else {
            warn!(error = %error, attempt = delivery.attempt, "giving up on message; sending it to the DLQ");
            let mut h: Vec<(String, Vec<u8>)> = base.collect();
            h.extend([
                (headers::ATTEMPT.into(), delivery.attempt.to_string().into_bytes()),
                (headers::DLQ_ERROR.into(), error.to_string().into_bytes()),
                (headers::DLQ_ERROR_KIND.into(), error.kind().as_bytes().to_vec()),
                (headers::DLQ_TOPIC.into(), delivery.topic.clone().into_bytes()),
                (
                    headers::DLQ_PARTITION.into(),
                    delivery.partition.to_string().into_bytes(),
                ),
                (headers::DLQ_OFFSET.into(), delivery.offset.to_string().into_bytes()),
                (headers::DLQ_GROUP.into(), self.spec.group.clone().into_bytes()),
            ]);
            let msg = OutMessage {
                topic: Topic::Dlq.name().into(),
                key,
                payload: delivery.payload.clone(),
                headers: h,
            };
            (msg, if retryable { "dlq" } else { "invalid" })
        };
        // Losing the message is not an option: keep trying to write the copy
        // until it is acknowledged or we are asked to stop.
        let mut wait = Duration::from_millis(100);
        loop {
            match self.producer.send(&msg).await {
                Ok(()) => return Ok(outcome),
                Err(e) => {
                    warn!(error = %e, "cannot write retry/DLQ copy; trying again");
                    if shutdown.is_cancelled() {
                        return Ok("unsent");
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    /// Commits the message's offset synchronously — on a blocking thread,
    /// while this task keeps polling. Committing on the runtime thread would
    /// block it, and during a rebalance the commit waits for the very poll it
    /// would be blocking (seen here as a hang with a newcomer joining during
    /// a long handler).
    async fn commit(&mut self, delivery: &Delivery) {
        let mut tpl = TopicPartitionList::new();
        if tpl
            .add_partition_offset(&delivery.topic, delivery.partition, Offset::Offset(delivery.offset + 1))
            .is_err()
        {
            return;
        }
        let consumer = self.consumer.clone();
        let mut commit = tokio::task::spawn_blocking(move || consumer.commit(&tpl, CommitMode::Sync));
        let result = loop {
            tokio::select! {
                r = &mut commit => break r,
                m = self.consumer.recv() => match m {
                    Ok(m) => self.backlog.push_back(m.detach()),
                    Err(e) => warn!(error = %e, "consumer error while committing"),
                },
            }
        };
        match result {
            Ok(Ok(())) => {}
            // Typically the partition moved during a rebalance; its new owner
            // re-reads the message and the idempotent handler absorbs it.
            Ok(Err(e)) => warn!(error = %e, partition = delivery.partition, "commit failed"),
            Err(e) => warn!(error = %e, "commit task failed"),
        }
    }

    fn count(&self, delivery: &Delivery, outcome: &str) {
        self.metrics
            .bus_messages
            .with_label_values(&[&self.spec.service, &delivery.topic, outcome])
            .inc();
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn jitter(base: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    base.mul_f64((nanos % 1000) as f64 / 1000.0)
}

/// Publishes `quorum_consumer_lag{group, partition}` from committed offsets
/// and high watermarks (group-listing APIs are not available on the mock).
async fn report_lag(
    consumer: std::sync::Weak<StreamConsumer>,
    spec: WorkerSpec,
    metrics: Metrics,
    every: Duration,
    shutdown: CancellationToken,
) {
    let topic = spec.topic;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        let Some(c) = consumer.upgrade() else { return };
        let lags = tokio::task::spawn_blocking(move || partition_lags(c.as_ref(), topic)).await;
        if let Ok(Ok(lags)) = lags {
            for (p, lag) in lags {
                metrics
                    .consumer_lag
                    .with_label_values(&[&spec.group, &p.to_string()])
                    .set(lag);
            }
        }
    }
}

/// Lag per partition: high watermark minus the group's committed offset
/// (minus the low watermark when nothing was committed yet).
pub fn partition_lags<C: Consumer>(consumer: &C, topic: Topic) -> Result<Vec<(i32, i64)>, RuntimeError> {
    let timeout = Duration::from_secs(2);
    let mut tpl = TopicPartitionList::new();
    for p in 0..topic.partitions() {
        tpl.add_partition(topic.name(), p);
    }
    let committed = consumer.committed_offsets(tpl, timeout)?;
    let mut out = Vec::new();
    for p in 0..topic.partitions() {
        let (low, high) = consumer.fetch_watermarks(topic.name(), p, timeout)?;
        let done = match committed.find_partition(topic.name(), p).map(|e| e.offset()) {
            Some(Offset::Offset(o)) => o,
            _ => low,
        };
        out.push((p, (high - done).max(0)));
    }
    Ok(out)
}
