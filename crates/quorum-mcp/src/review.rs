//! `review_diff`: a change reviewed by the same pipeline `quorum review`
//! runs, answered as a compact list of what was kept and what the critic
//! rejected. The pipeline itself (an embedded fleet, the offline engine,
//! the model roles when a model is configured) is behind [`Reviewer`], so
//! this crate does not depend on the services: the CLI supplies it.

use std::path::Path;

use quorum_core::{Finding, Review};
use serde::Serialize;

/// Reviews a range of a local git repository.
#[async_trait::async_trait]
pub trait Reviewer: Send + Sync {
    /// The review of `base..head` (full commit ids) of the repository at
    /// `dir`, reviewed as repository `name`.
    async fn review(&self, dir: &Path, name: &str, base: &str, head: &str) -> Result<Review, String>;
}

/// Most characters of a finding's explanation an answer carries.
const EXPLANATION_CHARS: usize = 600;

#[derive(Serialize)]
struct Kept<'a> {
    location: String,
    severity: String,
    category: String,
    title: &'a str,
    explanation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    suggestion: Option<&'a str>,
    agents: Vec<String>,
}

#[derive(Serialize)]
struct Rejected<'a> {
    location: String,
    title: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
struct Answer<'a> {
    change: &'a str,
    verdict: String,
    findings: Vec<Kept<'a>>,
    rejected_by_critic: Vec<Rejected<'a>>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notices: &'a [String],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_reviewed: Vec<String>,
    agents: Vec<String>,
}

fn location(f: &Finding) -> String {
    match f.start_line {
        Some(s) if s != f.line => format!("{}:{s}-{}", f.file, f.line),
        _ => format!("{}:{}", f.file, f.line),
    }
}

fn name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(EXPLANATION_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The answer of `review_diff` for `review` of the change named `change`.
pub fn render(change: &str, review: &Review) -> String {
    let findings = review
        .kept
        .iter()
        .map(|f| {
            let mut agents: Vec<String> = std::iter::once(name(&f.agent))
                .chain(f.agreed_by.iter().map(name))
                .collect();
            agents.dedup();
            Kept {
                location: location(f),
                severity: name(&f.severity),
                category: name(&f.category),
                title: &f.title,
                explanation: clip(&f.explanation),
                rule: f.rule.as_deref(),
                suggestion: f.suggestion.as_deref(),
                agents,
            }
        })
        .collect();
    let answer = Answer {
        change,
        verdict: name(&review.verdict),
        findings,
        rejected_by_critic: review
            .rejected
            .iter()
            .map(|(f, reason)| Rejected {
                location: location(f),
                title: &f.title,
                reason,
            })
            .collect(),
        notices: &review.notices,
        not_reviewed: review
            .not_reviewed
            .iter()
            .map(|(path, why)| format!("{path}: {why}"))
            .collect(),
        agents: review
            .agents
            .iter()
            .map(|a| {
                let mut s = format!(
                    "{} {} in {} ms, {} findings",
                    name(&a.agent),
                    name(&a.status),
                    a.duration_ms,
                    a.findings
                );
                if let Some(e) = &a.error {
                    s.push_str(&format!(" ({e})"));
                }
                s
            })
            .collect(),
    };
    serde_json::to_string_pretty(&answer).expect("the answer serialises")
}
