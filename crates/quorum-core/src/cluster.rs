//! Clustering near-duplicate findings from different agents (F-AGG-2).
//!
//! Two findings belong to one cluster when they are in the same file, their
//! line ranges come within [`LINE_WINDOW`] lines of each other, and they share a
//! category or their titles are similar: the Jaccard index of their lower-cased
//! word sets (words of 3+ letters) is at least [`SIMILARITY_THRESHOLD`].
//!
//! The representative of a cluster is a deterministic rule's finding when
//! the cluster has one (its evidence is checked and the critic trusts it; a
//! model's claim about the same lines only adds agreement), then the most
//! severe member, ties broken by confidence. Independent agreement raises confidence:
//! `c' = 1 − (1 − c)·0.6^(agents − 1)` where `c` is the representative's
//! confidence and `agents` the number of distinct agents in the cluster — two
//! agents at 0.90 give 0.94, three give 0.964.

use std::collections::BTreeSet;

use crate::finding::Finding;
use crate::job::AgentRole;

/// Lines apart that still count as "the same place".
pub const LINE_WINDOW: u32 = 3;
/// Minimum word-set Jaccard similarity for findings of different categories.
pub const SIMILARITY_THRESHOLD: f64 = 0.5;
/// Each additional agreeing agent keeps this share of the remaining doubt.
pub const AGREEMENT_FACTOR: f64 = 0.6;

/// Confidence after `agents` independent agents agreed on a finding whose own
/// confidence is `confidence`.
pub fn agreement_confidence(confidence: f64, agents: usize) -> f64 {
    let extra = agents.saturating_sub(1) as i32;
    1.0 - (1.0 - confidence) * AGREEMENT_FACTOR.powi(extra)
}

/// Jaccard similarity of the word sets of two texts.
pub fn title_similarity(a: &str, b: &str) -> f64 {
    let words = |s: &str| -> BTreeSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 3)
            .map(str::to_lowercase)
            .collect()
    };
    let (wa, wb) = (words(a), words(b));
    if wa.is_empty() || wb.is_empty() {
        return 0.0;
    }
    let inter = wa.intersection(&wb).count() as f64;
    let union = wa.union(&wb).count() as f64;
    inter / union
}

fn near(a: &Finding, b: &Finding) -> bool {
    if a.file != b.file {
        return false;
    }
    let (a0, a1) = a.line_range();
    let (b0, b1) = b.line_range();
    // Distance between two ranges; 0 when they overlap.
    let gap = b0.saturating_sub(a1).max(a0.saturating_sub(b1));

    gap <= LINE_WINDOW && (a.category == b.category || title_similarity(&a.title, &b.title) >= SIMILARITY_THRESHOLD)
}

/// Merges near-duplicates. Output order follows the first member of each
/// cluster in the input, so the result is deterministic for a given input.
pub fn cluster_findings(findings: Vec<Finding>) -> Vec<Finding> {
    // Union-find over indices: clusters are the connected components of `near`.
    let n = findings.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for i in 0..n {
        for j in (i + 1)..n {
            if near(&findings[i], &findings[j]) {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                if ri != rj {
                    parent[rj.max(ri)] = rj.min(ri);
                }
            }
        }
    }
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        match groups.iter_mut().find(|(g, _)| *g == r) {
            Some((_, members)) => members.push(i),
            None => groups.push((r, vec![i])),
        }
    }
    groups
        .into_iter()
        .map(|(_, members)| {
            let best = *members
                .iter()
                .max_by(|&&a, &&b| {
                    let (fa, fb) = (&findings[a], &findings[b]);
                    fa.rule
                        .is_some()
                        .cmp(&fb.rule.is_some())
                        .then(fa.severity.cmp(&fb.severity))
                        .then(fa.confidence.total_cmp(&fb.confidence))
                        // Prefer the earlier finding on a tie.
                        .then(b.cmp(&a))
                })
                .expect("cluster is never empty");
            let agents: BTreeSet<AgentRole> = members
                .iter()
                .flat_map(|&m| std::iter::once(findings[m].agent).chain(findings[m].agreed_by.iter().copied()))
                .collect();
            let mut rep = findings[best].clone();
            rep.confidence = agreement_confidence(rep.confidence, agents.len());
            rep.agreed_by = agents.into_iter().collect();
            for &m in &members {
                if m != best {
                    for e in &findings[m].evidence {
                        if !rep.evidence.contains(e) {
                            rep.evidence.push(e.clone());
                        }
                    }
                }
            }
            rep
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Category, Severity};

    fn f(agent: AgentRole, line: u32, cat: Category, sev: Severity, c: f64, title: &str) -> Finding {
        Finding {
            file: "shop/a.py".into(),
            line,
            start_line: None,
            category: cat,
            severity: sev,
            confidence: c,
            title: title.into(),
            explanation: String::new(),
            suggestion: None,
            rule: None,
            agent,
            evidence: vec![],
            agreed_by: vec![],
        }
    }

    #[test]
    fn formula_matches_documented_values() {
        assert!((agreement_confidence(0.9, 2) - 0.94).abs() < 1e-9);
        assert!((agreement_confidence(0.9, 1) - 0.9).abs() < 1e-9);
        assert!((agreement_confidence(0.9, 3) - 0.964).abs() < 1e-9);
    }

    #[test]
    fn a_rule_finding_represents_its_cluster_over_a_more_severe_model_claim() {
        let mut rule = f(
            AgentRole::Reviewer,
            57,
            Category::Bug,
            Severity::Major,
            0.9,
            "Signature change breaks callers",
        );
        rule.rule = Some("graph:signature-breaks-callers".into());
        let model = f(
            AgentRole::Reviewer,
            56,
            Category::Bug,
            Severity::Critical,
            0.95,
            "Missing required argument",
        );
        let out = cluster_findings(vec![model.clone(), rule.clone()]);
        assert_eq!(out.len(), 1, "{out:#?}");
        assert_eq!(out[0].rule.as_deref(), Some("graph:signature-breaks-callers"));
        assert_eq!(out[0].severity, Severity::Major);
        // Without a rule in the cluster the most severe member still wins.
        let mut other = rule;
        other.rule = None;
        let out = cluster_findings(vec![other, model]);
        assert_eq!(out[0].severity, Severity::Critical);
    }

    #[test]
    fn three_agents_on_40_41_43_merge_into_one() {
        let out = cluster_findings(vec![
            f(
                AgentRole::Static,
                40,
                Category::Security,
                Severity::Major,
                0.8,
                "SQL built from strings",
            ),
            f(
                AgentRole::Security,
                41,
                Category::Security,
                Severity::Critical,
                0.9,
                "SQL injection",
            ),
            f(
                AgentRole::Reviewer,
                43,
                Category::Bug,
                Severity::Minor,
                0.7,
                "SQL query built from user strings",
            ),
        ]);
        assert_eq!(out.len(), 1, "{out:#?}");
        let rep = &out[0];
        assert_eq!(rep.severity, Severity::Critical);
        assert_eq!(rep.agent, AgentRole::Security);
        assert_eq!(
            rep.agreed_by,
            vec![AgentRole::Static, AgentRole::Reviewer, AgentRole::Security]
        );
        assert!((rep.confidence - agreement_confidence(0.9, 3)).abs() < 1e-9);
    }

    #[test]
    fn far_apart_or_unrelated_findings_stay_separate() {
        let out = cluster_findings(vec![
            f(
                AgentRole::Static,
                10,
                Category::Security,
                Severity::Major,
                0.8,
                "weak hash",
            ),
            f(
                AgentRole::Reviewer,
                14,
                Category::Security,
                Severity::Major,
                0.8,
                "weak hash",
            ),
            f(
                AgentRole::Tests,
                11,
                Category::Testing,
                Severity::Minor,
                0.8,
                "no test covers this",
            ),
        ]);
        assert_eq!(out.len(), 3, "{out:#?}");
    }

    #[test]
    fn same_agent_twice_does_not_count_as_agreement() {
        let out = cluster_findings(vec![
            f(AgentRole::Static, 10, Category::Bug, Severity::Major, 0.8, "a"),
            f(AgentRole::Static, 11, Category::Bug, Severity::Major, 0.7, "b"),
        ]);
        assert_eq!(out.len(), 1);
        assert!((out[0].confidence - 0.8).abs() < 1e-9);
    }

    #[test]
    fn similarity_is_jaccard_of_words() {
        assert!((title_similarity("Swallowed exception here", "exception swallowed") - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(title_similarity("", "x"), 0.0);
    }
}
