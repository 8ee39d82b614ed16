//! The whole fleet in this process on the embedded broker: the demo path
//! (signed webhook → gateway → Kafka → four agents → aggregator → critic →
//! publisher) and a local git range through `quorum review`'s path.

use std::path::{Path, PathBuf};

use quorum_cli::demo::{DemoArgs, run};
use quorum_eval::case::load_case;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture")
}

/// The line the case's first expected issue points at, in the edited file.
fn anchor_line(case_id: &str) -> (String, u32) {
    let root = fixture();
    let case = load_case(&root.join(format!("cases/{case_id}.json"))).unwrap();
    let exp = &case.expected[0];
    let mut text = std::fs::read_to_string(root.join(&exp.file)).unwrap();
    for e in case.edits.iter().filter(|e| e.file == exp.file) {
        text = text.replacen(&e.find, &e.replace, 1);
    }
    let at = text.find(&exp.anchor).expect("anchor in the edited file");
    (exp.file.clone(), text[..at].matches('\n').count() as u32 + 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_publishes_an_inline_finding_on_the_seeded_line() {
    let case = "01-sql-fstring-email-lookup";
    let review = run(DemoArgs {
        fixture: fixture(),
        case: case.into(),
        llm: Default::default(),
    })
    .await
    .unwrap();
    let (file, line) = anchor_line(case);
    let hit = review
        .inline
        .iter()
        .find(|c| c.path == file && c.line.abs_diff(line) <= 3 && c.body.contains("SQL"))
        .unwrap_or_else(|| panic!("no inline SQL finding near {file}:{line}: {review:#?}"));
    assert!(hit.body.contains("<!-- quorum:fp:"));
    assert_eq!(review.verdict, quorum_core::Verdict::RequestChanges);
    assert_eq!(review.agents.len(), 4);
    assert!(
        review.agents.iter().all(|a| a.status == quorum_core::AgentStatus::Done),
        "{:?}",
        review.agents
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_change_is_approved() {
    let review = run(DemoArgs {
        fixture: fixture(),
        case: "11-docstring-only".into(),
        llm: Default::default(),
    })
    .await
    .unwrap();
    assert_eq!(review.verdict, quorum_core::Verdict::Approve, "{review:#?}");
    assert!(review.inline.is_empty() && review.body_comments.is_empty());
}
