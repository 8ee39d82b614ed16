//! The SCM-neutral review model: what the publisher posts, whatever the sink.
//!
//! A finding on a line the current diff shows becomes an inline comment; any
//! other finding (a broken caller in an untouched file) goes in the body with
//! a `file:line` reference. Low-severity notes (under the repository's
//! severity floor, and `testing` notes at minor or below) are, by default,
//! one grouped "Also noted" line in the body instead ([`InlinePolicy`]).
//! Every comment carries a hidden fingerprint so a re-review after a push
//! does not repeat itself (F-PUB-3).
//!
//! This file holds the model (the verdict, the comments, the review). The
//! rest is apart, each named after what it does, and re-exported here so
//! `quorum_core::review::…` paths stay as they were:
//! - `markers`: fingerprints and the hidden markers that carry them;
//! - `placement`: which finding goes inline, in the body or on the grouped
//!   line ([`build_review`], [`InlinePolicy`]);
//! - `render`: the Markdown and terminal text of comments and of the review
//!   ([`Review::render_body`], [`Review::render_markdown`],
//!   [`Review::render_terminal`]).

mod markers;
mod placement;
mod render;

use serde::{Deserialize, Serialize};

use crate::finding::{Category, Finding, Severity};
use crate::job::{AgentRole, AgentStatus};

pub use markers::{fingerprint, fingerprint_marker, parse_fingerprints, parse_rule_marker, rule_marker, strip_markers};
pub use placement::{InlinePolicy, LowSeverity, Placement, build_review};

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

/// How one agent fared on this job, shown in the body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentReport {
    pub agent: AgentRole,
    pub status: AgentStatus,
    pub duration_ms: u64,
    pub findings: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the agent spent: model calls, tool calls and tokens (zero for
    /// the offline engine), for the console's agents table.
    #[serde(default, skip_serializing_if = "AgentUsage::is_zero")]
    pub usage: AgentUsage,
}

/// One agent's spending on one job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentUsage {
    /// Model calls answered live by the model server.
    pub model_calls: u32,
    /// Model calls replayed from a response cache.
    #[serde(default)]
    pub replayed_calls: u32,
    /// Tool calls the model made (answered or failed).
    pub tool_calls: u32,
    pub prompt_tokens: u64,
    #[serde(default)]
    pub cached_prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl AgentUsage {
    pub fn is_zero(&self) -> bool {
        *self == AgentUsage::default()
    }
}

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
    /// Where the sink put it (the review's URL on GitHub or GitLab), once
    /// posted; set by the publisher, never by a sink's input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
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
}

#[cfg(test)]
mod fixtures {
    use crate::diff::{FileDiff, FileStatus, parse_file_patch};
    use crate::finding::{Category, Finding, Severity};
    use crate::job::AgentRole;

    pub(super) fn finding(file: &str, line: u32, sev: Severity) -> Finding {
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

    pub(super) fn diff() -> FileDiff {
        parse_file_patch(
            "a.py",
            None,
            FileStatus::Modified,
            "@@ -1,2 +1,3 @@\n a\n+b  =  1\n c\n",
        )
        .0
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{diff, finding};
    use super::*;

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
    fn moving_inline_to_body_keeps_the_comment() {
        let kept = [finding("a.py", 2, Severity::Major)];
        let Placement {
            inline, body_comments, ..
        } = build_review(&kept, &[diff()], &[], &InlinePolicy::default());
        let mut r = Review {
            location: None,
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
