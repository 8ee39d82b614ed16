//! The SCM-neutral review model: what the publisher posts, whatever the sink.
//!
//! A finding on a line the current diff shows becomes an inline comment; any
//! other finding (a broken caller in an untouched file) goes in the body with
//! a `file:line` reference. Every comment carries a hidden fingerprint so a
//! re-review after a push does not repeat itself (F-PUB-3).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::diff::FileDiff;
use crate::finding::{Finding, Severity};
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

/// Removes every fingerprint marker (and a line it leaves empty).
pub fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let mut l = line.to_string();
        while let Some(start) = l.find("<!-- quorum:fp:") {
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

/// Places each kept finding inline (when its lines are in the diff) or in the
/// body, skipping any whose fingerprint is in `already_posted`.
pub fn build_review(
    kept: &[Finding],
    diffs: &[FileDiff],
    already_posted: &[String],
) -> (Vec<InlineComment>, Vec<BodyComment>) {
    let by_path: BTreeMap<&str, &FileDiff> = diffs.iter().map(|d| (d.path.as_str(), d)).collect();
    let mut inline = Vec::new();
    let mut body = Vec::new();
    for f in kept {
        let diff = by_path.get(f.file.as_str());
        let anchor = diff.and_then(|d| d.new_line_text(f.line)).unwrap_or("");
        let fp = fingerprint(f, anchor);
        if already_posted.contains(&fp) {
            continue;
        }
        let text = format!("{}\n{}", comment_body(f), fingerprint_marker(&fp));
        let (start, end) = f.line_range();
        let in_diff = diff.is_some_and(|d| (start..=end).all(|l| d.contains_new_line(l)));
        if in_diff {
            inline.push(InlineComment {
                path: f.file.clone(),
                line: end,
                start_line: (start != end).then_some(start),
                side: Side::Right,
                body: text,
                fingerprint: fp,
            });
        } else {
            body.push(BodyComment {
                path: f.file.clone(),
                line: f.line,
                body: text,
                fingerprint: fp,
            });
        }
    }
    (inline, body)
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

    /// The review body: summary, verdict, out-of-diff findings, agent status.
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
        let (inline, body) = build_review(&kept, &[diff()], &[]);
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
        let (inline, _) = build_review(&kept, &[diff()], &[]);
        let posted = parse_fingerprints(&inline[0].body);
        assert_eq!(posted, vec![inline[0].fingerprint.clone()]);
        let (again, body) = build_review(&kept, &[diff()], &posted);
        assert!(again.is_empty() && body.is_empty());
    }

    #[test]
    fn moving_inline_to_body_keeps_the_comment() {
        let kept = [finding("a.py", 2, Severity::Major)];
        let (inline, body_comments) = build_review(&kept, &[diff()], &[]);
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
        };
        r.move_inline_to_body(0);
        assert!(r.inline.is_empty());
        assert!(r.render_body().contains("`a.py:2`"));
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
        let (inline, body_comments) = build_review(&kept, &[diff], &[]);
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
