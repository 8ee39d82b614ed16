//! The eval's outputs: `results.json` (schema: [`crate::eval::EvalReport`]),
//! `report.md`, the two charts ([`crate::eval_chart`]), the terminal table,
//! and the baseline check.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use crate::eval::EvalReport;
use crate::eval_chart::{BARS_FILE, SCATTER_FILE, bars_svg, recall_tokens_svg};

/// The summary table, as Markdown (also printed to the terminal).
pub fn summary_table(r: &EvalReport) -> String {
    let mut s = String::from(
        "| mode | precision | recall | F1 | FP on clean | tokens | $/review | p50 ms | max ms | model calls live | replayed |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for m in &r.modes {
        let _ = writeln!(
            s,
            "| {} | {:.2} | {:.2} | {:.2} | {} | {} | {:.4} | {:.0} | {:.0} | {} | {} |",
            m.mode,
            m.precision,
            m.recall,
            m.f1,
            m.clean_false_positives,
            m.tokens,
            m.usd_per_review,
            m.latency_p50_ms,
            m.latency_max_ms,
            m.live_calls,
            m.replayed_calls
        );
    }
    s
}

/// Says how much of the run was replayed from the response cache: such
/// figures re-score recorded answers, and latency no longer measures the
/// model.
fn replay_note(r: &EvalReport) -> Option<String> {
    let live: u64 = r.modes.iter().map(|m| m.live_calls).sum();
    let replayed: u64 = r.modes.iter().map(|m| m.replayed_calls).sum();
    (replayed > 0).then(|| {
        format!(
            "\n{replayed} of {} model answers were replayed from the response cache ({live} live): the scores re-score recorded answers, and latency does not measure the model.\n",
            live + replayed
        )
    })
}

/// Located vs explained, and the model's findings alone, per mode: only
/// the views the run has (a model, a judge).
fn views_table(r: &EvalReport) -> Option<String> {
    use crate::eval::ViewScores;
    let has_model = r.modes.iter().any(|m| m.model_alone.is_some());
    let has_judge = r.modes.iter().any(|m| m.explained.is_some());
    if !has_model && !has_judge {
        return None;
    }
    let mut s = String::from(
        "\n| mode | findings of | scored as | precision | recall | F1 | FP on clean | unjudged pairs |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut row = |mode: &str, of: &str, how: &str, v: &ViewScores| {
        let _ = writeln!(
            s,
            "| {mode} | {of} | {how} | {:.2} | {:.2} | {:.2} | {} | {} |",
            v.precision,
            v.recall,
            v.f1,
            v.clean_false_positives,
            v.unjudged.map_or("—".to_string(), |n| n.to_string())
        );
    };
    let all = if has_model { "offline + model" } else { "offline" };
    for m in &r.modes {
        let located = ViewScores {
            precision: m.precision,
            recall: m.recall,
            f1: m.f1,
            clean_false_positives: m.clean_false_positives,
            unjudged: None,
        };
        row(&m.mode, all, "located", &located);
        if let Some(v) = &m.explained {
            row(&m.mode, all, "explained", v);
        }
        if let Some(v) = &m.model_alone {
            row(&m.mode, "model alone", "located", v);
        }
        if let Some(v) = &m.model_before_critic {
            row(&m.mode, "model alone, before the critic", "located", v);
        }
        if let Some(v) = &m.model_alone_explained {
            row(&m.mode, "model alone", "explained", v);
        }
    }
    Some(s)
}

fn judge_note(r: &EvalReport) -> String {
    match &r.judge {
        Some(j) => format!(
            "\nExplained scores are decided by the judge `{}`, whose agreement with the {} human-labelled pairs of `eval/judge/labels.json` is {:.2} (Cohen's kappa {:.2}; {} errors).\n",
            j.judge_model, j.labels, j.agreement.accuracy, j.agreement.kappa, j.agreement.errors
        ),
        None => "\nScores are *located* only (a finding within ±3 lines of the defect); no judge was configured to decide whether a finding also *explains* it (`--judge-url`).\n".into(),
    }
}

fn report_md(r: &EvalReport) -> String {
    let mut s = format!("# Eval report\n\nFixture `{}`, engine `{}`.\n\n", r.fixture, r.engine);
    s.push_str(&summary_table(r));
    if let Some(views) = views_table(r) {
        s.push_str(&views);
    }
    s.push_str(&judge_note(r));
    if let Some(note) = replay_note(r) {
        s.push_str(&note);
    }
    let _ = write!(
        s,
        "\n![precision, recall and F1 per context mode]({BARS_FILE})\n\n![recall against tokens per review, one point per mode]({SCATTER_FILE})\n"
    );
    if !r.invalid_cases.is_empty() {
        s.push_str("\n## Invalid cases\n\n");
        for i in &r.invalid_cases {
            let _ = writeln!(s, "- {i}");
        }
    }
    s.push_str("\n## Per case\n\n| case | mode | found | counted | false positives | missed because | model calls live/replayed |\n|---|---|---|---|---|---|---|\n");
    for c in &r.cases {
        let fps: Vec<String> = c
            .score
            .false_positives
            .iter()
            .map(|f| format!("{}:{} {}", f.file, f.line, f.title))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {}/{} | {} | {} | {} | {}/{} |",
            c.case,
            c.mode,
            c.score.found,
            c.score.expected,
            c.score.counted,
            if fps.is_empty() { "—".into() } else { fps.join("; ") },
            if c.missed.is_empty() {
                "—".into()
            } else {
                c.missed.join("; ")
            },
            c.model_calls.live,
            c.model_calls.replayed
        );
    }
    s
}

/// Writes the outputs under `<out>/<unix-seconds>/` and prints the table.
pub fn write(out: &Path, report: &EvalReport) -> anyhow::Result<()> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let dir = out.join(stamp.to_string());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("results.json"), serde_json::to_string_pretty(report)?)?;
    std::fs::write(dir.join("report.md"), report_md(report))?;
    std::fs::write(dir.join(BARS_FILE), bars_svg(&report.modes)?)?;
    std::fs::write(dir.join(SCATTER_FILE), recall_tokens_svg(&report.modes)?)?;
    println!("\n{}", summary_table(report));
    if !report.invalid_cases.is_empty() {
        println!("invalid cases: {}", report.invalid_cases.len());
    }
    println!("results in {}", dir.display());
    Ok(())
}

/// Fails when precision drops below 1.0 or recall below the recorded baseline.
pub fn check_baseline(path: &Path, report: &EvalReport) -> anyhow::Result<()> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Baseline {
        /// Minimum recall per mode; the baseline only moves up.
        recall: std::collections::BTreeMap<String, f64>,
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let b: Baseline =
        serde_json::from_str(&text).with_context(|| format!("{} is not a valid baseline", path.display()))?;
    for m in &report.modes {
        anyhow::ensure!(m.precision >= 1.0, "{}: precision {:.3} < 1.0", m.mode, m.precision);
        if let Some(min) = b.recall.get(&m.mode) {
            anyhow::ensure!(
                m.recall + 1e-9 >= *min,
                "{}: recall {:.3} is below the baseline {:.3}",
                m.mode,
                m.recall,
                min
            );
        }
    }
    anyhow::ensure!(
        report.invalid_cases.is_empty(),
        "invalid cases: {:?}",
        report.invalid_cases
    );
    println!("baseline {} holds", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::ModeSummary;

    fn report(live: u64, replayed: u64) -> EvalReport {
        EvalReport {
            schema_version: 3,
            fixture: "f".into(),
            engine: "m".into(),
            judge: None,
            invalid_cases: vec![],
            modes: vec![ModeSummary {
                mode: "graph_rag".into(),
                reviews: 2,
                precision: 1.0,
                recall: 0.5,
                f1: 0.67,
                clean_false_positives: 0,
                tokens: 900,
                usd_per_review: 0.0,
                latency_p50_ms: 5.0,
                latency_max_ms: 9.0,
                recall_spread: 0.0,
                live_calls: live,
                replayed_calls: replayed,
                explained: None,
                model_alone: None,
                model_before_critic: None,
                model_alone_explained: None,
            }],
            cases: vec![],
        }
    }

    #[test]
    fn the_report_says_how_many_answers_were_replayed() {
        let md = report_md(&report(1, 5));
        assert!(
            md.contains("| graph_rag | 1.00 | 0.50 | 0.67 | 0 | 900 | 0.0000 | 5 | 9 | 1 | 5 |"),
            "{md}"
        );
        assert!(
            md.contains("5 of 6 model answers were replayed from the response cache (1 live)"),
            "{md}"
        );
        assert!(
            md.contains("](chart.svg)") && md.contains("](recall-tokens.svg)"),
            "{md}"
        );
        assert!(md.contains("*located* only"), "{md}");
        let live = report_md(&report(6, 0));
        assert!(
            live.contains("| 6 | 0 |") && !live.contains("replayed from the response cache"),
            "{live}"
        );
    }
}
