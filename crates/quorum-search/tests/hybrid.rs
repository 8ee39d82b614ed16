//! The hybrid index end to end on the embedded engine (Qdrant in-process),
//! with the real in-process model where meaning matters. The tests that
//! need the model are `#[ignore]`d in a plain `cargo test`; `make test`
//! installs the model and runs them. The same contract runs against a
//! Qdrant server with `make test-qdrant QDRANT_URL=…`.

mod common;

use std::sync::Arc;

use common::*;
use quorum_search::edge::EdgeStore;
use quorum_search::embed::{Embedder, HashingEmbedder, OnnxEmbedder, OnnxFiles};
use quorum_search::store::{ChunkPayload, ChunkPoint, HybridQuery, IndexMeta, Ranking, VectorStore};
use quorum_search::{HybridIndex, Kind, SearchOptions};

fn point(id: u128, path: &str, dense: Vec<f32>, sparse: (Vec<u32>, Vec<f32>)) -> ChunkPoint {
    ChunkPoint {
        id: uuid::Uuid::from_u128(id),
        dense,
        sparse: quorum_search::sparse::Sparse {
            indices: sparse.0,
            values: sparse.1,
        },
        payload: ChunkPayload {
            repo: "acme/shop".into(),
            commit: "c1".into(),
            path: path.into(),
            start_line: 1,
            end_line: 2,
            symbol: None,
            language: Some("python".into()),
            kind: Kind::Code,
            file_hash: "h".into(),
            text: path.into(),
            review: None,
        },
    }
}

/// Each side ranks by its own vector, within one repository (the fusion of
/// the two is the caller's, `quorum_search::fusion`, the same on every
/// engine).
async fn ranking_contract(store: Arc<dyn VectorStore>) {
    store
        .open(
            Kind::Code,
            &IndexMeta {
                model: "hand".into(),
                dim: 3,
            },
        )
        .await
        .unwrap();
    store
        .upsert(
            Kind::Code,
            vec![
                // First by dense only.
                point(1, "dense_only.py", vec![1.0, 0.0, 0.0], (vec![9], vec![1.0])),
                // Second in both.
                point(2, "both.py", vec![0.9, 0.43, 0.0], (vec![7], vec![0.8])),
                // First by sparse only.
                point(3, "sparse_only.py", vec![0.0, 0.0, 1.0], (vec![7], vec![1.5])),
            ],
        )
        .await
        .unwrap();
    let q = |ranking| HybridQuery {
        repo: "acme/shop".into(),
        dense: vec![1.0, 0.0, 0.0],
        sparse: quorum_search::sparse::Sparse {
            indices: vec![7],
            values: vec![1.0],
        },
        paths: None,
        language: None,
        any_of: vec![],
        ranking,
        limit: 2,
    };
    let paths = |v: Vec<quorum_search::store::ScoredChunk>| v.into_iter().map(|c| c.payload.path).collect::<Vec<_>>();
    let dense = paths(store.query(Kind::Code, &q(Ranking::Dense)).await.unwrap());
    let sparse = paths(store.query(Kind::Code, &q(Ranking::Sparse)).await.unwrap());
    assert_eq!(dense, ["dense_only.py", "both.py"], "{dense:?}");
    assert_eq!(sparse, ["sparse_only.py", "both.py"], "{sparse:?}");
    // Another repository's chunks are never returned.
    for ranking in [Ranking::Dense, Ranking::Sparse] {
        let mut other = q(ranking);
        other.repo = "acme/other".into();
        assert!(store.query(Kind::Code, &other).await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn each_side_ranks_by_its_own_vector_embedded() {
    let dir = tempfile::tempdir().unwrap();
    ranking_contract(Arc::new(EdgeStore::new(dir.path()).unwrap())).await;
}

#[tokio::test]
#[ignore = "needs a Qdrant server: make test-qdrant QDRANT_URL=http://host:6334"]
async fn server_contract() {
    let url = std::env::var("QDRANT_URL").expect("QDRANT_URL names the server this test runs against");
    let prefix = format!("quorum_test_{}", uuid::Uuid::new_v4().simple());
    let store: Arc<dyn VectorStore> = Arc::new(
        quorum_search::server::ServerStore::connect(&url, std::env::var("QDRANT_API_KEY").ok(), &prefix).unwrap(),
    );
    ranking_contract(store.clone()).await;
    // The whole index contract on the server, with the same expectations
    // as on the embedded engine.
    index_contract(store, real_model()).await;
}

#[tokio::test]
#[ignore = "needs the embedding model (make deps)"]
async fn index_contract_embedded() {
    let dir = tempfile::tempdir().unwrap();
    index_contract(Arc::new(EdgeStore::new(dir.path()).unwrap()), real_model()).await;
}

/// The model embeds a call's texts in batches of similar lengths; each
/// vector still answers its own text, in the caller's order.
#[tokio::test]
#[ignore = "needs the embedding model (make deps)"]
async fn vectors_come_back_in_the_callers_order_whatever_the_batches() {
    // With dynamic quantization a batch's activations share one scale, so
    // a text embedded beside others would get another vector than alone;
    // each text runs alone, so the vectors are the same, not just close.
    let model = real_model();
    let texts: Vec<String> = (0..40)
        .map(|i| match i % 3 {
            0 => format!("def refund_{i}(order): return order.total_cents"),
            1 => format!("word{i}"),
            _ => format!(
                "{} the end {i}",
                "a long docstring about shipping rates and parcels ".repeat(i % 7 + 1)
            ),
        })
        .collect();
    let together = model.embed(&texts).await.unwrap();
    assert_eq!(together.len(), texts.len());
    for (i, text) in texts.iter().enumerate() {
        let alone = model.embed(std::slice::from_ref(text)).await.unwrap().remove(0);
        let cosine: f32 = alone.iter().zip(&together[i]).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.98, "text {i} got another text's vector (cosine {cosine})");
        assert!(
            cosine > 0.99999,
            "text {i}'s vector depends on its neighbours (cosine {cosine})"
        );
    }
}

#[tokio::test]
#[ignore = "needs the embedding model (make deps)"]
async fn the_model_id_names_the_model_file_and_the_budget() {
    let dir = quorum_search::SearchArgs::defaults().model_dir();
    let dynamic = OnnxEmbedder::load(&OnnxFiles::in_dir(&dir), 1).unwrap();
    assert_eq!(dynamic.id(), "all-MiniLM-L6-v2-dynint8-onnx-192tok");
    let original = OnnxEmbedder::load_with_budget(&OnnxFiles::in_dir_with_model(&dir, "model.onnx"), 1, 256).unwrap();
    assert_eq!(
        original.id(),
        "all-MiniLM-L6-v2-int8-onnx",
        "the id indexes were built with before"
    );
    // The two compute differently but mean the same.
    let text = "def refund(order): return order.total_cents".to_string();
    let a = dynamic.embed(std::slice::from_ref(&text)).await.unwrap().remove(0);
    let b = original.embed(std::slice::from_ref(&text)).await.unwrap().remove(0);
    let cosine: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    assert!(cosine > 0.95 && cosine < 0.99999, "cosine {cosine}");
    let missing = OnnxEmbedder::load(&OnnxFiles::in_dir_with_model(&dir, "model-nope.onnx"), 1)
        .err()
        .unwrap();
    assert!(
        missing
            .to_string()
            .contains("model-nope.onnx is missing (run `make deps`"),
        "{missing}"
    );
}

/// Indexes the storefront and checks what a reviewer's questions find.
async fn index_contract(store: Arc<dyn VectorStore>, model: Arc<dyn Embedder>) {
    let counting = Arc::new(Counting::new(model));
    let index = HybridIndex::open(store, counting.clone()).await.unwrap();
    let files = storefront_files();
    let stats = index.index(REPO, "c1", &files, &|_, _| {}).await.unwrap();
    assert!(stats.chunks > 20, "{stats:?}");
    assert_eq!(index.indexed_commit(REPO).await.unwrap().as_deref(), Some("c1"));

    // A conceptual query sharing none of the code's words.
    let opts = SearchOptions::new(Kind::Code, 5);
    let query = "divide a bill fairly between several people so nothing gets lost";
    let hits = index.search(REPO, query, &opts).await.unwrap();
    assert_eq!(
        (hits[0].path.as_str(), hits[0].symbol.as_deref()),
        ("shop/money.py", Some("split_evenly")),
        "{:#?}",
        brief(&hits)
    );
    let body = &hits[0].text.to_lowercase();
    for word in query.split(' ').filter(|w| w.len() > 3) {
        assert!(
            !body.contains(&format!(" {word} ")),
            "the query shares {word:?} with the code"
        );
    }

    // A question sharing one word ("give") with an unrelated docstring:
    // the refund code the meaning found comes first, not the word match.
    let hits = index
        .search(REPO, "give a customer their money back", &opts)
        .await
        .unwrap();
    assert!(
        hits[0].text.to_lowercase().contains("refund") && hits[0].dense.is_some(),
        "{:#?}",
        brief(&hits)
    );
    assert!(
        !hits[..2].iter().any(|h| h.symbol.as_deref() == Some("set_password")),
        "{:#?}",
        brief(&hits)
    );

    // An exact identifier: found through BM25 even where the dense side
    // does not rank it first.
    let hits = index.search(REPO, "_round_half_up", &opts).await.unwrap();
    assert!(hits[0].text.contains("def _round_half_up"), "{:#?}", brief(&hits));
    assert!(
        hits[0].sparse.is_some(),
        "found by the sparse side: {:#?}",
        brief(&hits)
    );

    // Docs: the team's rule about money.
    let docs = index
        .search(REPO, "can I use float for prices?", &SearchOptions::new(Kind::Docs, 3))
        .await
        .unwrap();
    assert_eq!(docs[0].path, "CONTRIBUTING.md", "{:#?}", brief(&docs));
    assert!(
        docs[0].symbol.as_deref().unwrap_or("").ends_with("Money"),
        "{:#?}",
        brief(&docs)
    );
    assert!(docs[0].text.contains("Never `float`"));

    // Filters: a path glob, a language, and nothing from a glob that
    // matches no file.
    let mut tests_only = SearchOptions::new(Kind::Code, 5);
    tests_only.path_glob = Some("tests/**".into());
    let hits = index.search(REPO, "refund", &tests_only).await.unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.path.starts_with("tests/")), "{:#?}", brief(&hits));
    let mut nowhere = SearchOptions::new(Kind::Code, 5);
    nowhere.path_glob = Some("vendor/**".into());
    assert!(index.search(REPO, "refund", &nowhere).await.unwrap().is_empty());
    let mut rust = SearchOptions::new(Kind::Code, 5);
    rust.language = Some("rust".into());
    assert!(index.search(REPO, "refund", &rust).await.unwrap().is_empty());
    assert!(
        index
            .search("acme/other", "refund", &SearchOptions::new(Kind::Code, 5))
            .await
            .unwrap()
            .is_empty()
    );

    // The same commit again: nothing is embedded.
    let before = counting.count();
    let again = index.index(REPO, "c1", &files, &|_, _| {}).await.unwrap();
    assert_eq!(
        (again.files_changed, again.chunks, counting.count() - before),
        (0, 0, 0)
    );

    // A one-file edit re-embeds only that file's chunks, and a deleted
    // file's chunks are gone.
    let mut edited = files.clone();
    let money = edited.iter_mut().find(|f| f.path == "shop/money.py").unwrap();
    money
        .text
        .push_str("\n\ndef zebra_cents_checksum(values):\n    return sum(values) % 97\n");
    edited.retain(|f| f.path != "shop/pagination.py");
    let before = counting.count();
    let stats = index.index(REPO, "c2", &edited, &|_, _| {}).await.unwrap();
    assert_eq!(stats.changed_paths, ["shop/money.py"], "{stats:?}");
    assert_eq!(stats.files_deleted, 1);
    let money = edited.iter().find(|f| f.path == "shop/money.py").unwrap();
    let money_chunks = quorum_search::chunk::chunk_code(&money.path, &money.text, &money.symbols).len();
    assert_eq!((stats.chunks, counting.count() - before), (money_chunks, money_chunks));
    let hits = index
        .search(REPO, "zebra_cents_checksum", &SearchOptions::new(Kind::Code, 3))
        .await
        .unwrap();
    assert!(hits[0].text.contains("zebra_cents_checksum"));
    let hits = index
        .search(REPO, "page offset", &SearchOptions::new(Kind::Code, 20))
        .await
        .unwrap();
    assert!(
        hits.iter().all(|h| h.path != "shop/pagination.py"),
        "deleted file still indexed"
    );

    // Vendored and minified copies are left out: counted, never embedded,
    // never an answer.
    let mut with_copies = edited.clone();
    let money = edited.iter().find(|f| f.path == "shop/money.py").unwrap();
    for path in ["shop/vendor/money.py", "static/money.min.js"] {
        let mut copy = money.clone();
        copy.path = path.to_string();
        with_copies.push(copy);
    }
    let before = counting.count();
    let stats = index.index(REPO, "c3", &with_copies, &|_, _| {}).await.unwrap();
    assert_eq!(
        (stats.files_skipped, stats.chunks, counting.count() - before),
        (2, 0, 0),
        "{stats:?}"
    );
    let hits = index
        .search(REPO, "zebra_cents_checksum", &SearchOptions::new(Kind::Code, 10))
        .await
        .unwrap();
    assert!(hits[0].text.contains("zebra_cents_checksum"));
    assert!(
        hits.iter()
            .all(|h| !h.path.contains("vendor/") && !h.path.ends_with(".min.js")),
        "{:#?}",
        brief(&hits)
    );
}

#[tokio::test]
#[ignore = "needs the embedding model (make deps)"]
async fn a_restarted_index_reopens_and_a_new_model_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let files = storefront_files();
    {
        let store = Arc::new(EdgeStore::new(dir.path()).unwrap());
        let index = HybridIndex::open(store, real_model()).await.unwrap();
        index.index(REPO, "c1", &files, &|_, _| {}).await.unwrap();
    }
    // Reopened: the commit and the chunks are there, nothing to re-embed.
    let counting = Arc::new(Counting::new(real_model()));
    let index = HybridIndex::open(Arc::new(EdgeStore::new(dir.path()).unwrap()), counting.clone())
        .await
        .unwrap();
    assert!(index.rebuilt.is_empty());
    assert_eq!(index.indexed_commit(REPO).await.unwrap().as_deref(), Some("c1"));
    let hits = index
        .search(REPO, "password hashing", &SearchOptions::new(Kind::Code, 3))
        .await
        .unwrap();
    assert_eq!(hits[0].path, "shop/auth.py", "{:#?}", brief(&hits));
    let stats = index.index(REPO, "c1", &files, &|_, _| {}).await.unwrap();
    assert_eq!((stats.chunks, counting.count()), (0, 1), "only the query was embedded");
    drop(index);

    // Another model: every collection is rebuilt and everything is
    // embedded again.
    let other: Arc<dyn Embedder> = Arc::new(HashingEmbedder::new(64));
    let index = HybridIndex::open(Arc::new(EdgeStore::new(dir.path()).unwrap()), other)
        .await
        .unwrap();
    assert_eq!(index.rebuilt, [Kind::Code, Kind::Docs, Kind::Reviews]);
    assert_eq!(index.indexed_commit(REPO).await.unwrap(), None);
    let stats = index.index(REPO, "c1", &files, &|_, _| {}).await.unwrap();
    assert_eq!(stats.files_changed, stats.files);
}

#[tokio::test]
async fn bad_queries_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let index = HybridIndex::open(
        Arc::new(EdgeStore::new(dir.path()).unwrap()),
        Arc::new(HashingEmbedder::new(16)),
    )
    .await
    .unwrap();
    let e = index
        .search(REPO, "  ", &SearchOptions::new(Kind::Code, 5))
        .await
        .unwrap_err();
    assert!(e.is_invalid() && e.to_string().contains("empty"), "{e}");
    let mut bad = SearchOptions::new(Kind::Code, 5);
    bad.path_glob = Some("src/[".into());
    let e = index.search(REPO, "x", &bad).await.unwrap_err();
    assert!(e.is_invalid() && e.to_string().contains("glob"), "{e}");
    let e = index
        .search(REPO, "x", &SearchOptions::new(Kind::Code, 0))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}
