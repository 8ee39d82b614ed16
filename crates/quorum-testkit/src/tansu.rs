//! A real Kafka-protocol broker for tests: tansu, started as its own
//! process per test (fresh state, free port), when `QUORUM_TEST_TANSU` names
//! its binary (`make tansu` installs one; `make test-broker` and `make
//! broker-smoke` set it). The runtime's bus suite and the fleet of service
//! processes run on it. Topics are created through
//! the Admin API with the partitions the contract gives them, as an
//! operator would on a real cluster.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use quorum_events::Topic;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;

pub struct Tansu {
    child: Child,
    pub bootstrap: String,
}

/// The binary to test against, if the environment names one.
pub fn binary() -> Option<String> {
    std::env::var("QUORUM_TEST_TANSU").ok().filter(|s| !s.trim().is_empty())
}

impl Tansu {
    pub async fn start(bin: &str) -> Tansu {
        let port = crate::free_port();
        let url = format!("tcp://127.0.0.1:{port}");
        let storage = std::env::var("QUORUM_TEST_TANSU_STORAGE").unwrap_or_else(|_| "memory://tansu/".into());
        let child = Command::new(bin)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &url,
                "--storage-engine",
                &storage,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start tansu at {bin}: {e}"));
        let bootstrap = format!("127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&bootstrap).is_err() {
            assert!(Instant::now() < deadline, "tansu did not listen on {bootstrap}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .create()
            .unwrap();
        let topics: Vec<NewTopic> = Topic::ALL
            .iter()
            .map(|t| NewTopic::new(t.name(), t.partitions(), TopicReplication::Fixed(1)))
            .collect();
        let results = admin
            .create_topics(
                &topics,
                &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
            )
            .await
            .expect("create topics on tansu");
        for r in results {
            if let Err((name, e)) = r
                && e != rdkafka::types::RDKafkaErrorCode::TopicAlreadyExists
            {
                panic!("creating {name} on tansu: {e}");
            }
        }
        Tansu { child, bootstrap }
    }
}

impl Drop for Tansu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
