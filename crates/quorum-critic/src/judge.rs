//! The offline judge: deterministic checks a skeptic can make without a
//! model. They always run first; with a model configured, the findings they
//! keep then go to the model's judgement (`lib.rs`).

use std::collections::{BTreeMap, BTreeSet};

use quorum_core::{FileDiff, Finding, Severity, Verdict};
use quorum_events::JudgedFinding;

/// Findings under this confidence are dropped (F-CRIT-1).
pub const KEEP_THRESHOLD: f64 = 0.6;
/// How far from a line the diff shows a finding may point and still be
/// "about this change".
pub const NEAR_DIFF: u32 = 3;

/// The call sites an impact report names (callers and broken calls), read
/// from the report itself: what a model finding outside the diff must
/// point at to be about this change.
#[derive(Debug, Clone, Default)]
pub struct ImpactSites(BTreeSet<(String, u32)>);

impl ImpactSites {
    pub fn from_report(report: &quorum_graph::ImpactReport) -> ImpactSites {
        let mut s = BTreeSet::new();
        for c in &report.changed {
            for b in &c.broken_calls {
                s.insert((b.path.clone(), b.line));
            }
            for caller in &c.callers {
                s.insert((caller.path.clone(), caller.line));
            }
        }
        ImpactSites(s)
    }

    /// Whether a site lies in `file` lines `start..=end`.
    pub fn names(&self, file: &str, start: u32, end: u32) -> bool {
        self.0
            .range((file.to_string(), start)..=(file.to_string(), end))
            .next()
            .is_some()
    }
}

/// Whether a finding points outside the diff (so its impact claim needs
/// checking against the report).
pub fn outside_diff(f: &Finding, diffs: &[FileDiff]) -> bool {
    let (start, end) = f.line_range();
    !diffs.iter().any(|d| {
        d.path == f.file
            && d.new_side_lines()
                .any(|(n, _)| n + NEAR_DIFF >= start && n <= end + NEAR_DIFF)
    })
}

/// Judges every finding. Deterministic static findings skip the judgement
/// but not the threshold. `sites` is the job's impact report, when it
/// could be had: a model's finding outside the diff stands only on it.
pub fn judge_offline(findings: &[Finding], diffs: &[FileDiff], sites: Option<&ImpactSites>) -> Vec<JudgedFinding> {
    let by_path: BTreeMap<&str, &FileDiff> = diffs.iter().map(|d| (d.path.as_str(), d)).collect();
    findings
        .iter()
        .map(|f| {
            let (keep, reason) = decide(f, by_path.get(f.file.as_str()).copied(), sites);
            JudgedFinding {
                finding: f.clone(),
                keep,
                reason,
                suppressed_by: None,
            }
        })
        .collect()
}

fn decide(f: &Finding, diff: Option<&FileDiff>, sites: Option<&ImpactSites>) -> (bool, String) {
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
    // The offline engine's rules write `graph:impact` evidence from the
    // report itself; a model's finding (no rule) gets no such trust and is
    // checked against the report.
    if f.rule.is_some() && cites_impact_site(f) {
        return (
            true,
            "a call site the impact report lists as broken by this change".into(),
        );
    }
    if f.rule.is_none() {
        let (start, end) = f.line_range();
        match sites {
            Some(s) if s.names(&f.file, start, end) => {
                return (
                    true,
                    "a call site the impact report names (checked against the report)".into(),
                );
            }
            Some(_) => {
                return (
                    false,
                    format!(
                        "{}:{} is outside the diff and the impact report does not name it",
                        f.file, f.line
                    ),
                );
            }
            None => {}
        }
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
            None,
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
            None,
        );
        let keeps: Vec<bool> = j.iter().map(|j| j.keep).collect();
        assert_eq!(keeps, vec![true, true, false, false, false, true], "{j:#?}");
    }

    #[test]
    fn a_broken_call_site_outside_the_diff_is_kept_on_impact_evidence() {
        let mut on_site = f(AgentRole::Reviewer, "app/report.py", 5, 0.85);
        on_site.rule = Some("graph-removed-symbol".into());
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
        let j = judge_offline(&[on_site, elsewhere, not_graph], &[diff()], None);
        let keeps: Vec<bool> = j.iter().map(|j| j.keep).collect();
        assert_eq!(keeps, vec![true, false, false], "{j:#?}");
        assert!(j[0].reason.contains("impact report"));
    }

    #[test]
    fn a_model_finding_outside_the_diff_stands_only_on_the_report_itself() {
        // A model can write any evidence; the same text that vouches for a
        // rule's finding vouches for nothing here.
        let mut forged = f(AgentRole::Reviewer, "app/report.py", 5, 0.85);
        forged.evidence = vec![Evidence {
            source: "graph:impact".into(),
            detail: "lib.units.helper -> app/report.py:5 `helper()`: symbol removed".into(),
        }];
        let mut named = forged.clone();
        named.line = 9;
        let mut report = quorum_graph::ImpactReport::default();
        report.changed.push(quorum_graph::impact::ChangedSymbol {
            qname: "lib.units.helper".into(),
            kind: "function",
            path: "lib/units.py".into(),
            start_line: 1,
            end_line: 3,
            change: quorum_graph::impact::ChangeKind::Removed,
            signature: None,
            callers: vec![],
            tests: vec![],
            broken_calls: vec![quorum_graph::impact::BrokenCall {
                path: "app/report.py".into(),
                line: 9,
                caller: "app.report.render".into(),
                text: "helper()".into(),
                problem: "symbol removed".into(),
                kind: quorum_graph::impact::BreakKind::Removed,
            }],
        });
        let sites = ImpactSites::from_report(&report);
        let j = judge_offline(&[forged.clone(), named], &[diff()], Some(&sites));
        assert_eq!((j[0].keep, j[1].keep), (false, true), "{j:#?}");
        assert!(j[0].reason.contains("does not name it"), "{}", j[0].reason);
        assert!(j[1].reason.contains("checked against the report"));
        // Without a report, it is simply outside the change.
        assert!(!judge_offline(&[forged], &[diff()], None)[0].keep);
    }

    #[test]
    fn verdict_and_summary() {
        let j = judge_offline(
            &[
                f(AgentRole::Static, "a.py", 11, 0.9),
                f(AgentRole::Reviewer, "a.py", 90, 0.9),
            ],
            &[diff()],
            None,
        );
        let (v, s) = summarise(&j);
        assert_eq!(v, Verdict::RequestChanges);
        assert!(s.contains("1 finding(s) kept") && s.contains("1 rejected"), "{s}");
        assert_eq!(summarise(&[]).0, Verdict::Approve);
    }
}
