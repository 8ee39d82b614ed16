//! A change bigger than one Kafka message (a vendored bundle, a lock file)
//! is still reviewed: the patches that do not fit the request's budget are
//! left out and listed as not reviewed, and the rest gets its review. Before
//! the budget, publishing the request failed with `MessageSizeTooLarge` and
//! nothing was reviewed at all.

use quorum_cli::review::{ReviewArgs, run};
use quorum_testkit::git;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_change_is_reviewed_without_the_patches_that_do_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("users.py"), "def find(db, email):\n    return None\n").unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "base"]);

    // 1.6 MB of generated code over four files, and one real change.
    for i in 0..4 {
        let bundle: String = (0..10_000)
            .map(|n| format!("export const value_{i}_{n} = {n}; // generated\n"))
            .collect();
        std::fs::write(repo.join(format!("bundle{i}.js")), bundle).unwrap();
    }
    std::fs::write(
        repo.join("users.py"),
        "def find(db, email):\n    return db.execute(f\"SELECT * FROM users WHERE email = '{email}'\").fetchone()\n",
    )
    .unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "head"]);

    let review = run(ReviewArgs {
        repo: repo.to_path_buf(),
        base: "HEAD~1".into(),
        head: "HEAD".into(),
        title: "Vendor the bundle and simplify find".into(),
        llm: Default::default(),
    })
    .await
    .expect("the review completes");

    let not_reviewed: Vec<&str> = review.not_reviewed.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(not_reviewed, ["bundle0.js", "bundle1.js", "bundle2.js", "bundle3.js"]);
    assert!(
        review
            .not_reviewed
            .iter()
            .all(|(_, why)| why.contains("per-file limit")),
        "{:?}",
        review.not_reviewed
    );
    assert!(
        review
            .kept
            .iter()
            .any(|f| f.file == "users.py" && f.rule.as_deref() == Some("sql-string-building")),
        "the file that fit was reviewed: {:?}",
        review.kept
    );
    let body = review.render_body();
    assert!(body.contains("### Not reviewed (4 file(s))"), "{body}");
}
