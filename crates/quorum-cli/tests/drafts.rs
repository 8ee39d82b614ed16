//! Draft mode end to end (F-PUB-4) on a real Redis: the fleet stores the
//! review instead of posting it; `quorum approve|discard` — run here through
//! the same library call, with its own store connection and producer, as a
//! separate CLI process has — sends the decision on `review.draft.decided`
//! and the publisher applies it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use quorum_cli::demo::DEMO_REPO;
use quorum_cli::drafts::{Decided, decide};
use quorum_cli::fleet::{Fleet, FleetOptions, wait_for_review};
use quorum_cli::webhook::{open_pull_request, pull_request_payload};
use quorum_core::{PublishMode, RunState};
use quorum_eval::{build_case_repo, case::load_case};
use quorum_events::DraftDecision;
use quorum_runtime::{BusProducer, CancellationToken, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_testkit::RedisServer;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server (`make test` installs it)"]
async fn draft_is_stored_then_approved_or_discarded_through_the_publisher() {
    let redis = RedisServer::start();
    let fixture = root().join("storefront-fixture");
    let case = load_case(&fixture.join("cases/01-sql-fstring-email-lookup.json")).unwrap();
    let repo = build_case_repo(&fixture, &case).unwrap();
    let ctx = ServiceContext::embedded(|bus| bus.fetch_wait_max = Duration::from_millis(10)).unwrap();
    let store = quorum_store::connect(Some(&redis.url()), "drafts:").await.unwrap();
    let repos = LocalRepos::new();
    repos.insert(DEMO_REPO, LocalGit::open(&repo.path).unwrap());
    let secret = b"drafts-test".to_vec();
    let fleet = Fleet::start(
        FleetOptions {
            webhook_secret: secret.clone(),
            publish_mode: PublishMode::Draft,
            ..FleetOptions::local(ctx.clone(), store.clone(), Arc::new(repos))
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();

    let client = reqwest::Client::new();
    let mut jobs = vec![];
    for number in [1, 2] {
        let body = pull_request_payload(DEMO_REPO, number, &repo.base, &repo.head, &case.title, &case.body);
        let accepted = open_pull_request(&client, fleet.gateway, &secret, body).await.unwrap();
        wait_for_review(store.as_ref(), &accepted.job_id, Duration::from_secs(60))
            .await
            .unwrap();
        let run = store.get_run(&accepted.job_id).await.unwrap().unwrap();
        assert_eq!(run.state, RunState::Draft, "draft mode stores, it does not post");
        assert!(
            store.get_review(&accepted.job_id).await.unwrap().is_none(),
            "nothing published yet"
        );
        jobs.push(accepted.job_id);
    }

    // What the CLI process holds: its own store connection and producer.
    let cli_store = quorum_store::connect(Some(&redis.url()), "drafts:").await.unwrap();
    let cli_producer = BusProducer::new(&ctx.bus).unwrap();
    let wait = Duration::from_secs(60);
    let approved = decide(
        cli_store.as_ref(),
        &cli_producer,
        &jobs[0],
        DraftDecision::Approve,
        "cli:test",
        wait,
    )
    .await
    .unwrap();
    assert_eq!(approved, Decided::Applied(RunState::Approved));
    let posted = store
        .get_review(&jobs[0])
        .await
        .unwrap()
        .expect("the approved draft was posted");
    assert!(posted.contains("SQL built by string interpolation"), "{posted}");
    assert!(store.get_draft(&jobs[0]).await.unwrap().is_none());

    let discarded = decide(
        cli_store.as_ref(),
        &cli_producer,
        &jobs[1],
        DraftDecision::Discard,
        "cli:test",
        wait,
    )
    .await
    .unwrap();
    assert_eq!(discarded, Decided::Applied(RunState::Discarded));
    assert!(
        store.get_review(&jobs[1]).await.unwrap().is_none(),
        "a discarded draft is never posted"
    );

    // Deciding again, or a job that does not exist, is an error before anything is sent.
    let again = decide(
        cli_store.as_ref(),
        &cli_producer,
        &jobs[0],
        DraftDecision::Approve,
        "cli:test",
        wait,
    )
    .await
    .unwrap_err();
    assert!(
        again.to_string().contains("has no draft to decide (state: approved)"),
        "{again}"
    );
    let unknown = decide(
        cli_store.as_ref(),
        &cli_producer,
        "no-such-job",
        DraftDecision::Approve,
        "cli:test",
        wait,
    )
    .await
    .unwrap_err();
    assert!(unknown.to_string().contains("no run no-such-job"), "{unknown}");

    fleet.stop().await.unwrap();
}
