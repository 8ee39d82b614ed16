//! The model's tools as the loop calls them (name + JSON arguments the model
//! wrote) over a real git repository: answers, and refusals a model can act
//! on for paths that try to leave the repository.

use std::sync::Arc;

use quorum_agent::GraphTools;
use quorum_context::GraphIndex;
use quorum_context::tools::JobTools;
use quorum_llm::tools::parse_call_text;
use quorum_llm::{NotIndexed, ToolBox};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::git;
use quorum_testkit::store_contract::sample_job;

async fn call(tools: &GraphTools, name: &str, args: &str) -> Result<String, String> {
    let call = parse_call_text(name, args)?;
    tools.call(&call).await
}

#[tokio::test]
async fn tools_answer_and_never_leave_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(d.join("lib")).unwrap();
    std::fs::write(d.join("lib/units.py"), "def convert(v):\n    return v\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", d.join("lib/passwd")).unwrap();
    std::os::unix::fs::symlink("../../..", d.join("lib/up")).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    let base = git(d, &["rev-parse", "HEAD"]);
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
    let index = Arc::new(GraphIndex::new(store, Arc::new(repos)));
    let tools = GraphTools {
        tools: JobTools::for_request(index, &job.request).await.unwrap(),
        search: Arc::new(NotIndexed),
    };

    assert_eq!(
        tools.offered(),
        ["get_callers", "find_tests", "read_snippet"],
        "search is not offered before the repository is indexed"
    );
    let callers = call(&tools, "get_callers", r#"{"symbol":"lib.units.convert","hops":1}"#)
        .await
        .unwrap();
    assert!(callers.contains("lib.report.render"), "{callers}");
    let snippet = call(&tools, "read_snippet", r#"{"path":"lib/report.py","start":4,"end":5}"#)
        .await
        .unwrap();
    assert_eq!(snippet, "    4 def render(x):\n    5     return convert(x)\n");
    for path in [
        "../../etc/passwd",
        "/etc/passwd",
        "lib/../../etc/passwd",
        "lib/up/etc/passwd",
    ] {
        let args = format!(r#"{{"path":"{path}","start":1,"end":3}}"#);
        let e = call(&tools, "read_snippet", &args).await.unwrap_err();
        assert!(!e.contains("root:"), "{path}: {e}");
        assert!(
            e.contains("not a relative path inside the repository") || e.contains("no file"),
            "{path}: {e}"
        );
    }
    // A symlink is read as git stores it (the target's name), never followed.
    let link = call(&tools, "read_snippet", r#"{"path":"lib/passwd","start":1,"end":1}"#)
        .await
        .unwrap();
    assert!(!link.contains("root:"), "{link}");
    let e = call(&tools, "search_code", r#"{"query":"convert units","path_glob":null}"#)
        .await
        .unwrap_err();
    assert!(e.starts_with("not indexed"), "{e}");
    let e = call(&tools, "find_tests", r#"{"symbol":""}"#).await.unwrap_err();
    assert!(e.contains("`symbol` is empty"), "{e}");

    // Once the repository is in the hybrid index, the search tools are
    // offered and answer with locations and lines; a bad glob is refused
    // with the reason.
    let search_dir = tempfile::tempdir().unwrap();
    let search = quorum_search::testing::hashing_index(search_dir.path()).await.unwrap();
    let files = vec![
        quorum_search::SourceFile {
            path: "lib/units.py".into(),
            text: "def convert(v):\n    return v\n".into(),
            language: Some("python".into()),
            symbols: vec![],
        },
        quorum_search::SourceFile {
            path: "README.md".into(),
            text: "# units\n\n## Rounding\nAlways round half-even.\n".into(),
            language: None,
            symbols: vec![],
        },
    ];
    search.index("acme/units", "c1", &files, &|_, _| {}).await.unwrap();
    let tools = GraphTools {
        tools: tools.tools,
        search: Arc::new(quorum_agent::repo_search::RepoSearch::new(search.clone(), "acme/units").await),
    };
    assert_eq!(tools.offered(), quorum_llm::tools::TOOL_NAMES);
    let code = call(&tools, "search_code", r#"{"query":"convert","path_glob":"lib/*.py"}"#)
        .await
        .unwrap();
    assert!(code.starts_with("lib/units.py:1-2"), "{code}");
    assert!(code.contains("    1 def convert(v):"), "{code}");
    let docs = call(&tools, "search_docs", r#"{"query":"how to round"}"#)
        .await
        .unwrap();
    assert!(docs.contains("README.md") && docs.contains("round half-even"), "{docs}");
    let e = call(&tools, "search_code", r#"{"query":"convert","path_glob":"lib/["}"#)
        .await
        .unwrap_err();
    assert!(e.contains("path_glob"), "{e}");
    let other = quorum_agent::repo_search::RepoSearch::new(search, "acme/other").await;
    assert!(
        !quorum_llm::SearchIndex::available(&other),
        "a repository not indexed offers no search"
    );
}
