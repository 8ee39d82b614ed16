//! Review memory's harvest from the emulated GitLab (F-MEM-1): merge
//! requests updated since the cursor, diff discussions with replies,
//! resolved with or without a push after them, award emoji with who gave
//! them and their access level, merged or not; a fault mid-run.

use std::sync::Arc;
use std::time::Duration;

use quorum_memory::ingest::{IngestOptions, IngestSummary, ingest};
use quorum_memory::{Association, MemoryState, Policy, Status, derive_items};
use quorum_scm::HttpCache;
use quorum_scm::gitlab::{GitLab, GitLabConfig, GitLabHistory};
use quorum_testkit::gitlab::{Fault, GitLabEmulator, PastDiscussion, PastMr, PastNote};

const PROJECT: &str = "acme/backend/shop";
const TOKEN: &str = "glpat-emulatedSecret123";
const QUORUM_SQL: &str = "**SQL built by string interpolation** (critical, security, confidence 0.90) — from static\n\nUse parameters.\n<!-- quorum:fp:00aa11bb22cc33dd --><!-- quorum:rule:sql-string-building -->";
const HEAD: &str = "2be7ddb704c7b6b83732fdd5b9f09d5a397b5f8f";
const OLDER: &str = "c380d3acebd181f13629a25d2e2acca46ffe1e00";

fn client(emu: &GitLabEmulator) -> Arc<GitLab> {
    let mut c = GitLabConfig::new(emu.url(), quorum_core::Secret::new(TOKEN));
    c.backoff = Duration::from_millis(5);
    c.max_rate_limit_wait = Duration::from_secs(1);
    c.retries = 1;
    Arc::new(GitLab::new(c).unwrap())
}

fn discussion(id: &str, path: &str, head: &str, notes: Vec<PastNote>) -> PastDiscussion {
    PastDiscussion {
        id: id.into(),
        path: path.into(),
        line: 10,
        head_sha: head.into(),
        notes,
        resolved_by: None,
    }
}

fn seed(emu: &GitLabEmulator) {
    emu.set_member(PROJECT, "maint", 40);
    emu.set_member(PROJECT, "alice", 30);
    emu.set_member(PROJECT, "guest", 10);
    emu.set_member(PROJECT, "quorum-bot", 30);
    let n = PastNote::new;
    // !1 merged: a human thread with a reply.
    emu.add_past_mr(
        PROJECT,
        PastMr {
            iid: 1,
            state: "merged".into(),
            updated_at: "2026-02-01T10:05:00Z".into(),
            head_sha: HEAD.into(),
            discussions: vec![discussion(
                "d1",
                "shop/payments.py",
                HEAD,
                vec![
                    n(
                        101,
                        "alice",
                        "Amounts are integer cents, never `float`.",
                        "2026-02-01T10:00:00Z",
                    ),
                    n(102, "guest", "Done.", "2026-02-01T10:05:00Z"),
                ],
            )],
        },
    );
    // !2 merged: Quorum's note thumbed down by a maintainer, resolved by
    // them with no push after it.
    let mut d2 = discussion(
        "d2",
        "scripts/seed.py",
        HEAD,
        vec![
            n(201, "quorum-bot", QUORUM_SQL, "2026-02-02T10:00:00Z")
                .awarded("maint", "thumbsdown")
                .awarded("guest", "thumbsup"),
        ],
    );
    d2.resolved_by = Some("maint".into());
    emu.add_past_mr(
        PROJECT,
        PastMr {
            iid: 2,
            state: "merged".into(),
            updated_at: "2026-02-02T11:00:00Z".into(),
            head_sha: HEAD.into(),
            discussions: vec![d2],
        },
    );
    // !3 merged: a developer's dismissal; resolved after a later push (outdated).
    let mut d3 = discussion(
        "d3",
        "scripts/report.py",
        OLDER,
        vec![
            n(301, "quorum-bot", QUORUM_SQL, "2026-02-03T10:00:00Z"),
            n(
                302,
                "alice",
                "Not a bug here: the table names are constants.",
                "2026-02-03T10:30:00Z",
            ),
        ],
    );
    d3.resolved_by = Some("alice".into());
    emu.add_past_mr(
        PROJECT,
        PastMr {
            iid: 3,
            state: "merged".into(),
            updated_at: "2026-02-03T11:00:00Z".into(),
            head_sha: HEAD.into(),
            discussions: vec![d3],
        },
    );
    // !4 still open.
    emu.add_past_mr(
        PROJECT,
        PastMr {
            iid: 4,
            state: "opened".into(),
            updated_at: "2026-02-04T10:00:00Z".into(),
            head_sha: HEAD.into(),
            discussions: vec![discussion(
                "d4",
                "shop/cart.py",
                HEAD,
                vec![n(401, "alice", "Needs a test.", "2026-02-04T10:00:00Z")],
            )],
        },
    );
}

fn now() -> chrono::DateTime<chrono::Utc> {
    quorum_memory::learn::parse_time("2026-02-05T00:00:00Z").unwrap()
}

async fn run(source: &GitLabHistory, state: &mut MemoryState) -> IngestSummary {
    let opts = IngestOptions {
        concurrency: 2,
        now: now(),
        ..Default::default()
    };
    ingest(source, &(), PROJECT, state, &opts, &|_, _| {}).await.unwrap()
}

#[tokio::test]
async fn harvests_discussions_and_awards_from_gitlab() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    seed(&emu);
    let source = GitLabHistory::new(client(&emu), HttpCache::in_memory());
    let mut state = MemoryState::default();
    let s = run(&source, &mut state).await;
    assert!(emu.violations().is_empty(), "{:?}", emu.violations());
    assert_eq!(s.prs_read, 4, "{s:?}");
    assert_eq!(s.threads_indexed, 1, "{s:?}");
    assert!(s.failed.is_empty() && s.skipped.is_empty(), "{s:?}");
    // !2: the maintainer's 👎 and their resolve with no push after it; the
    // guest's 👍; !3: alice's reply. !3's resolve came after a push: taken.
    let pr2 = &state.evidence[&2];
    let hows: Vec<(&str, &str, Association)> = pr2
        .iter()
        .map(|o| (o.how.as_str(), o.who.login.as_str(), o.who.association))
        .collect();
    assert_eq!(
        hows,
        [
            ("👎", "maint", Association::Member),
            ("👍", "guest", Association::Contributor),
            ("resolved with no change under it", "maint", Association::Member),
        ]
    );
    let items = derive_items(&state, &Policy::default(), now());
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].status, Status::Active);
    assert_eq!(items[0].key.scope, "scripts/**");
    assert!(
        state.threads[&101].text.contains("guest: Done."),
        "{}",
        state.threads[&101].text
    );
    assert_eq!(s.cursor.as_deref(), Some("2026-02-04T10:00:00Z"));

    // A rerun: the sweep starts at the cursor; merged MRs are not asked again.
    let first = emu.requests().len();
    run(&source, &mut state).await;
    let second: Vec<String> = emu.requests()[first..]
        .iter()
        .map(|(m, u, _)| format!("{m} {u}"))
        .collect();
    assert!(
        second.iter().any(|u| u.contains("updated_after=2026-02-04T10:00:00Z")),
        "{second:#?}"
    );
    assert!(!second.iter().any(|u| u.ends_with("/merge_requests/1")), "{second:#?}");
}

#[tokio::test]
async fn a_failed_merge_request_stops_the_cursor_and_a_rerun_finishes() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    seed(&emu);
    let source = GitLabHistory::new(client(&emu), HttpCache::in_memory());
    let mut state = MemoryState::default();
    // A 5xx storm longer than the client's retries.
    emu.fail_next("GET", "/merge_requests/3/discussions", Fault::Status(502));
    emu.fail_next("GET", "/merge_requests/3/discussions", Fault::Status(502));
    let s = run(&source, &mut state).await;
    assert_eq!(s.failed.len(), 1, "{s:?}");
    assert!(s.failed[0].contains("#3"), "{:?}", s.failed);
    assert_eq!(state.cursor.as_deref(), Some("2026-02-02T11:00:00Z"));
    let s = run(&source, &mut state).await;
    assert!(s.failed.is_empty(), "{s:?}");
    assert_eq!(state.cursor.as_deref(), Some("2026-02-04T10:00:00Z"));
}
