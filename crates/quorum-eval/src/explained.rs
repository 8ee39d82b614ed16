//! *Explained* scoring (case format, "Located vs explained"): a located
//! finding counts only when a judge says its text describes the expected
//! issue's `description`. This module is pure: it lists the (finding,
//! expected issue) pairs a judge must decide and scores a case from the
//! verdicts; the judge itself is a model call made by the caller.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::case::Case;
use crate::score::{Reported, matches, rates, resolve_expected};

/// One pair to judge: counted finding `finding` (an index into the
/// review's findings) is located on expected issue `expected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Pair {
    pub finding: usize,
    pub expected: usize,
}

/// Every located (finding, expected issue) pair of a review of `case`:
/// what a judge must decide. Pairs of an issue without a `description`
/// are left out (nothing to judge against) and reported by the score.
pub fn located_pairs(case: &Case, head_root: &Path, findings: &[Reported]) -> Result<Vec<Pair>, String> {
    let mut pairs = vec![];
    for (ei, e) in case.expected.iter().enumerate() {
        if e.description.as_deref().is_none_or(|d| d.trim().is_empty()) {
            continue;
        }
        let places = resolve_expected(head_root, e)?;
        for (fi, f) in findings.iter().enumerate() {
            if f.counted() && places.iter().any(|r| matches(f, r)) {
                pairs.push(Pair {
                    finding: fi,
                    expected: ei,
                });
            }
        }
    }
    Ok(pairs)
}

/// A case scored on explained findings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExplainedScore {
    pub expected: usize,
    /// Expected issues some counted finding located *and* explained.
    pub found: usize,
    pub counted: usize,
    /// Counted findings that explain an expected issue they are located on.
    pub true_positives: usize,
    pub hits: Vec<bool>,
    /// Located pairs the judge could not decide (an error): counted as not
    /// explained, and reported so a reader knows how many.
    pub unjudged: usize,
    /// Expected issues without a description (never explained).
    pub undescribed: usize,
}

/// Scores a case from the judge's verdicts (`None`: not decided).
pub fn explained_score(case: &Case, findings: &[Reported], verdicts: &BTreeMap<Pair, Option<bool>>) -> ExplainedScore {
    let mut hits = vec![false; case.expected.len()];
    let mut explaining = std::collections::BTreeSet::new();
    let mut unjudged = 0;
    for (pair, verdict) in verdicts {
        match verdict {
            Some(true) => {
                hits[pair.expected] = true;
                explaining.insert(pair.finding);
            }
            Some(false) => {}
            None => unjudged += 1,
        }
    }
    ExplainedScore {
        expected: case.expected.len(),
        found: hits.iter().filter(|h| **h).count(),
        counted: findings.iter().filter(|f| f.counted()).count(),
        true_positives: explaining.len(),
        hits,
        unjudged,
        undescribed: case
            .expected
            .iter()
            .filter(|e| e.description.as_deref().is_none_or(|d| d.trim().is_empty()))
            .count(),
    }
}

/// Precision, recall and F1 over several cases' explained scores.
pub fn explained_totals(scores: &[&ExplainedScore]) -> (f64, f64, f64) {
    let sum = |f: fn(&ExplainedScore) -> usize| scores.iter().map(|s| f(s)).sum();
    rates(
        sum(|s| s.true_positives),
        sum(|s| s.counted),
        sum(|s| s.found),
        sum(|s| s.expected),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Expected;

    fn case(dir: &Path) -> Case {
        std::fs::write(
            dir.join("a.py"),
            "def f(x):\n    return x\n\n\n\n\n\n\n\n\ndef g(y):\n    return y\n",
        )
        .unwrap();
        let e = |anchor: &str, d: Option<&str>| Expected {
            file: "a.py".into(),
            anchor: anchor.into(),
            category: None,
            description: d.map(str::to_string),
            alternatives: vec![],
        };
        Case {
            id: "c".into(),
            title: "t".into(),
            body: String::new(),
            edits: vec![],
            expected: vec![e("def f(x)", Some("f drops its offset")), e("def g(y)", None)],
            path: dir.join("c.json"),
        }
    }

    fn finding(line: u32, category: &str) -> Reported {
        Reported {
            file: "a.py".into(),
            start_line: line,
            line,
            category: category.into(),
            severity: "major".into(),
            title: "t".into(),
            explanation: "e".into(),
            rule: None,
        }
    }

    #[test]
    fn only_described_located_counted_pairs_are_judged() {
        let dir = tempfile::tempdir().unwrap();
        let case = case(dir.path());
        // Line 2 is near f; line 12 near g (undescribed); testing is not counted.
        let findings = vec![
            finding(2, "bug"),
            finding(12, "bug"),
            finding(1, "testing"),
            finding(2, "bug"),
        ];
        let pairs = located_pairs(&case, dir.path(), &findings).unwrap();
        assert_eq!(
            pairs,
            vec![
                Pair {
                    finding: 0,
                    expected: 0
                },
                Pair {
                    finding: 3,
                    expected: 0
                }
            ]
        );
    }

    #[test]
    fn a_located_finding_counts_only_when_the_judge_says_it_explains() {
        let dir = tempfile::tempdir().unwrap();
        let case = case(dir.path());
        let findings = vec![finding(2, "bug"), finding(12, "bug"), finding(2, "bug")];
        let p = |finding| Pair { finding, expected: 0 };
        // One explains, one names another problem.
        let verdicts = BTreeMap::from([(p(0), Some(true)), (p(2), Some(false))]);
        let s = explained_score(&case, &findings, &verdicts);
        assert_eq!((s.expected, s.found, s.counted, s.true_positives), (2, 1, 3, 1));
        assert_eq!((s.hits.clone(), s.unjudged, s.undescribed), (vec![true, false], 0, 1));
        let (precision, recall, _) = explained_totals(&[&s]);
        assert!((precision - 1.0 / 3.0).abs() < 1e-9 && (recall - 0.5).abs() < 1e-9);
        // Nothing explains: recall 0; an undecided pair is reported, not counted.
        let verdicts = BTreeMap::from([(p(0), Some(false)), (p(2), None)]);
        let s = explained_score(&case, &findings, &verdicts);
        assert_eq!((s.found, s.true_positives, s.unjudged), (0, 0, 1));
    }
}
