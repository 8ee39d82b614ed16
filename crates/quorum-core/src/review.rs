//! The SCM-neutral review model: what the publisher posts, whatever the sink.
//!
//! A finding on a line the current diff shows becomes an inline comment; any
//! other finding (a broken caller in an untouched file) goes in the body with
//! a `file:line` reference. Low-severity notes (under the repository's
//! severity floor, and `testing` notes at minor or below) are, by default,
//! one grouped "Also noted" line in the body instead ([`InlinePolicy`]).
//! Every comment carries a hidden fingerprint so a re-review after a push
//! does not repeat itself (F-PUB-3).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::diff::FileDiff;
use crate::finding::{Category, Finding, Severity};
use crate::job::{AgentRole, AgentStatus};

/// The review's overall recommendation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Approve,
    Comment,
    RequestChanges,
}

impl Verdict {
    /// The verdict implied by the severities of the kept findings: any
    /// critical or major finding requests changes, any other finding comments.
    pub fn from_findings(kept: &[Finding]) -> Verdict {
        match kept.iter().map(|f| f.severity).max() {
            Some(Severity::Critical | Severity::Major) => Verdict::RequestChanges,
            Some(_) => Verdict::Comment,
            None => Verdict::Approve,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "approve",
            Verdict::Comment => "comment",
            Verdict::RequestChanges => "request_changes",
        }
    }
}

/// Which side of the diff a comment is on. Quorum comments on the new side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Side {
    Right,
    Left,
}

/// A comment anchored to diff lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InlineComment {
    pub path: String,
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    pub side: Side,
    pub body: String,
    pub fingerprint: String,
}

/// A finding mentioned in the review body (outside the diff, or moved there
/// because the SCM refused it inline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyComment {
    pub path: String,
    pub line: u32,
    pub body: String,
    pub fingerprint: String,
}

/// A low-severity finding listed on the body's one "Also noted" line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub path: String,
    pub line: u32,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    pub fingerprint: String,
}

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

/// How one agent fared on this job, shown in the body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentReport {
    pub agent: AgentRole,
    pub status: AgentStatus,
    pub duration_ms: u64,
    pub findings: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How many not-reviewed files the body names.
const NOT_REVIEWED_LISTED: usize = 20;

/// One review, ready for any sink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub job_id: String,
    pub verdict: Verdict,
    pub summary: String,
    pub inline: Vec<InlineComment>,
    pub body_comments: Vec<BodyComment>,
    pub agents: Vec<AgentReport>,
    /// Findings the critic rejected, with its reason (shown, never posted inline).
    pub rejected: Vec<(Finding, String)>,
    /// The kept findings behind the comments (for the console and the eval).
    #[serde(default)]
    pub kept: Vec<Finding>,
    /// Changed files nobody reviewed, with why (over the size budget).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_reviewed: Vec<(String, String)>,
    /// Problems the team should fix (an invalid `.quorum.yml`), shown first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// Low-severity notes, listed on one line of the body.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
}

/// The fingerprint of a finding: stable across pushes because it hashes the
/// file, the whitespace-normalised text of the anchored line and the rule (or
/// title), never the line number.
pub fn fingerprint(finding: &Finding, anchor_text: &str) -> String {
    let anchor: String = anchor_text.split_whitespace().collect::<Vec<_>>().join(" ");
    let rule = finding.rule.clone().unwrap_or_else(|| finding.title.to_lowercase());
    let mut h = Sha256::new();
    h.update(finding.file.as_bytes());
    h.update([0]);
    h.update(anchor.as_bytes());
    h.update([0]);
    h.update(rule.as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The hidden marker a fingerprint is carried in.
pub fn fingerprint_marker(fp: &str) -> String {
    format!("<!-- quorum:fp:{fp} -->")
}

/// The hidden marker naming the rule behind a comment, so review memory
/// can tell which kind of finding the team answered (after the fingerprint
/// marker, on the same line: older comments without it still parse).
pub fn rule_marker(rule: &str) -> String {
    format!("<!-- quorum:rule:{rule} -->")
}

/// The rule a comment's marker names, if it has one.
pub fn parse_rule_marker(text: &str) -> Option<String> {
    let start = text.find("<!-- quorum:rule:")? + "<!-- quorum:rule:".len();
    let end = text[start..].find(" -->")?;
    let rule = &text[start..start + end];
    let valid = !rule.is_empty()
        && rule
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/'));
    valid.then(|| rule.to_string())
}

/// Removes every Quorum marker (and a line it leaves empty).
pub fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let mut l = line.to_string();
        while let Some(start) = l.find("<!-- quorum:") {
            match l[start..].find(" -->") {
                Some(end) => l.replace_range(start..start + end + 4, ""),
                None => break,
            }
        }
        if l.trim().is_empty() && !line.trim().is_empty() {
            continue;
        }
        out.push_str(&l);
    }
    out
}

/// Extracts every fingerprint marker from a comment body already on the PR.
pub fn parse_fingerprints(text: &str) -> Vec<String> {
    text.match_indices("<!-- quorum:fp:")
        .filter_map(|(i, m)| {
            let rest = &text[i + m.len()..];
            let end = rest.find(" -->")?;
            let fp = &rest[..end];
            fp.chars().all(|c| c.is_ascii_hexdigit()).then(|| fp.to_string())
        })
        .collect()
}

fn comment_body(f: &Finding) -> String {
    let mut s = format!(
        "**{}** ({}, {}, confidence {:.2}) — {}\n\n{}",
        f.title,
        f.severity,
        f.category,
        f.confidence,
        agents_line(f),
        f.explanation
    );
    if let Some(sugg) = &f.suggestion {
        let _ = write!(s, "\n\n```suggestion\n{sugg}\n```");
    }
    s
}

fn agents_line(f: &Finding) -> String {
    if f.agreed_by.len() > 1 {
        let names: Vec<&str> = f.agreed_by.iter().map(|a| a.as_str()).collect();
        format!("agreed by {}", names.join(", "))
    } else {
        format!("from {}", f.agent)
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

/// The body's one "Also noted" line: notes with the same title, category
/// and severity share one mention, then their `file:line` references; the
/// fingerprint markers at the end.
fn notes_line(notes: &[Note]) -> String {
    let mut groups: Vec<(String, Category, Severity, Vec<String>)> = Vec::new();
    for n in notes {
        let title = n.title.split_whitespace().collect::<Vec<_>>().join(" ");
        let at = format!("`{}:{}`", n.path, n.line);
        match groups
            .iter_mut()
            .find(|g| g.0 == title && g.1 == n.category && g.2 == n.severity)
        {
            Some(g) => g.3.push(at),
            None => groups.push((title, n.category, n.severity, vec![at])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(title, cat, sev, at)| format!("{title} ({cat}, {sev}): {}", at.join(", ")))
        .collect();
    let markers: String = notes.iter().map(|n| fingerprint_marker(&n.fingerprint)).collect();
    format!("**Also noted ({}):** {}{markers}", notes.len(), parts.join("; "))
}

impl Review {
    /// Moves an inline comment the sink could not place into the body, so it
    /// is never dropped (the 422 fallback of F-PUB-1).
    pub fn move_inline_to_body(&mut self, index: usize) {
        if index < self.inline.len() {
            let c = self.inline.remove(index);
            self.body_comments.push(BodyComment {
                path: c.path,
                line: c.line,
                body: c.body,
                fingerprint: c.fingerprint,
            });
        }
    }

    /// Whether the review has anything to post besides its summary.
    pub fn has_comments(&self) -> bool {
        !self.inline.is_empty() || !self.body_comments.is_empty() || !self.notes.is_empty()
    }

    /// The fingerprints of everything this review posts.
    pub fn fingerprints(&self) -> Vec<String> {
        self.inline
            .iter()
            .map(|c| c.fingerprint.clone())
            .chain(self.body_comments.iter().map(|c| c.fingerprint.clone()))
            .chain(self.notes.iter().map(|n| n.fingerprint.clone()))
            .collect()
    }

    /// The review body: summary, verdict, out-of-diff findings, low-severity
    /// notes, agent status.
    pub fn render_body(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## Quorum review — {}\n", self.verdict.as_str());
        for n in &self.notices {
            let _ = writeln!(s, "> **Warning:** {n}\n");
        }
        let _ = writeln!(s, "{}\n", self.summary);
        if !self.body_comments.is_empty() {
            let _ = writeln!(s, "### Outside the diff\n");
            for c in &self.body_comments {
                let _ = writeln!(s, "- `{}:{}` {}\n", c.path, c.line, c.body.replace('\n', "\n  "));
            }
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "{}\n", notes_line(&self.notes));
        }
        if !self.rejected.is_empty() {
            let _ = writeln!(
                s,
                "<details><summary>Rejected by critic ({})</summary>\n",
                self.rejected.len()
            );
            for (f, why) in &self.rejected {
                let _ = writeln!(s, "- `{}:{}` {} — {}", f.file, f.line, f.title, why);
            }
            let _ = writeln!(s, "\n</details>\n");
        }
        if !self.not_reviewed.is_empty() {
            let _ = writeln!(s, "### Not reviewed ({} file(s))\n", self.not_reviewed.len());
            // Listed in full up to a point: a review body has a size limit
            // (65,536 characters on GitHub) and the list is not the review.
            for (path, why) in self.not_reviewed.iter().take(NOT_REVIEWED_LISTED) {
                let _ = writeln!(s, "- `{path}`: {why}");
            }
            let more = self.not_reviewed.len().saturating_sub(NOT_REVIEWED_LISTED);
            if more > 0 {
                let _ = writeln!(s, "- … and {more} more");
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s, "| agent | status | findings | time |\n|---|---|---|---|");
        for a in &self.agents {
            let status = match &a.error {
                Some(e) => format!("{} ({e})", a.status.as_str()),
                None => a.status.as_str().to_string(),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} ms |",
                a.agent, status, a.findings, a.duration_ms
            );
        }
        s
    }

    /// The review for a person at a terminal: the Markdown without the
    /// hidden fingerprint markers, which only the SCM needs.
    pub fn render_terminal(&self) -> String {
        strip_markers(&self.render_markdown())
    }

    /// The whole review as one Markdown document (the local sink's output).
    pub fn render_markdown(&self) -> String {
        let mut s = self.render_body();
        if !self.inline.is_empty() {
            let _ = writeln!(s, "\n### Inline comments\n");
            for c in &self.inline {
                let loc = match c.start_line {
                    Some(st) => format!("{}:{}-{}", c.path, st, c.line),
                    None => format!("{}:{}", c.path, c.line),
                };
                let _ = writeln!(s, "#### `{loc}`\n\n{}\n", c.body);
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{FileStatus, parse_file_patch};
    use crate::finding::Category;

    fn finding(file: &str, line: u32, sev: Severity) -> Finding {
        Finding {
            file: file.into(),
            line,
            start_line: None,
            category: Category::Bug,
            severity: sev,
            confidence: 0.9,
            title: "Broken thing".into(),
            explanation: "why".into(),
            suggestion: Some("fixed()".into()),
            rule: Some("rule-x".into()),
            agent: AgentRole::Static,
            evidence: vec![],
            agreed_by: vec![],
        }
    }

    fn diff() -> FileDiff {
        parse_file_patch(
            "a.py",
            None,
            FileStatus::Modified,
            "@@ -1,2 +1,3 @@\n a\n+b  =  1\n c\n",
        )
        .0
    }

    #[test]
    fn verdict_follows_max_severity() {
        assert_eq!(Verdict::from_findings(&[]), Verdict::Approve);
        assert_eq!(
            Verdict::from_findings(&[finding("a", 1, Severity::Minor)]),
            Verdict::Comment
        );
        assert_eq!(
            Verdict::from_findings(&[finding("a", 1, Severity::Minor), finding("a", 1, Severity::Major)]),
            Verdict::RequestChanges
        );
    }

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
    fn fingerprint_is_stable_across_line_moves_and_whitespace() {
        let a = fingerprint(&finding("a.py", 2, Severity::Major), "b  =  1");
        let b = fingerprint(&finding("a.py", 9, Severity::Major), " b = 1 ");
        assert_eq!(a, b);
        let c = fingerprint(&finding("a.py", 2, Severity::Major), "b = 2");
        assert_ne!(a, c);
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

    #[test]
    fn a_rule_finding_carries_its_rule_in_a_marker_that_strips_away() {
        let mut f = finding("a.py", 2, Severity::Major);
        f.rule = Some("sql-string-building".into());
        let inline = build_review(&[f], &[diff()], &[], &InlinePolicy::default()).inline;
        let body = &inline[0].body;
        assert_eq!(parse_rule_marker(body).as_deref(), Some("sql-string-building"));
        assert_eq!(parse_fingerprints(body), vec![inline[0].fingerprint.clone()]);
        let shown = strip_markers(body);
        assert!(!shown.contains("<!--"), "{shown}");
        assert_eq!(parse_rule_marker("<!-- quorum:rule:a b -->"), None);
        assert_eq!(parse_rule_marker("no marker"), None);
    }

    #[test]
    fn moving_inline_to_body_keeps_the_comment() {
        let kept = [finding("a.py", 2, Severity::Major)];
        let Placement {
            inline, body_comments, ..
        } = build_review(&kept, &[diff()], &[], &InlinePolicy::default());
        let mut r = Review {
            job_id: "j".into(),
            verdict: Verdict::RequestChanges,
            summary: "s".into(),
            inline,
            body_comments,
            agents: vec![],
            rejected: vec![],
            kept: vec![],
            not_reviewed: vec![],
            notices: vec![],
            notes: vec![],
        };
        r.move_inline_to_body(0);
        assert!(r.inline.is_empty());
        assert!(r.render_body().contains("`a.py:2`"));
    }
}

#[cfg(test)]
mod placement_tests {
    use super::*;
    use crate::diff::{FileStatus, parse_file_patch};

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

#[cfg(test)]
mod render_tests {
    use super::*;
    use crate::diff::{FileStatus, parse_file_patch};
    use crate::finding::Category;

    fn f(file: &str, line: u32, title: &str, agents: &[AgentRole]) -> Finding {
        Finding {
            file: file.into(),
            line,
            start_line: None,
            category: Category::Bug,
            severity: Severity::Major,
            confidence: 0.94,
            title: title.into(),
            explanation: "Because.".into(),
            suggestion: None,
            rule: None,
            agent: agents[0],
            evidence: vec![],
            agreed_by: if agents.len() > 1 { agents.to_vec() } else { vec![] },
        }
    }

    /// Two inline comments and one finding outside the diff (a caller in an
    /// untouched file) render where a reader expects them.
    #[test]
    fn two_inline_and_one_outside_the_diff() {
        let diff = parse_file_patch(
            "shop/pricing.py",
            None,
            FileStatus::Modified,
            "@@ -10,3 +10,4 @@\n a\n+b\n+c\n d\n",
        )
        .0;
        let kept = [
            f(
                "shop/pricing.py",
                11,
                "Tax parameter added",
                &[AgentRole::Reviewer, AgentRole::Security],
            ),
            f("shop/pricing.py", 12, "Rounding changed", &[AgentRole::Static]),
            f("shop/checkout.py", 69, "Caller not updated", &[AgentRole::Reviewer]),
        ];
        let Placement {
            inline, body_comments, ..
        } = build_review(&kept, &[diff], &[], &InlinePolicy::default());
        let review = Review {
            job_id: "j".into(),
            verdict: Verdict::from_findings(&kept),
            summary: "3 finding(s) kept.".into(),
            inline,
            body_comments,
            agents: vec![],
            rejected: vec![(
                f("shop/pricing.py", 90, "Speculative", &[AgentRole::Tests]),
                "not in the diff".into(),
            )],
            kept: kept.to_vec(),
            not_reviewed: vec![(
                "package-lock.json".into(),
                "patch of 900 KiB is over the per-file limit of 128 KiB".into(),
            )],
            notices: vec![".quorum.yml is invalid, so the server's defaults were used: review.mode".into()],
            notes: vec![],
        };
        let md = review.render_markdown();
        assert!(md.contains("<!-- quorum:fp:"), "the SCM gets the markers");
        let term = review.render_terminal();
        assert!(!term.contains("<!--"), "the terminal does not: {term}");
        assert_eq!(term.matches("#### `shop/pricing.py").count(), 2);
        let pos = |s: &str| md.find(s).unwrap_or_else(|| panic!("`{s}` missing from:\n{md}"));
        assert!(pos("> **Warning:** .quorum.yml is invalid") < pos("3 finding(s) kept."));
        assert!(pos("## Quorum review — request_changes") < pos("### Outside the diff"));
        assert!(pos("- `shop/checkout.py:69` **Caller not updated**") < pos("### Inline comments"));
        assert!(md.contains("Rejected by critic (1)") && md.contains("Speculative — not in the diff"));
        assert!(
            pos("### Not reviewed (1 file(s))") < pos("| agent |")
                && md.contains("- `package-lock.json`: patch of 900 KiB is over the per-file limit"),
            "{md}"
        );
        assert!(md.contains("#### `shop/pricing.py:11`") && md.contains("agreed by reviewer, security"));
        assert!(md.contains("#### `shop/pricing.py:12`") && md.contains("from static"));
        assert_eq!(review.inline.len(), 2);
        assert_eq!(
            md.matches("<!-- quorum:fp:").count(),
            3,
            "every comment is fingerprinted"
        );
    }
}
