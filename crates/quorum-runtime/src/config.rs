//! Bus configuration shared by every worker and producer.

use std::time::Duration;

/// How to reach Kafka and how the loop behaves. Every member of every group
/// uses the same `session_timeout`, so rebalances behave the same everywhere.
#[derive(Debug, Clone)]
pub struct BusConfig {
    /// `bootstrap.servers`.
    pub brokers: String,
    /// `session.timeout.ms` for every consumer.
    pub session_timeout: Duration,
    /// `fetch.wait.max.ms`: 100 ms is a fair default; the librdkafka default of
    /// 500 ms costs about that much per hop on a quiet topic.
    pub fetch_wait_max: Duration,
    /// Attempts before a message is dead-lettered (F-BUS-3).
    pub max_attempts: u32,
    /// Base delay before a retry; grows with the attempt, plus jitter.
    pub retry_backoff: Duration,
    /// How often each worker publishes `quorum_consumer_lag` (each report
    /// costs a committed-offsets and a watermark request per partition).
    pub lag_every: Duration,
    /// Messages each worker handles at once, overriding its group's default
    /// (`WorkerSpec::max_in_flight`); one setting per process, so per service.
    pub max_in_flight: Option<usize>,
}

impl BusConfig {
    pub fn new(brokers: impl Into<String>) -> Self {
        BusConfig {
            brokers: brokers.into(),
            session_timeout: Duration::from_secs(10),
            fetch_wait_max: Duration::from_millis(100),
            max_attempts: 3,
            retry_backoff: Duration::from_millis(200),
            lag_every: Duration::from_secs(5),
            max_in_flight: None,
        }
    }

    /// Settings for tests: short session timeout so rebalances after a
    /// consumer dies take seconds, and a short fetch wait.
    pub fn for_tests(brokers: impl Into<String>) -> Self {
        BusConfig {
            session_timeout: Duration::from_secs(6),
            fetch_wait_max: Duration::from_millis(10),
            retry_backoff: Duration::from_millis(20),
            ..BusConfig::new(brokers)
        }
    }
}
