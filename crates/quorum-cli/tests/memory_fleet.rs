//! Review memory through the whole fleet (F-MEM-3, F-PUB-4): the team
//! dismissed Quorum's SQL comment in `app/` in two earlier pull requests
//! (a maintainer's 👎 and a resolve with no change, a member's "not a bug
//! here"); after `ingest`, the same finding in `app/` is not posted again —
//! it is in the review's rejected list with the memory item as its reason —
//! while the same finding in `lib/`, outside the item's scope, still is.

use std::sync::Arc;
use std::time::Duration;

mod shop;
use shop::{BASE, HEAD, NEW, OLD, REPO, emulated_pr, pr_event};

use quorum_cli::fleet::{Fleet, FleetOptions, wait_for_review};
use quorum_cli::webhook::deliver;
use quorum_context::memory::StoreCheckpoint;
use quorum_memory::MemoryState;
use quorum_memory::ingest::{IngestOptions, ingest};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::github::{GitHub, GitHubAuth, GitHubConfig, GitHubHistory};
use quorum_scm::{HttpCache, LocalRepos, Trees};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::github::{GitHubEmulator, PastReviewComment, ThreadState};
use serde_json::Value;

const TOKEN: &str = "ghp_memoryFleet";
const SECRET: &[u8] = b"memory-fleet-secret";

const QUORUM_SQL: &str = "**SQL query built from strings** (critical, security, confidence 0.95) — from static\n\nUse parameters.\n<!-- quorum:fp:00aa11bb22cc33dd --><!-- quorum:rule:sql-string-building -->";

fn sql_comments_on(emu: &GitHubEmulator, path: &str) -> usize {
    emu.reviews()
        .iter()
        .flat_map(|r| r.comments.clone())
        .filter(|c: &Value| c["path"] == path && c["body"].as_str().unwrap_or("").contains("sql-string-building"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finding_the_team_dismissed_twice_is_not_posted_again_in_its_scope() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    // History: two merged PRs where the team dismissed the SQL comment in app/.
    let c = PastReviewComment::new;
    emu.add_past_comment(
        REPO,
        c(
            201,
            2,
            "quorum[bot]",
            "NONE",
            "app/admin.py",
            QUORUM_SQL,
            "2026-01-05T10:00:00Z",
        )
        .reacted("maint", "-1"),
    );
    emu.set_thread(
        REPO,
        201,
        ThreadState {
            resolved: true,
            outdated: false,
            resolved_by: Some("maint".into()),
        },
    );
    emu.add_past_comment(
        REPO,
        c(
            301,
            3,
            "quorum[bot]",
            "NONE",
            "app/report.py",
            QUORUM_SQL,
            "2026-01-09T10:00:00Z",
        ),
    );
    emu.add_past_comment(
        REPO,
        c(
            302,
            3,
            "alice",
            "MEMBER",
            "app/report.py",
            "Not a bug here: app/ only runs fixed admin queries.",
            "2026-01-09T11:00:00Z",
        )
        .reply_to(301),
    );
    emu.set_merged(REPO, 2);
    emu.set_merged(REPO, 3);
    emu.set_permission(REPO, "maint", "admin");
    // The new pull requests: the same f-string SQL, in app/ and in lib/.
    emu.set_ref(REPO, "main", BASE);
    for path in ["app/users.py", "lib/users.py"] {
        emu.add_file(REPO, BASE, path, OLD);
        emu.add_file(REPO, HEAD, path, NEW);
    }
    emu.set_pr(REPO, emulated_pr(7, "app/users.py", HEAD));
    emu.set_pr(REPO, emulated_pr(8, "lib/users.py", HEAD));

    let mut config = GitHubConfig::new(emu.url(), GitHubAuth::Token(quorum_core::Secret::new(TOKEN)));
    config.backoff = Duration::from_millis(5);
    let github = Arc::new(GitHub::new(config).unwrap());
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());

    // Harvest into the fleet's store, as `quorum memory ingest` does.
    let mut state = MemoryState::default();
    let source = GitHubHistory::new(github.clone(), HttpCache::in_memory());
    let summary = ingest(
        &source,
        &StoreCheckpoint {
            store: store.as_ref(),
            repo: REPO,
        },
        REPO,
        &mut state,
        &IngestOptions::default(),
        &|_, _| {},
    )
    .await
    .unwrap();
    assert_eq!(summary.feedback, 3, "{summary:?}");
    assert!(summary.failed.is_empty(), "{summary:?}");

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let trees = Arc::new(Trees {
        api: Some(quorum_scm::ScmApi::GitHub(github.clone())),
        ..Trees::default()
    });
    let fleet = Fleet::start(
        FleetOptions {
            webhook_secret: SECRET.to_vec(),
            source: github.clone(),
            trees,
            sink: Some(github.clone()),
            policy_source: Some(github.clone()),
            scm: Some(quorum_core::Provider::Github),
            ..FleetOptions::local(ctx, store.clone(), Arc::new(LocalRepos::new()))
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let wait = Duration::from_secs(60);

    // In app/: suppressed, with the item and the people behind it as the reason.
    let (status, body) = deliver(
        &http,
        fleet.gateway,
        SECRET,
        "pull_request",
        pr_event("opened", 7, HEAD),
    )
    .await
    .unwrap();
    assert_eq!(status, 202, "{body}");
    let job = body["job_id"].as_str().unwrap().to_string();
    let review = wait_for_review(store.as_ref(), &job, wait).await.unwrap();
    assert_eq!(sql_comments_on(&emu, "app/users.py"), 0, "{:#?}", emu.reviews());
    let (finding, reason) = review
        .rejected
        .iter()
        .find(|(f, _)| f.rule.as_deref() == Some("sql-string-building"))
        .unwrap_or_else(|| panic!("the suppressed finding is listed: {:#?}", review.rejected));
    assert_eq!(finding.file, "app/users.py");
    assert!(
        reason.starts_with("memory M-") && reason.contains("rejected ×3 by @alice, @maint"),
        "{reason}"
    );
    // The match is recorded (staleness is measured from it).
    let matches = store.memory_matches(REPO).await.unwrap();
    assert_eq!(matches.len(), 1, "{matches:?}");

    // In lib/: outside the item's scope, the comment is posted as before.
    let (status, body) = deliver(
        &http,
        fleet.gateway,
        SECRET,
        "pull_request",
        pr_event("opened", 8, HEAD),
    )
    .await
    .unwrap();
    assert_eq!(status, 202, "{body}");
    let job = body["job_id"].as_str().unwrap().to_string();
    let review = wait_for_review(store.as_ref(), &job, wait).await.unwrap();
    assert_eq!(sql_comments_on(&emu, "lib/users.py"), 1, "{:#?}", emu.reviews());
    assert!(
        !review.rejected.iter().any(|(_, r)| r.starts_with("memory")),
        "{:#?}",
        review.rejected
    );

    assert_eq!(emu.violations(), Vec::<String>::new());
    fleet.stop().await.unwrap();
}
