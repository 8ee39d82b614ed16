//! The job's graph tools on a real git repository: callers and tests on the
//! PR head (symbols the PR adds included), snippets from the head, and
//! refusals that say what is wrong.

use std::sync::Arc;

use quorum_context::GraphIndex;
use quorum_context::tools::{JobTools, ToolFailure};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::git;
use quorum_testkit::store_contract::sample_job;

#[tokio::test]
async fn callers_tests_and_snippets_on_the_pr_head() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(d.join("lib")).unwrap();
    std::fs::create_dir_all(d.join("tests")).unwrap();
    std::fs::write(d.join("lib/units.py"), "def convert(v):\n    return v\n").unwrap();
    std::fs::write(
        d.join("tests/test_units.py"),
        "from lib.units import convert\n\n\ndef test_convert():\n    assert convert(1) == 1\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", d.join("lib/passwd")).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    let base = git(d, &["rev-parse", "HEAD"]);
    // The PR adds a caller in a new module.
    std::fs::write(
        d.join("lib/report.py"),
        "from lib.units import convert\n\n\ndef render(x):\n    return convert(x)\n",
    )
    .unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "head"]);
    let head = git(d, &["rev-parse", "HEAD"]);

    let repo = LocalGit::open(d).unwrap();
    let change = repo.diff(&base, &head).await.unwrap();
    let mut job = sample_job("j", 1);
    job.request.repo.full_name = "acme/units".into();
    job.request.base_sha = change.base_sha;
    job.request.head_sha = change.head_sha;
    job.request.files = change.files;
    let repos = LocalRepos::new();
    repos.insert("acme/units", repo);
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let index = Arc::new(GraphIndex::new(store.clone(), Arc::new(repos)));
    let tools = JobTools::for_request(index, &job.request).await.unwrap();
    assert!(
        store
            .get_graph("acme/units", &job.request.base_sha)
            .await
            .unwrap()
            .is_some(),
        "base graph stored"
    );

    let callers = tools.get_callers("lib.units.convert", 2).unwrap();
    let names: Vec<&str> = callers.callers.iter().map(|c| c.qname.as_str()).collect();
    assert!(
        names.contains(&"lib.report.render"),
        "the caller the PR adds: {names:?}"
    );
    assert!(names.contains(&"tests.test_units.test_convert"), "{names:?}");
    assert_eq!(
        tools.find_tests("convert").unwrap(),
        ["tests/test_units.py::test_convert"]
    );
    let rendered = tools.get_callers("render", 1).unwrap();
    assert_eq!(rendered.calls[0].target, "lib.units.convert");

    assert_eq!(
        tools.read_snippet("lib/report.py", 4, 5).await.unwrap(),
        "    4 def render(x):\n    5     return convert(x)\n"
    );
    for (path, start, end) in [
        ("../etc/passwd", 1, 2),
        ("/etc/passwd", 1, 2),
        ("lib/units.py", 0, 2),
        ("lib/units.py", 1, 900),
    ] {
        assert!(
            matches!(tools.read_snippet(path, start, end).await, Err(ToolFailure::Input(_))),
            "{path}"
        );
    }
    assert!(matches!(
        tools.read_snippet("lib/none.py", 1, 2).await,
        Err(ToolFailure::Input(_))
    ));
    // A symlink in the tree is read as git stores it (its target's name), never followed.
    let link = tools.read_snippet("lib/passwd", 1, 1).await.unwrap();
    assert!(!link.contains("root:"), "{link}");
    assert!(matches!(
        tools.get_callers("nothing_like_this", 1),
        Err(ToolFailure::Input(_))
    ));
    assert!(matches!(tools.get_callers("convert", 4), Err(ToolFailure::Input(_))));
}
