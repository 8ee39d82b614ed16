//! The indexer against the embedded broker: a branch is indexed, a new
//! commit is indexed incrementally (one file parsed), a repeat is a no-op,
//! and requests it must not act on go to the DLQ with the reason.

use quorum_testkit::git;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quorum_context::GraphIndex;
use quorum_core::{Provider, RepoRef};
use quorum_events::{IndexRequested, SCHEMA_VERSION, Topic, headers};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::{MemoryStore, StateStore};

fn request(repo: &str, git_ref: &str) -> IndexRequested {
    IndexRequested {
        schema_version: SCHEMA_VERSION,
        repo: RepoRef {
            provider: Provider::Local,
            full_name: repo.into(),
        },
        git_ref: git_ref.into(),
        memory_pull_requests: vec![],
    }
}

async fn wait_for_graph(store: &dyn StateStore, repo: &str, commit: &str) {
    let start = Instant::now();
    while store.get_graph(repo, commit).await.unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(60), "no graph for {commit}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_for_search(search: &quorum_search::HybridIndex, commit: &str) {
    let start = Instant::now();
    while search.indexed_commit("acme/shop").await.unwrap().as_deref() != Some(commit) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "search index not at {commit}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn metric(text: &str, line_prefix: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(line_prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_branches_incrementally_and_dead_letters_what_it_must_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::create_dir(d.join("pkg")).unwrap();
    std::fs::write(
        d.join("pkg/a.py"),
        "def f(x):\n    return g(x)\n\n\ndef g(x):\n    return x\n",
    )
    .unwrap();
    std::fs::write(d.join("pkg/b.py"), "from .a import f\n\n\ndef h():\n    return f(1)\n").unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "one"]);
    let first = git(d, &["rev-parse", "HEAD"]);

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert("acme/shop", LocalGit::open(d).unwrap());
    let index = Arc::new(GraphIndex::new(store.clone(), Arc::new(repos)));
    // The hybrid index on the embedded engine; the hashing embedder keeps
    // this a test of the plumbing (the search tests use the real model).
    let search_dir = tempfile::tempdir().unwrap();
    let search = quorum_search::testing::hashing_index(search_dir.path()).await.unwrap();
    let shutdown = CancellationToken::new();
    let handle = quorum_indexer::start(
        "127.0.0.1:0".parse().unwrap(),
        &ctx,
        store.clone(),
        index.clone(),
        Some(search.clone()),
        None,
        shutdown.clone(),
    )
    .await
    .unwrap();

    ctx.producer.publish(&request("acme/shop", "main")).await.unwrap();
    wait_for_graph(store.as_ref(), "acme/shop", &first).await;
    assert_eq!(
        store.branch_graph("acme/shop", "main").await.unwrap(),
        Some(first.clone())
    );
    let g = index.load("acme/shop", &first).await.unwrap().unwrap();
    let h = g.find("pkg.b.h").unwrap();
    assert!(
        g.outgoing(h)
            .any(|e| e.to == quorum_graph::Target::Symbol(g.find("pkg.a.f").unwrap()))
    );

    wait_for_search(&search, &first).await;
    let embedded =
        |ctx: &ServiceContext| metric(&ctx.metrics.render(), "quorum_search_chunks_total{kind=\"embedded\"}");
    assert_eq!(embedded(&ctx), 2, "one chunk per small file");
    let hits = search
        .search(
            "acme/shop",
            "h",
            &quorum_search::SearchOptions::new(quorum_search::Kind::Code, 2),
        )
        .await
        .unwrap();
    assert_eq!(hits[0].path, "pkg/b.py");

    // A second commit touches one of the two files.
    std::fs::write(
        d.join("pkg/a.py"),
        "def f(x, y=0):\n    return g(x)\n\n\ndef g(x):\n    return x\n",
    )
    .unwrap();
    git(d, &["commit", "-qam", "two"]);
    let second = git(d, &["rev-parse", "HEAD"]);
    ctx.producer
        .publish(&request("acme/shop", "refs/heads/main"))
        .await
        .unwrap();
    wait_for_graph(store.as_ref(), "acme/shop", &second).await;
    assert_eq!(
        store.branch_graph("acme/shop", "main").await.unwrap(),
        Some(second.clone())
    );
    wait_for_search(&search, &second).await;
    assert_eq!(embedded(&ctx), 3, "only the changed file was re-embedded");

    // Requests it must not act on: an unknown repository, an option-like
    // ref, a repository name that is a path.
    ctx.producer.publish(&request("acme/elsewhere", "main")).await.unwrap();
    ctx.producer
        .publish(&request("acme/shop", "--upload-pack=evil"))
        .await
        .unwrap();
    ctx.producer.publish(&request("../../etc", "main")).await.unwrap();
    // Indexing the same commit again is a no-op that loads the stored graph.
    ctx.producer.publish(&request("acme/shop", &second)).await.unwrap();

    let start = Instant::now();
    let dlq = loop {
        let dlq = quorum_runtime::inspect::read_topic(&ctx.bus, Topic::Dlq, Duration::from_millis(500))
            .await
            .unwrap();
        let text = ctx.metrics.render();
        if dlq.len() >= 3 && metric(&text, "quorum_index_builds_total{outcome=\"loaded\"}") >= 1 {
            break dlq;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "dlq {} messages", dlq.len());
    };
    let reasons: Vec<String> = dlq.iter().filter_map(|m| m.header(headers::DLQ_ERROR)).collect();
    assert!(
        reasons.iter().any(|r| r.contains("`acme/elsewhere` is not configured")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains("--upload-pack")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("../../etc")), "{reasons:?}");

    let text = ctx.metrics.render();
    assert_eq!(
        metric(&text, "quorum_index_builds_total{outcome=\"built\"}"),
        1,
        "{text}"
    );
    assert_eq!(
        metric(&text, "quorum_index_builds_total{outcome=\"incremental\"}"),
        1,
        "{text}"
    );
    // Two files parsed for the first commit, one for the second.
    assert_eq!(metric(&text, "quorum_index_files_total{kind=\"parsed\"}"), 3, "{text}");
    assert_eq!(metric(&text, "quorum_index_files_total{kind=\"reused\"}"), 1, "{text}");
    shutdown.cancel();
    handle.wait().await.unwrap();
}

/// A default-branch index request also refreshes review memory from the
/// SCM's history (here the emulated GitHub): the team's dismissals become
/// an active item in the store, where the critic reads it, and the human
/// threads land in the search index's `reviews` collection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_index_request_refreshes_review_memory_from_the_scm() {
    use quorum_testkit::github::{GitHubEmulator, PastReviewComment};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::write(d.join("a.py"), "def f():\n    return 1\n").unwrap();
    std::fs::create_dir(d.join("scripts")).unwrap();
    let dropped = "cur.execute(f\"DROP TABLE {name}\")";
    std::fs::write(d.join("scripts/x.py"), format!("def drop(cur, name):\n    {dropped}\n")).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "one"]);

    let emu = GitHubEmulator::with_token("ghp_indexer").await;
    let sql = "**SQL built by string interpolation** (critical)\n<!-- quorum:fp:00aa11bb22cc33dd --><!-- quorum:rule:sql-string-building -->";
    for pr in [1, 2] {
        emu.add_past_comment(
            "acme/shop",
            PastReviewComment::new(
                pr * 10,
                pr,
                "quorum[bot]",
                "NONE",
                "scripts/x.py",
                sql,
                "2026-01-05T10:00:00Z",
            )
            .reacted("maint", "-1")
            .on_hunk(&format!("@@ -0,0 +1,2 @@\n+def drop(cur, name):\n+    {dropped}")),
        );
        emu.set_merged("acme/shop", pr);
    }
    emu.add_past_comment(
        "acme/shop",
        PastReviewComment::new(
            11,
            1,
            "alice",
            "MEMBER",
            "a.py",
            "Amounts are integer cents, never float.",
            "2026-01-04T10:00:00Z",
        ),
    );
    emu.set_permission("acme/shop", "maint", "admin");
    let search_dir = tempfile::tempdir().unwrap();
    let search = quorum_search::testing::hashing_index(search_dir.path()).await.unwrap();
    let mut config = quorum_scm::github::GitHubConfig::new(
        emu.url(),
        quorum_scm::github::GitHubAuth::Token(quorum_core::Secret::new("ghp_indexer")),
    );
    config.backoff = Duration::from_millis(5);
    let api = quorum_scm::ScmApi::GitHub(Arc::new(quorum_scm::github::GitHub::new(config).unwrap()));

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let repos = LocalRepos::new();
    repos.insert("acme/shop", LocalGit::open(d).unwrap());
    let index = Arc::new(GraphIndex::new(store.clone(), Arc::new(repos)));
    let shutdown = CancellationToken::new();
    let handle = quorum_indexer::start(
        "127.0.0.1:0".parse().unwrap(),
        &ctx,
        store.clone(),
        index,
        Some(search.clone()),
        quorum_indexer::MemoryRefresh::from_api(Some(&api), 50),
        shutdown.clone(),
    )
    .await
    .unwrap();
    ctx.producer.publish(&request("acme/shop", "main")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let state = loop {
        if let Some(json) = store.get_memory("acme/shop").await.unwrap() {
            let st: quorum_memory::MemoryState = serde_json::from_str(&json).unwrap();
            if st.cursor.is_some() {
                break st;
            }
        }
        assert!(Instant::now() < deadline, "memory was not refreshed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let items = quorum_memory::derive_items(&state, &quorum_memory::Policy::default(), chrono::Utc::now());
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].status, quorum_memory::Status::Active);
    assert_eq!(items[0].key.scope, "scripts/**");
    assert_eq!(
        state.threads.len(),
        1,
        "alice's thread; the bot's comments are kept apart"
    );
    while search.review_count("acme/shop").await.unwrap() == 0 {
        assert!(Instant::now() < deadline, "the reviews collection was not updated");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let hits = search
        .search_reviews("acme/shop", "integer cents", &Default::default(), 5)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].thread["reviewer"], "alice");
    assert!(state.gone.is_empty(), "the dismissed line is on main: {:?}", state.gone);

    // The code the team dismissed the finding on is rewritten on main: the
    // next index of main finds its line gone, and the item is stale.
    std::fs::write(
        d.join("scripts/x.py"),
        "def drop(cur, name):\n    cur.execute(sql.drop_table(name))\n",
    )
    .unwrap();
    git(d, &["commit", "-qam", "two"]);
    ctx.producer.publish(&request("acme/shop", "main")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let state = loop {
        let json = store.get_memory("acme/shop").await.unwrap().unwrap();
        let st: quorum_memory::MemoryState = serde_json::from_str(&json).unwrap();
        if !st.gone.is_empty() {
            break st;
        }
        assert!(Instant::now() < deadline, "the sources were not checked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let items = quorum_memory::derive_items(&state, &quorum_memory::Policy::default(), chrono::Utc::now());
    assert_eq!(items[0].status, quorum_memory::Status::Suggested);
    let note = items[0].note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("stale: the code it was learned on is gone (scripts/x.py changed"),
        "{note}"
    );
    assert!(emu.violations().is_empty(), "{:?}", emu.violations());
    shutdown.cancel();
    handle.wait().await.unwrap();
}
