//! The GitLab adapter against the emulated GitLab REST API (quorum-testkit),
//! which checks the documented rules of every call (positions above all).

use std::time::{Duration, Instant};

use quorum_core::review::{InlineComment, Side};
use quorum_core::{FileChange, FileStatus, JobPolicy, Provider, RepoRef, Review, ReviewRequest, Verdict};
use quorum_scm::gitlab::{GitLab, GitLabConfig};
use quorum_scm::{ChangeSource, CheckStatus, ReviewSink, ScmError, TreeSource};
use quorum_testkit::gitlab::{EmulatedDiff, EmulatedMr, Fault, GitLabEmulator};

/// A project in a subgroup: GitLab's paths nest.
const PROJECT: &str = "acme/backend/shop";
const BASE: &str = "c380d3acebd181f13629a25d2e2acca46ffe1e00";
const START: &str = "c380d3acebd181f13629a25d2e2acca46ffe1e00";
const HEAD: &str = "2be7ddb704c7b6b83732fdd5b9f09d5a397b5f8f";
const TOKEN: &str = "glpat-emulatedSecret123";
/// Line 2 is added, lines 1 and 3 are context, old line 2 is removed.
const DIFF: &str = "@@ -1,3 +1,3 @@\n def total(cart):\n-    return sum(i.price for i in cart)\n+    return sum(float(i.price) for i in cart)\n # end\n";

fn client(emu: &GitLabEmulator) -> GitLab {
    let mut c = GitLabConfig::new(emu.url(), quorum_core::Secret::new(TOKEN));
    c.backoff = Duration::from_millis(5);
    c.max_rate_limit_wait = Duration::from_secs(5);
    GitLab::new(c).unwrap()
}

fn mr(diffs: Vec<EmulatedDiff>) -> EmulatedMr {
    EmulatedMr {
        iid: 7,
        title: "Add discounts".into(),
        description: "Please review".into(),
        author: "alice".into(),
        draft: false,
        state: "opened".into(),
        labels: vec!["backend".into()],
        base_sha: BASE.into(),
        start_sha: START.into(),
        head_sha: HEAD.into(),
        diffs,
    }
}

fn request(head: &str) -> ReviewRequest {
    ReviewRequest {
        job_id: "job-1".into(),
        repo: RepoRef {
            provider: Provider::Gitlab,
            full_name: PROJECT.into(),
        },
        number: 7,
        title: "Add discounts".into(),
        body: String::new(),
        author: "alice".into(),
        base_sha: BASE.into(),
        head_sha: head.into(),
        files: vec![FileChange {
            path: "app/cart.py".into(),
            old_path: None,
            status: FileStatus::Modified,
            patch: Some(DIFF.into()),
            omitted: None,
        }],
        policy: JobPolicy::default(),
        requested_at_ms: 0,
    }
}

fn comment(line: u32, start: Option<u32>, fp: &str) -> InlineComment {
    InlineComment {
        path: "app/cart.py".into(),
        line,
        start_line: start,
        side: Side::Right,
        body: format!("**Float money** — use Decimal\n\n```suggestion\nx = 1\n```\n<!-- quorum:fp:{fp} -->"),
        fingerprint: fp.into(),
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

#[tokio::test]
async fn reads_the_merge_request_and_every_page_of_its_diffs() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    let mut diffs: Vec<EmulatedDiff> = (0..230)
        .map(|i| EmulatedDiff::modified(&format!("src/m{i:03}.py"), DIFF))
        .collect();
    diffs.push(EmulatedDiff {
        too_large: true,
        ..EmulatedDiff::modified("data/dump.sql", "")
    });
    diffs.push(EmulatedDiff {
        old_path: "old.py".into(),
        renamed_file: true,
        ..EmulatedDiff::modified("new.py", "")
    });
    emu.set_mr(PROJECT, mr(diffs));
    let gl = client(&emu);

    let info = gl.pull_request(PROJECT, 7).await.unwrap();
    assert_eq!((info.head_sha.as_str(), info.base_sha.as_str()), (HEAD, BASE));
    assert_eq!((info.author.as_str(), info.open, info.draft), ("alice", true, false));
    assert_eq!(info.labels, ["backend"]);

    let change = gl.fetch_change(PROJECT, 7, "main", HEAD).await.unwrap();
    assert_eq!(
        change.files.len(),
        231,
        "230 diffs over 3 pages, the large one, not the pure rename"
    );
    let large = change.files.iter().find(|f| f.path == "data/dump.sql").unwrap();
    assert!(large.patch.is_none());
    assert!(large.omitted.as_deref().unwrap().contains("diff limits"));
    let pages = emu
        .requests()
        .iter()
        .filter(|(_, uri, _)| uri.contains("/diffs"))
        .count();
    assert_eq!(pages, 3);
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn posts_discussions_on_the_right_lines_and_a_summary_note() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    emu.set_mr(PROJECT, mr(vec![EmulatedDiff::modified("app/cart.py", DIFF)]));
    let gl = client(&emu);
    let req = request(HEAD);

    let posted = gl
        .post(
            &req,
            &review(vec![comment(2, None, "aa01"), comment(3, Some(1), "aa02")]),
        )
        .await
        .unwrap();
    assert!(
        posted.location.contains("/acme/backend/shop/-/merge_requests/7#note_"),
        "{}",
        posted.location
    );
    let notes = emu.notes();
    assert_eq!(notes.len(), 3, "two discussions and the summary: {notes:#?}");
    let added = &notes[0];
    assert_eq!(added.kind.as_deref(), Some("DiffNote"));
    let p = added.position.as_ref().unwrap();
    assert_eq!(
        (p["new_line"].as_u64(), p.get("old_line")),
        (Some(2), None),
        "an added line: new_line only"
    );
    assert_eq!(
        (p["base_sha"].as_str(), p["start_sha"].as_str(), p["head_sha"].as_str()),
        (Some(BASE), Some(START), Some(HEAD))
    );
    let context = notes[1].position.as_ref().unwrap();
    assert_eq!(
        (context["old_line"].as_u64(), context["new_line"].as_u64()),
        (Some(3), Some(3)),
        "a context line: both"
    );
    assert!(
        notes[1].body.contains("```suggestion:-2+0\n"),
        "the range's suggestion replaces lines 1..=3: {}",
        notes[1].body
    );
    assert!(notes[2].body.contains("Quorum review"));
    assert!(notes[2].kind.is_none());

    // Fingerprints come back from every note.
    let fps = gl.existing_fingerprints(&req).await.unwrap();
    assert_eq!(fps, ["aa01", "aa02"]);
    // Nothing new: nothing posted.
    let again = gl.post(&req, &review(vec![])).await.unwrap();
    assert!(again.location.contains("nothing new"), "{}", again.location);
    assert_eq!(emu.notes().len(), 3);
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn comments_gitlab_cannot_place_go_to_the_summary() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    emu.set_mr(PROJECT, mr(vec![EmulatedDiff::modified("app/cart.py", DIFF)]));
    emu.refuse_line("app/cart.py", 2);
    let gl = client(&emu);

    // Line 2 is refused by GitLab; line 9 is not in the diff at all.
    gl.post(
        &request(HEAD),
        &review(vec![
            comment(2, None, "bb01"),
            comment(9, None, "bb02"),
            comment(1, None, "bb03"),
        ]),
    )
    .await
    .unwrap();
    let notes = emu.notes();
    assert_eq!(notes.len(), 2, "{notes:#?}");
    assert_eq!(notes[0].position.as_ref().unwrap()["new_line"], 1);
    let summary = &notes[1].body;
    assert!(
        summary.contains("`app/cart.py:2`") && summary.contains("`app/cart.py:9`"),
        "{summary}"
    );
    assert!(summary.contains("bb01") && summary.contains("bb02"));

    // A head that is no version of the MR (force-pushed away): no position
    // can name it, every comment goes to the summary.
    gl.post(
        &request("9999999999999999999999999999999999999999"),
        &review(vec![comment(1, None, "cc01")]),
    )
    .await
    .unwrap();
    let notes = emu.notes();
    assert_eq!(notes.len(), 3);
    assert!(notes[2].position.is_none() && notes[2].body.contains("cc01"));
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn failures_are_retried_waited_out_or_reported_clearly() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    emu.set_mr(PROJECT, mr(vec![]));
    let gl = client(&emu);

    emu.fail_next("GET", "/merge_requests/7", Fault::Status(502));
    emu.fail_next("GET", "/merge_requests/7", Fault::Status(503));
    assert_eq!(gl.pull_request(PROJECT, 7).await.unwrap().number, 7);

    emu.fail_next("GET", "/merge_requests/7", Fault::RateLimit { retry_after: 1 });
    let t = Instant::now();
    gl.pull_request(PROJECT, 7).await.unwrap();
    assert!(t.elapsed() >= Duration::from_millis(900), "Retry-After was waited out");

    emu.fail_next("GET", "/merge_requests/7", Fault::RateLimit { retry_after: 3600 });
    let err = gl.pull_request(PROJECT, 7).await.unwrap_err();
    assert!(
        matches!(&err, ScmError::Unavailable(m) if m.contains("rate limited for 3600 s")),
        "{err}"
    );

    for _ in 0..5 {
        emu.fail_next("GET", "/merge_requests/7", Fault::Status(500));
    }
    assert!(
        matches!(gl.pull_request(PROJECT, 7).await, Err(ScmError::Unavailable(m)) if m.contains("gave up after 5"))
    );

    let err = gl.pull_request("acme/none", 1).await.unwrap_err();
    assert!(
        matches!(&err, ScmError::Invalid(m) if m.contains("cannot see it")),
        "{err}"
    );
    let wrong = GitLab::new(GitLabConfig::new(emu.url(), quorum_core::Secret::new("wrong"))).unwrap();
    let err = wrong.pull_request(PROJECT, 7).await.unwrap_err();
    assert!(
        matches!(&err, ScmError::Invalid(m) if m.contains("GITLAB_TOKEN")),
        "{err}"
    );
    assert!(
        gl.pull_request("../etc", 1).await.is_err(),
        "a bad path is refused before a call"
    );
}

#[tokio::test]
async fn the_verdict_is_a_commit_status() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    emu.set_mr(PROJECT, mr(vec![]));
    let gl = client(&emu);
    let req = request(HEAD);
    gl.report_status(&req, &CheckStatus::InProgress).await.unwrap();
    // A redelivered "running" is refused by GitLab and is not an error.
    gl.report_status(&req, &CheckStatus::InProgress).await.unwrap();
    let done = CheckStatus::Completed {
        verdict: Verdict::RequestChanges,
        summary: "One problem.".into(),
        findings: 1,
    };
    gl.report_status(&req, &done).await.unwrap();
    let states: Vec<String> = emu
        .statuses()
        .iter()
        .map(|(p, sha, v)| {
            format!(
                "{p}@{sha}:{}:{}",
                v["name"].as_str().unwrap(),
                v["state"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            format!("{PROJECT}@{HEAD}:Quorum:running"),
            format!("{PROJECT}@{HEAD}:Quorum:failed")
        ]
    );
    assert_eq!(emu.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn reads_files_trees_and_members_through_the_api() {
    let emu = GitLabEmulator::with_token(TOKEN).await;
    emu.set_ref(PROJECT, "main", BASE);
    emu.add_file(PROJECT, BASE, "app/cart.py", "def total(cart):\n    return 0\n");
    emu.add_file(PROJECT, BASE, ".quorum.yml", "review:\n  mode: manual\n");
    let gl = client(&emu);
    assert_eq!(gl.resolve(PROJECT, "main").await.unwrap(), BASE);
    assert_eq!(
        gl.read_file(PROJECT, "main", ".quorum.yml").await.unwrap().as_deref(),
        Some("review:\n  mode: manual\n")
    );
    assert_eq!(gl.read_file(PROJECT, BASE, "missing.py").await.unwrap(), None);
    let tree = gl.read_tree(PROJECT, "main").await.unwrap();
    let paths: Vec<&str> = tree.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, [".quorum.yml", "app/cart.py"]);
    assert!(gl.read_file(PROJECT, BASE, "../etc/passwd").await.is_err());

    emu.set_member(PROJECT, "maintainer", 40);
    emu.set_member(PROJECT, "reporter", 20);
    assert!(gl.can_write(PROJECT, "maintainer").await.unwrap());
    assert!(!gl.can_write(PROJECT, "reporter").await.unwrap());
    assert!(!gl.can_write(PROJECT, "stranger").await.unwrap());
    assert!(
        !gl.can_write(PROJECT, "a&b=c").await.unwrap(),
        "odd names never reach the API"
    );
}

/// The token appears in no log line and no `Debug` print, even while calls
/// fail and are retried.
#[tokio::test]
async fn the_token_is_never_logged() {
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

    let emu = GitLabEmulator::with_token(TOKEN).await;
    emu.set_mr(PROJECT, mr(vec![]));
    let gl = client(&emu);
    emu.fail_next("GET", "/merge_requests/7", Fault::Status(502));
    gl.pull_request(PROJECT, 7).await.unwrap();
    let _ = gl.pull_request("acme/none", 1).await;
    let logs = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("GitLab call retried"), "the retry was logged: {logs}");
    assert!(!logs.contains(TOKEN), "the token leaked into the logs");
    assert!(!format!("{gl:?}").contains(TOKEN));
}
