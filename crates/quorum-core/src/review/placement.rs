//! Placement: which kept finding becomes an inline comment (its lines are in
//! the diff), a body comment (they are not), a low-severity note on the
//! body's grouped line, or nothing (already posted, or notes turned off),
//! and the repository policy that decides it ([`InlinePolicy`],
//! `.quorum.yml`'s `review.inline_min_severity` and `review.low_severity`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::markers::{fingerprint, fingerprint_marker, rule_marker};
use super::render::comment_body;
use super::{BodyComment, InlineComment, Note, Side};
use crate::diff::FileDiff;
use crate::finding::{Category, Finding, Severity};

/// Where low-severity findings go (`.quorum.yml`: `review.low_severity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LowSeverity {
    /// One "Also noted (N): …" line in the review body, with `file:line`
    /// references.
    #[default]
    Grouped,
    /// Inline comments (or body comments outside the diff), like any finding.
    Inline,
    /// Not posted. They stay in the review's `kept` findings.
    Off,
}

impl LowSeverity {
    pub fn as_str(self) -> &'static str {
        match self {
            LowSeverity::Grouped => "grouped",
            LowSeverity::Inline => "inline",
            LowSeverity::Off => "off",
        }
    }
}

/// Which findings become comments of their own, and what happens to the
/// rest. Travels with the job (`JobPolicy::inline`) from `.quorum.yml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InlinePolicy {
    /// Findings under this severity are low-severity notes
    /// (`review.inline_min_severity`; default `minor`, so nitpicks are).
    #[serde(default = "InlinePolicy::default_min_severity")]
    pub min_severity: Severity,
    /// Where low-severity notes go (`review.low_severity`).
    #[serde(default)]
    pub low_severity: LowSeverity,
}

impl Default for InlinePolicy {
    fn default() -> Self {
        InlinePolicy {
            min_severity: Self::default_min_severity(),
            low_severity: LowSeverity::Grouped,
        }
    }
}

impl InlinePolicy {
    fn default_min_severity() -> Severity {
        Severity::Minor
    }

    /// Whether a finding is a low-severity note: under the severity floor,
    /// or a `testing` note ("behaviour changed without a test change") at
    /// minor or below, which fits nearly every PR that touches code.
    pub fn is_low(&self, f: &Finding) -> bool {
        f.severity < self.min_severity || (f.category == Category::Testing && f.severity <= Severity::Minor)
    }
}

/// Where [`build_review`] put each kept finding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    pub inline: Vec<InlineComment>,
    pub body_comments: Vec<BodyComment>,
    pub notes: Vec<Note>,
}

/// Places each kept finding inline (when its lines are in the diff) or in the
/// body, low-severity notes as `policy` says, skipping any whose fingerprint
/// is in `already_posted`.
pub fn build_review(
    kept: &[Finding],
    diffs: &[FileDiff],
    already_posted: &[String],
    policy: &InlinePolicy,
) -> Placement {
    let by_path: BTreeMap<&str, &FileDiff> = diffs.iter().map(|d| (d.path.as_str(), d)).collect();
    let mut out = Placement::default();
    for f in kept {
        let low = policy.is_low(f);
        if low && policy.low_severity == LowSeverity::Off {
            continue;
        }
        let diff = by_path.get(f.file.as_str());
        let anchor = diff.and_then(|d| d.new_line_text(f.line)).unwrap_or("");
        let fp = fingerprint(f, anchor);
        if already_posted.contains(&fp) {
            continue;
        }
        if low && policy.low_severity == LowSeverity::Grouped {
            out.notes.push(Note {
                path: f.file.clone(),
                line: f.line,
                title: f.title.clone(),
                category: f.category,
                severity: f.severity,
                fingerprint: fp,
            });
            continue;
        }
        let mut text = format!("{}\n{}", comment_body(f), fingerprint_marker(&fp));
        if let Some(rule) = &f.rule {
            text.push_str(&rule_marker(rule));
        }
        let (start, end) = f.line_range();
        let in_diff = diff.is_some_and(|d| (start..=end).all(|l| d.contains_new_line(l)));
        if in_diff {
            out.inline.push(InlineComment {
                path: f.file.clone(),
                line: end,
                start_line: (start != end).then_some(start),
                side: Side::Right,
                body: text,
                fingerprint: fp,
            });
        } else {
            out.body_comments.push(BodyComment {
                path: f.file.clone(),
                line: f.line,
                body: text,
                fingerprint: fp,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{diff, finding};
    use super::*;
    use crate::review::parse_fingerprints;

    #[test]
    fn in_diff_goes_inline_and_outside_goes_to_body() {
        let kept = [finding("a.py", 2, Severity::Major), finding("b.py", 7, Severity::Major)];
        let Placement {
            inline,
            body_comments: body,
            ..
        } = build_review(&kept, &[diff()], &[], &InlinePolicy::default());
        assert_eq!(inline.len(), 1);
        assert_eq!(inline[0].line, 2);
        assert!(inline[0].body.contains("```suggestion\nfixed()\n```"));
        assert_eq!(body.len(), 1);
        assert_eq!(body[0].path, "b.py");
    }

    #[test]
    fn already_posted_comments_are_not_repeated() {
        let kept = [finding("a.py", 2, Severity::Major)];
        let inline = build_review(&kept, &[diff()], &[], &InlinePolicy::default()).inline;
        let posted = parse_fingerprints(&inline[0].body);
        assert_eq!(posted, vec![inline[0].fingerprint.clone()]);
        let again = build_review(&kept, &[diff()], &posted, &InlinePolicy::default());
        let (again, body) = (again.inline, again.body_comments);
        assert!(again.is_empty() && body.is_empty());
    }
}

#[cfg(test)]
mod placement_tests {
    use super::*;
    use crate::diff::{FileStatus, parse_file_patch};
    use crate::job::AgentRole;
    use crate::review::{Review, Verdict, parse_fingerprints};

    fn f(line: u32, category: Category, severity: Severity, title: &str) -> Finding {
        Finding {
            file: "a.py".into(),
            line,
            start_line: None,
            category,
            severity,
            confidence: 0.8,
            title: title.into(),
            explanation: "why".into(),
            suggestion: None,
            rule: None,
            agent: AgentRole::Tests,
            evidence: vec![],
            agreed_by: vec![],
        }
    }

    fn diff() -> FileDiff {
        parse_file_patch(
            "a.py",
            None,
            FileStatus::Modified,
            "@@ -1,2 +1,6 @@\n a\n+b\n+c\n+d\n+e\n f\n",
        )
        .0
    }

    /// A bug, two untested-change notes, a nitpick, and a minor bug.
    fn kept() -> Vec<Finding> {
        vec![
            f(2, Category::Bug, Severity::Major, "Off by one"),
            f(
                3,
                Category::Testing,
                Severity::Minor,
                "Behaviour changed without a test change",
            ),
            f(
                5,
                Category::Testing,
                Severity::Minor,
                "Behaviour changed without a test change",
            ),
            f(4, Category::Style, Severity::Nitpick, "Name could be clearer"),
            f(4, Category::Bug, Severity::Minor, "Edge case"),
        ]
    }

    fn review(p: Placement) -> Review {
        Review {
            location: None,
            job_id: "j".into(),
            verdict: Verdict::RequestChanges,
            summary: "s".into(),
            inline: p.inline,
            body_comments: p.body_comments,
            agents: vec![],
            rejected: vec![],
            kept: vec![],
            not_reviewed: vec![],
            notices: vec![],
            notes: p.notes,
        }
    }

    fn inline_titles(p: &Placement) -> Vec<String> {
        p.inline
            .iter()
            .map(|c| c.body.split("**").nth(1).unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn by_default_testing_notes_and_nitpicks_are_one_line_in_the_body() {
        let p = build_review(&kept(), &[diff()], &[], &InlinePolicy::default());
        assert_eq!(inline_titles(&p), vec!["Off by one", "Edge case"]);
        assert_eq!(p.notes.iter().map(|n| n.line).collect::<Vec<_>>(), vec![3, 5, 4]);
        let r = review(p);
        assert!(r.has_comments());
        assert_eq!(r.fingerprints().len(), 5);
        let body = r.render_body();
        let line = body
            .lines()
            .find(|l| l.starts_with("**Also noted (3):**"))
            .unwrap_or_else(|| panic!("no grouped line in:\n{body}"));
        assert!(
            line.contains("Behaviour changed without a test change (testing, minor): `a.py:3`, `a.py:5`; Name could be clearer (style, nitpick): `a.py:4`"),
            "{line}"
        );
        assert_eq!(
            line.matches("<!-- quorum:fp:").count(),
            3,
            "a re-review does not repeat them"
        );
        let fps = parse_fingerprints(&body);
        let again = build_review(&kept(), &[diff()], &fps, &InlinePolicy::default());
        assert!(again.notes.is_empty());
        let term = r.render_terminal();
        assert!(
            term.contains("`a.py:5`; Name could be clearer (style, nitpick): `a.py:4`\n"),
            "{term}"
        );
        assert!(!term.contains("<!--"));
    }

    #[test]
    fn inline_posts_every_finding_as_before() {
        let policy = InlinePolicy {
            low_severity: LowSeverity::Inline,
            ..InlinePolicy::default()
        };
        let p = build_review(&kept(), &[diff()], &[], &policy);
        assert_eq!(p.inline.len(), 5);
        assert!(p.notes.is_empty());
        assert!(!review(p).render_body().contains("Also noted"));
    }

    #[test]
    fn off_drops_the_notes() {
        let policy = InlinePolicy {
            low_severity: LowSeverity::Off,
            ..InlinePolicy::default()
        };
        let p = build_review(&kept(), &[diff()], &[], &policy);
        assert_eq!(inline_titles(&p), vec!["Off by one", "Edge case"]);
        assert!(p.notes.is_empty() && p.body_comments.is_empty());
        let r = review(p);
        assert!(!r.render_body().contains("Also noted"));
        assert_eq!(r.fingerprints().len(), 2);
    }

    #[test]
    fn the_severity_floor_moves_everything_under_it() {
        let major = InlinePolicy {
            min_severity: Severity::Major,
            ..InlinePolicy::default()
        };
        let p = build_review(&kept(), &[diff()], &[], &major);
        assert_eq!(inline_titles(&p), vec!["Off by one"]);
        assert_eq!(p.notes.len(), 4);
        assert!(review(p).render_body().contains("**Also noted (4):**"));
        // A floor at nitpick keeps nitpicks inline; testing notes stay notes.
        let nitpick = InlinePolicy {
            min_severity: Severity::Nitpick,
            ..InlinePolicy::default()
        };
        let p = build_review(&kept(), &[diff()], &[], &nitpick);
        assert_eq!(
            inline_titles(&p),
            vec!["Off by one", "Name could be clearer", "Edge case"]
        );
        assert_eq!(p.notes.len(), 2);
        // A testing finding that matters is not a note.
        let serious = [f(2, Category::Testing, Severity::Major, "Test deleted")];
        let p = build_review(&serious, &[diff()], &[], &InlinePolicy::default());
        assert_eq!(p.inline.len(), 1);
    }

    #[test]
    fn a_note_outside_the_diff_is_grouped_too() {
        let mut out = f(
            40,
            Category::Testing,
            Severity::Minor,
            "Behaviour changed without a test change",
        );
        out.file = "b.py".into();
        let p = build_review(&[out], &[diff()], &[], &InlinePolicy::default());
        assert!(p.body_comments.is_empty());
        assert_eq!(p.notes[0].path, "b.py");
    }
}
