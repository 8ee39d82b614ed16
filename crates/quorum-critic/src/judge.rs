//! The offline judge: deterministic checks a skeptic can make without a
//! model. The model-backed judge (one call per job, strict schema) replaces
//! [`judge_offline`] behind the same signature when a model is configured.

use std::collections::BTreeMap;

use quorum_core::{FileDiff, Finding, Severity, Verdict};
use quorum_events::JudgedFinding;

/// Findings under this confidence are dropped (F-CRIT-1).
pub const KEEP_THRESHOLD: f64 = 0.6;
/// How far from a line the diff shows a finding may point and still be
/// "about this change".
pub const NEAR_DIFF: u32 = 3;

/// Judges every finding. Deterministic static findings skip the judgement
/// but not the threshold.
pub fn judge_offline(findings: &[Finding], diffs: &[FileDiff]) -> Vec<JudgedFinding> {
    let by_path: BTreeMap<&str, &FileDiff> = diffs.iter().map(|d| (d.path.as_str(), d)).collect();
    findings
        .iter()
        .map(|f| {
            let (keep, reason) = decide(f, by_path.get(f.file.as_str()).copied());
            JudgedFinding {
                finding: f.clone(),
                keep,
                reason,
            }
        })
        .collect()
}

fn decide(f: &Finding, diff: Option<&FileDiff>) -> (bool, String) {
    if f.confidence < KEEP_THRESHOLD {
        return (
            false,
            format!("confidence {:.2} is under {KEEP_THRESHOLD}", f.confidence),
        );
    }
    if f.is_deterministic() {
        return (true, "deterministic rule; skips the judge".into());
    }
    if f.evidence.is_empty() {
        return (false, "no evidence given".into());
    }
    let (start, end) = f.line_range();
    let near = diff.is_some_and(|d| {
        d.new_side_lines()
            .any(|(n, _)| n + NEAR_DIFF >= start && n <= end + NEAR_DIFF)
    });
    if near {
        return (true, "cited line is in the diff and the evidence checks out".into());
    }
    if cites_impact_site(f) {
        return (
            true,
            "a call site the impact report lists as broken by this change".into(),
        );
    }
    match diff {
        None => (false, format!("{} is not part of this change", f.file)),
        Some(_) => (false, format!("{}:{} is not in or next to the diff", f.file, f.line)),
    }
}

/// Whether the finding sits on a call site its own impact-report evidence
/// names (`graph:impact` evidence reads `qname -> path:line …`): a caller
/// in an untouched file that the change breaks is about this change.
///
/// The offline engine writes that evidence from the report itself. When a
/// model writes findings, the critic must check the site against the
/// report rather than trust the finding's evidence.
fn cites_impact_site(f: &Finding) -> bool {
    let site = format!(" -> {}:{} ", f.file, f.line);
    f.evidence
        .iter()
        .any(|e| e.source == "graph:impact" && e.detail.contains(&site))
}

/// The verdict and a one-paragraph summary of the kept findings.
pub fn summarise(judged: &[JudgedFinding]) -> (Verdict, String) {
    let kept: Vec<Finding> = judged.iter().filter(|j| j.keep).map(|j| j.finding.clone()).collect();
    let verdict = Verdict::from_findings(&kept);
    let rejected = judged.len() - kept.len();
    let count = |s: Severity| kept.iter().filter(|f| f.severity == s).count();
    let summary = if kept.is_empty() {
        format!("No issues worth your attention in this change ({rejected} rejected by critic).")
    } else {
        format!(
            "{} finding(s) kept: {} critical, {} major, {} minor, {} nitpick; {rejected} rejected by critic.",
            kept.len(),
            count(Severity::Critical),
            count(Severity::Major),
            count(Severity::Minor),
            count(Severity::Nitpick)
        )
    };
    (verdict, summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quorum_core::diff::parse_file_patch;
    use quorum_core::{AgentRole, Category, Evidence, FileStatus};

    fn f(agent: AgentRole, file: &str, line: u32, confidence: f64) -> Finding {
        Finding {
            file: file.into(),
            line,
            start_line: None,
            category: Category::Bug,
            severity: Severity::Major,
            confidence,
            title: "t".into(),
            explanation: "e".into(),
            suggestion: None,
            rule: None,
            agent,
            evidence: vec![Evidence {
                source: "rule:x".into(),
                detail: "d".into(),
            }],
            agreed_by: vec![],
        }
    }

    fn diff() -> FileDiff {
        parse_file_patch("a.py", None, FileStatus::Modified, "@@ -10,2 +10,3 @@\n a\n+b\n c\n").0
    }

    #[test]
    fn threshold_applies_to_everyone() {
        let j = judge_offline(
            &[
                f(AgentRole::Static, "a.py", 11, 0.59),
                f(AgentRole::Reviewer, "a.py", 11, 0.59),
            ],
            &[diff()],
        );
        assert!(j.iter().all(|j| !j.keep && j.reason.contains("under 0.6")));
    }

    #[test]
    fn llm_findings_must_point_at_the_change_with_evidence() {
        let mut no_evidence = f(AgentRole::Reviewer, "a.py", 11, 0.9);
        no_evidence.evidence.clear();
        let j = judge_offline(
            &[
                f(AgentRole::Reviewer, "a.py", 11, 0.9),
                f(AgentRole::Reviewer, "a.py", 15, 0.9),
                f(AgentRole::Reviewer, "a.py", 40, 0.9),
                f(AgentRole::Reviewer, "other.py", 1, 0.9),
                no_evidence,
                f(AgentRole::Static, "other.py", 1, 0.9),
            ],
            &[diff()],
        );
        let keeps: Vec<bool> = j.iter().map(|j| j.keep).collect();
        assert_eq!(keeps, vec![true, true, false, false, false, true], "{j:#?}");
    }

    #[test]
    fn a_broken_call_site_outside_the_diff_is_kept_on_impact_evidence() {
        let mut on_site = f(AgentRole::Reviewer, "app/report.py", 5, 0.85);
        on_site.evidence = vec![Evidence {
            source: "graph:impact".into(),
            detail: "lib.units.helper -> app/report.py:5 `helper()`: symbol removed".into(),
        }];
        // Evidence naming another line does not vouch for this one.
        let mut elsewhere = on_site.clone();
        elsewhere.line = 40;
        // Nor does the same text from a rule instead of the graph.
        let mut not_graph = on_site.clone();
        not_graph.evidence[0].source = "rule:x".into();
        let j = judge_offline(&[on_site, elsewhere, not_graph], &[diff()]);
        let keeps: Vec<bool> = j.iter().map(|j| j.keep).collect();
        assert_eq!(keeps, vec![true, false, false], "{j:#?}");
        assert!(j[0].reason.contains("impact report"));
    }

    #[test]
    fn verdict_and_summary() {
        let j = judge_offline(
            &[
                f(AgentRole::Static, "a.py", 11, 0.9),
                f(AgentRole::Reviewer, "a.py", 90, 0.9),
            ],
            &[diff()],
        );
        let (v, s) = summarise(&j);
        assert_eq!(v, Verdict::RequestChanges);
        assert!(s.contains("1 finding(s) kept") && s.contains("1 rejected"), "{s}");
        assert_eq!(summarise(&[]).0, Verdict::Approve);
    }
}
