//! The contract every `quorum_store::StateStore` must satisfy. Run against
//! the in-memory store and against a real `redis-server` (the store crate's
//! `tests/`); a divergence between the two is a bug. It lives here, in the
//! test kit, so it is not compiled into the production library.

use std::sync::Arc;

use quorum_core::{AgentRole, AgentStatus, JobPolicy, Provider, RepoRef, ReviewRequest, RunState};
use quorum_events::{AgentResult, SCHEMA_VERSION};

use quorum_store::{Claim, JobRecord, RunFilter, StateStore};

/// A job record for contract tests.
pub fn sample_job(job_id: &str, created_ms: u64) -> JobRecord {
    JobRecord {
        request: ReviewRequest {
            job_id: job_id.into(),
            repo: RepoRef {
                provider: Provider::Github,
                full_name: "octo/shop".into(),
            },
            number: 7,
            title: "t".into(),
            body: String::new(),
            author: "a".into(),
            base_sha: "b".into(),
            head_sha: "h".into(),
            files: vec![],
            policy: JobPolicy::default(),
            requested_at_ms: created_ms,
        },
        created_ms,
    }
}

fn result(job_id: &str, agent: AgentRole, duration_ms: u64) -> AgentResult {
    AgentResult {
        tool_calls: 0,
        schema_version: SCHEMA_VERSION,
        job_id: job_id.into(),
        agent,
        status: AgentStatus::Done,
        findings: vec![],
        duration_ms,
        error: None,
        tokens: Default::default(),
        model_calls: Default::default(),
        impact: None,
    }
}

/// Runs every contract check; panics with the failing property.
pub async fn run_all(store: &dyn StateStore) {
    dedupe(store).await;
    jobs_and_runs(store).await;
    filtered_run_list(store).await;
    results_are_write_once(store).await;
    guards(store).await;
    leases(store).await;
    deadlines(store).await;
    reviews_drafts_fingerprints(store).await;
    graphs(store).await;
}

async fn graphs(store: &dyn StateStore) {
    assert!(store.get_graph("o/r", "c1").await.unwrap().is_none());
    // Binary-safe: every byte value survives.
    let blob: Vec<u8> = (0..=255u8).chain([0, 0, 255]).collect();
    store.put_graph("o/r", "c1", &blob).await.unwrap();
    assert_eq!(store.get_graph("o/r", "c1").await.unwrap(), Some(blob));
    assert!(store.get_graph("o/r", "c2").await.unwrap().is_none());
    assert!(store.get_graph("o/other", "c1").await.unwrap().is_none());
    assert!(store.branch_graph("o/r", "main").await.unwrap().is_none());
    store.set_branch_graph("o/r", "main", "c1").await.unwrap();
    store.set_branch_graph("o/r", "main", "c2").await.unwrap();
    store.set_branch_graph("o/r", "dev", "c1").await.unwrap();
    assert_eq!(store.branch_graph("o/r", "main").await.unwrap().as_deref(), Some("c2"));
    assert_eq!(store.branch_graph("o/r", "dev").await.unwrap().as_deref(), Some("c1"));

    // Review memory: the state is one document per repository, matches a
    // map beside it that the critic writes without touching the state.
    assert!(store.get_memory("o/r").await.unwrap().is_none());
    store.put_memory("o/r", r#"{"cursor":"a"}"#).await.unwrap();
    store.put_memory("o/r", r#"{"cursor":"b"}"#).await.unwrap();
    assert_eq!(
        store.get_memory("o/r").await.unwrap().as_deref(),
        Some(r#"{"cursor":"b"}"#)
    );
    assert!(store.get_memory("o/other").await.unwrap().is_none());
    assert!(store.memory_matches("o/r").await.unwrap().is_empty());
    store
        .touch_memory_item("o/r", "M-1", "2026-01-01T00:00:00Z")
        .await
        .unwrap();
    store
        .touch_memory_item("o/r", "M-1", "2026-01-02T00:00:00Z")
        .await
        .unwrap();
    store
        .touch_memory_item("o/r", "M-2", "2026-01-01T00:00:00Z")
        .await
        .unwrap();
    let m = store.memory_matches("o/r").await.unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(m["M-1"], "2026-01-02T00:00:00Z");
    assert!(store.memory_matches("o/other").await.unwrap().is_empty());
    assert_eq!(
        store.get_memory("o/r").await.unwrap().as_deref(),
        Some(r#"{"cursor":"b"}"#)
    );
}

/// Concurrent claims of one key: exactly one wins, on any store.
pub async fn concurrent_dedupe(store: Arc<dyn StateStore>) {
    let mut tasks = Vec::new();
    for i in 0..16 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            s.claim_dedupe("race", &format!("job-{i}")).await.unwrap()
        }));
    }
    let mut winners = Vec::new();
    let mut seen = Vec::new();
    for (i, t) in tasks.into_iter().enumerate() {
        match t.await.unwrap() {
            Claim::Claimed => winners.push(format!("job-{i}")),
            Claim::Existing(id) => seen.push(id),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one concurrent claim wins");
    assert!(
        seen.iter().all(|id| *id == winners[0]),
        "losers see the winner's job id"
    );
}

async fn dedupe(store: &dyn StateStore) {
    assert_eq!(store.claim_dedupe("d1", "job-a").await.unwrap(), Claim::Claimed);
    assert_eq!(
        store.claim_dedupe("d1", "job-b").await.unwrap(),
        Claim::Existing("job-a".into())
    );
    store.release_dedupe("d1").await.unwrap();
    assert_eq!(store.claim_dedupe("d1", "job-c").await.unwrap(), Claim::Claimed);
}

async fn jobs_and_runs(store: &dyn StateStore) {
    let all = RunFilter::all();
    assert!(store.get_job("nope").await.unwrap().is_none());
    assert!(store.get_run("nope").await.unwrap().is_none());
    store.put_job(&sample_job("j1", 100)).await.unwrap();
    store.put_job(&sample_job("j2", 200)).await.unwrap();
    assert_eq!(store.get_job("j1").await.unwrap().unwrap(), sample_job("j1", 100));
    let ids = store.list_jobs(&all, 0, 10).await.unwrap();
    let pos = |id: &str| ids.iter().position(|x| x == id).unwrap();
    assert!(pos("j2") < pos("j1"), "newest first: {ids:?}");
    assert_eq!(store.list_jobs(&all, 0, 1).await.unwrap(), vec!["j2".to_string()]);
    assert_eq!(
        store.list_jobs(&all, 1, 1).await.unwrap(),
        vec!["j1".to_string()],
        "the second page"
    );
    assert!(store.list_jobs(&all, 2, 5).await.unwrap().is_empty(), "past the end");
    assert_eq!(store.count_jobs(&all).await.unwrap(), 2);

    let run = store.get_run("j1").await.unwrap().unwrap();
    assert_eq!(run.state, RunState::Queued);
    assert_eq!(run.timeline.get("queued"), Some(&100), "queued at the job's creation");
    assert_eq!(run.agents.len(), 4);
    assert!(run.agents.values().all(|s| *s == AgentStatus::Pending));

    store
        .set_agent_status("j1", AgentRole::Static, AgentStatus::Done)
        .await
        .unwrap();
    store.set_run_state("j1", RunState::Failed, Some("boom")).await.unwrap();
    let run = store.get_run("j1").await.unwrap().unwrap();
    assert_eq!(run.agents[&AgentRole::Static], AgentStatus::Done);
    assert_eq!(run.state, RunState::Failed);
    assert_eq!(run.reason.as_deref(), Some("boom"));
    // The time at each hop: when the run first entered each state.
    store.set_run_state("j2", RunState::Running, None).await.unwrap();
    store.set_run_state("j2", RunState::Aggregated, None).await.unwrap();
    let first = store.get_run("j2").await.unwrap().unwrap().timeline;
    store.set_run_state("j2", RunState::Aggregated, None).await.unwrap();
    let again = store.get_run("j2").await.unwrap().unwrap().timeline;
    assert!(
        first["running"] >= first["queued"] && first["aggregated"] >= first["running"],
        "{first:?}"
    );
    assert_eq!(first, again, "re-entering a state keeps its first time");
    // Storing the job again (a redelivered intake) does not reset its run.
    store.put_job(&sample_job("j1", 100)).await.unwrap();
    assert_eq!(store.get_run("j1").await.unwrap().unwrap().state, RunState::Failed);
}

/// The run list filtered by repository and state, paged by the store: each
/// filter sees exactly its runs, newest first, and a run that changes state
/// leaves the old state's list.
async fn filtered_run_list(store: &dyn StateStore) {
    let job = |id: &str, ms: u64, repo: &str| {
        let mut j = sample_job(id, ms);
        j.request.repo.full_name = repo.into();
        j
    };
    for (id, ms, repo) in [
        ("f1", 1_000, "a/x"),
        ("f2", 2_000, "b/y"),
        ("f3", 3_000, "a/x"),
        ("f4", 4_000, "a/x"),
    ] {
        store.put_job(&job(id, ms, repo)).await.unwrap();
    }
    store.set_run_state("f1", RunState::Draft, None).await.unwrap();
    store.set_run_state("f2", RunState::Draft, None).await.unwrap();
    store.set_run_state("f3", RunState::Running, None).await.unwrap();
    store.set_run_state("f3", RunState::Draft, None).await.unwrap();
    let filter = |repo: Option<&str>, state: Option<RunState>| RunFilter {
        repo: repo.map(str::to_string),
        state,
    };
    let page = async |f: &RunFilter, offset, limit| store.list_jobs(f, offset, limit).await.unwrap();
    let in_ax = filter(Some("a/x"), None);
    assert_eq!(
        page(&in_ax, 0, 10).await,
        ["f4", "f3", "f1"],
        "one repository, newest first"
    );
    assert_eq!(store.count_jobs(&in_ax).await.unwrap(), 3);
    assert_eq!(page(&in_ax, 1, 1).await, ["f3"], "a page of one repository");
    let drafts = filter(None, Some(RunState::Draft));
    let ids = page(&drafts, 0, 100).await;
    assert!(
        ids.iter().filter(|i| i.starts_with('f')).eq(["f3", "f2", "f1"].iter()),
        "drafts of every repository: {ids:?}"
    );
    let ax_drafts = filter(Some("a/x"), Some(RunState::Draft));
    assert_eq!(page(&ax_drafts, 0, 10).await, ["f3", "f1"]);
    assert_eq!(store.count_jobs(&ax_drafts).await.unwrap(), 2);
    assert!(
        page(&filter(Some("a/x"), Some(RunState::Running)), 0, 10)
            .await
            .is_empty(),
        "f3 left `running` when it became a draft"
    );
    // A decision moves the run out of the drafts; storing a job again keeps
    // it where its run is.
    store.set_run_state("f1", RunState::Discarded, None).await.unwrap();
    store.put_job(&job("f1", 1_000, "a/x")).await.unwrap();
    assert_eq!(page(&ax_drafts, 0, 10).await, ["f3"]);
    assert_eq!(
        page(&filter(Some("a/x"), Some(RunState::Discarded)), 0, 10).await,
        ["f1"]
    );
    assert_eq!(page(&filter(Some("a/x"), Some(RunState::Queued)), 0, 10).await, ["f4"]);
    assert!(
        page(&filter(Some("c/z"), None), 0, 10).await.is_empty(),
        "an unknown repository"
    );
}

async fn results_are_write_once(store: &dyn StateStore) {
    assert!(store.put_result(&result("r1", AgentRole::Static, 5)).await.unwrap());
    assert!(!store.put_result(&result("r1", AgentRole::Static, 9)).await.unwrap());
    assert!(store.put_result(&result("r1", AgentRole::Tests, 7)).await.unwrap());
    let all = store.get_results("r1").await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[&AgentRole::Static].duration_ms, 5, "the first write wins");
    assert!(store.get_results("none").await.unwrap().is_empty());
}

async fn guards(store: &dyn StateStore) {
    assert!(store.acquire_guard("g1").await.unwrap());
    assert!(!store.acquire_guard("g1").await.unwrap());
    store.release_guard("g1").await.unwrap();
    assert!(store.acquire_guard("g1").await.unwrap());
}

async fn leases(store: &dyn StateStore) {
    assert!(store.acquire_lease("l1", "a", 60_000).await.unwrap());
    assert!(!store.acquire_lease("l1", "b", 60_000).await.unwrap());
    // Its holder takes it again (a retry that could not release it).
    assert!(store.acquire_lease("l1", "a", 60_000).await.unwrap());
    // Only the holder releases it.
    store.release_lease("l1", "b").await.unwrap();
    assert!(!store.acquire_lease("l1", "b", 60_000).await.unwrap());
    store.release_lease("l1", "a").await.unwrap();
    assert!(store.acquire_lease("l1", "b", 60_000).await.unwrap());
    // A lease whose holder vanished lapses by itself.
    assert!(store.acquire_lease("l2", "a", 50).await.unwrap());
    assert!(!store.acquire_lease("l2", "b", 50).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert!(
        store.acquire_lease("l2", "b", 50).await.unwrap(),
        "an expired lease can be taken"
    );
    // A renewal moves the lapse: `a` renews l3 before it lapses, so `b`
    // still finds it held after the first ttl has passed.
    // (Wide margins: a busy machine may oversleep by several hundred ms.)
    assert!(store.acquire_lease("l3", "a", 1_500).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert!(store.acquire_lease("l3", "a", 1_500).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert!(
        !store.acquire_lease("l3", "b", 1_500).await.unwrap(),
        "a renewed lease is still held"
    );
}

async fn deadlines(store: &dyn StateStore) {
    store.mark_pending("late", 1_000).await.unwrap();
    store.mark_pending("later", 5_000).await.unwrap();
    assert_eq!(store.pending_before(999).await.unwrap(), Vec::<String>::new());
    assert_eq!(store.pending_before(1_000).await.unwrap(), vec!["late".to_string()]);
    assert_eq!(
        store.pending_before(9_000).await.unwrap(),
        vec!["late".to_string(), "later".to_string()]
    );
    store.clear_pending("late").await.unwrap();
    assert_eq!(store.pending_before(9_000).await.unwrap(), vec!["later".to_string()]);
    store.clear_pending("later").await.unwrap();
}

async fn reviews_drafts_fingerprints(store: &dyn StateStore) {
    assert!(store.get_review("x").await.unwrap().is_none());
    store.put_review("x", "{\"a\":1}").await.unwrap();
    assert_eq!(store.get_review("x").await.unwrap().as_deref(), Some("{\"a\":1}"));
    store.put_draft("x", "draft").await.unwrap();
    assert_eq!(store.get_draft("x").await.unwrap().as_deref(), Some("draft"));
    store.delete_draft("x").await.unwrap();
    assert!(store.get_draft("x").await.unwrap().is_none());

    store
        .add_fingerprints("o/r#1", &["b".into(), "a".into()])
        .await
        .unwrap();
    store.add_fingerprints("o/r#1", &["a".into()]).await.unwrap();
    let mut fps = store.fingerprints("o/r#1").await.unwrap();
    fps.sort();
    assert_eq!(fps, vec!["a".to_string(), "b".to_string()]);

    assert!(store.last_index_request("o/r").await.unwrap().is_none());
    assert!(store.indexed_repos(10).await.unwrap().is_empty());
    store.record_index_request("o/r", "main", 42).await.unwrap();
    assert_eq!(
        store.last_index_request("o/r").await.unwrap(),
        Some(("main".into(), 42))
    );
    // Most recently requested first; a new request moves a repository up.
    store.record_index_request("o/s", "main", 50).await.unwrap();
    store.record_index_request("o/t", "dev", 45).await.unwrap();
    assert_eq!(store.indexed_repos(10).await.unwrap(), ["o/s", "o/t", "o/r"]);
    store.record_index_request("o/r", "main", 60).await.unwrap();
    assert_eq!(store.indexed_repos(2).await.unwrap(), ["o/r", "o/s"]);
    assert!(store.indexed_repos(0).await.unwrap().is_empty());
}
