//! `quorum-lab eval` on a second, tiny fixture with its own cases: the harness
//! needs no changes for another fixture, reports an invalid case by name
//! and keeps going, and scores what the pipeline published.

use std::path::Path;

use quorum_lab::eval::{EvalArgs, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_another_fixture_and_reports_invalid_cases_by_name() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny");
    let out = tempfile::tempdir().unwrap();
    let mut args = EvalArgs::new(fixture.clone(), out.path().to_path_buf());
    args.modes = vec!["diff_only".into(), "graph_rag".into()];
    let report = run(args).await.unwrap();
    assert!(
        report.judge.is_none() && report.modes.iter().all(|m| m.explained.is_none()),
        "no judge: located only"
    );
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
    for f in ["results.json", "report.md", "chart.svg", "recall-tokens.svg"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("| diff_only | 1.00 | 1.00 |"), "{md}");
    assert!(
        md.contains("](chart.svg)") && md.contains("](recall-tokens.svg)"),
        "{md}"
    );
    for chart in ["chart.svg", "recall-tokens.svg"] {
        let svg = std::fs::read_to_string(dir.join(chart)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("diff_only") && svg.contains("graph_rag"),
            "{chart}"
        );
    }
}

/// With a judge (a scripted OpenAI-compatible server), every located pair
/// is judged and explained scores follow the verdicts: a judge that always
/// says no leaves located recall at 1.0 and explained recall at 0; one that
/// always says yes agrees with the labelled sample only by chance (kappa 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_decides_explained_scores_and_is_measured_on_the_labels() {
    use quorum_testkit::scripted_model::{Scripted, ScriptedModel};
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny");
    for says in [false, true] {
        let judge = ScriptedModel::respond(move |_, _| {
            Scripted::content(&format!(r#"{{"explains": {says}, "reason": "scripted"}}"#))
        })
        .await;
        let out = tempfile::tempdir().unwrap();
        let mut args = EvalArgs::new(fixture.clone(), out.path().to_path_buf());
        args.modes = vec!["graph_rag".into()];
        args.judge.judge_url = Some(judge.url.clone());
        args.judge.judge_model = Some("judge".into());
        let report = run(args).await.unwrap();
        let agreement = report.judge.as_ref().expect("agreement measured");
        let labels = agreement.labels;
        assert!(labels >= 40, "{labels}");
        assert_eq!(agreement.agreement.judged, labels);
        if says {
            assert_eq!(agreement.agreement.true_no + agreement.agreement.false_no, 0);
            assert!(agreement.agreement.kappa.abs() < 1e-9, "{agreement:?}");
        } else {
            assert_eq!(agreement.agreement.true_yes + agreement.agreement.false_yes, 0);
        }
        let m = &report.modes[0];
        let explained = m.explained.as_ref().expect("explained scores with a judge");
        assert_eq!(m.recall, 1.0);
        assert_eq!(explained.recall, if says { 1.0 } else { 0.0 }, "judge says {says}");
        assert_eq!(explained.unjudged, Some(0));
        let hash = report.cases.iter().find(|c| c.case == "a-hash").unwrap();
        assert!(!hash.verdicts.is_empty() && hash.verdicts.iter().all(|v| v.explains == Some(says)));
        // Labels first, then one call per located pair.
        assert_eq!(judge.requests().len(), labels + hash.verdicts.len());
        let prompt = judge.requests().last().unwrap()["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            prompt.contains("unsalted MD5"),
            "the case's description is what is judged: {prompt}"
        );
        let dir = std::fs::read_dir(out.path()).unwrap().next().unwrap().unwrap().path();
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("explained") && md.contains("kappa"), "{md}");
    }
}

fn quorum_in(cwd: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_quorum-lab"))
        .args(args)
        .current_dir(cwd)
        .env_remove("REDIS_URL")
        .env_remove("KAFKA_BROKERS")
        .output()
        .expect("run quorum")
}

/// The price table is built in: `quorum-lab eval` run from a directory with no
/// `eval/prices.json` prices and scores as it does from the repository.
#[test]
fn eval_runs_from_any_directory() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny");
    let elsewhere = tempfile::tempdir().unwrap();
    assert!(!elsewhere.path().join("eval/prices.json").exists());
    let out = quorum_in(
        elsewhere.path(),
        &[
            "eval",
            "--fixture",
            fixture.to_str().unwrap(),
            "--modes",
            "diff_only",
            "--out",
            "results",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // stderr is a pipe: the per-review lines, and no progress bar drawn.
    assert!(stderr.contains("[1/3] diff_only"), "{stderr}");
    assert!(!stderr.contains('\r') && !stderr.contains('\x1b'), "{stderr:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| diff_only | 1.00 | 1.00 |"), "{stdout}");
    // `--out` is relative to where it ran.
    let run = std::fs::read_dir(elsewhere.path().join("results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["modes"][0]["usd_per_review"], 0.0);
}

/// `--prices` replaces the built-in table; a file that is missing or not a
/// table is refused before any case runs, naming the file.
#[test]
fn a_bad_price_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = quorum_in(dir.path(), &["eval", "--prices", "missing.json"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reading the price table missing.json"), "{err}");
    std::fs::write(dir.path().join("bad.json"), r#"{"models": {"offline": {"prompt": 0}}}"#).unwrap();
    let out = quorum_in(dir.path(), &["eval", "--prices", "bad.json"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json is not a valid price table") && err.contains("missing field `cached_prompt`"),
        "{err}"
    );
    std::fs::write(
        dir.path().join("other.json"),
        r#"{"models": {"gpt-x": {"prompt": 1, "cached_prompt": 0.5, "completion": 2}}}"#,
    )
    .unwrap();
    let out = quorum_in(dir.path(), &["eval", "--prices", "other.json"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no price for model `offline` (the table has: gpt-x)"),
        "{err}"
    );
}
