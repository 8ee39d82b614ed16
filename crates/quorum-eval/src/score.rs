//! Scoring exactly as the case format says: a finding matches an expected
//! issue when it is in the same file and any line of its range lies within
//! ±3 lines of the line range (or of one alternative's); findings of
//! category `testing` or severity `nitpick` are not counted.

use std::path::Path;

use serde::Serialize;

use crate::case::{Case, Expected, Location};

/// Lines of slack on each side of an expected range.
pub const WINDOW: u32 = 3;

/// What scoring needs to know about a reported finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reported {
    pub file: String,
    pub start_line: u32,
    pub line: u32,
    pub category: String,
    pub severity: String,
    pub title: String,
    /// The finding's body: what an explained-judge reads with the title.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub explanation: String,
    /// The offline rule that produced it; `None` for a model's finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl Reported {
    pub fn counted(&self) -> bool {
        self.category != "testing" && self.severity != "nitpick"
    }
}

/// An expected location resolved to its line range in the edited tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub file: String,
    pub start: u32,
    pub end: u32,
}

/// The first occurrence of `anchor` in `text`, as the 1-based line range it spans.
pub fn resolve_anchor(text: &str, anchor: &str) -> Option<(u32, u32)> {
    let at = text.find(anchor)?;
    let start = text[..at].matches('\n').count() as u32 + 1;
    let end = start + anchor.trim_end_matches('\n').matches('\n').count() as u32;
    Some((start, end))
}

fn resolve(root: &Path, loc: &Location) -> Result<Resolved, String> {
    let text = std::fs::read_to_string(root.join(&loc.file)).map_err(|e| format!("{}: {e}", loc.file))?;
    let (start, end) = resolve_anchor(&text, &loc.anchor)
        .ok_or_else(|| format!("anchor not found in {}: {:.60}", loc.file, loc.anchor))?;
    Ok(Resolved {
        file: loc.file.clone(),
        start,
        end,
    })
}

/// Every place that counts for one expected issue (itself, then alternatives).
pub fn resolve_expected(root: &Path, e: &Expected) -> Result<Vec<Resolved>, String> {
    let main = Location {
        file: e.file.clone(),
        anchor: e.anchor.clone(),
    };
    std::iter::once(&main)
        .chain(e.alternatives.iter())
        .map(|l| resolve(root, l))
        .collect()
}

/// Whether a finding's range comes within the window of a resolved range.
pub fn matches(f: &Reported, r: &Resolved) -> bool {
    f.file == r.file && f.start_line.min(f.line) <= r.end + WINDOW && f.line + WINDOW >= r.start
}

/// The score of one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseScore {
    pub expected: usize,
    pub found: usize,
    pub counted: usize,
    pub true_positives: usize,
    /// For each expected issue, whether some counted finding matched.
    pub hits: Vec<bool>,
    /// Counted findings that matched nothing.
    pub false_positives: Vec<Reported>,
}

/// Scores the findings of one review of `case`, with anchors resolved in the
/// edited tree at `head_root`.
pub fn score_case(case: &Case, head_root: &Path, findings: &[Reported]) -> Result<CaseScore, String> {
    let expected: Vec<Vec<Resolved>> = case
        .expected
        .iter()
        .map(|e| resolve_expected(head_root, e))
        .collect::<Result<_, _>>()?;
    let counted: Vec<&Reported> = findings.iter().filter(|f| f.counted()).collect();
    let hits: Vec<bool> = expected
        .iter()
        .map(|places| counted.iter().any(|f| places.iter().any(|r| matches(f, r))))
        .collect();
    let false_positives: Vec<Reported> = counted
        .iter()
        .filter(|f| !expected.iter().flatten().any(|r| matches(f, r)))
        .map(|f| (*f).clone())
        .collect();
    Ok(CaseScore {
        expected: expected.len(),
        found: hits.iter().filter(|h| **h).count(),
        counted: counted.len(),
        true_positives: counted.len() - false_positives.len(),
        hits,
        false_positives,
    })
}

/// Precision, recall and F1 over several cases (1.0 precision when nothing was counted).
pub fn totals(scores: &[&CaseScore]) -> (f64, f64, f64) {
    let sum = |f: fn(&CaseScore) -> usize| scores.iter().map(|s| f(s)).sum();
    rates(
        sum(|s| s.true_positives),
        sum(|s| s.counted),
        sum(|s| s.found),
        sum(|s| s.expected),
    )
}

/// Precision, recall and F1 from summed counts: precision 1.0 when nothing
/// was counted, recall 1.0 when nothing was expected.
pub fn rates(true_positives: usize, counted: usize, found: usize, expected: usize) -> (f64, f64, f64) {
    let precision = if counted == 0 {
        1.0
    } else {
        true_positives as f64 / counted as f64
    };
    let recall = if expected == 0 {
        1.0
    } else {
        found as f64 / expected as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    (precision, recall, f1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(file: &str, start: u32, line: u32, category: &str, severity: &str) -> Reported {
        Reported {
            file: file.into(),
            start_line: start,
            line,
            category: category.into(),
            severity: severity.into(),
            title: "t".into(),
            explanation: String::new(),
            rule: None,
        }
    }

    #[test]
    fn multi_line_anchors_span_all_their_lines() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(resolve_anchor(text, "b\nc"), Some((2, 3)));
        assert_eq!(resolve_anchor(text, "c\n"), Some((3, 3)));
        assert_eq!(resolve_anchor(text, "a"), Some((1, 1)));
        assert_eq!(resolve_anchor(text, "zz"), None);
        // First occurrence wins.
        assert_eq!(resolve_anchor("x\ny\nx\n", "x"), Some((1, 1)));
    }

    #[test]
    fn window_is_three_lines_either_side_and_clamps_at_file_start() {
        let r = Resolved {
            file: "a.py".into(),
            start: 2,
            end: 3,
        };
        assert!(
            matches(&rep("a.py", 1, 1, "bug", "major"), &r),
            "line 1 is before an anchor at line 2"
        );
        assert!(matches(&rep("a.py", 6, 6, "bug", "major"), &r));
        assert!(!matches(&rep("a.py", 7, 7, "bug", "major"), &r));
        assert!(!matches(&rep("b.py", 2, 2, "bug", "major"), &r), "wrong file");
        // A range overlapping the window counts.
        assert!(matches(
            &rep("a.py", 7, 12, "bug", "major"),
            &Resolved {
                file: "a.py".into(),
                start: 10,
                end: 10
            }
        ));
        assert!(!matches(
            &rep("a.py", 1, 6, "bug", "major"),
            &Resolved {
                file: "a.py".into(),
                start: 10,
                end: 10
            }
        ));
    }

    fn case_with(expected: Vec<Expected>) -> Case {
        Case {
            id: "c".into(),
            title: "t".into(),
            body: String::new(),
            edits: vec![],
            expected,
            path: Default::default(),
        }
    }

    #[test]
    fn alternatives_excluded_categories_and_clean_controls() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "def f(x, y):\n    pass\n\n\n\n\n\n\n\n").unwrap();
        std::fs::write(dir.path().join("b.py"), "\n\n\n\n\n\n\n\n\n\nf(1)\n").unwrap();
        let e = Expected {
            description: None,
            file: "a.py".into(),
            anchor: "def f(".into(),
            category: Some("bug".into()),
            alternatives: vec![Location {
                file: "b.py".into(),
                anchor: "f(1)".into(),
            }],
        };
        let case = case_with(vec![e]);
        // Found through the alternative (b.py:11); a testing note and a nitpick are not counted.
        let s = score_case(
            &case,
            dir.path(),
            &[
                rep("b.py", 12, 12, "bug", "major"),
                rep("a.py", 9, 9, "testing", "minor"),
                rep("a.py", 9, 9, "style", "nitpick"),
            ],
        )
        .unwrap();
        assert_eq!((s.found, s.counted, s.true_positives), (1, 1, 1));
        // A counted finding elsewhere is a false positive.
        let s = score_case(&case, dir.path(), &[rep("a.py", 9, 9, "bug", "major")]).unwrap();
        assert_eq!((s.found, s.false_positives.len()), (0, 1));
        // Clean control: every counted finding is a false positive.
        let clean = case_with(vec![]);
        let s = score_case(
            &clean,
            dir.path(),
            &[rep("a.py", 1, 1, "bug", "minor"), rep("a.py", 1, 1, "testing", "minor")],
        )
        .unwrap();
        assert_eq!((s.expected, s.counted, s.false_positives.len()), (0, 1, 1));
        let (p, r, _) = totals(&[&s]);
        assert_eq!((p, r), (0.0, 1.0));
    }

    #[test]
    fn missing_anchor_is_an_error_not_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x\n").unwrap();
        let case = case_with(vec![Expected {
            description: None,
            file: "a.py".into(),
            anchor: "nope".into(),
            category: None,
            alternatives: vec![],
        }]);
        assert!(
            score_case(&case, dir.path(), &[])
                .unwrap_err()
                .contains("anchor not found")
        );
    }
}
