//! Review memory's harvest from the emulated GitHub (F-MEM-1): comments in
//! the REST description's shapes (validated), GraphQL thread state,
//! reactions with who gave them, merged pull requests; faults mid-run.

use std::sync::Arc;
use std::time::Duration;

use quorum_memory::ingest::{IngestOptions, IngestSummary, ingest};
use quorum_memory::{Asker, Association, MemoryState, Policy, Status, derive_items, search};
use quorum_scm::HttpCache;
use quorum_scm::github::{GitHub, GitHubAuth, GitHubConfig, GitHubHistory};
use quorum_testkit::github::{Fault, GitHubEmulator, PastReviewComment, ThreadState};

const REPO: &str = "acme/shop";
const TOKEN: &str = "ghp_emulatedSecret123";
const QUORUM_SQL: &str = "**SQL built from a string** (critical, security, confidence 0.95) — from static\n\nUse parameters.\n<!-- quorum:fp:00aa11bb22cc33dd --><!-- quorum:rule:sql-string-building -->";

fn client(emu: &GitHubEmulator) -> Arc<GitHub> {
    let mut c = GitHubConfig::new(emu.url(), GitHubAuth::Token(quorum_core::Secret::new(TOKEN)));
    c.backoff = Duration::from_millis(5);
    c.max_rate_limit_wait = Duration::from_secs(2);
    Arc::new(GitHub::new(c).unwrap())
}

fn t(minute: u32) -> String {
    format!("2026-02-01T10:{minute:02}:00Z")
}

/// A history with every case the harvest must handle.
fn seed(emu: &GitHubEmulator) {
    let c = PastReviewComment::new;
    // PR 1, merged: a human thread with a reply that arrives (by id and
    // time) before... its parent is fine; a reply to a deleted comment;
    // a bot's thread; a comment on a file since deleted.
    emu.add_past_comment(
        REPO,
        c(
            101,
            1,
            "alice",
            "MEMBER",
            "shop/payments.py",
            "Amounts are integer cents, never float.",
            &t(1),
        ),
    );
    emu.add_past_comment(
        REPO,
        c(
            102,
            1,
            "bob",
            "CONTRIBUTOR",
            "shop/payments.py",
            "Done, switched to cents.",
            &t(2),
        )
        .reply_to(101)
        .reacted("alice", "+1"),
    );
    emu.add_past_comment(
        REPO,
        c(103, 1, "carol", "MEMBER", "shop/payments.py", "Agreed.", &t(3)).reply_to(99),
    );
    emu.add_past_comment(
        REPO,
        c(
            104,
            1,
            "dependabot[bot]",
            "NONE",
            "requirements.txt",
            "Bump requests.",
            &t(4),
        ),
    );
    emu.add_past_comment(
        REPO,
        c(
            105,
            1,
            "alice",
            "MEMBER",
            "shop/legacy_removed.py",
            "Log with the logger, not print().",
            &t(5),
        ),
    );
    emu.set_merged(REPO, 1);
    // PRs 2 and 3, merged: the team dismissed Quorum's SQL finding in
    // scripts/ twice — a 👎 and a resolve with no change by the owner,
    // then a member's reply.
    emu.add_past_comment(
        REPO,
        c(201, 2, "quorum[bot]", "NONE", "scripts/migrate.py", QUORUM_SQL, &t(10)).reacted("maint", "-1"),
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
    emu.set_merged(REPO, 2);
    emu.add_past_comment(
        REPO,
        c(301, 3, "quorum[bot]", "NONE", "scripts/seed.py", QUORUM_SQL, &t(20)),
    );
    emu.add_past_comment(
        REPO,
        c(
            302,
            3,
            "alice",
            "MEMBER",
            "scripts/seed.py",
            "Not a bug here: the table name is a constant.",
            &t(21),
        )
        .reply_to(301),
    );
    emu.set_merged(REPO, 3);
    // PR 4, open: its human thread counts once it merges.
    emu.add_past_comment(
        REPO,
        c(401, 4, "alice", "MEMBER", "shop/cart.py", "Needs a test.", &t(30)),
    );
    emu.set_permission(REPO, "maint", "admin");
}

async fn run(source: &GitHubHistory, state: &mut MemoryState) -> IngestSummary {
    let opts = IngestOptions {
        concurrency: 2,
        now: quorum_memory::learn::parse_time("2026-02-02T00:00:00Z").unwrap(),
        ..Default::default()
    };
    ingest(source, &(), REPO, state, &opts, &|_, _| {}).await.unwrap()
}

#[tokio::test]
async fn harvests_threads_and_feedback_in_githubs_shapes() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    seed(&emu);
    let source = GitHubHistory::new(client(&emu), HttpCache::in_memory());
    let mut state = MemoryState::default();
    let s = run(&source, &mut state).await;
    assert!(emu.violations().is_empty(), "{:?}", emu.violations());
    assert_eq!(s.prs_read, 4, "{s:?}");
    // PR 1: alice's two threads (one on a file since deleted); the bot's
    // is kept apart, the orphan reply skipped with its reason.
    assert_eq!(s.threads_indexed, 2, "{s:?}");
    assert!(
        s.skipped.iter().any(|m| m.contains("reply 103 answers comment 99")),
        "{:?}",
        s.skipped
    );
    assert!(
        s.skipped.iter().any(|m| m.contains("dependabot[bot]")),
        "{:?}",
        s.skipped
    );
    assert!(s.failed.is_empty(), "{:?}", s.failed);
    // 👎 by the admin, resolved with no change by the admin, alice's reply.
    assert_eq!(s.feedback, 3, "{:?}", state.evidence);
    let pr2 = &state.evidence[&2];
    assert!(
        pr2.iter()
            .all(|o| o.who.login == "maint" && o.who.association == Association::Owner),
        "{pr2:?}"
    );
    let items = derive_items(
        &state,
        &Policy::default(),
        quorum_memory::learn::parse_time("2026-02-02T00:00:00Z").unwrap(),
    );
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].status, Status::Active);
    assert_eq!(items[0].key.scope, "scripts/**");
    assert_eq!(items[0].rejections_summary(), "rejected ×3 by @alice, @maint");
    // The thread's replies and reactions came along.
    let cents = &state.threads[&101];
    assert!(cents.text.contains("bob: Done, switched to cents."), "{}", cents.text);
    assert_eq!(cents.plus_one, 1);
    let hits = search(
        state.threads.values(),
        &Asker::Person("alice".into()),
        "price as a float",
        Some("shop/orders.py"),
        3,
    );
    assert_eq!(hits[0].thread.id, 101);
    assert_eq!(s.cursor.as_deref(), Some(t(30).as_str()));
}

#[tokio::test]
async fn a_rerun_asks_only_what_could_have_changed() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    seed(&emu);
    let dir = tempfile::tempdir().unwrap();
    let mut state = MemoryState::default();
    run(
        &GitHubHistory::new(client(&emu), HttpCache::on_disk(dir.path()).unwrap()),
        &mut state,
    )
    .await;
    let first = emu.requests().len();
    // A new process: a fresh client, the same cache directory and state.
    run(
        &GitHubHistory::new(client(&emu), HttpCache::on_disk(dir.path()).unwrap()),
        &mut state,
    )
    .await;
    let second: Vec<(String, String, u16)> = emu.requests()[first..].to_vec();
    // Merged PRs' metadata is never asked again; the sweep starts at the
    // cursor (only PR 4's comment is at it), and only PRs that can still
    // change are read: 2 and 3 (Quorum's, watched for late reactions) and 4 (open).
    assert!(
        !second
            .iter()
            .any(|(m, u, _)| m == "GET" && (u.ends_with("/pulls/1") || u.ends_with("/pulls/2"))),
        "{second:#?}"
    );
    assert!(
        second.iter().any(|(_, u, _)| u.contains("since=2026-02-01T10:30:00Z")),
        "{second:#?}"
    );
    assert!(
        !second.iter().any(|(_, u, _)| u.contains("/pulls/1/comments")),
        "{second:#?}"
    );
}

#[tokio::test]
async fn faults_mid_run_fail_that_pr_and_a_rerun_resumes() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    seed(&emu);
    let source = GitHubHistory::new(client(&emu), HttpCache::in_memory());
    let mut state = MemoryState::default();
    // A secondary rate limit too long to wait out, on PR 3.
    emu.fail_next(
        "GET",
        "/pulls/3/comments",
        Fault::SecondaryRateLimit { retry_after: 3600 },
    );
    let s = run(&source, &mut state).await;
    assert_eq!(s.failed.len(), 1, "{s:?}");
    assert!(s.failed[0].contains("#3"), "{:?}", s.failed);
    assert_eq!(
        state.cursor.as_deref(),
        Some(t(10).as_str()),
        "the cursor stops before PR 3"
    );
    // A page cut off in transit next: that PR fails again, clearly, as
    // unavailability (the run stops there; a rerun goes on).
    emu.fail_next("GET", "/pulls/3/comments", Fault::Truncated);
    let s = run(&source, &mut state).await;
    assert_eq!(s.failed.len(), 1, "{s:?}");
    assert!(s.failed[0].contains("the answer was cut off"), "{:?}", s.failed);
    // Then a clean rerun finishes, with the same result as a run that never failed.
    let s = run(&source, &mut state).await;
    assert!(s.failed.is_empty(), "{s:?}");
    let mut clean = MemoryState::default();
    run(&GitHubHistory::new(client(&emu), HttpCache::in_memory()), &mut clean).await;
    assert_eq!(state.evidence, clean.evidence);
    assert_eq!(state.threads, clean.threads);
    assert_eq!(state.cursor, clean.cursor);
}

/// `make bench-memory`: ingest throughput against the emulated GitHub with
/// a realistic round trip, by concurrency, and what a second run asks.
/// Figures go to docs/benchmarks.md; nothing is asserted about time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: make bench-memory"]
async fn bench_ingest() {
    const PRS: u64 = 120;
    let latency = Duration::from_millis(
        std::env::var("BENCH_LATENCY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(50),
    );
    let emu = GitHubEmulator::with_token(TOKEN).await;
    let c = PastReviewComment::new;
    let mut id = 1;
    for pr in 1..=PRS {
        for t in 0..3 {
            let at = format!("2026-03-{:02}T{:02}:{:02}:00Z", 1 + pr % 28, pr % 24, t * 10);
            emu.add_past_comment(
                REPO,
                c(
                    id,
                    pr,
                    "alice",
                    "MEMBER",
                    "shop/payments.py",
                    "Amounts are integer cents, never `float`.",
                    &at,
                ),
            );
            emu.add_past_comment(
                REPO,
                c(id + 1, pr, "bob", "CONTRIBUTOR", "shop/payments.py", "Done.", &at).reply_to(id),
            );
            id += 2;
        }
        emu.set_merged(REPO, pr);
    }
    emu.set_latency(latency);
    println!(
        "ingest of {PRS} merged PRs × 3 threads (2 comments each), {} ms per request:",
        latency.as_millis()
    );
    for concurrency in [1, 4, 8] {
        let source = GitHubHistory::new(client(&emu), HttpCache::in_memory());
        let mut state = MemoryState::default();
        let before = emu.requests().len();
        let started = std::time::Instant::now();
        let opts = IngestOptions {
            concurrency,
            ..Default::default()
        };
        let s = ingest(&source, &(), REPO, &mut state, &opts, &|_, _| {}).await.unwrap();
        let secs = started.elapsed().as_secs_f64();
        let requests = emu.requests().len() - before;
        println!(
            "  concurrency {concurrency}: {} threads in {secs:.1} s = {:.1} threads/s, {requests} requests",
            s.threads_indexed,
            s.threads_indexed as f64 / secs
        );
        if concurrency == 8 {
            let before = emu.requests().len();
            let started = std::time::Instant::now();
            let again = ingest(&source, &(), REPO, &mut state, &opts, &|_, _| {}).await.unwrap();
            let asked: Vec<String> = emu.requests()[before..]
                .iter()
                .map(|(m, u, _)| format!("{m} {u}"))
                .collect();
            println!(
                "  second run (warm cache, cursor at the last comment): {} requests in {:.2} s, {} PRs re-read: {asked:?}",
                asked.len(),
                started.elapsed().as_secs_f64(),
                again.prs_read
            );
        }
    }
}
