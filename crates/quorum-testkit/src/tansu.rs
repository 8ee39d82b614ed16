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
    bin: String,
    args: Vec<String>,
}

/// The binary to test against, if the environment names one.
pub fn binary() -> Option<String> {
    std::env::var("QUORUM_TEST_TANSU").ok().filter(|s| !s.trim().is_empty())
}

impl Tansu {
    /// On `QUORUM_TEST_TANSU_STORAGE` (default `memory://tansu/`; `sqlite`:
    /// a fresh sqlite file for this broker, for a tansu built with sqlite).
    pub async fn start(bin: &str) -> Tansu {
        let storage = std::env::var("QUORUM_TEST_TANSU_STORAGE").unwrap_or_else(|_| "memory://tansu/".into());
        let storage = if storage == "sqlite" {
            let dir = std::env::temp_dir().join(format!("quorum-tansu-{}", uuid_like()));
            std::fs::create_dir_all(&dir).expect("tansu data dir");
            format!("sqlite://{}", dir.join("tansu.db").display())
        } else {
            storage
        };
        Self::start_with(bin, &storage).await
    }

    /// On this storage engine (`sqlite://…` keeps topics, messages and
    /// committed offsets across [`Self::restart`]).
    pub async fn start_with(bin: &str, storage: &str) -> Tansu {
        let port = crate::free_port();
        let url = format!("tcp://127.0.0.1:{port}");
        let args: Vec<String> = [
            "broker",
            "--listener-url",
            &url,
            "--advertised-listener-url",
            &url,
            "--storage-engine",
            storage,
        ]
        .map(String::from)
        .into();
        let bootstrap = format!("127.0.0.1:{port}");
        let mut t = Tansu {
            child: Self::spawn(bin, &args),
            bootstrap,
            bin: bin.to_string(),
            args,
        };
        t.wait_listening();
        let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", &t.bootstrap)
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
        t
    }

    fn spawn(bin: &str, args: &[String]) -> Child {
        Command::new(bin)
            .args(args)
            // tansu 0.6.0 reads `sqlite:///abs/path` relative to its working
            // directory: from `/` it is the absolute path.
            .current_dir("/")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start tansu at {bin}: {e}"))
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&self.bootstrap).is_err() {
            assert!(Instant::now() < deadline, "tansu did not listen on {}", self.bootstrap);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `kill -9`, down for `down_for`, then the same broker on the same
    /// port and storage. Returns once it listens.
    pub fn restart(&mut self, down_for: Duration) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(down_for);
        self.child = Self::spawn(&self.bin, &self.args);
        self.wait_listening();
    }
}

/// A name no other test process picks at the same time.
fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

impl Drop for Tansu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
