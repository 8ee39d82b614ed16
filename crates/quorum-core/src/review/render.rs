//! Presentation: the Markdown of one comment (title, severity, who found
//! it, the explanation and a suggestion block), the body's grouped "Also
//! noted" line, and the whole review as a body, a Markdown document or text
//! for a terminal. Kept out of the model so what a review is and how it reads
//! change separately.

use std::fmt::Write as _;

use super::markers::{fingerprint_marker, strip_markers};
use super::{Note, Review};
use crate::finding::{Category, Finding, Severity};

/// How many not-reviewed files the body names.
const NOT_REVIEWED_LISTED: usize = 20;

/// The Markdown of one comment: title, severity, category, confidence, who
/// found it, the explanation and the suggestion block, if any.
pub(super) fn comment_body(f: &Finding) -> String {
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
mod render_tests {
    use super::*;
    use crate::diff::{FileStatus, parse_file_patch};
    use crate::finding::Category;
    use crate::job::AgentRole;
    use crate::review::{InlinePolicy, Placement, Verdict, build_review};

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
            location: None,
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
