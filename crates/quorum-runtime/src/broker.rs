//! The embedded Kafka-protocol broker (F-BUS-4): librdkafka's mock cluster.
//!
//! Facts that shape this module (measured when the spine was designed):
//! - the mock binds a random loopback port and no API picks it, so a fixed
//!   port (`quorum broker --port N`) is a small TCP forwarder plus
//!   `rd_kafka_mock_broker_set_host_port`, so the address the broker
//!   advertises in metadata is the forwarder's;
//! - the admin API's `create_topics` times out against the mock, so topics are
//!   created through the mock's own API, from the one topology list
//!   ([`quorum_events::Topic::ALL`]), at start-up.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::net::SocketAddr;

use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, Producer};
use rdkafka_sys as rdsys;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::error::RuntimeError;
use quorum_events::Topic;

/// The single mock broker's id (librdkafka numbers mock brokers from 1).
const BROKER_ID: i32 = 1;

/// A running mock cluster with every fleet topic created. Dropping it stops
/// the broker.
pub struct EmbeddedBroker {
    cluster: *mut rdsys::rd_kafka_mock_cluster_t,
    bootstrap: String,
    forwarder: Option<JoinHandle<()>>,
    // Owns the librdkafka handle the mock cluster lives in; dropped after the
    // cluster is destroyed (see `Drop`).
    _handle: BaseProducer,
}

// SAFETY: the mock-cluster API is thread-safe (every call takes the cluster
// lock or posts an op to the mock thread), and the pointer stays valid until
// `Drop` destroys the cluster.
unsafe impl Send for EmbeddedBroker {}
unsafe impl Sync for EmbeddedBroker {}

impl EmbeddedBroker {
    /// Starts a broker on a random loopback port.
    pub fn start() -> Result<Self, RuntimeError> {
        let handle: BaseProducer = ClientConfig::new()
            .set("log_level", "3")
            .create()
            .map_err(|e| RuntimeError::Broker(format!("cannot create the mock's host handle: {e}")))?;
        // SAFETY: `handle` is a live client; the cluster is destroyed before it.
        let cluster = unsafe { rdsys::rd_kafka_mock_cluster_new(handle.client().native_ptr(), 1) };
        if cluster.is_null() {
            return Err(RuntimeError::Broker("rd_kafka_mock_cluster_new failed".into()));
        }
        // SAFETY: the cluster is live; librdkafka returns a NUL-terminated string it owns.
        let bootstrap = unsafe { CStr::from_ptr(rdsys::rd_kafka_mock_cluster_bootstraps(cluster)) }
            .to_string_lossy()
            .into_owned();
        let broker = EmbeddedBroker {
            cluster,
            bootstrap,
            forwarder: None,
            _handle: handle,
        };
        for topic in Topic::ALL {
            broker.create_topic(topic.name(), topic.partitions())?;
        }
        Ok(broker)
    }

    /// Starts a broker reachable on `127.0.0.1:port` (0 picks a free port),
    /// for service processes other than this one. Needs a Tokio runtime.
    pub async fn start_on_port(port: u16) -> Result<Self, RuntimeError> {
        let mut broker = Self::start()?;
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let public = listener.local_addr()?;
        let target: SocketAddr = broker
            .bootstrap
            .split(',')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| RuntimeError::Broker(format!("unexpected bootstrap `{}`", broker.bootstrap)))?;
        let host = CString::new("127.0.0.1").expect("no NUL");
        // SAFETY: live cluster, valid C string for the duration of the call.
        unsafe {
            rdsys::rd_kafka_mock_broker_set_host_port(broker.cluster, BROKER_ID, host.as_ptr(), public.port() as i32)
        };
        broker.forwarder = Some(tokio::spawn(forward(listener, target)));
        broker.bootstrap = public.to_string();
        Ok(broker)
    }

    /// The `bootstrap.servers` string clients use.
    pub fn bootstrap_servers(&self) -> &str {
        &self.bootstrap
    }

    /// Creates a topic (idempotent for the fleet's fixed topology).
    pub fn create_topic(&self, name: &str, partitions: i32) -> Result<(), RuntimeError> {
        let c = CString::new(name).map_err(|_| RuntimeError::Broker(format!("bad topic `{name}`")))?;
        // SAFETY: live cluster, valid C string.
        let err = unsafe { rdsys::rd_kafka_mock_topic_create(self.cluster, c.as_ptr(), partitions, 1) };
        if err != rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
            && err != rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS
        {
            return Err(RuntimeError::Broker(format!("creating topic {name}: {err:?}")));
        }
        Ok(())
    }
}

impl Drop for EmbeddedBroker {
    fn drop(&mut self) {
        if let Some(f) = self.forwarder.take() {
            f.abort();
        }
        // SAFETY: created in `start`, destroyed exactly once, before `_handle`.
        unsafe { rdsys::rd_kafka_mock_cluster_destroy(self.cluster) };
    }
}

/// Copies bytes between each accepted connection and the mock's real port.
async fn forward(listener: TcpListener, target: SocketAddr) {
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let _ = inbound.set_nodelay(true);
            match TcpStream::connect(target).await {
                Ok(mut outbound) => {
                    let _ = outbound.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
                Err(e) => tracing::warn!(error = %e, "embedded broker forwarder cannot reach the mock"),
            }
        });
    }
}
