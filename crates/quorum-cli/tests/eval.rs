//! `quorum eval` on a second, tiny fixture with its own cases: the harness
//! needs no changes for another fixture, reports an invalid case by name
//! and keeps going, and scores what the pipeline published.

use std::path::Path;

use quorum_cli::eval::{EvalArgs, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_another_fixture_and_reports_invalid_cases_by_name() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny");
    let out = tempfile::tempdir().unwrap();
    let report = run(EvalArgs {
        fixture: fixture.clone(),
        cases: None,
        modes: vec!["diff_only".into(), "graph_rag".into()],
        repeat: 1,
        out: out.path().to_path_buf(),
        baseline: None,
        prices: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/prices.json"),
    })
    .await
    .unwrap();
    assert_eq!(report.invalid_cases.len(), 1, "{:?}", report.invalid_cases);
    assert!(report.invalid_cases[0].contains("b-ambiguous") && report.invalid_cases[0].contains("occurs 3 times"));
    assert_eq!(report.cases.len(), 4, "two valid cases × two modes");
    for m in &report.modes {
        assert_eq!(
            (m.precision, m.recall, m.clean_false_positives),
            (1.0, 1.0, 0),
            "{}",
            m.mode
        );
    }
    let dir = std::fs::read_dir(out.path()).unwrap().next().unwrap().unwrap().path();
    for f in ["results.json", "report.md", "chart.svg"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("| diff_only | 1.00 | 1.00 |"), "{md}");
}
