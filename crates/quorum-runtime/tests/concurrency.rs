//! Several messages in flight per member (issue: throughput at model
//! latency): out-of-order completions commit only the finished prefix of a
//! partition, a crash redelivers the unfinished message without losing what
//! finished after it, a revoke with several in flight loses nothing, one
//! key runs one message at a time, and the in-flight gauge tells the truth.
//! No assertion here is about wall-clock time.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::{Bus, wait_until};
use quorum_events::Topic;
use quorum_runtime::{CancellationToken, Delivery, Handler, HandlerError, Metrics, OutMessage};

/// (worker, payload, partition, offset) of each message a handler starts.
type Starts = Arc<Mutex<Vec<(String, String, i32, i64)>>>;

/// A handler that records what it did and how many ran at once. Payloads
/// starting with `slow` wait for the gate, `hang` never finish, the rest
/// take `delay`.
#[derive(Default)]
struct Probe {
    name: String,
    gate: Arc<AtomicBool>,
    delay: Duration,
    /// (worker, payload, partition, offset) when a message starts.
    started: Starts,
    /// (worker, payload) when a message finishes.
    finished: Arc<Mutex<Vec<(String, String)>>>,
    running: Arc<AtomicUsize>,
    max_running: Arc<AtomicUsize>,
    /// Messages running per key, and the most ever seen for any key.
    per_key: Arc<Mutex<BTreeMap<String, usize>>>,
    max_per_key: Arc<AtomicUsize>,
}

impl Probe {
    fn named(&self, name: &str) -> Probe {
        Probe {
            name: name.into(),
            gate: self.gate.clone(),
            delay: self.delay,
            started: self.started.clone(),
            finished: self.finished.clone(),
            running: self.running.clone(),
            max_running: self.max_running.clone(),
            per_key: self.per_key.clone(),
            max_per_key: self.max_per_key.clone(),
        }
    }

    fn finished_by(&self, worker: &str) -> Vec<String> {
        let f = self.finished.lock().unwrap();
        f.iter().filter(|(w, _)| w == worker).map(|(_, p)| p.clone()).collect()
    }

    fn started_by(&self, worker: &str) -> Vec<String> {
        let s = self.started.lock().unwrap();
        s.iter().filter(|e| e.0 == worker).map(|e| e.1.clone()).collect()
    }

    fn all_finished(&self) -> BTreeSet<String> {
        self.finished.lock().unwrap().iter().map(|(_, p)| p.clone()).collect()
    }
}

#[async_trait]
impl Handler for Probe {
    async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let payload = String::from_utf8_lossy(&d.payload).into_owned();
        let key = d.key.clone().unwrap_or_default();
        self.started
            .lock()
            .unwrap()
            .push((self.name.clone(), payload.clone(), d.partition, d.offset));
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        {
            let mut pk = self.per_key.lock().unwrap();
            let n = pk.entry(key.clone()).or_insert(0);
            *n += 1;
            self.max_per_key.fetch_max(*n, Ordering::SeqCst);
        }
        if payload.starts_with("hang") {
            std::future::pending::<()>().await;
        }
        if payload.starts_with("slow") {
            while !self.gate.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        tokio::time::sleep(self.delay).await;
        *self.per_key.lock().unwrap().get_mut(&key).expect("counted above") -= 1;
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.finished.lock().unwrap().push((self.name.clone(), payload));
        Ok(vec![])
    }
}

fn lag_of(lags: &[(i32, i64)], partition: i32) -> i64 {
    lags.iter().find(|(p, _)| *p == partition).map_or(0, |(_, l)| *l)
}

async fn wait_for_lag(bus: &Bus, group: &str, topic: Topic, what: &str, check: impl Fn(&[(i32, i64)]) -> bool) {
    let start = std::time::Instant::now();
    loop {
        let lags = bus.uncommitted(group, topic).await;
        if check(&lags) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "timed out waiting for {what}: {lags:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_order_completions_commit_only_up_to_the_unfinished_message() {
    let bus = Bus::new().await;
    let stop = CancellationToken::new();
    let probe = Probe::default();
    bus.worker_with(
        "ooo",
        Topic::Completed,
        Arc::new(probe.named("w")),
        4,
        Metrics::new(),
        &stop,
    );
    // One partition, four keys: the first message waits, the next three finish.
    bus.send_to(Topic::Completed, 0, "a", "slow-0").await;
    for i in 1..4 {
        bus.send_to(Topic::Completed, 0, &format!("k{i}"), &format!("fast-{i}"))
            .await;
    }
    // Another partition, all finished: proves commits are being made.
    bus.send_to(Topic::Completed, 1, "z", "other").await;
    wait_until(
        "the three fast ones finish behind the slow one",
        Duration::from_secs(30),
        || {
            let f = probe.finished_by("w");
            ["fast-1", "fast-2", "fast-3", "other"]
                .iter()
                .all(|p| f.contains(&p.to_string()))
        },
    )
    .await;
    assert!(
        !probe.finished_by("w").contains(&"slow-0".to_string()),
        "slow-0 is still running: the others completed out of order"
    );
    wait_for_lag(&bus, "ooo", Topic::Completed, "partition 1 committed", |l| {
        lag_of(l, 1) == 0
    })
    .await;
    let lags = bus.uncommitted("ooo", Topic::Completed).await;
    assert_eq!(
        lag_of(&lags, 0),
        4,
        "nothing on partition 0 may be committed past the unfinished slow-0: {lags:?}"
    );
    probe.gate.store(true, Ordering::SeqCst);
    wait_for_lag(&bus, "ooo", Topic::Completed, "everything committed", |l| {
        l.iter().all(|(_, n)| *n == 0)
    })
    .await;
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_redelivers_the_unfinished_message_and_loses_nothing_finished_after_it() {
    let bus = Bus::new().await;
    let stop = CancellationToken::new();
    let probe = Probe::default();
    let dying = bus.worker_with(
        "crash",
        Topic::Completed,
        Arc::new(probe.named("dying")),
        4,
        Metrics::new(),
        &stop,
    );
    bus.send_to(Topic::Completed, 0, "a", "hang-0").await;
    bus.send_to(Topic::Completed, 0, "b", "m1").await;
    bus.send_to(Topic::Completed, 0, "c", "m2").await;
    bus.send_to(Topic::Completed, 1, "z", "p1").await;
    wait_until("later messages finish", Duration::from_secs(30), || {
        let f = probe.finished_by("dying");
        ["m1", "m2", "p1"].iter().all(|p| f.contains(&p.to_string()))
    })
    .await;
    wait_for_lag(&bus, "crash", Topic::Completed, "partition 1 committed", |l| {
        lag_of(l, 1) == 0
    })
    .await;
    assert_eq!(lag_of(&bus.uncommitted("crash", Topic::Completed).await, 0), 3);
    dying.abort();
    let _ = dying.await;
    // The survivor does not hang on anything: "hang-0" gets a plain handler.
    struct Plain(Probe);
    #[async_trait]
    impl Handler for Plain {
        async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
            let mut d = d.clone();
            d.payload = format!("again-{}", String::from_utf8_lossy(&d.payload)).into_bytes();
            self.0.handle(&d).await
        }
    }
    bus.worker_with(
        "crash",
        Topic::Completed,
        Arc::new(Plain(probe.named("survivor"))),
        4,
        Metrics::new(),
        &stop,
    );
    wait_until("the unfinished message is redelivered", Duration::from_secs(40), || {
        probe.finished_by("survivor").contains(&"again-hang-0".to_string())
    })
    .await;
    wait_for_lag(&bus, "crash", Topic::Completed, "everything committed", |l| {
        l.iter().all(|(_, n)| *n == 0)
    })
    .await;
    let again: BTreeSet<String> = probe.finished_by("survivor").into_iter().collect();
    // At least once: what finished after the unfinished message on its
    // partition is read again; what another partition committed is not.
    let want: BTreeSet<String> = ["again-hang-0", "again-m1", "again-m2"].map(String::from).into();
    assert_eq!(again, want);
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoke_while_several_are_in_flight_loses_nothing() {
    let bus = Bus::new().await;
    let stop = CancellationToken::new();
    let probe = Probe {
        delay: Duration::from_millis(300),
        ..Probe::default()
    };
    let metrics_a = Metrics::new();
    let a = bus.worker_with(
        "revoke",
        Topic::AgentResults,
        Arc::new(probe.named("a")),
        4,
        metrics_a.clone(),
        &stop,
    );
    let gauge_a = metrics_a.in_flight.with_label_values(&["revoke"]);
    let mut sent = BTreeSet::new();
    for i in 0..8 {
        let p = format!("m{i}");
        bus.send(Topic::AgentResults, &format!("job-{i}"), &p).await;
        sent.insert(p);
    }
    wait_until("a has several in flight", Duration::from_secs(30), || {
        gauge_a.get() >= 2
    })
    .await;
    bus.worker_with(
        "revoke",
        Topic::AgentResults,
        Arc::new(probe.named("b")),
        4,
        Metrics::new(),
        &stop,
    );
    // Keep the first member busy until the newcomer is given partitions, so
    // the rebalance takes partitions from a member with messages in flight.
    let mut i = 8;
    while probe.started_by("b").is_empty() {
        let p = format!("m{i}");
        bus.send(Topic::AgentResults, &format!("job-{i}"), &p).await;
        sent.insert(p);
        i += 1;
        assert!(i < 2000, "the newcomer never got partitions");
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    wait_until("every message handled", Duration::from_secs(60), || {
        probe.all_finished().is_superset(&sent)
    })
    .await;
    wait_for_lag(&bus, "revoke", Topic::AgentResults, "everything committed", |l| {
        l.iter().all(|(_, n)| *n == 0)
    })
    .await;
    assert!(!a.is_finished(), "the member that lost partitions keeps running");
    assert!(
        probe.max_running.load(Ordering::SeqCst) >= 2,
        "messages ran concurrently"
    );
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_of_one_key_run_one_at_a_time_in_order() {
    let bus = Bus::new().await;
    let stop = CancellationToken::new();
    let probe = Probe {
        delay: Duration::from_millis(30),
        ..Probe::default()
    };
    bus.worker_with(
        "ordered",
        Topic::AgentResults,
        Arc::new(probe.named("w")),
        4,
        Metrics::new(),
        &stop,
    );
    let want: Vec<String> = (0..6).map(|i| format!("r{i}")).collect();
    for p in &want {
        bus.send(Topic::AgentResults, "job-1", p).await;
    }
    // Other keys at the same time, so there is parallelism to refuse.
    for i in 0..6 {
        bus.send(Topic::AgentResults, &format!("other-{i}"), "x").await;
    }
    wait_until("all handled", Duration::from_secs(30), || {
        probe.finished_by("w").len() == 12
    })
    .await;
    let order: Vec<String> = probe
        .finished_by("w")
        .into_iter()
        .filter(|p| p.starts_with('r'))
        .collect();
    assert_eq!(order, want);
    assert_eq!(
        probe.max_per_key.load(Ordering::SeqCst),
        1,
        "one message per key at a time"
    );
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_flight_gauge_counts_running_messages_up_to_the_limit() {
    let bus = Bus::new().await;
    let stop = CancellationToken::new();
    let probe = Probe::default();
    let metrics = Metrics::new();
    bus.worker_with(
        "gauge",
        Topic::Completed,
        Arc::new(probe.named("w")),
        3,
        metrics.clone(),
        &stop,
    );
    for i in 0..6 {
        bus.send(Topic::Completed, &format!("job-{i}"), &format!("slow-{i}"))
            .await;
    }
    let gauge = metrics.in_flight.with_label_values(&["gauge"]);
    wait_until("three in flight", Duration::from_secs(30), || gauge.get() == 3).await;
    wait_until("three started", Duration::from_secs(10), || {
        probe.started_by("w").len() == 3
    })
    .await;
    assert_eq!(probe.max_running.load(Ordering::SeqCst), 3, "never more than the limit");
    assert!(
        metrics
            .render()
            .contains("quorum_worker_in_flight{service=\"gauge\"} 3")
    );
    probe.gate.store(true, Ordering::SeqCst);
    wait_until("all handled", Duration::from_secs(30), || {
        probe.finished_by("w").len() == 6
    })
    .await;
    wait_until("gauge back to 0", Duration::from_secs(10), || gauge.get() == 0).await;
    assert_eq!(probe.max_running.load(Ordering::SeqCst), 3);
    stop.cancel();
    bus.close().await;
}
