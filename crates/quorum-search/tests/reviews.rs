//! The `reviews` collection (review memory's past threads) on the embedded
//! engine with the real in-process model (`#[ignore]`d in a plain
//! `cargo test`; `make test` installs the model and runs it), and on a
//! Qdrant server with `make test-qdrant QDRANT_URL=…`.

mod common;

use std::sync::Arc;

use common::*;
use quorum_search::HybridIndex;
use quorum_search::edge::EdgeStore;
use quorum_search::embed::Embedder;
use quorum_search::reviews::{ReviewDoc, ReviewFilter};
use quorum_search::store::{ReviewFields, VectorStore};

const REPO: &str = "acme/shop";

fn thread(id: u64, reviewer: &str, association: &str, path: &str, text: &str, plus_one: u32) -> ReviewDoc {
    let thread = serde_json::json!({
        "id": id, "pr": 100 + id, "path": path, "reviewer": reviewer, "association": association,
        "text": text, "plus_one": plus_one, "minus_one": 0, "merged": true,
        "created_at": "2026-01-02T03:04:05Z", "url": format!("https://github.com/acme/shop/pull/{}#r{id}", 100 + id),
    });
    ReviewDoc {
        path: path.into(),
        text: text.into(),
        fields: ReviewFields {
            thread_id: id,
            pr: 100 + id,
            reviewer: reviewer.to_lowercase(),
            association: association.into(),
            merged: true,
            resolved: Some(true),
            plus_one,
            minus_one: 0,
            created_at: "2026-01-02T03:04:05Z".into(),
            thread,
        },
    }
}

fn history() -> Vec<ReviewDoc> {
    vec![
        thread(
            1,
            "Alice",
            "MEMBER",
            "shop/payments.py",
            "alice: amounts are integer cents here, never a float\nbob: fixed",
            3,
        ),
        thread(
            2,
            "bob",
            "CONTRIBUTOR",
            "shop/refunds.py",
            "bob: please use Decimal for the refund total",
            0,
        ),
        thread(
            3,
            "carol",
            "OWNER",
            "shop/refunds.py",
            "carol: log every refund through the audit logger, not print()",
            1,
        ),
        thread(4, "dave", "MEMBER", "docs/index.md", "dave: typo in the heading", 0),
        thread(
            5,
            "erin",
            "COLLABORATOR",
            "shop/config.py",
            "erin: settings should be a dataclass, not a bare dict",
            0,
        ),
    ]
}

fn ids(hits: &[quorum_search::reviews::ReviewHit]) -> Vec<u64> {
    hits.iter().map(|h| h.thread_id).collect()
}

async fn reviews_contract(store: Arc<dyn VectorStore>, model: Arc<dyn Embedder>) {
    let counting = Arc::new(Counting::new(model));
    let index = HybridIndex::open(store, counting.clone()).await.unwrap();
    assert_eq!(index.review_count(REPO).await.unwrap(), 0);
    let docs = history();
    let stats = index.index_reviews(REPO, &docs, &|_, _| {}).await.unwrap();
    assert_eq!((stats.threads, stats.embedded, stats.unchanged), (5, 5, 0), "{stats:?}");
    assert_eq!(index.review_count(REPO).await.unwrap(), 5);

    // Meaning, not words: the question shares no word with thread 1.
    let anyone = ReviewFilter::default();
    let q = "storing money as floating point loses precision";
    let hits = index.search_reviews(REPO, q, &anyone, 3).await.unwrap();
    assert_eq!(hits[0].thread_id, 1, "{hits:?}");
    assert_eq!(hits[0].thread["reviewer"], "Alice", "the thread comes back whole");
    assert!(hits[0].dense.is_some());

    // Who may answer: a login in any case, or associations.
    let as_alice = ReviewFilter {
        reviewer: Some("ALICE".into()),
        ..Default::default()
    };
    assert_eq!(
        ids(&index
            .search_reviews(REPO, "refund logging", &as_alice, 5)
            .await
            .unwrap()),
        [1]
    );
    let owners = ReviewFilter {
        associations: vec!["OWNER".into()],
        ..Default::default()
    };
    assert_eq!(
        ids(&index
            .search_reviews(REPO, "how do we record refunds", &owners, 5)
            .await
            .unwrap()),
        [3]
    );
    // Another repository's threads never answer.
    assert!(
        index
            .search_reviews("other/repo", q, &anyone, 5)
            .await
            .unwrap()
            .is_empty()
    );

    // Up to date from memory's state: nothing changed costs nothing, a
    // thread whose reactions changed is re-embedded, a dropped one goes.
    let before = counting.count();
    let again = index.index_reviews(REPO, &docs, &|_, _| {}).await.unwrap();
    assert_eq!((again.embedded, again.unchanged, again.removed), (0, 5, 0));
    assert_eq!(counting.count(), before);
    let mut changed = history();
    changed[2].fields.plus_one = 4;
    changed.remove(3);
    let third = index.index_reviews(REPO, &changed, &|_, _| {}).await.unwrap();
    assert_eq!((third.embedded, third.unchanged, third.removed), (1, 3, 1), "{third:?}");
    assert_eq!(counting.count(), before + 1);
    let typo = index
        .search_reviews(REPO, "typo in the heading", &anyone, 5)
        .await
        .unwrap();
    assert!(!ids(&typo).contains(&4), "a removed thread still answers: {typo:?}");
    let carol = index.search_reviews(REPO, "audit logger", &owners, 1).await.unwrap();
    assert_eq!(carol[0].thread_id, 3);
    assert_eq!(index.review_count(REPO).await.unwrap(), 4);

    // Bad input is refused with a reason.
    let err = index.search_reviews(REPO, "  ", &anyone, 5).await.unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    let mut twice = history();
    twice.push(history().remove(0));
    let err = index.index_reviews(REPO, &twice, &|_, _| {}).await.unwrap_err();
    assert!(err.to_string().contains("thread 1 is given twice"), "{err}");
}

#[tokio::test]
#[ignore = "needs the embedding model (make deps)"]
async fn reviews_contract_embedded_and_reopened() {
    let dir = tempfile::tempdir().unwrap();
    reviews_contract(Arc::new(EdgeStore::new(dir.path()).unwrap()), real_model()).await;
    // Reopened by another process later: the threads are still there.
    let index = HybridIndex::open(Arc::new(EdgeStore::new(dir.path()).unwrap()), real_model())
        .await
        .unwrap();
    assert_eq!(index.review_count(REPO).await.unwrap(), 4);
    let hits = index
        .search_reviews(REPO, "integer cents", &ReviewFilter::default(), 1)
        .await
        .unwrap();
    assert_eq!(hits[0].thread_id, 1);
}

#[tokio::test]
#[ignore = "needs a Qdrant server: make test-qdrant QDRANT_URL=http://host:6334"]
async fn reviews_server_contract() {
    let url = std::env::var("QDRANT_URL").expect("QDRANT_URL names the server this test runs against");
    let prefix = format!("quorum_test_{}", uuid::Uuid::new_v4().simple());
    let store: Arc<dyn VectorStore> = Arc::new(
        quorum_search::server::ServerStore::connect(&url, std::env::var("QDRANT_API_KEY").ok(), &prefix).unwrap(),
    );
    reviews_contract(store, real_model()).await;
}

/// `make bench-memory`: the `reviews` collection on the embedded engine with
/// the real model — threads embedded per second on a first sync, what a
/// second sync with nothing changed costs, a sync after 1% changed, and the
/// latency of a past-review question. Figures go to docs/memory.md; only
/// the counts are asserted, never the time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: make bench-memory"]
async fn bench_index_reviews() {
    const THREADS: u64 = 1_000;
    let subjects = [
        "amounts are integer cents, never a float",
        "log through the audit logger, not print()",
        "settings should be a dataclass, not a bare dict",
        "close the file with a context manager",
        "this query runs once per row; batch it",
        "the retry loop needs a cap and jitter",
        "name the constant instead of the magic number",
        "validate the email before the lookup",
        "the handler swallows the exception; log it",
        "add a test for the empty list",
    ];
    let dirs = ["shop", "billing", "api", "web", "jobs"];
    let people = [
        ("alice", "MEMBER"),
        ("bob", "CONTRIBUTOR"),
        ("carol", "OWNER"),
        ("erin", "COLLABORATOR"),
    ];
    let docs: Vec<ReviewDoc> = (1..=THREADS)
        .map(|i| {
            let (who, assoc) = people[i as usize % people.len()];
            let subject = subjects[i as usize % subjects.len()];
            let path = format!("{}/module_{}.py", dirs[i as usize % dirs.len()], i % 37);
            let text = format!(
                "{who}: {subject} (line {})\nauthor: fixed in the next push",
                i % 200 + 1
            );
            thread(i, who, assoc, &path, &text, (i % 4) as u32)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let counting = Arc::new(Counting::new(real_model()));
    let index = HybridIndex::open(Arc::new(EdgeStore::new(dir.path()).unwrap()), counting.clone())
        .await
        .unwrap();

    let started = std::time::Instant::now();
    let first = index.index_reviews(REPO, &docs, &|_, _| {}).await.unwrap();
    let first_s = started.elapsed().as_secs_f64();
    assert_eq!(first.embedded, THREADS as usize);

    let before = counting.count();
    let started = std::time::Instant::now();
    let again = index.index_reviews(REPO, &docs, &|_, _| {}).await.unwrap();
    let again_s = started.elapsed().as_secs_f64();
    assert_eq!((again.embedded, counting.count() - before), (0, 0));

    let mut changed = docs.clone();
    for d in changed.iter_mut().step_by(100) {
        d.fields.plus_one += 1;
    }
    let started = std::time::Instant::now();
    let third = index.index_reviews(REPO, &changed, &|_, _| {}).await.unwrap();
    let third_s = started.elapsed().as_secs_f64();
    assert_eq!(third.embedded, (THREADS / 100) as usize);

    let mut lat = vec![];
    for q in subjects.iter().cycle().take(50) {
        let started = std::time::Instant::now();
        let hits = index
            .search_reviews(REPO, &format!("why {q}?"), &ReviewFilter::default(), 10)
            .await
            .unwrap();
        lat.push(started.elapsed().as_secs_f64() * 1000.0);
        assert!(!hits.is_empty());
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "reviews collection, {THREADS} threads, embedded engine, real model, 2 cores:\n  \
         first sync: {first_s:.1} s = {:.0} threads/s embedded\n  \
         second sync, nothing changed: {again_s:.2} s, 0 embedded\n  \
         after 1% changed: {third_s:.2} s, {} embedded\n  \
         question p50 {:.1} ms, p95 {:.1} ms (50 questions, top 10)",
        THREADS as f64 / first_s,
        third.embedded,
        lat[lat.len() / 2],
        lat[lat.len() * 95 / 100],
    );
}
