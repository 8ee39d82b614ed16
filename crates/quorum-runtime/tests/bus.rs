//! Black-box tests of the worker loop on the embedded broker (librdkafka's
//! mock cluster) — or on a real broker, tansu, with `QUORUM_TEST_TANSU`
//! (`make test-broker`): fan-out, partition split, redelivery, retries and
//! DLQ, graceful shutdown.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use common::{Bus, IN_FLIGHT, Log, Recorder, seen, wait_until};
use quorum_events::{Topic, headers};
use quorum_runtime::{CancellationToken, Delivery, Handler, HandlerError, Metrics, OutMessage, Worker, WorkerSpec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_agent_group_receives_every_job() {
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let groups = ["agent-static", "agent-reviewer", "agent-security", "agent-tests"];
    for g in groups {
        bus.worker(g, Topic::ReviewRequested, Recorder::new(g, &log), &stop);
    }
    for i in 0..5 {
        bus.send(Topic::ReviewRequested, &format!("job-{i}"), "p").await;
    }
    wait_until("fan-out", Duration::from_secs(30), || {
        groups.iter().all(|g| seen(&log, g).len() >= 5)
    })
    .await;
    for g in groups {
        let keys: BTreeSet<String> = seen(&log, g).into_iter().map(|e| e.0).collect();
        assert_eq!(keys.len(), 5, "{g} saw {keys:?}");
    }
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_members_of_one_group_split_the_six_partitions() {
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    bus.worker("split", Topic::AgentResults, Recorder::new("a", &log), &stop);
    bus.worker("split", Topic::AgentResults, Recorder::new("b", &log), &stop);
    // Keep producing until both members handle messages (both joined).
    let mut i = 0;
    while seen(&log, "a").is_empty() || seen(&log, "b").is_empty() {
        bus.send(Topic::AgentResults, &format!("warm-{i}"), "warm").await;
        i += 1;
        assert!(i < 600, "both members never got messages");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = log.lock().unwrap().len();
    for k in 0..120 {
        bus.send(Topic::AgentResults, &format!("k{k}"), "batch").await;
    }
    let start = std::time::Instant::now();
    while log.lock().unwrap()[before..].iter().filter(|e| e.3 == "batch").count() < 120 {
        if start.elapsed() > Duration::from_secs(30) {
            let l = log.lock().unwrap();
            let got: BTreeSet<&String> = l[before..].iter().filter(|e| e.3 == "batch").map(|e| &e.1).collect();
            let per: Vec<(String, i32)> = l[before..]
                .iter()
                .filter(|e| e.3 == "batch")
                .map(|e| (e.0.clone(), e.2))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            panic!(
                "batch incomplete: {} handled; (worker, partition) seen: {per:?}",
                got.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let batch: Vec<_> = log.lock().unwrap()[before..]
        .iter()
        .filter(|e| e.3 == "batch")
        .cloned()
        .collect();
    let keys: BTreeSet<&String> = batch.iter().map(|e| &e.1).collect();
    assert_eq!(keys.len(), 120, "each message handled once at steady state");
    assert_eq!(batch.len(), 120);
    let parts = |w: &str| -> BTreeSet<i32> { batch.iter().filter(|e| e.0 == w).map(|e| e.2).collect() };
    let (pa, pb) = (parts("a"), parts("b"));
    assert!(!pa.is_empty() && !pb.is_empty(), "a={pa:?} b={pb:?}");
    assert!(pa.is_disjoint(&pb), "a={pa:?} b={pb:?}");
    assert_eq!(pa.union(&pb).count(), 6);
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncommitted_message_is_redelivered_after_its_consumer_dies() {
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let mut hanging = Recorder::new("dying", &log);
    hanging.hang.insert("work".into());
    let dying = bus.worker("redeliver", Topic::Aggregated, hanging, &stop);
    bus.send(Topic::Aggregated, "job-1", "work").await;
    wait_until("first delivery", Duration::from_secs(30), || {
        !seen(&log, "dying").is_empty()
    })
    .await;
    dying.abort();
    let _ = dying.await;
    bus.worker("redeliver", Topic::Aggregated, Recorder::new("survivor", &log), &stop);
    wait_until("redelivery", Duration::from_secs(40), || {
        !seen(&log, "survivor").is_empty()
    })
    .await;
    assert_eq!(seen(&log, "survivor")[0].2, "work");
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_message_reaches_the_dlq_after_three_attempts_and_the_partition_moves_on() {
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let mut handler = Recorder::new("w", &log);
    handler.fail.insert("poison".into(), HandlerError::Retryable);
    bus.worker("poisoned", Topic::Completed, handler, &stop);
    bus.worker("dlq-reader", Topic::Dlq, Recorder::new("dlq", &log), &stop);
    // A second group on the same topic must not see the retries.
    bus.worker("bystander", Topic::Completed, Recorder::new("bystander", &log), &stop);
    // Same key: same partition, so the later messages queue behind the poison.
    for p in ["poison", "after-1", "after-2", "after-3"] {
        bus.send(Topic::Completed, "job-x", p).await;
    }
    wait_until("dlq", Duration::from_secs(40), || !seen(&log, "dlq").is_empty()).await;
    wait_until("later messages", Duration::from_secs(20), || {
        seen(&log, "w").iter().filter(|e| e.2.starts_with("after")).count() == 3
    })
    .await;
    let attempts: Vec<u32> = seen(&log, "w")
        .iter()
        .filter(|e| e.2 == "poison")
        .map(|e| e.3)
        .collect();
    assert_eq!(attempts, vec![1, 2, 3]);
    let dlq = seen(&log, "dlq");
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].0, "job-x", "DLQ keeps the original key");
    assert_eq!(dlq[0].2, "poison", "DLQ keeps the original payload");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let bystander = seen(&log, "bystander");
    assert_eq!(bystander.len(), 4, "other groups see each message once: {bystander:?}");
    stop.cancel();
    bus.close().await;
}

/// Reads the DLQ with a plain consumer to check the headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_message_goes_to_the_dlq_at_once_with_where_it_came_from() {
    use rdkafka::ClientConfig;
    use rdkafka::Message;
    use rdkafka::consumer::{Consumer, StreamConsumer};
    use rdkafka::message::Headers;

    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let mut handler = Recorder::new("w", &log);
    handler.fail.insert("garbage".into(), HandlerError::Invalid);
    bus.worker("strict", Topic::IndexRequested, handler, &stop);
    bus.send(Topic::IndexRequested, "o/r", "garbage").await;

    let reader: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bus.config.brokers)
        .set("group.id", "inspect")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    reader.subscribe(&[Topic::Dlq.name()]).unwrap();
    let msg = tokio::time::timeout(Duration::from_secs(40), reader.recv())
        .await
        .expect("a DLQ message")
        .unwrap();
    let h: HashMap<String, String> = msg
        .headers()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h.key.to_string(),
                String::from_utf8_lossy(h.value.unwrap_or_default()).into_owned(),
            )
        })
        .collect();
    assert_eq!(h[headers::DLQ_TOPIC], Topic::IndexRequested.name());
    assert_eq!(h[headers::DLQ_ERROR_KIND], "invalid");
    assert!(h[headers::DLQ_ERROR].contains("cannot handle garbage"), "{h:?}");
    assert_eq!(h[headers::DLQ_OFFSET], "0");
    assert_eq!(h[headers::DLQ_GROUP], "strict");
    assert_eq!(h[headers::ATTEMPT], "1");
    assert!(h.contains_key(headers::TRACEPARENT));
    assert_eq!(seen(&log, "w").len(), 1, "invalid messages are not retried");
    stop.cancel();
    bus.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_the_message_in_hand_and_commits_it() {
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let mut slow = Recorder::new("slow", &log);
    slow.delay = Duration::from_millis(1500);
    let handle = bus.worker("drain", Topic::Completed, slow, &stop);
    bus.send(Topic::Completed, "job-1", "slow-work").await;
    wait_until("start", Duration::from_secs(30), || !seen(&log, "slow").is_empty()).await;
    stop.cancel();
    handle.await.unwrap().unwrap();
    // A new member of the group must not see the finished message again.
    let stop2 = CancellationToken::new();
    bus.worker("drain", Topic::Completed, Recorder::new("next", &log), &stop2);
    bus.send(Topic::Completed, "job-2", "marker").await;
    wait_until("marker", Duration::from_secs(30), || !seen(&log, "next").is_empty()).await;
    let next: Vec<String> = seen(&log, "next").into_iter().map(|e| e.2).collect();
    assert_eq!(next, vec!["marker".to_string()]);
    stop2.cancel();
    bus.close().await;
}

/// A member busy with a long handler keeps polling, so a newcomer joins and
/// is given partitions while that handler is still running, instead of
/// waiting for it as it would behind a member that stopped polling. (On the
/// mock cluster a cooperative rebalance takes two rounds of about
/// `session.timeout.ms − 1 s` each, so ~10 s with the test settings.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_handler_does_not_freeze_its_group() {
    struct Busy {
        started: Arc<std::sync::atomic::AtomicBool>,
        finished: Arc<std::sync::atomic::AtomicBool>,
    }
    #[async_trait]
    impl Handler for Busy {
        async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
            if d.payload == b"long-review" {
                self.started.store(true, std::sync::atomic::Ordering::SeqCst);
                tokio::time::sleep(Duration::from_secs(40)).await;
                self.finished.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(vec![])
        }
    }
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spec = WorkerSpec {
        service: "long".into(),
        group: "long".into(),
        topic: Topic::Aggregated,
        max_in_flight: IN_FLIGHT,
    };
    let busy = Busy {
        started: started.clone(),
        finished: finished.clone(),
    };
    let w = Worker::new(&bus.config, spec, Arc::new(busy), bus.producer.clone(), Metrics::new()).unwrap();
    let h = tokio::spawn(w.run(stop.clone()));
    bus.workers.lock().unwrap().push(h.abort_handle());
    bus.send(Topic::Aggregated, "first", "long-review").await;
    wait_until("busy member starts", Duration::from_secs(30), || {
        started.load(std::sync::atomic::Ordering::SeqCst)
    })
    .await;
    bus.worker("long", Topic::Aggregated, Recorder::new("newcomer", &log), &stop);
    // Offer work on every partition until the newcomer takes some.
    let mut i = 0;
    while seen(&log, "newcomer").is_empty() && !finished.load(std::sync::atomic::Ordering::SeqCst) {
        bus.send(Topic::Aggregated, &format!("k{i}"), "quick").await;
        i += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !finished.load(std::sync::atomic::Ordering::SeqCst),
        "the newcomer was served only after the long handler ended"
    );
    stop.cancel();
    bus.close().await;
}

/// A dead-lettered message can be listed and replayed; the replay reaches
/// only the group that gave up on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_lettered_message_can_be_listed_and_replayed_to_its_group() {
    use quorum_runtime::dlq;
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let mut strict = Recorder::new("strict", &log);
    strict.fail.insert("bad".into(), HandlerError::Invalid);
    bus.worker("fails", Topic::ReviewRequested, strict, &stop);
    bus.worker("other", Topic::ReviewRequested, Recorder::new("other", &log), &stop);
    bus.send(Topic::ReviewRequested, "job-9", "bad").await;
    wait_until("both groups saw it", Duration::from_secs(30), || {
        !seen(&log, "strict").is_empty() && !seen(&log, "other").is_empty()
    })
    .await;
    let entries = dlq::read_all(&bus.config, Duration::from_secs(2)).await.unwrap();
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!((e.key.as_str(), e.payload.as_slice()), ("job-9", b"bad".as_slice()));
    assert_eq!(e.header(headers::DLQ_GROUP).as_deref(), Some("fails"));
    // The fixed handler of the group that gave up gets it again, as attempt 1.
    let replayer = Recorder::new("fixed", &log);
    bus.worker("fails", Topic::ReviewRequested, replayer, &stop);
    dlq::replay(&bus.producer, e).await.unwrap();
    wait_until("replay", Duration::from_secs(40), || {
        seen(&log, "fixed").iter().any(|x| x.2 == "bad") || seen(&log, "strict").len() > 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let again: Vec<u32> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|x| (x.0 == "fixed" || x.0 == "strict") && x.3 == "bad")
        .map(|x| x.4)
        .collect();
    assert_eq!(again, vec![1, 1], "first delivery, then the replay as attempt 1");
    assert_eq!(seen(&log, "other").len(), 1, "the other group does not see the replay");
    stop.cancel();
    bus.close().await;
}

/// `quorum_consumer_lag{group, partition}` counts what waits behind the
/// message in hand on its partition, and falls back to 0 once the group has
/// committed everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_lag_counts_waiting_messages_per_partition_and_drains_to_zero() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    struct Gate {
        open: Arc<AtomicBool>,
        handled: Arc<AtomicUsize>,
    }
    #[async_trait]
    impl Handler for Gate {
        async fn handle(&self, _: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
            while !self.open.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            self.handled.fetch_add(1, Ordering::SeqCst);
            Ok(vec![])
        }
    }
    let bus = Bus::new().await;
    let mut config = bus.config.clone();
    config.lag_every = Duration::from_millis(200);
    let open = Arc::new(AtomicBool::new(false));
    let handled = Arc::new(AtomicUsize::new(0));
    let metrics = Metrics::new();
    let spec = WorkerSpec {
        service: "laggy".into(),
        group: "laggy".into(),
        topic: Topic::Completed,
        max_in_flight: IN_FLIGHT,
    };
    let gate = Gate {
        open: open.clone(),
        handled: handled.clone(),
    };
    let stop = CancellationToken::new();
    let w = Worker::new(&config, spec, Arc::new(gate), bus.producer.clone(), metrics.clone()).unwrap();
    let h = tokio::spawn(w.run(stop.clone()));
    bus.workers.lock().unwrap().push(h.abort_handle());
    // One key, so one partition: the first message blocks the other four.
    for i in 0..5 {
        bus.send(Topic::Completed, "same-key", &format!("m{i}")).await;
    }
    let lag = |m: &Metrics| -> Vec<(String, i64)> {
        (0..Topic::Completed.partitions())
            .map(|p| {
                let p = p.to_string();
                let v = m.consumer_lag.with_label_values(&["laggy", &p]).get();
                (p, v)
            })
            .filter(|(_, v)| *v != 0)
            .collect()
    };
    wait_until("lag of 5 on one partition", Duration::from_secs(30), || {
        let l = lag(&metrics);
        l.len() == 1 && l[0].1 == 5
    })
    .await;
    let busy_partition = lag(&metrics)[0].0.clone();
    open.store(true, Ordering::SeqCst);
    wait_until("all handled", Duration::from_secs(30), || {
        handled.load(Ordering::SeqCst) == 5
    })
    .await;
    wait_until("lag back to 0", Duration::from_secs(30), || lag(&metrics).is_empty()).await;
    let text = metrics.render();
    assert!(
        text.contains(&format!(
            "quorum_consumer_lag{{group=\"laggy\",partition=\"{busy_partition}\"}} 0"
        )),
        "the drained partition is reported as 0, not dropped:\n{text}"
    );
    stop.cancel();
    bus.close().await;
}

/// A handler whose output the producer refuses as too large is not retried
/// (the same input makes the same output): the input goes to the DLQ after
/// one attempt, and the partition moves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_too_large_to_publish_dead_letters_the_input_at_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    struct Bloated {
        calls: Arc<AtomicUsize>,
    }
    #[async_trait]
    impl Handler for Bloated {
        async fn handle(&self, d: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let size = if d.payload == b"huge" { 2 << 20 } else { 10 };
            Ok(vec![OutMessage {
                topic: Topic::Aggregated.name().into(),
                key: "k".into(),
                payload: vec![b'x'; size],
                headers: vec![],
            }])
        }
    }
    let bus = Bus::new().await;
    let log: Log = Default::default();
    let stop = CancellationToken::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let spec = WorkerSpec {
        service: "bloated".into(),
        group: "bloated".into(),
        topic: Topic::Completed,
        max_in_flight: IN_FLIGHT,
    };
    let w = Worker::new(
        &bus.config,
        spec,
        Arc::new(Bloated { calls: calls.clone() }),
        bus.producer.clone(),
        Metrics::new(),
    )
    .unwrap();
    let h = tokio::spawn(w.run(stop.clone()));
    bus.workers.lock().unwrap().push(h.abort_handle());
    bus.worker("dlq-reader", Topic::Dlq, Recorder::new("dlq", &log), &stop);
    bus.send(Topic::Completed, "job-big", "huge").await;
    bus.send(Topic::Completed, "job-big", "small").await;
    wait_until("dlq", Duration::from_secs(40), || !seen(&log, "dlq").is_empty()).await;
    wait_until("the next message", Duration::from_secs(20), || {
        calls.load(Ordering::SeqCst) >= 2
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "one attempt for the huge one, one for the next"
    );
    let dlq = seen(&log, "dlq");
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].2, "huge");
    stop.cancel();
    bus.close().await;
}
