//! The GitHub adapter against the emulated GitHub REST API (quorum-testkit),
//! whose requests and responses are checked against GitHub's description.

use std::time::{Duration, Instant};

use quorum_core::review::{InlineComment, Side};
use quorum_core::{FileStatus, JobPolicy, Provider, RepoRef, Review, ReviewRequest, Verdict};
use quorum_scm::github::{GitHub, GitHubAuth, GitHubConfig};
use quorum_scm::{ChangeSource, CheckStatus, ReviewSink, ScmError, SinkError, TreeSource};
use quorum_testkit::github::{EmulatedFile, EmulatedPr, Fault, GitHubEmulator, test_app_private_key};

const REPO: &str = "acme/shop";
const HEAD: &str = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const BASE: &str = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e";
const TOKEN: &str = "ghp_emulatedSecret123";

fn fast(url: &str, auth: GitHubAuth) -> GitHub {
    let mut c = GitHubConfig::new(url, auth);
    c.backoff = Duration::from_millis(5);
    c.max_rate_limit_wait = Duration::from_secs(5);
    GitHub::new(c).unwrap()
}

fn token_client(emu: &GitHubEmulator) -> GitHub {
    fast(&emu.url(), GitHubAuth::Token(quorum_core::Secret::new(TOKEN)))
}

fn app_client(emu: &GitHubEmulator) -> GitHub {
    fast(
        &emu.url(),
        GitHubAuth::App {
            app_id: 77,
            private_key: quorum_core::Secret::new(test_app_private_key()),
        },
    )
}

fn patch(line: u32) -> String {
    format!("@@ -{line},2 +{line},3 @@\n context\n+added = {line}\n context\n")
}

fn pr(files: Vec<EmulatedFile>) -> EmulatedPr {
    EmulatedPr {
        number: 7,
        title: "Add discounts".into(),
        body: "Please review".into(),
        author: "octocat".into(),
        base_sha: BASE.into(),
        head_sha: HEAD.into(),
        draft: false,
        labels: vec!["enhancement".into()],
        files,
    }
}

fn request() -> ReviewRequest {
    ReviewRequest {
        job_id: "job-1".into(),
        repo: RepoRef {
            provider: Provider::Github,
            full_name: REPO.into(),
        },
        number: 7,
        title: "Add discounts".into(),
        body: String::new(),
        author: "octocat".into(),
        base_sha: BASE.into(),
        head_sha: HEAD.into(),
        files: vec![],
        policy: JobPolicy::default(),
        requested_at_ms: 0,
    }
}

fn review(inline: Vec<InlineComment>) -> Review {
    Review {
        location: None,
        job_id: "job-1".into(),
        verdict: Verdict::RequestChanges,
        summary: "One problem.".into(),
        inline,
        body_comments: vec![],
        agents: vec![],
        rejected: vec![],
        kept: vec![],
        not_reviewed: vec![],
        notices: vec![],
        notes: vec![],
    }
}

fn comment(path: &str, line: u32, start: Option<u32>, fp: &str) -> InlineComment {
    InlineComment {
        path: path.into(),
        line,
        start_line: start,
        side: Side::Right,
        body: format!("**Float money** — use cents\n\n```suggestion\nadded = Decimal(1)\n```\n<!-- quorum:fp:{fp} -->"),
        fingerprint: fp.into(),
    }
}

#[tokio::test]
async fn reads_every_page_of_files_and_lists_files_without_a_patch() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    let mut files: Vec<EmulatedFile> = (0..250)
        .map(|i| EmulatedFile {
            filename: format!("src/m{i:03}.py"),
            status: "modified".into(),
            patch: Some(patch(10)),
        })
        .collect();
    files.push(EmulatedFile {
        filename: "assets/logo.png".into(),
        status: "added".into(),
        patch: None,
    });
    emu.set_pr(REPO, pr(files));
    let gh = token_client(&emu);

    let info = gh.pull_request(REPO, 7).await.unwrap();
    assert_eq!((info.head_sha.as_str(), info.author.as_str()), (HEAD, "octocat"));
    assert_eq!(info.labels, vec!["enhancement".to_string()]);
    assert!(info.open && !info.draft && !info.author_is_bot);

    let change = gh.fetch_change(REPO, 7, BASE, HEAD).await.unwrap();
    assert_eq!(change.files.len(), 251, "all three pages of 100");
    let pages = emu
        .requests()
        .iter()
        .filter(|(m, p, _)| m == "GET" && p.contains("/pulls/7/files"))
        .count();
    assert_eq!(pages, 3);
    let logo = change.files.iter().find(|f| f.path == "assets/logo.png").unwrap();
    assert_eq!(logo.patch, None);
    assert_eq!(logo.status, FileStatus::Added);
    assert!(logo.omitted.as_deref().unwrap().contains("no patch"), "{logo:?}");
    assert!(change.files[0].patch.as_deref().unwrap().contains("+added = 10"));
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn posts_one_review_with_inline_ranges_and_reads_fingerprints_back() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    emu.set_pr(
        REPO,
        pr(vec![EmulatedFile {
            filename: "shop/price.py".into(),
            status: "modified".into(),
            patch: Some(patch(10)),
        }]),
    );
    let gh = token_client(&emu);
    let r = review(vec![
        comment("shop/price.py", 11, None, "aaaa0001"),
        comment("shop/price.py", 12, Some(10), "aaaa0002"),
    ]);
    let posted = gh.post(&request(), &r).await.unwrap();
    assert!(posted.location.contains("pullrequestreview"), "{}", posted.location);
    let reviews = emu.reviews();
    assert_eq!(reviews.len(), 1);
    let sent = &reviews[0];
    assert_eq!(sent.commit_id, HEAD);
    assert_eq!(sent.event, "COMMENT");
    assert!(sent.body.contains("Quorum review"));
    assert_eq!(sent.comments[0]["line"], 11);
    assert_eq!(sent.comments[0]["side"], "RIGHT");
    assert!(sent.comments[0].get("start_line").is_none());
    assert_eq!(sent.comments[1]["start_line"], 10);
    assert_eq!(sent.comments[1]["start_side"], "RIGHT");
    assert!(sent.comments[1]["body"].as_str().unwrap().contains("```suggestion"));

    let mut fps = gh.existing_fingerprints(&request()).await.unwrap();
    fps.sort();
    assert_eq!(fps, vec!["aaaa0001".to_string(), "aaaa0002".to_string()]);

    // Nothing new after a push: no second review (the status still updates).
    let quiet = gh.post(&request(), &review(vec![])).await.unwrap();
    assert!(quiet.location.contains("nothing new"), "{}", quiet.location);
    assert_eq!(emu.reviews().len(), 1);

    gh.report_status(&request(), &CheckStatus::InProgress).await.unwrap();
    gh.report_status(
        &request(),
        &CheckStatus::Completed {
            verdict: Verdict::RequestChanges,
            summary: "One problem.".into(),
            findings: 2,
        },
    )
    .await
    .unwrap();
    let states: Vec<String> = emu
        .statuses()
        .iter()
        .map(|(_, sha, b)| format!("{sha}:{}", b["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, vec![format!("{HEAD}:pending"), format!("{HEAD}:failure")]);
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn failures_are_retried_waited_out_or_reported_clearly() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    emu.set_pr(
        REPO,
        pr(vec![EmulatedFile {
            filename: "shop/price.py".into(),
            status: "modified".into(),
            patch: Some(patch(10)),
        }]),
    );
    let gh = token_client(&emu);

    // A 502 and a 503 are retried.
    emu.fail_next("GET", "/pulls/7", Fault::Status(502));
    emu.fail_next("GET", "/pulls/7", Fault::Status(503));
    assert_eq!(gh.pull_request(REPO, 7).await.unwrap().number, 7);

    // A secondary rate limit is waited out for as long as Retry-After says.
    emu.fail_next("GET", "/pulls/7/files", Fault::SecondaryRateLimit { retry_after: 1 });
    // (A lower bound only: a sleep never ends early, so this cannot flake.)
    let t = Instant::now();
    assert_eq!(gh.pull_request_files(REPO, 7).await.unwrap().len(), 1);
    assert!(t.elapsed() >= Duration::from_millis(900), "waited {:?}", t.elapsed());

    // A rate limit longer than a call may wait fails as unavailable, at once.
    emu.fail_next("GET", "/pulls/7", Fault::PrimaryRateLimit { in_secs: 3600 });
    let before = emu.requests().len();
    let err = gh.pull_request(REPO, 7).await.unwrap_err();
    assert!(matches!(err, ScmError::Unavailable(_)), "{err}");
    assert!(err.to_string().contains("rate limited for"), "{err}");
    assert_eq!(emu.requests().len(), before + 1, "no retry while the limit lasts");

    // Persistent 5xx gives up after the configured retries.
    for _ in 0..5 {
        emu.fail_next("GET", "/pulls/7", Fault::Status(500));
    }
    let err = gh.pull_request(REPO, 7).await.unwrap_err();
    assert!(matches!(err, ScmError::Unavailable(_)), "{err}");
    assert!(err.to_string().contains("gave up after 5 attempts"), "{err}");

    // A repository the token cannot see: a clear, non-retryable error.
    let before = emu.requests().len();
    let err = gh.pull_request("acme/secret", 1).await.unwrap_err();
    assert!(matches!(err, ScmError::Invalid(_)), "{err}");
    assert!(err.to_string().contains("cannot see it"), "{err}");
    assert_eq!(emu.requests().len(), before + 1, "no retry storm on a 404");

    // A line GitHub cannot resolve: 422 → the publisher's body fallback.
    emu.refuse_line("shop/price.py", 11);
    let r = review(vec![
        comment("shop/price.py", 11, None, "bbbb0001"),
        comment("shop/price.py", 12, None, "bbbb0002"),
    ]);
    match gh.post(&request(), &r).await {
        Err(SinkError::InlineRejected { index: None, reason }) => {
            assert!(reason.contains("Line could not be resolved"), "{reason}")
        }
        other => panic!("expected InlineRejected, got {other:?}"),
    }
    assert!(emu.reviews().is_empty(), "a refused review is not half-posted");

    // A bad token is not retried either.
    let bad = fast(&emu.url(), GitHubAuth::Token(quorum_core::Secret::new("ghp_wrong")));
    let err = bad.pull_request(REPO, 7).await.unwrap_err();
    assert!(err.to_string().contains("credentials are not accepted"), "{err}");
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn an_app_renews_its_expired_installation_token_and_reports_check_runs() {
    let emu = GitHubEmulator::with_app(77).await;
    emu.set_pr(
        REPO,
        pr(vec![EmulatedFile {
            filename: "shop/price.py".into(),
            status: "modified".into(),
            patch: Some(patch(10)),
        }]),
    );
    let gh = app_client(&emu);
    assert_eq!(gh.pull_request(REPO, 7).await.unwrap().number, 7);
    assert_eq!(emu.tokens_issued(), 1);
    assert_eq!(gh.pull_request(REPO, 7).await.unwrap().number, 7);
    assert_eq!(emu.tokens_issued(), 1, "the token is cached");

    emu.expire_tokens();
    assert_eq!(gh.pull_request(REPO, 7).await.unwrap().number, 7);
    assert_eq!(emu.tokens_issued(), 2, "a 401 bought a fresh token");

    gh.report_status(&request(), &CheckStatus::InProgress).await.unwrap();
    gh.report_status(&request(), &CheckStatus::InProgress).await.unwrap();
    assert_eq!(emu.check_runs().len(), 1, "a redelivery does not open a second run");
    assert_eq!(emu.check_runs()[0]["status"], "in_progress");
    gh.report_status(
        &request(),
        &CheckStatus::Completed {
            verdict: Verdict::Comment,
            summary: "Minor things.".into(),
            findings: 1,
        },
    )
    .await
    .unwrap();
    gh.report_status(&request(), &CheckStatus::InProgress).await.unwrap();
    let runs = emu.check_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "completed", "a late request never reopens it");
    assert_eq!(runs[0]["conclusion"], "neutral");
    assert_eq!(runs[0]["head_sha"], HEAD);
    assert_eq!(runs[0]["name"], "Quorum");
    assert_eq!(emu.violations(), Vec::<String>::new());

    let bad_key = GitHub::new(GitHubConfig::new(
        emu.url(),
        GitHubAuth::App {
            app_id: 77,
            private_key: quorum_core::Secret::new("not a key"),
        },
    ))
    .unwrap_err();
    assert!(bad_key.to_string().contains("RSA PEM"), "{bad_key}");
}

#[tokio::test]
async fn reads_files_and_trees_through_the_api() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    emu.set_ref(REPO, "main", BASE);
    emu.add_file(REPO, BASE, "shop/price.py", "def total(x):\n    return x\n");
    emu.add_file(REPO, BASE, "docs/a b.md", "# Money\n");
    emu.add_file(REPO, BASE, ".quorum.yml", "review:\n  mode: auto\n");
    let gh = token_client(&emu);
    assert_eq!(TreeSource::resolve(&gh, REPO, "main").await.unwrap(), BASE);
    assert_eq!(
        TreeSource::resolve(&gh, REPO, HEAD).await.unwrap(),
        HEAD,
        "a commit id needs no call"
    );
    assert_eq!(
        gh.read_file(REPO, "main", "shop/price.py").await.unwrap().as_deref(),
        Some("def total(x):\n    return x\n")
    );
    assert_eq!(
        gh.read_file(REPO, BASE, "docs/a b.md").await.unwrap().as_deref(),
        Some("# Money\n")
    );
    assert_eq!(gh.read_file(REPO, BASE, "missing.py").await.unwrap(), None);
    assert!(gh.read_file(REPO, BASE, "../etc/passwd").await.is_err());
    let tree = gh.read_tree(REPO, BASE).await.unwrap();
    let paths: Vec<&str> = tree.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, vec![".quorum.yml", "docs/a b.md", "shop/price.py"]);
    assert!(gh.resolve(REPO, "no-such-branch").await.is_err());
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn write_access_is_checked_with_the_permission_api() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    emu.set_permission(REPO, "maintainer", "maintain");
    emu.set_permission(REPO, "reader", "read");
    let gh = token_client(&emu);
    assert!(gh.can_write(REPO, "maintainer").await.unwrap());
    assert!(!gh.can_write(REPO, "reader").await.unwrap());
    assert!(!gh.can_write(REPO, "stranger").await.unwrap());
    assert!(
        !gh.can_write(REPO, "../x").await.unwrap(),
        "odd names are never asked about"
    );
}

/// The token appears in no log line and no `Debug` print, even while
/// calls fail and are retried (warnings are logged then).
#[tokio::test]
async fn secrets_are_never_logged() {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let emu = GitHubEmulator::with_token(TOKEN).await;
    emu.set_pr(REPO, pr(vec![]));
    let gh = token_client(&emu);
    emu.fail_next("GET", "/pulls/7", Fault::Status(502));
    gh.pull_request(REPO, 7).await.unwrap();
    let _ = gh.pull_request("acme/none", 1).await;
    let logs = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("GitHub call retried"), "the retry was logged: {logs}");
    assert!(!logs.contains(TOKEN), "the token leaked into the logs");
    assert!(!format!("{gh:?}").contains(TOKEN));
}
