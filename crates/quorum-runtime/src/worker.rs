//! The consume → handle → produce → commit loop (F-BUS-2, F-BUS-3).
//!
//! Up to `max_in_flight` messages at a time, each on its own task
//! (`process.rs`), because a model-backed review is seconds to minutes of
//! waiting on the network. Messages of one key run one at a time, in order
//! (`ready.rs`); different keys run in parallel. Offsets are committed only
//! up to the lowest message not finished yet in each partition
//! (`offsets.rs`), so a crash never skips an unfinished message, whatever
//! finished after it; what finished after it is read again and absorbed by
//! idempotent handlers.
//!
//! While handlers run the loop keeps polling — buffering what arrives, and
//! pausing its partitions once every slot has been busy for a second or the
//! buffer is full — so the member keeps heartbeating and takes part in
//! rebalances: a member that stops polling delays a newcomer's assignment
//! by ~45 s; polling while paused got it assigned in ~3 s. The price is that
//! a message in hand whose partition moves away may be processed twice,
//! which idempotent handlers absorb. Buffered messages of a partition that
//! moved away are dropped (the new owner reads them from the committed
//! offset), and nothing is committed for a partition this member lost.
//!
//! A retryable failure re-publishes the message with its attempt count in a
//! header (scoped to this group, so the other groups of a fan-out ignore the
//! copy) and finishes the original, so the partition keeps moving; after the
//! last attempt, or at once for an invalid message, the message goes to
//! `review.dlq` with the error and where it came from.

mod group_watch;
mod offsets;
mod process;
mod ready;

pub use group_watch::{Position, partition_lags, partition_positions};

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message, OwnedMessage};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{error, warn};

use quorum_events::{ConsumerGroup, Payload, Topic, headers};

use crate::config::BusConfig;
use crate::error::{HandlerError, RuntimeError};
use crate::metrics::Metrics;
use crate::producer::{BusProducer, OutMessage};
use offsets::OffsetTracker;
use process::{Outcome, Processor};
use ready::ReadyQueue;

/// How long every slot is busy before the loop pauses its partitions.
const PAUSE_AFTER: Duration = Duration::from_secs(1);
/// Messages buffered while every slot is busy before the loop pauses.
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
    /// Messages handled at once by one member (at least 1).
    pub max_in_flight: usize,
}

impl WorkerSpec {
    /// The spec of one of the fleet's groups: service and group share its
    /// name, the topic is the one the contract gives it, and the number of
    /// messages in flight is [`default_in_flight`].
    pub fn for_group(group: ConsumerGroup) -> Self {
        WorkerSpec {
            service: group.name().to_string(),
            group: group.name().to_string(),
            topic: group.topic(),
            max_in_flight: default_in_flight(group),
        }
    }
}

/// How many messages a member of `group` handles at once unless configured.
///
/// Agents and the critic mostly wait on a model, so they carry many jobs;
/// the aggregator and the publisher wait on the store and the SCM; draft
/// decisions are rare; the indexer's graph builds are CPU-bound, so more
/// than one at a time only competes for the same cores.
pub fn default_in_flight(group: ConsumerGroup) -> usize {
    match group {
        ConsumerGroup::Agent(_) | ConsumerGroup::Critic => 8,
        ConsumerGroup::Aggregator | ConsumerGroup::Publisher | ConsumerGroup::PublisherChecks => 4,
        ConsumerGroup::PublisherDrafts | ConsumerGroup::Indexer => 1,
    }
}

/// A consumer-group member running one handler on up to `max_in_flight`
/// messages at once.
pub struct Worker {
    consumer: Arc<StreamConsumer>,
    processor: Arc<Processor>,
    max_in_flight: usize,
    lag_every: Duration,
}

/// What the loop remembers about a running message: partition, offset, key.
type Running = (i32, i64, Option<String>);

/// A commit on a blocking thread, with the positions it commits.
type CommitTask = JoinHandle<(Vec<(i32, i64)>, Result<(), rdkafka::error::KafkaError>)>;
type CommitDone = Result<(Vec<(i32, i64)>, Result<(), rdkafka::error::KafkaError>), tokio::task::JoinError>;

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
        let max_in_flight = config.max_in_flight.unwrap_or(spec.max_in_flight).max(1);
        Ok(Worker {
            consumer: Arc::new(consumer),
            max_in_flight,
            lag_every: config.lag_every,
            processor: Arc::new(Processor {
                spec,
                config: config.clone(),
                producer,
                metrics,
                handler,
            }),
        })
    }

    /// Runs until `shutdown`. Messages already running are finished and
    /// committed first; buffered ones that had not started are left to be
    /// read again.
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), RuntimeError> {
        let p = &self.processor;
        // Aborted on drop, so a worker whose task is aborted releases its
        // consumer (and group membership) at once.
        let _watch = AbortOnDrop(tokio::spawn(group_watch::watch_group(
            Arc::downgrade(&self.consumer),
            p.spec.clone(),
            p.metrics.clone(),
            self.lag_every,
            group_watch::starved_after(p.config.session_timeout),
            shutdown.clone(),
        )));
        let in_flight = p.metrics.in_flight.with_label_values(&[&p.spec.service]);
        let mut state = LoopState {
            consumer: self.consumer.clone(),
            processor: self.processor.clone(),
            max_in_flight: self.max_in_flight,
            offsets: OffsetTracker::default(),
            ready: ReadyQueue::default(),
            tasks: JoinSet::new(),
            running: HashMap::new(),
            commit: None,
            dirty: false,
            paused: false,
            saturated_since: None,
            in_flight: in_flight.clone(),
        };
        let result = state.run(&shutdown).await;
        in_flight.set(0);
        self.processor.producer.flush();
        result
    }
}

/// The loop's own state, apart from the shared [`Processor`].
struct LoopState {
    consumer: Arc<StreamConsumer>,
    processor: Arc<Processor>,
    max_in_flight: usize,
    offsets: OffsetTracker,
    ready: ReadyQueue<OwnedMessage>,
    tasks: JoinSet<Outcome>,
    /// What each task is handling.
    running: HashMap<tokio::task::Id, Running>,
    commit: Option<CommitTask>,
    /// Something finished since the last commit started.
    dirty: bool,
    paused: bool,
    /// Since when every slot has been busy.
    saturated_since: Option<Instant>,
    in_flight: prometheus::IntGauge,
}

impl LoopState {
    async fn run(&mut self, shutdown: &CancellationToken) -> Result<(), RuntimeError> {
        let mut stopping = false;
        loop {
            if !stopping {
                self.dispatch(shutdown);
            }
            self.in_flight.set(self.tasks.len() as i64);
            self.pause_or_resume();
            if self.dirty && self.commit.is_none() {
                self.start_commit();
            }
            if stopping && self.tasks.is_empty() {
                self.finish_commits().await;
                return Ok(());
            }
            let pause_at = self.saturated_since.map(|t| t + PAUSE_AFTER);
            let consumer = self.consumer.clone();
            tokio::select! {
                _ = shutdown.cancelled(), if !stopping => {
                    stopping = true;
                    // Not started: left uncommitted, read again by whoever owns them next.
                    self.ready.clear();
                }
                Some(joined) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => {
                    if let Err(fatal) = self.finished(joined) {
                        self.tasks.abort_all();
                        self.finish_commits().await;
                        return Err(fatal);
                    }
                }
                done = wait_commit(&mut self.commit), if self.commit.is_some() => {
                    self.commit = None;
                    self.committed(done);
                }
                _ = tokio::time::sleep_until(pause_at.unwrap_or_else(Instant::now)), if pause_at.is_some() && !self.paused => {
                    self.pause_all();
                }
                m = consumer.recv() => match m {
                    Ok(m) if stopping => drop(m),
                    Ok(m) => {
                        let m = m.detach();
                        self.offsets.received(m.partition(), m.offset());
                        let key = m.key().map(|k| String::from_utf8_lossy(k).into_owned());
                        self.ready.push(key, m);
                        if self.paused {
                            // A partition assigned since the pause is not paused yet.
                            self.pause_all();
                        }
                    }
                    Err(e) => warn!(group = %self.processor.spec.group, error = %e, "consumer error"),
                },
            }
        }
    }

    /// Starts waiting messages while there are free slots, after dropping
    /// those of partitions this member no longer owns.
    fn dispatch(&mut self, shutdown: &CancellationToken) {
        if self.ready.is_empty() || self.tasks.len() >= self.max_in_flight {
            self.track_saturation();
            return;
        }
        if let Ok(assignment) = self.consumer.assignment() {
            let owned = |p: i32| assignment.find_partition(self.processor.spec.topic.name(), p).is_some();
            self.ready.retain(|m| owned(m.partition()));
            self.offsets.retain(owned);
        }
        while self.tasks.len() < self.max_in_flight {
            let Some((key, msg)) = self.ready.next() else { break };
            let delivery = Delivery::from_message(&msg);
            let processor = self.processor.clone();
            let stop = shutdown.clone();
            let handle = self
                .tasks
                .spawn(async move { processor.process(&delivery, &stop).await });
            self.running.insert(handle.id(), (msg.partition(), msg.offset(), key));
        }
        self.track_saturation();
    }

    fn track_saturation(&mut self) {
        if self.tasks.len() >= self.max_in_flight {
            self.saturated_since.get_or_insert_with(Instant::now);
        } else {
            self.saturated_since = None;
        }
    }

    /// Books a finished task. A fatal outcome is returned as the error that
    /// stops the worker; its offset stays unfinished.
    fn finished(
        &mut self,
        joined: Result<(tokio::task::Id, Outcome), tokio::task::JoinError>,
    ) -> Result<(), RuntimeError> {
        let (id, outcome) = match joined {
            Ok((id, outcome)) => (id, Some(outcome)),
            Err(e) => (e.id(), None),
        };
        let Some((partition, offset, key)) = self.running.remove(&id) else {
            return Ok(());
        };
        self.ready.done(key.as_deref());
        match outcome {
            Some(Outcome::Finished(_)) => {
                self.offsets.finished(partition, offset);
                self.dirty = true;
            }
            // Left unfinished: committed positions stop before it.
            Some(Outcome::Unsent) => {}
            Some(Outcome::Fatal(message)) => {
                return Err(RuntimeError::Fatal {
                    group: self.processor.spec.group.clone(),
                    message,
                });
            }
            // The task itself died (handler panics are caught inside it): the
            // message stays unfinished, so the partition commits no further
            // until a restart reads it again; its key is freed so the rest of
            // the job is not stuck behind it.
            None => error!(partition, offset, "message task died; its offset stays uncommitted"),
        }
        Ok(())
    }

    /// Commits, on a blocking thread while the loop keeps polling, every
    /// owned partition whose position moved. Committing on the runtime
    /// thread would block it, and during a rebalance the commit waits for the
    /// very poll it would be blocking (seen here as a hang with a newcomer
    /// joining during a long handler). One commit at a time, so a later
    /// position can never be overwritten by an earlier one.
    fn start_commit(&mut self) {
        self.dirty = false;
        let topic = self.processor.spec.topic.name();
        if let Ok(assignment) = self.consumer.assignment() {
            self.offsets.retain(|p| assignment.find_partition(topic, p).is_some());
        }
        let due = self.offsets.due();
        if due.is_empty() {
            return;
        }
        let mut tpl = TopicPartitionList::new();
        for &(partition, position) in &due {
            if tpl
                .add_partition_offset(topic, partition, Offset::Offset(position))
                .is_err()
            {
                return;
            }
        }
        let consumer = self.consumer.clone();
        self.commit = Some(tokio::task::spawn_blocking(move || {
            let r = consumer.commit(&tpl, CommitMode::Sync);
            (due, r)
        }));
    }

    fn committed(&mut self, done: CommitDone) {
        match done {
            Ok((due, Ok(()))) => {
                for (partition, position) in due {
                    self.offsets.committed(partition, position);
                }
            }
            // Typically a partition moved during a rebalance; its new owner
            // re-reads from the last commit and idempotent handlers absorb it.
            Ok((_, Err(e))) => warn!(error = %e, "commit failed"),
            Err(e) => warn!(error = %e, "commit task failed"),
        }
    }

    /// The last commits before the loop returns: waits for the one running,
    /// then commits what finished since, still polling meanwhile.
    async fn finish_commits(&mut self) {
        for _ in 0..2 {
            if let Some(commit) = self.commit.take() {
                let mut commit = commit;
                let consumer = self.consumer.clone();
                let done = loop {
                    tokio::select! {
                        r = &mut commit => break r,
                        // Polling serves the rebalance the commit may wait for;
                        // what arrives now is not started and is read again later.
                        _ = consumer.recv() => {}
                    }
                };
                self.committed(done);
            }
            self.start_commit();
        }
    }

    fn pause_or_resume(&mut self) {
        let overfull = self.ready.len() >= MAX_BACKLOG;
        let busy_long = self.saturated_since.is_some_and(|t| t.elapsed() >= PAUSE_AFTER);
        if !self.paused && (overfull || busy_long) {
            self.pause_all();
        } else if self.paused && self.tasks.len() < self.max_in_flight && self.ready.len() < MAX_BACKLOG / 2 {
            let now = self.consumer.assignment().unwrap_or_default();
            match self.consumer.resume(&now) {
                Ok(()) => self.paused = false,
                Err(e) => warn!(error = %e, "cannot resume partitions"),
            }
        }
    }

    /// Pauses every assigned partition. Pausing purges in-flight fetches, so
    /// pausing around every short handler would starve the partitions whose
    /// data was not already prefetched (seen here: two of six partitions
    /// served, the rest stalled); hence only after [`PAUSE_AFTER`] or a full
    /// buffer.
    fn pause_all(&mut self) {
        let assignment = self.consumer.assignment().unwrap_or_default();
        match self.consumer.pause(&assignment) {
            Ok(()) => self.paused = true,
            Err(e) => warn!(error = %e, "cannot pause partitions"),
        }
    }
}

/// The running commit's result; never resolves without one (the `select!`
/// branch is guarded).
async fn wait_commit(commit: &mut Option<CommitTask>) -> CommitDone {
    match commit {
        Some(task) => task.await,
        None => std::future::pending().await,
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
