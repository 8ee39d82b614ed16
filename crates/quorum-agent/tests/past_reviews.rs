//! A model's prompt gets the team's past review threads picked by meaning
//! when the `reviews` collection holds them: the real embedded engine and
//! the real in-process model (`#[ignore]`d in a plain `cargo test`; `make
//! test` installs the model and runs it).

use std::sync::Arc;

use quorum_agent::ReviewsCollection;
use quorum_context::memory::{PastRanker, past_reviews_for};
use quorum_core::{FileChange, FileStatus};
use quorum_memory::PastThread;
use quorum_search::HybridIndex;
use quorum_search::edge::EdgeStore;
use quorum_search::embed::{OnnxEmbedder, OnnxFiles};
use quorum_search::reviews::ReviewDoc;

const REPO: &str = "octo/shop";

fn thread(id: u64, path: &str, reviewer: &str, text: &str) -> PastThread {
    serde_json::from_value(serde_json::json!({
        "id": id, "pr": 100 + id, "path": path, "reviewer": reviewer, "association": "MEMBER",
        "text": text, "plus_one": 0, "minus_one": 0, "merged": true,
        "created_at": "2026-01-02T03:04:05Z",
        "url": format!("https://github.com/octo/shop/pull/{}#r{id}", 100 + id),
    }))
    .unwrap()
}

fn history() -> Vec<PastThread> {
    vec![
        thread(
            1,
            "billing/payments.py",
            "alice",
            "alice: amounts are integer cents here, never a float",
        ),
        thread(
            2,
            "shop/refunds.py",
            "carol",
            "carol: log every refund through the audit logger, not print()",
        ),
        thread(3, "docs/index.md", "dave", "dave: typo in the heading"),
        thread(
            4,
            "shop/config.py",
            "erin",
            "erin: settings should be a dataclass, not a bare dict",
        ),
        thread(
            5,
            "web/static/app.css",
            "frank",
            "frank: this colour fails the contrast check",
        ),
    ]
}

/// A change that computes money in floating point, in a file nobody has
/// reviewed, sharing no word with alice's thread.
fn request() -> quorum_core::ReviewRequest {
    let mut req = quorum_testkit::store_contract::sample_job("j", 1).request;
    req.files = vec![FileChange {
        path: "shop/orders.py".into(),
        old_path: None,
        status: FileStatus::Modified,
        patch: Some(
            "@@ -1,2 +1,4 @@\n def charge(order):\n-    return order.subtotal\n+    dollars = order.subtotal * 1.07\n+    return round(dollars, 2)\n"
                .into(),
        ),
        omitted: None,
    }];
    req
}

/// Fails every query, like a collection whose server went away.
struct Down;

#[async_trait::async_trait]
impl PastRanker for Down {
    async fn rank(
        &self,
        _: &str,
        _: &[PastThread],
        _: &str,
        _: &str,
        _: usize,
    ) -> Result<Option<Vec<quorum_memory::SearchHit>>, String> {
        Err("connection refused".into())
    }
}

#[tokio::test]
#[ignore = "needs the embedding model; `make test` installs it and runs this"]
async fn the_prompt_gets_past_threads_by_meaning_from_the_reviews_collection() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EdgeStore::new(dir.path()).unwrap());
    let model_dir = quorum_search::SearchArgs::defaults().model_dir();
    let model = Arc::new(
        OnnxEmbedder::load(&OnnxFiles::in_dir(&model_dir), 2).expect("the embedding model is installed (make deps)"),
    );
    let index = Arc::new(HybridIndex::open(store, model).await.unwrap());
    let threads = history();
    let req = request();

    // Before anything is embedded the words rank: alice's thread shares no
    // word with the change and is not picked.
    let ranker = ReviewsCollection(index.clone());
    let mut notes = vec![];
    let by_words = past_reviews_for(&threads, &req, Some(&ranker), &mut notes).await;
    assert!(!by_words.iter().any(|t| t.id == 1), "{by_words:?}");
    assert!(notes.is_empty(), "{notes:?}");

    let docs: Vec<ReviewDoc> = threads.iter().map(ReviewDoc::from).collect();
    index.index_reviews(REPO, &docs, &|_, _| {}).await.unwrap();
    let by_meaning = past_reviews_for(&threads, &req, Some(&ranker), &mut notes).await;
    assert_eq!(
        by_meaning.first().map(|t| t.id),
        Some(1),
        "money in floating point finds the integer-cents thread: {by_meaning:?}"
    );
    assert!(notes.is_empty(), "{notes:?}");

    // A collection that fails is a note, and the words rank instead.
    let fallback = past_reviews_for(&threads, &req, Some(&Down), &mut notes).await;
    assert_eq!(
        fallback.iter().map(|t| t.id).collect::<Vec<_>>(),
        by_words.iter().map(|t| t.id).collect::<Vec<_>>()
    );
    assert_eq!(notes.len(), 1, "one note, not one per file: {notes:?}");
    assert!(notes[0].contains("connection refused"), "{notes:?}");
}
