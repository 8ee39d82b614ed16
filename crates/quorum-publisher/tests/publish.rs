//! The publisher against a scripted sink (failures, refused inline lines)
//! and against the real local sink (fingerprints across pushes).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use quorum_core::{
    AgentRole, Category, Evidence, FileChange, FileStatus, Finding, PublishMode, Review, ReviewRequest, RunState,
    Severity, Verdict,
};
use quorum_events::{CompletedReview, JudgedFinding, SCHEMA_VERSION};
use quorum_publisher::LocalSink;
use quorum_publisher::{Outcome, Publisher};
use quorum_runtime::Metrics;
use quorum_scm::{CheckStatus, Posted, ReviewSink, SinkError};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::store_contract::sample_job;

/// A sink that fails `failures` times, refuses inline comments on `refuse_line`, and records posts.
#[derive(Default)]
struct ScriptedSink {
    failures: Mutex<u32>,
    refuse_line: Option<u32>,
    /// Refuse like GitHub's review endpoint: without saying which comment.
    anonymous: bool,
    posted: Mutex<Vec<Review>>,
    statuses: Mutex<Vec<CheckStatus>>,
}

#[async_trait]
impl ReviewSink for ScriptedSink {
    async fn existing_fingerprints(&self, _: &ReviewRequest) -> Result<Vec<String>, SinkError> {
        Ok(vec![])
    }
    async fn post(&self, _: &ReviewRequest, review: &Review) -> Result<Posted, SinkError> {
        {
            let mut f = self.failures.lock().unwrap();
            if *f > 0 {
                *f -= 1;
                return Err(SinkError::Failed("HTTP 502 from the SCM".into()));
            }
        }
        if let Some(i) = review.inline.iter().position(|c| Some(c.line) == self.refuse_line) {
            return Err(SinkError::InlineRejected {
                index: (!self.anonymous).then_some(i),
                reason: "line must be part of the diff".into(),
            });
        }
        self.posted.lock().unwrap().push(review.clone());
        Ok(Posted {
            location: "scripted".into(),
        })
    }
    async fn report_status(&self, _: &ReviewRequest, status: &CheckStatus) -> Result<(), SinkError> {
        self.statuses.lock().unwrap().push(status.clone());
        Ok(())
    }
}

fn finding(line: u32) -> Finding {
    Finding {
        file: "a.py".into(),
        line,
        start_line: None,
        category: Category::Bug,
        severity: Severity::Major,
        confidence: 0.9,
        title: format!("issue on {line}"),
        explanation: "why".into(),
        suggestion: None,
        rule: Some(format!("rule-{line}")),
        agent: AgentRole::Static,
        evidence: vec![Evidence {
            source: "rule".into(),
            detail: "d".into(),
        }],
        agreed_by: vec![],
    }
}

fn completed(job: &str, lines: &[u32], mode: PublishMode) -> CompletedReview {
    let mut request = sample_job(job, 1).request;
    request.policy.publish_mode = mode;
    request.files = vec![FileChange {
        path: "a.py".into(),
        old_path: None,
        status: FileStatus::Modified,
        patch: Some("@@ -1,3 +1,4 @@\n a\n+b\n c\n d\n".into()),
        omitted: None,
    }];
    CompletedReview {
        schema_version: SCHEMA_VERSION,
        request,
        judged: lines
            .iter()
            .map(|l| JudgedFinding {
                finding: finding(*l),
                keep: true,
                reason: "ok".into(),
                suppressed_by: None,
            })
            .chain(std::iter::once(JudgedFinding {
                finding: finding(3),
                keep: false,
                reason: "not in the diff".into(),
                suppressed_by: None,
            }))
            .collect(),
        verdict: Verdict::RequestChanges,
        summary: "s".into(),
        agents: vec![],
    }
}

async fn setup(sink: Arc<dyn ReviewSink>, job: &str) -> (Publisher, Arc<dyn StateStore>) {
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job(job, 1)).await.unwrap();
    (Publisher::new(store.clone(), sink, Metrics::new()), store)
}

#[tokio::test]
async fn one_review_per_job_even_when_redelivered() {
    let sink = Arc::new(ScriptedSink::default());
    let (p, store) = setup(sink.clone(), "j").await;
    let c = completed("j", &[2], PublishMode::Direct);
    assert_eq!(p.publish(&c).await.unwrap(), Outcome::Posted);
    assert_eq!(p.publish(&c).await.unwrap(), Outcome::AlreadyPublished);
    let posted = sink.posted.lock().unwrap().clone();
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].inline.len(), 1);
    assert_eq!(posted[0].rejected.len(), 1, "rejected findings travel with the review");
    assert_eq!(store.get_run("j").await.unwrap().unwrap().state, RunState::Published);
    // The stored review says where it was posted (the console links it).
    let stored: Review = serde_json::from_str(&store.get_review("j").await.unwrap().unwrap()).unwrap();
    assert_eq!(stored.location.as_deref(), Some("scripted"));
    assert_eq!(posted[0].location, None, "a sink is never handed a location");
}

#[tokio::test]
async fn a_failed_post_releases_the_guard_so_the_retry_posts() {
    let sink = Arc::new(ScriptedSink {
        failures: Mutex::new(1),
        ..Default::default()
    });
    let (p, store) = setup(sink.clone(), "j").await;
    let c = completed("j", &[2], PublishMode::Direct);
    assert!(p.publish(&c).await.is_err());
    assert_eq!(store.get_run("j").await.unwrap().unwrap().state, RunState::Failed);
    assert_eq!(p.publish(&c).await.unwrap(), Outcome::Posted);
    assert_eq!(sink.posted.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_refused_inline_comment_moves_to_the_body_and_is_not_lost() {
    let sink = Arc::new(ScriptedSink {
        refuse_line: Some(2),
        ..Default::default()
    });
    let (p, _) = setup(sink.clone(), "j").await;
    p.publish(&completed("j", &[2, 4], PublishMode::Direct)).await.unwrap();
    let posted = sink.posted.lock().unwrap();
    let r = &posted[0];
    assert_eq!(r.inline.iter().map(|c| c.line).collect::<Vec<_>>(), vec![4]);
    assert_eq!(r.body_comments.iter().map(|c| c.line).collect::<Vec<_>>(), vec![2]);
}

#[tokio::test]
async fn a_refusal_that_names_no_comment_moves_them_all_and_the_check_completes() {
    let sink = Arc::new(ScriptedSink {
        refuse_line: Some(2),
        anonymous: true,
        ..Default::default()
    });
    let (p, store) = setup(sink.clone(), "j").await;
    p.publish(&completed("j", &[2, 4], PublishMode::Direct)).await.unwrap();
    assert!(
        store.get_review("j").await.unwrap().is_some(),
        "what was posted is stored"
    );
    let posted = sink.posted.lock().unwrap().clone();
    let r = &posted[0];
    assert!(r.inline.is_empty());
    assert_eq!(r.body_comments.iter().map(|c| c.line).collect::<Vec<_>>(), vec![2, 4]);
    let statuses = sink.statuses.lock().unwrap();
    assert!(
        matches!(
            statuses.as_slice(),
            [CheckStatus::Completed {
                verdict: Verdict::RequestChanges,
                findings: 2,
                ..
            }]
        ),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn draft_mode_stores_instead_of_posting() {
    let sink = Arc::new(ScriptedSink::default());
    let (p, store) = setup(sink.clone(), "j").await;
    assert_eq!(
        p.publish(&completed("j", &[2], PublishMode::Draft)).await.unwrap(),
        Outcome::Drafted
    );
    assert!(sink.posted.lock().unwrap().is_empty());
    assert!(store.get_draft("j").await.unwrap().is_some());
    assert_eq!(store.get_run("j").await.unwrap().unwrap().state, RunState::Draft);
}

#[tokio::test]
async fn a_re_review_after_a_push_does_not_repeat_comments() {
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let sink = Arc::new(LocalSink::new(store.clone(), false));
    let p = Publisher::new(store.clone(), sink, Metrics::new());
    for job in ["push-1", "push-2"] {
        store.put_job(&sample_job(job, 1)).await.unwrap();
    }
    p.publish(&completed("push-1", &[2], PublishMode::Direct))
        .await
        .unwrap();
    // Same PR (sample_job uses one repo and number), same finding, new head.
    p.publish(&completed("push-2", &[2, 4], PublishMode::Direct))
        .await
        .unwrap();
    let second: Review = serde_json::from_str(&store.get_review("push-2").await.unwrap().unwrap()).unwrap();
    assert_eq!(
        second.inline.iter().map(|c| c.line).collect::<Vec<_>>(),
        vec![4],
        "only the new finding"
    );
}

#[tokio::test]
async fn draft_then_approve_publishes_and_discard_drops() {
    use quorum_publisher::{DraftDecision, DraftError, decide_draft};
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let sink = Arc::new(ScriptedSink::default());
    let p = Publisher::new(store.clone(), sink.clone(), Metrics::new());
    for job in ["keep", "drop"] {
        store.put_job(&sample_job(job, 1)).await.unwrap();
        p.publish(&completed(job, &[2], PublishMode::Draft)).await.unwrap();
    }
    assert!(sink.posted.lock().unwrap().is_empty(), "drafts are not posted");
    let state = decide_draft(store.as_ref(), sink.as_ref(), "keep", DraftDecision::Approve)
        .await
        .unwrap();
    assert_eq!(state, RunState::Approved);
    assert_eq!(sink.posted.lock().unwrap().len(), 1);
    assert_eq!(store.get_run("keep").await.unwrap().unwrap().state, RunState::Approved);
    let stored: Review = serde_json::from_str(&store.get_review("keep").await.unwrap().unwrap()).unwrap();
    assert_eq!(
        stored.location.as_deref(),
        Some("scripted"),
        "an approved draft says where it went"
    );
    let state = decide_draft(store.as_ref(), sink.as_ref(), "drop", DraftDecision::Discard)
        .await
        .unwrap();
    assert_eq!(state, RunState::Discarded);
    assert_eq!(
        sink.posted.lock().unwrap().len(),
        1,
        "a discarded draft is never posted"
    );
    // Deciding twice is refused with a reason.
    let again = decide_draft(store.as_ref(), sink.as_ref(), "keep", DraftDecision::Approve).await;
    assert!(matches!(again, Err(DraftError::NoDraft(_))));
}

#[tokio::test]
async fn a_redelivery_after_posting_but_before_the_commit_posts_nothing() {
    // The crash window: the review was posted, the offset not committed, so
    // `review.completed` arrives again (possibly at another replica).
    let sink = Arc::new(ScriptedSink::default());
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job("j", 1)).await.unwrap();
    let first = Publisher::new(store.clone(), sink.clone(), Metrics::new());
    let replica = Publisher::new(store.clone(), sink.clone(), Metrics::new());
    let c = completed("j", &[2], PublishMode::Direct);
    first.publish(&c).await.unwrap();
    assert_eq!(replica.publish(&c).await.unwrap(), Outcome::AlreadyPublished);
    assert_eq!(sink.posted.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_publisher_that_crashed_before_posting_does_not_block_the_review() {
    let sink = Arc::new(ScriptedSink::default());
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job("j", 1)).await.unwrap();
    // The crashed replica took the lease and died before posting.
    assert!(store.acquire_lease("publish:j", "crashed", 100).await.unwrap());
    let p =
        Publisher::new(store.clone(), sink.clone(), Metrics::new()).with_lease(std::time::Duration::from_millis(100));
    let c = completed("j", &[2], PublishMode::Direct);
    // It waits for the lease to lapse (rather than spending the message's
    // attempts at once) and takes it over.
    assert_eq!(
        p.publish(&c).await.unwrap(),
        Outcome::Posted,
        "the lapsed lease is taken over"
    );
    assert_eq!(sink.posted.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_publisher_waiting_on_a_live_one_sees_its_review_and_posts_nothing() {
    let sink = Arc::new(ScriptedSink::default());
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job("j", 1)).await.unwrap();
    // A live replica holds the lease and finishes while this one waits.
    assert!(store.acquire_lease("publish:j", "live", 60_000).await.unwrap());
    let p = Publisher::new(store.clone(), sink.clone(), Metrics::new()).with_lease(std::time::Duration::from_secs(60));
    let finisher = {
        let store = store.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            store
                .set_run_state("j", quorum_core::RunState::Published, None)
                .await
                .unwrap();
        })
    };
    let c = completed("j", &[2], PublishMode::Direct);
    assert_eq!(p.publish(&c).await.unwrap(), Outcome::AlreadyPublished);
    finisher.await.unwrap();
    assert!(sink.posted.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_lease_that_never_lapses_is_a_retryable_error_after_one_lease() {
    let sink = Arc::new(ScriptedSink::default());
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job("j", 1)).await.unwrap();
    assert!(store.acquire_lease("publish:j", "stuck", 60_000).await.unwrap());
    let p =
        Publisher::new(store.clone(), sink.clone(), Metrics::new()).with_lease(std::time::Duration::from_millis(300));
    let busy = p.publish(&completed("j", &[2], PublishMode::Direct)).await;
    assert!(
        matches!(busy, Err(quorum_runtime::HandlerError::Retryable(_))),
        "{busy:?}"
    );
    assert!(sink.posted.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_retry_takes_back_the_lease_its_first_attempt_could_not_release() {
    // The first attempt took the lease and failed after it (the store went
    // down), so the lease outlived it. Its retry, the same holder, goes on
    // at once; a minute-long lease says any wait would have shown.
    let sink = Arc::new(ScriptedSink::default());
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job("j", 1)).await.unwrap();
    assert!(store.acquire_lease("publish:j", "delivery-7", 60_000).await.unwrap());
    let p = Publisher::new(store.clone(), sink.clone(), Metrics::new()).with_lease(std::time::Duration::from_secs(60));
    let c = completed("j", &[2], PublishMode::Direct);
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(30), p.publish_as(&c, "delivery-7"))
        .await
        .expect("the retry waited on its own lease");
    assert_eq!(outcome.unwrap(), Outcome::Posted);
    assert_eq!(sink.posted.lock().unwrap().len(), 1);
}

/// The operator API's path: a decision on `review.draft.decided` is applied by
/// the publisher service (the only writer to the SCM); a redelivery is a
/// no-op and a decision on a run without a draft goes to the DLQ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draft_decisions_on_the_bus_are_applied_by_the_publisher() {
    use quorum_events::{DraftDecided, DraftDecision, Topic, headers};
    use quorum_runtime::{CancellationToken, ServiceContext};
    use std::time::{Duration, Instant};

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let sink = Arc::new(ScriptedSink::default());
    let p = Publisher::new(store.clone(), sink.clone(), Metrics::new());
    store.put_job(&sample_job("d1", 1)).await.unwrap();
    store.put_job(&sample_job("live", 1)).await.unwrap();
    p.publish(&completed("d1", &[2], PublishMode::Draft)).await.unwrap();
    p.publish(&completed("live", &[2], PublishMode::Direct)).await.unwrap();
    let stop = CancellationToken::new();
    let handle = quorum_publisher::start(
        "127.0.0.1:0".parse().unwrap(),
        &ctx,
        store.clone(),
        sink.clone(),
        stop.clone(),
    )
    .await
    .unwrap();
    let decide = |job: &str| DraftDecided {
        schema_version: SCHEMA_VERSION,
        job_id: job.into(),
        decision: DraftDecision::Approve,
        operator: "test".into(),
    };
    ctx.producer.publish(&decide("d1")).await.unwrap();
    ctx.producer.publish(&decide("d1")).await.unwrap();
    ctx.producer.publish(&decide("live")).await.unwrap();
    let start = Instant::now();
    let dlq = loop {
        let dlq = quorum_runtime::inspect::read_topic(&ctx.bus, Topic::Dlq, Duration::from_millis(500))
            .await
            .unwrap();
        let approved = store.get_run("d1").await.unwrap().unwrap().state == RunState::Approved;
        if approved && !dlq.is_empty() {
            break dlq;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "approved {approved}, dlq {}",
            dlq.len()
        );
    };
    assert_eq!(
        sink.posted.lock().unwrap().len(),
        2,
        "the live review, then the approved draft, once"
    );
    assert_eq!(dlq.len(), 1, "only the decision on a run that never was a draft");
    assert!(dlq[0].header(headers::DLQ_ERROR).unwrap().contains("state: published"));
    stop.cancel();
    handle.wait().await.unwrap();
}

/// A `testing` note at minor severity: what the tests agent says on nearly every PR.
fn untested(line: u32) -> Finding {
    Finding {
        category: Category::Testing,
        severity: Severity::Minor,
        title: "Behaviour changed without a test change".into(),
        rule: Some("untested-change".into()),
        agent: AgentRole::Tests,
        ..finding(line)
    }
}

fn with_untested_note(job: &str) -> CompletedReview {
    let mut c = completed(job, &[4], PublishMode::Direct);
    c.judged.push(JudgedFinding {
        finding: untested(2),
        keep: true,
        reason: "ok".into(),
        suppressed_by: None,
    });
    c
}

#[tokio::test]
async fn low_severity_notes_go_in_the_body_by_default_and_as_the_policy_says() {
    let sink = Arc::new(ScriptedSink::default());
    let (p, _) = setup(sink.clone(), "j").await;
    p.publish(&with_untested_note("j")).await.unwrap();
    let r = sink.posted.lock().unwrap()[0].clone();
    assert_eq!(
        r.inline.iter().map(|c| c.line).collect::<Vec<_>>(),
        vec![4],
        "only the bug inline"
    );
    assert_eq!(r.notes.iter().map(|n| n.line).collect::<Vec<_>>(), vec![2]);
    assert!(
        r.render_body()
            .contains("**Also noted (1):** Behaviour changed without a test change (testing, minor): `a.py:2`"),
        "{}",
        r.render_body()
    );

    // `.quorum.yml` `low_severity: inline`, carried on the request.
    let mut inline = with_untested_note("k");
    inline.request.policy.inline.low_severity = quorum_core::LowSeverity::Inline;
    let (p, _) = setup(sink.clone(), "k").await;
    p.publish(&inline).await.unwrap();
    let r = sink.posted.lock().unwrap()[1].clone();
    assert_eq!(r.inline.iter().map(|c| c.line).collect::<Vec<_>>(), vec![4, 2]);
    assert!(r.notes.is_empty());

    // `low_severity: off`.
    let mut off = with_untested_note("l");
    off.request.policy.inline.low_severity = quorum_core::LowSeverity::Off;
    let (p, _) = setup(sink.clone(), "l").await;
    p.publish(&off).await.unwrap();
    let r = sink.posted.lock().unwrap()[2].clone();
    assert_eq!(r.inline.iter().map(|c| c.line).collect::<Vec<_>>(), vec![4]);
    assert!(r.notes.is_empty() && !r.render_body().contains("Also noted"));
}

#[tokio::test]
async fn a_grouped_note_is_not_repeated_after_a_push() {
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let sink = Arc::new(LocalSink::new(store.clone(), false));
    let p = Publisher::new(store.clone(), sink, Metrics::new());
    for job in ["push-1", "push-2"] {
        store.put_job(&sample_job(job, 1)).await.unwrap();
        p.publish(&with_untested_note(job)).await.unwrap();
    }
    let first: Review = serde_json::from_str(&store.get_review("push-1").await.unwrap().unwrap()).unwrap();
    assert_eq!(first.notes.len(), 1);
    let second: Review = serde_json::from_str(&store.get_review("push-2").await.unwrap().unwrap()).unwrap();
    assert!(second.notes.is_empty() && second.inline.is_empty(), "{second:#?}");
}

/// A `review.completed` written before the policy carried `inline` still
/// decodes, and gets the default (notes grouped).
#[test]
fn a_completed_review_without_the_inline_policy_decodes() {
    use quorum_events::Payload;
    let mut v = serde_json::to_value(with_untested_note("old")).unwrap();
    v["request"]["policy"]
        .as_object_mut()
        .unwrap()
        .remove("inline")
        .unwrap();
    let c = CompletedReview::decode(&serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(c.request.policy.inline, quorum_core::InlinePolicy::default());
}

/// The publisher service on the embedded broker, over a store that fails
/// right after the post: recording the review fails, and so do releasing
/// the lease and marking the run failed (the store is gone, as in a Redis
/// restart). The message is retried as a new copy, which must take its own
/// process's lease back, not wait it out (two minutes) and dead-letter the
/// review, as it did in `make chaos` on tansu.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outage_after_the_post_is_retried_to_published_without_waiting_out_the_lease() {
    use quorum_events::Topic;
    use quorum_runtime::{CancellationToken, ServiceContext};
    use quorum_testkit::faulty_store::FaultyStore;
    use std::time::{Duration, Instant};

    let faulty = Arc::new(FaultyStore::new(Arc::new(MemoryStore::new())));
    let store: Arc<dyn StateStore> = faulty.clone();
    store.put_job(&sample_job("j", 1)).await.unwrap();
    faulty.fail("put_review", 1);
    faulty.fail("release_lease", 1);
    faulty.fail("set_run_state", 1);
    let sink = Arc::new(ScriptedSink::default());
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let stop = CancellationToken::new();
    let handle = quorum_publisher::start(
        "127.0.0.1:0".parse().unwrap(),
        &ctx,
        store.clone(),
        sink.clone(),
        stop.clone(),
    )
    .await
    .unwrap();
    ctx.producer
        .publish(&completed("j", &[2], PublishMode::Direct))
        .await
        .unwrap();
    let start = Instant::now();
    loop {
        let state = store.get_run("j").await.unwrap().map(|r| r.state);
        if state == Some(RunState::Published) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run is {state:?} after 60 s; store failures: {:?}",
            faulty.failed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(faulty.failed(), ["put_review", "release_lease", "set_run_state"]);
    assert_eq!(
        sink.posted.lock().unwrap().len(),
        2,
        "posted, then posted again by the retry"
    );
    let dlq = quorum_runtime::inspect::read_topic(&ctx.bus, Topic::Dlq, Duration::from_millis(500))
        .await
        .unwrap();
    assert!(dlq.is_empty(), "nothing dead-lettered: {dlq:?}");
    stop.cancel();
    handle.wait().await.unwrap();
}
