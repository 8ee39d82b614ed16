//! The aggregator's join against the embedded broker and the in-memory
//! store: duplicates, the deadline flush, and exactly-once flushing across
//! two replicas.

use std::sync::Arc;
use std::time::Duration;

use quorum_aggregator::{Aggregator, Flush};
use quorum_core::{AgentRole, AgentStatus, Category, Evidence, Finding, RunState, Severity};
use quorum_events::{AgentResult, AggregatedReview, Payload, SCHEMA_VERSION, Topic};
use quorum_runtime::ServiceContext;
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::store_contract::sample_job;

fn finding(agent: AgentRole, line: u32) -> Finding {
    Finding {
        file: "shop/a.py".into(),
        line,
        start_line: None,
        category: Category::Security,
        severity: Severity::Major,
        confidence: 0.9,
        title: "SQL built from strings".into(),
        explanation: "x".into(),
        suggestion: None,
        rule: None,
        agent,
        evidence: vec![Evidence {
            source: "t".into(),
            detail: "d".into(),
        }],
        agreed_by: vec![],
    }
}

fn result(job: &str, agent: AgentRole, findings: Vec<Finding>) -> AgentResult {
    AgentResult {
        tool_calls: 0,
        schema_version: SCHEMA_VERSION,
        job_id: job.into(),
        agent,
        status: AgentStatus::Done,
        findings,
        duration_ms: 3,
        error: None,
        tokens: Default::default(),
        model_calls: Default::default(),
        impact: None,
    }
}

/// Every message on `Aggregated`, read until the topic is quiet.
async fn aggregated(ctx: &ServiceContext) -> Vec<AggregatedReview> {
    quorum_runtime::inspect::read_topic(&ctx.bus, Topic::Aggregated, Duration::from_secs(2))
        .await
        .unwrap()
        .iter()
        .map(|m| AggregatedReview::decode(&m.payload).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_are_ignored_and_agreement_is_merged() {
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job("j", 1)).await.unwrap();
    let agg = Aggregator::new(store.clone(), ctx.producer.clone());
    let static_result = result("j", AgentRole::Static, vec![finding(AgentRole::Static, 40)]);
    assert_eq!(agg.on_result(&static_result, None).await.unwrap(), Flush::Waiting);
    // The same result again (a redelivery) changes nothing.
    let mut dup = static_result.clone();
    dup.findings.push(finding(AgentRole::Static, 90));
    assert_eq!(agg.on_result(&dup, None).await.unwrap(), Flush::Waiting);
    agg.on_result(
        &result("j", AgentRole::Security, vec![finding(AgentRole::Security, 41)]),
        None,
    )
    .await
    .unwrap();
    agg.on_result(
        &result("j", AgentRole::Reviewer, vec![finding(AgentRole::Reviewer, 43)]),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        agg.on_result(&result("j", AgentRole::Tests, vec![]), None)
            .await
            .unwrap(),
        Flush::Flushed
    );
    // A late duplicate after the flush does not flush again.
    assert_eq!(
        agg.on_result(&result("j", AgentRole::Tests, vec![]), None)
            .await
            .unwrap(),
        Flush::AlreadyFlushed
    );

    let out = aggregated(&ctx).await;
    assert_eq!(out.len(), 1);
    let f = &out[0].findings;
    assert_eq!(f.len(), 1, "lines 40/41/43 from three agents are one finding: {f:#?}");
    assert_eq!(
        f[0].agreed_by,
        vec![AgentRole::Static, AgentRole::Reviewer, AgentRole::Security]
    );
    assert!(f[0].confidence > 0.9);
    assert_eq!(store.get_run("j").await.unwrap().unwrap().state, RunState::Aggregated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_flushes_a_job_with_a_missing_agent_as_timeout() {
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    store.put_job(&sample_job("late", 1)).await.unwrap();
    store.mark_pending("late", 1).await.unwrap();
    let agg = Aggregator::new(store.clone(), ctx.producer.clone());
    for role in [AgentRole::Static, AgentRole::Reviewer, AgentRole::Security] {
        agg.on_result(&result("late", role, vec![]), None).await.unwrap();
    }
    // Not yet due with a long deadline; due with a short one.
    assert_eq!(agg.sweep(Duration::from_secs(3600 * 24 * 365 * 100)).await.unwrap(), 0);
    assert_eq!(agg.sweep(Duration::from_millis(0)).await.unwrap(), 1);
    assert_eq!(agg.sweep(Duration::from_millis(0)).await.unwrap(), 0, "flushed once");
    let out = aggregated(&ctx).await;
    assert_eq!(out.len(), 1);
    let tests = out[0].agents.iter().find(|a| a.agent == AgentRole::Tests).unwrap();
    assert_eq!(tests.status, AgentStatus::Timeout);
    let run = store.get_run("late").await.unwrap().unwrap();
    assert_eq!(run.agents[&AgentRole::Tests], AgentStatus::Timeout);
    assert_eq!(run.agents[&AgentRole::Static], AgentStatus::Done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_flush_a_job_exactly_once() {
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let a = Arc::new(Aggregator::new(store.clone(), ctx.producer.clone()));
    let b = Arc::new(Aggregator::new(store.clone(), ctx.producer.clone()));
    for i in 0..10 {
        let job = format!("job-{i}");
        store.put_job(&sample_job(&job, 1)).await.unwrap();
        for role in AgentRole::ALL {
            store.put_result(&result(&job, role, vec![])).await.unwrap();
        }
        // Both replicas race to flush (the handler on one, the sweeper on the other).
        let (ra, rb) = tokio::join!(a.flush(&job, false, None), b.flush(&job, true, None));
        let flushed = [ra.unwrap(), rb.unwrap()]
            .iter()
            .filter(|f| **f == Flush::Flushed)
            .count();
        assert_eq!(flushed, 1, "{job}");
    }
    assert_eq!(aggregated(&ctx).await.len(), 10);
}

/// A job whose aggregated review the broker refuses as too large fails for
/// good with the reason, and does not hold up the other due jobs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_too_large_to_flush_fails_and_the_sweep_goes_on() {
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let mut huge = sample_job("huge", 1);
    huge.request.files = vec![quorum_core::FileChange {
        path: "bundle.js".into(),
        old_path: None,
        status: quorum_core::FileStatus::Added,
        patch: Some(format!("@@ -0,0 +1,1 @@\n+{}\n", "x".repeat(2 << 20))),
        omitted: None,
    }];
    store.put_job(&huge).await.unwrap();
    store.put_job(&sample_job("fine", 2)).await.unwrap();
    store.mark_pending("huge", 1).await.unwrap();
    store.mark_pending("fine", 2).await.unwrap();
    let agg = Aggregator::new(store.clone(), ctx.producer.clone());
    assert_eq!(
        agg.sweep(Duration::from_millis(0)).await.unwrap(),
        1,
        "`fine` is flushed"
    );
    let run = store.get_run("huge").await.unwrap().unwrap();
    assert_eq!(run.state, RunState::Failed);
    assert!(
        run.reason.as_deref().unwrap_or("").contains("cannot be published"),
        "{:?}",
        run.reason
    );
    assert_eq!(agg.sweep(Duration::from_millis(0)).await.unwrap(), 0, "not tried again");
    let out = aggregated(&ctx).await;
    assert_eq!(
        out.iter().map(|a| a.request.job_id.as_str()).collect::<Vec<_>>(),
        ["fine"]
    );
}
