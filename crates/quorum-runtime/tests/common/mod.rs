//! Helpers shared by the worker-loop tests: a bus on the embedded broker
//! (librdkafka's mock cluster) or, with `QUORUM_TEST_TANSU`, on a real
//! Kafka-protocol broker (tansu) — the same test bodies on both — a
//! recording handler, waiting without asserting wall-clock time.
#![allow(dead_code)]

pub use quorum_testkit::tansu;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use quorum_events::Topic;
use quorum_runtime::{
    BusConfig, BusProducer, CancellationToken, Delivery, EmbeddedBroker, Handler, HandlerError, Metrics, OutMessage,
    Worker, WorkerSpec,
};

/// Messages at once in the tests' workers: every guarantee of the loop is
/// tested with several messages in flight.
pub const IN_FLIGHT: usize = 4;

/// What a handler saw: (worker name, key, partition, payload, attempt).
pub type Log = Arc<Mutex<Vec<(String, String, i32, String, u32)>>>;

pub struct Recorder {
    pub name: String,
    pub log: Log,
    /// Payloads that fail with this error class.
    pub fail: HashMap<String, fn(String) -> HandlerError>,
    /// Payloads whose handling never finishes.
    pub hang: BTreeSet<String>,
    pub delay: Duration,
}

impl Recorder {
    pub fn new(name: &str, log: &Log) -> Self {
        Recorder {
            name: name.into(),
            log: log.clone(),
            fail: HashMap::new(),
            hang: BTreeSet::new(),
            delay: Duration::ZERO,
        }
    }
}

#[async_trait]
impl Handler for Recorder {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let payload = String::from_utf8_lossy(&d.payload).into_owned();
        self.log.lock().unwrap().push((
            self.name.clone(),
            d.key.clone().unwrap_or_default(),
            d.partition,
            payload.clone(),
            d.attempt,
        ));
        if self.hang.contains(&payload) {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(self.delay).await;
        if let Some(make) = self.fail.get(&payload) {
            return Err(make(format!("cannot handle {payload}")));
        }
        Ok(vec![])
    }
}

/// Where a test's bus runs.
pub enum Broker {
    Mock(EmbeddedBroker),
    Tansu(tansu::Tansu),
}

pub struct Bus {
    pub broker: Broker,
    pub config: BusConfig,
    pub producer: BusProducer,
    pub workers: Mutex<Vec<tokio::task::AbortHandle>>,
}

impl Bus {
    /// The mock, or tansu when `QUORUM_TEST_TANSU` names its binary.
    pub async fn new() -> Bus {
        let (broker, bootstrap) = match tansu::binary() {
            Some(bin) => {
                let t = tansu::Tansu::start(&bin).await;
                let b = t.bootstrap.clone();
                (Broker::Tansu(t), b)
            }
            None => {
                let m = EmbeddedBroker::start().expect("embedded broker");
                let b = m.bootstrap_servers().to_string();
                (Broker::Mock(m), b)
            }
        };
        let config = BusConfig::for_tests(bootstrap);
        let producer = BusProducer::new(&config).unwrap();
        Bus {
            broker,
            config,
            producer,
            workers: Mutex::new(Vec::new()),
        }
    }

    pub fn on_real_broker(&self) -> bool {
        matches!(self.broker, Broker::Tansu(_))
    }

    /// Stops every worker while the broker is still up (a consumer closing
    /// against a destroyed broker waits forever), then drops the broker.
    pub async fn close(self) {
        let workers: Vec<_> = self.workers.lock().unwrap().drain(..).collect();
        for w in &workers {
            w.abort();
        }
        while !workers.iter().all(|w| w.is_finished()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A member of `group` running `handler`, [`IN_FLIGHT`] messages at a time.
    pub fn worker(
        &self,
        group: &str,
        topic: Topic,
        handler: Recorder,
        shutdown: &CancellationToken,
    ) -> tokio::task::JoinHandle<Result<(), quorum_runtime::RuntimeError>> {
        self.worker_with(group, topic, Arc::new(handler), IN_FLIGHT, Metrics::new(), shutdown)
    }

    pub fn worker_with(
        &self,
        group: &str,
        topic: Topic,
        handler: Arc<dyn Handler>,
        max_in_flight: usize,
        metrics: Metrics,
        shutdown: &CancellationToken,
    ) -> tokio::task::JoinHandle<Result<(), quorum_runtime::RuntimeError>> {
        let spec = WorkerSpec {
            service: group.into(),
            group: group.into(),
            topic,
            max_in_flight,
        };
        let w = Worker::new(&self.config, spec, handler, self.producer.clone(), metrics).unwrap();
        let h = tokio::spawn(w.run(shutdown.clone()));
        self.workers.lock().unwrap().push(h.abort_handle());
        h
    }

    pub async fn send(&self, topic: Topic, key: &str, payload: &str) {
        self.producer
            .send(&OutMessage {
                topic: topic.name().into(),
                key: key.into(),
                payload: payload.as_bytes().to_vec(),
                headers: vec![],
            })
            .await
            .unwrap();
    }
}

pub async fn wait_until(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !check() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn seen(log: &Log, worker: &str) -> Vec<(String, i32, String, u32)> {
    log.lock()
        .unwrap()
        .iter()
        .filter(|e| e.0 == worker)
        .map(|e| (e.1.clone(), e.2, e.3.clone(), e.4))
        .collect()
}

impl Bus {
    /// Produces straight to one partition (the bus producer picks partitions
    /// by key), so a test can line messages of different keys up on one.
    pub async fn send_to(&self, topic: Topic, partition: i32, key: &str, payload: &str) {
        use rdkafka::producer::{FutureProducer, FutureRecord};
        let producer: FutureProducer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", &self.config.brokers)
            .create()
            .unwrap();
        producer
            .send(
                FutureRecord::to(topic.name())
                    .partition(partition)
                    .key(key)
                    .payload(payload),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .unwrap();
    }

    /// What `group` has not committed yet on each partition of `topic`
    /// (high watermark minus committed offset), read from the broker.
    pub async fn uncommitted(&self, group: &str, topic: Topic) -> Vec<(i32, i64)> {
        let c: rdkafka::consumer::BaseConsumer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", &self.config.brokers)
            .set("group.id", group)
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        tokio::task::spawn_blocking(move || quorum_runtime::worker::partition_lags(&c, topic).unwrap())
            .await
            .unwrap()
    }
}
