//! The whole fleet against an emulated GitHub (quorum-testkit, shaped and
//! validated by GitHub's REST description): a signed `pull_request.opened`
//! becomes one review with its inline comment on the right line and a
//! completed Check Run; a redelivery changes nothing; a push with the same
//! problem does not repeat the comment; `/review` asks again; a repository
//! whose `.quorum.yml` says `mode: off` gets nothing.

use std::sync::Arc;
use std::time::Duration;

mod shop;
use shop::{BASE, HEAD, HEAD2, NEW, OLD, REPO, emulated_pr, pr_event};

use quorum_cli::fleet::{Fleet, FleetOptions, wait_for_review};
use quorum_cli::webhook::deliver;
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::github::{GitHub, GitHubAuth, GitHubConfig};
use quorum_scm::{LocalRepos, Trees};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::github::{GitHubEmulator, test_app_private_key};
use serde_json::{Value, json};

const SECRET: &[u8] = b"github-fleet-secret";

fn comment_event(id: u64, user: &str, body: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "action": "created",
        "issue": {"number": 7, "pull_request": {"url": "https://api.github.com/repos/acme/shop/pulls/7"}},
        "comment": {"id": id, "body": body, "user": {"login": user, "type": "User"}},
        "repository": {"full_name": REPO, "name": "shop", "owner": {"login": "acme"}, "default_branch": "main"},
        "sender": {"login": user, "type": "User"}
    }))
    .unwrap()
}

async fn job(status_and_body: (u16, Value), want: u16) -> String {
    let (status, body) = status_and_body;
    assert_eq!(status, want, "{body}");
    body["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job in {body}"))
        .to_string()
}

fn sql_comments(emu: &GitHubEmulator) -> Vec<Value> {
    emu.reviews()
        .iter()
        .flat_map(|r| r.comments.clone())
        .filter(|c| c["body"].as_str().unwrap_or("").contains("SQL"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_on_github_gets_one_review_and_a_check_run() {
    let emu = GitHubEmulator::with_app(77).await;
    emu.set_pr(REPO, emulated_pr(7, "app/users.py", HEAD));
    emu.set_ref(REPO, "main", BASE);
    emu.add_file(REPO, BASE, "app/users.py", OLD);
    for head in [HEAD, HEAD2] {
        emu.add_file(REPO, head, "app/users.py", NEW);
    }
    emu.set_permission(REPO, "maintainer", "write");
    emu.set_permission(REPO, "visitor", "read");
    let mut config = GitHubConfig::new(
        emu.url(),
        GitHubAuth::App {
            app_id: 77,
            private_key: quorum_core::Secret::new(test_app_private_key()),
        },
    );
    config.backoff = Duration::from_millis(5);
    let github = Arc::new(GitHub::new(config).unwrap());

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
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
    let send = |event: &'static str, body: Vec<u8>| {
        let http = http.clone();
        let gw = fleet.gateway;
        async move { deliver(&http, gw, SECRET, event, body).await.unwrap() }
    };
    let wait = Duration::from_secs(60);

    // Opened: one review, the SQL comment inline on new-side line 2.
    let first = job(send("pull_request", pr_event("opened", 7, HEAD)).await, 202).await;
    let review = wait_for_review(store.as_ref(), &first, wait).await.unwrap();
    assert_eq!(review.verdict, quorum_core::Verdict::RequestChanges, "{review:#?}");
    let reviews = emu.reviews();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].commit_id, HEAD);
    let sql = sql_comments(&emu);
    assert_eq!(sql.len(), 1, "{:#?}", reviews[0].comments);
    assert_eq!(
        (sql[0]["path"].as_str(), sql[0]["line"].as_u64()),
        (Some("app/users.py"), Some(2))
    );
    assert_eq!(sql[0]["side"], "RIGHT");
    let runs = emu.check_runs();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["status"], "completed");
    assert_eq!(runs[0]["conclusion"], "failure");
    assert_eq!(runs[0]["head_sha"], HEAD);

    // A redelivery: the same job, nothing new on GitHub.
    let again = job(send("pull_request", pr_event("opened", 7, HEAD)).await, 200).await;
    assert_eq!(again, first);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(emu.reviews().len(), 1);

    // A push that keeps the problem: reviewed, but the comment is not repeated.
    emu.set_pr(REPO, emulated_pr(7, "app/users.py", HEAD2));
    let pushed = job(send("pull_request", pr_event("synchronize", 7, HEAD2)).await, 202).await;
    assert_ne!(pushed, first);
    wait_for_review(store.as_ref(), &pushed, wait).await.unwrap();
    assert_eq!(sql_comments(&emu).len(), 1, "the SQL comment was posted twice");
    let runs = emu.check_runs();
    assert!(
        runs.iter()
            .any(|r| r["head_sha"] == HEAD2 && r["status"] == "completed"),
        "{runs:#?}"
    );

    // `/review` from someone with write access: a new run of the same head.
    let asked = job(
        send("issue_comment", comment_event(901, "maintainer", "/review")).await,
        202,
    )
    .await;
    assert_ne!(asked, pushed);
    wait_for_review(store.as_ref(), &asked, wait).await.unwrap();
    // The same comment delivered again is the same run.
    let redelivered = job(
        send("issue_comment", comment_event(901, "maintainer", "/review")).await,
        200,
    )
    .await;
    assert_eq!(redelivered, asked);
    // Without write access, or from a bot: ignored.
    let (status, body) = send("issue_comment", comment_event(902, "visitor", "/review")).await;
    assert_eq!(status, 202);
    assert!(body["reason"].as_str().unwrap().contains("no write access"), "{body}");

    // `mode: off` on the default branch: nothing is reviewed or posted.
    emu.add_file(REPO, BASE, ".quorum.yml", "review:\n  mode: off\n");
    let posted = emu.reviews().len();
    let runs = emu.check_runs().len();
    let (status, body) = send(
        "pull_request",
        pr_event("reopened", 7, "4444444444444444444444444444444444444444"),
    )
    .await;
    assert_eq!(status, 202);
    assert!(body["reason"].as_str().unwrap().contains("off"), "{body}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!((emu.reviews().len(), emu.check_runs().len()), (posted, runs));

    // An invalid file: reviewed with the defaults, and the review says why.
    emu.add_file(REPO, BASE, ".quorum.yml", "review:\n  mode: sometimes\n");
    let warned = job(
        send("issue_comment", comment_event(903, "maintainer", "/review full")).await,
        202,
    )
    .await;
    let review = wait_for_review(store.as_ref(), &warned, wait).await.unwrap();
    assert!(
        review.notices.iter().any(|n| n.contains(".quorum.yml is invalid")),
        "{:?}",
        review.notices
    );

    assert_eq!(emu.violations(), Vec::<String>::new());
    fleet.stop().await.unwrap();
}
