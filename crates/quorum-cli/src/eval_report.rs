//! The eval's outputs: `results.json` (schema: [`crate::eval::EvalReport`]),
//! `report.md`, `chart.svg`, the terminal table, and the baseline check.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use crate::eval::EvalReport;

/// The summary table, as Markdown (also printed to the terminal).
pub fn summary_table(r: &EvalReport) -> String {
    let mut s = String::from(
        "| mode | precision | recall | F1 | FP on clean | tokens | $/review | p50 ms | max ms |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for m in &r.modes {
        let _ = writeln!(
            s,
            "| {} | {:.2} | {:.2} | {:.2} | {} | {} | {:.4} | {:.0} | {:.0} |",
            m.mode,
            m.precision,
            m.recall,
            m.f1,
            m.clean_false_positives,
            m.tokens,
            m.usd_per_review,
            m.latency_p50_ms,
            m.latency_max_ms
        );
    }
    s
}

fn report_md(r: &EvalReport) -> String {
    let mut s = format!("# Eval report\n\nFixture `{}`, engine `{}`.\n\n", r.fixture, r.engine);
    s.push_str(&summary_table(r));
    if r.engine == "offline" {
        s.push_str("\nThe offline engine does not use context yet, so the three modes review identically.\n");
    }
    if !r.invalid_cases.is_empty() {
        s.push_str("\n## Invalid cases\n\n");
        for i in &r.invalid_cases {
            let _ = writeln!(s, "- {i}");
        }
    }
    s.push_str("\n## Per case\n\n| case | mode | found | counted | false positives | missed because |\n|---|---|---|---|---|---|\n");
    for c in &r.cases {
        let fps: Vec<String> = c
            .score
            .false_positives
            .iter()
            .map(|f| format!("{}:{} {}", f.file, f.line, f.title))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {}/{} | {} | {} | {} |",
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
            }
        );
    }
    s
}

/// Grouped bars: precision, recall, F1 per mode.
fn chart_svg(r: &EvalReport) -> String {
    let (w, h, pad) = (640.0, 320.0, 40.0);
    let group = (w - 2.0 * pad) / r.modes.len().max(1) as f64;
    let bar = group / 4.0;
    let colors = ["#4e79a7", "#f28e2b", "#59a14f"];
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let _ = writeln!(
        s,
        "<line x1=\"{pad}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>",
        h - pad,
        w - pad,
        h - pad
    );
    for (i, m) in r.modes.iter().enumerate() {
        for (j, (v, name)) in [(m.precision, "precision"), (m.recall, "recall"), (m.f1, "F1")]
            .iter()
            .enumerate()
        {
            let x = pad + i as f64 * group + bar * 0.5 + j as f64 * bar;
            let bh = v * (h - 2.0 * pad);
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"{}\"><title>{} {name} {v:.2}</title></rect>",
                h - pad - bh,
                bar * 0.9,
                colors[j],
                m.mode
            );
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{v:.2}</text>",
                x,
                h - pad - bh - 3.0
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            pad + i as f64 * group + bar,
            h - pad + 16.0,
            m.mode
        );
    }
    for (j, name) in ["precision", "recall", "F1"].iter().enumerate() {
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"10\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"19\">{name}</text>",
            pad + j as f64 * 90.0,
            colors[j],
            pad + 14.0 + j as f64 * 90.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Writes the three outputs under `<out>/<unix-seconds>/` and prints the table.
pub fn write(out: &Path, report: &EvalReport) -> anyhow::Result<()> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let dir = out.join(stamp.to_string());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("results.json"), serde_json::to_string_pretty(report)?)?;
    std::fs::write(dir.join("report.md"), report_md(report))?;
    std::fs::write(dir.join("chart.svg"), chart_svg(report))?;
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
