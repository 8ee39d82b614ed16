//! The memory eval's view of a model's own findings (`make eval-memory-llm`).
//!
//! The case format names an offline rule (dismissed) or a line (convention),
//! not words a model would use, so a model finding is located, not judged:
//! it is *at the target* when it is on the expected path within [`NEAR`]
//! lines of the expected line (convention) or of a line where the dismissed
//! rule fired without memory (dismissed). Both what the agents proposed and
//! what the critic kept are scored — a small model's critic may drop every
//! finding, and then only the proposals show whether memory reached the
//! model — and titles and reasons are kept so a reader can judge each one.

use quorum_core::{Finding, Review};
use serde::Serialize;

use super::{CaseKind, MemoryCase, MemoryCaseResult};

/// How far from the target line a model finding still counts as at it.
const NEAR: u32 = 2;

/// A case's model findings without and with memory.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelView {
    /// Kept by the critic (posted).
    pub without: Vec<String>,
    pub with: Vec<String>,
    /// Rejected, with the reason: the critic's, or `memory M-…: …` where
    /// review memory suppressed it.
    pub rejected_without: Vec<String>,
    pub rejected_with: Vec<String>,
    /// Kept findings at the target.
    pub at_target_without: usize,
    pub at_target_with: usize,
    /// Proposed findings (kept or rejected) at the target.
    pub proposed_at_target_without: usize,
    pub proposed_at_target_with: usize,
    /// Proposed findings with memory that memory suppressed.
    pub suppressed_by_memory_with: usize,
    /// Proposed findings with memory whose text cites a past thread ("as
    /// @alice asked in #12"): memory reaching the model's words.
    pub citing_with: Vec<String>,
}

/// The model's findings summed per case kind (see [`ModelView`]); the
/// `*_at_target_*` figures count cases, the rest count findings.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelTotals {
    pub dismissed_at_target_without: usize,
    pub dismissed_at_target_with: usize,
    pub dismissed_proposed_at_target_without: usize,
    pub dismissed_proposed_at_target_with: usize,
    pub conventions_at_target_without: usize,
    pub conventions_at_target_with: usize,
    pub conventions_proposed_at_target_without: usize,
    pub conventions_proposed_at_target_with: usize,
    /// Model findings kept in the clean controls, and how many of those
    /// with memory cite a past thread (each a candidate false positive).
    pub clean_findings_without: usize,
    pub clean_findings_with: usize,
    pub clean_citing_with: usize,
    pub citing_with: usize,
    pub suppressed_by_memory_with: usize,
    pub findings_without: usize,
    pub findings_with: usize,
    pub proposed_without: usize,
    pub proposed_with: usize,
}

fn is_model(f: &Finding) -> bool {
    f.rule.is_none()
}

fn kept(r: &Review) -> Vec<&Finding> {
    r.kept.iter().filter(|f| is_model(f)).collect()
}

fn rejected(r: &Review) -> Vec<(&Finding, &str)> {
    r.rejected
        .iter()
        .filter(|(f, _)| is_model(f))
        .map(|(f, why)| (f, why.as_str()))
        .collect()
}

fn proposed(r: &Review) -> Vec<&Finding> {
    kept(r)
        .into_iter()
        .chain(rejected(r).into_iter().map(|(f, _)| f))
        .collect()
}

fn key(f: &Finding) -> String {
    format!("{}:{} {}", f.file, f.line, f.title)
}

/// Whether an explanation cites a past review thread the way the prompt
/// asks ("as @login asked in #PR"), loosely: a mention and a PR number.
pub(super) fn cites_past_thread(f: &Finding) -> bool {
    let text = format!("{} {}", f.title, f.explanation);
    let mention = text
        .split('@')
        .skip(1)
        .any(|rest| rest.starts_with(|c: char| c.is_ascii_alphanumeric()));
    let pr = text
        .split('#')
        .skip(1)
        .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    mention && pr
}

/// The lines a model finding must be near to be at the case's target.
fn target_lines(case: &MemoryCase, without: &Review) -> Vec<u32> {
    let Some(e) = &case.expect else { return vec![] };
    match case.kind {
        CaseKind::Convention => e.line.into_iter().collect(),
        CaseKind::Dismissed => without
            .kept
            .iter()
            .filter(|f| f.file == e.path && f.rule.is_some() && f.rule == e.rule)
            .map(|f| f.line)
            .collect(),
        CaseKind::Clean => vec![],
    }
}

pub(super) fn model_view(case: &MemoryCase, without: &Review, with: &Review) -> ModelView {
    let lines = target_lines(case, without);
    let path = case.expect.as_ref().map(|e| e.path.as_str());
    let at_target = |fs: Vec<&Finding>| {
        fs.iter()
            .filter(|f| Some(f.file.as_str()) == path && lines.iter().any(|l| f.line.abs_diff(*l) <= NEAR))
            .count()
    };
    let rejected_keys = |r: &Review| -> Vec<String> {
        rejected(r)
            .into_iter()
            .map(|(f, why)| format!("{} — {why}", key(f)))
            .collect()
    };
    ModelView {
        without: kept(without).into_iter().map(key).collect(),
        with: kept(with).into_iter().map(key).collect(),
        rejected_without: rejected_keys(without),
        rejected_with: rejected_keys(with),
        at_target_without: at_target(kept(without)),
        at_target_with: at_target(kept(with)),
        proposed_at_target_without: at_target(proposed(without)),
        proposed_at_target_with: at_target(proposed(with)),
        suppressed_by_memory_with: rejected(with)
            .iter()
            .filter(|(_, why)| why.starts_with("memory "))
            .count(),
        citing_with: proposed(with)
            .into_iter()
            .filter(|f| cites_past_thread(f))
            .map(key)
            .collect(),
    }
}

pub(super) fn model_totals(cases: &[MemoryCaseResult]) -> ModelTotals {
    let mut t = ModelTotals::default();
    for c in cases {
        let Some(m) = &c.model else { continue };
        let hit = |n: usize| usize::from(n > 0);
        match c.kind {
            CaseKind::Dismissed => {
                t.dismissed_at_target_without += hit(m.at_target_without);
                t.dismissed_at_target_with += hit(m.at_target_with);
                t.dismissed_proposed_at_target_without += hit(m.proposed_at_target_without);
                t.dismissed_proposed_at_target_with += hit(m.proposed_at_target_with);
            }
            CaseKind::Convention => {
                t.conventions_at_target_without += hit(m.at_target_without);
                t.conventions_at_target_with += hit(m.at_target_with);
                t.conventions_proposed_at_target_without += hit(m.proposed_at_target_without);
                t.conventions_proposed_at_target_with += hit(m.proposed_at_target_with);
            }
            CaseKind::Clean => {
                t.clean_findings_without += m.without.len();
                t.clean_findings_with += m.with.len();
                t.clean_citing_with += m.citing_with.len();
            }
        }
        t.citing_with += m.citing_with.len();
        t.suppressed_by_memory_with += m.suppressed_by_memory_with;
        t.findings_without += m.without.len();
        t.findings_with += m.with.len();
        t.proposed_without += m.without.len() + m.rejected_without.len();
        t.proposed_with += m.with.len() + m.rejected_with.len();
    }
    t
}

impl ModelTotals {
    /// The summary's model lines; `dismissed` and `conventions` are the
    /// case counts of those kinds.
    pub fn summary(&self, dismissed: usize, conventions: usize) -> String {
        format!(
            "model findings proposed: {} with memory, {} without; kept by the critic: {} with, {} without; \
             suppressed by memory: {}\n\
             model findings at a dismissed finding: proposed in {}/{dismissed} cases with memory ({} without), \
             kept in {} ({} without)\n\
             model findings at a convention's line: proposed in {}/{conventions} cases with memory ({} without), \
             kept in {} ({} without)\n\
             model findings kept in clean controls: {} with memory ({} citing a past thread), {} without\n\
             model findings citing a past thread: {} of {} proposed with memory",
            self.proposed_with,
            self.proposed_without,
            self.findings_with,
            self.findings_without,
            self.suppressed_by_memory_with,
            self.dismissed_proposed_at_target_with,
            self.dismissed_proposed_at_target_without,
            self.dismissed_at_target_with,
            self.dismissed_at_target_without,
            self.conventions_proposed_at_target_with,
            self.conventions_proposed_at_target_without,
            self.conventions_at_target_with,
            self.conventions_at_target_without,
            self.clean_findings_with,
            self.clean_citing_with,
            self.clean_findings_without,
            self.citing_with,
            self.proposed_with,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quorum_core::{AgentRole, Category, Severity};

    fn finding(file: &str, line: u32, rule: Option<&str>, explanation: &str) -> Finding {
        Finding {
            file: file.into(),
            line,
            start_line: None,
            category: Category::Bug,
            severity: Severity::Major,
            confidence: 0.8,
            title: "t".into(),
            explanation: explanation.into(),
            suggestion: None,
            rule: rule.map(Into::into),
            agent: if rule.is_some() {
                AgentRole::Static
            } else {
                AgentRole::Reviewer
            },
            evidence: vec![],
            agreed_by: vec![],
        }
    }

    fn review(kept: Vec<Finding>, rejected: Vec<(Finding, &str)>) -> Review {
        let mut r: Review = serde_json::from_value(serde_json::json!({
            "job_id": "j", "verdict": "comment", "summary": "", "inline": [],
            "body_comments": [], "agents": [], "rejected": []
        }))
        .unwrap();
        r.kept = kept;
        r.rejected = rejected.into_iter().map(|(f, why)| (f, why.to_string())).collect();
        r
    }

    fn case(kind: &str, expect: &str) -> MemoryCase {
        serde_norway::from_str(&format!(
            "id: x\nkind: {kind}\ndescription: d\nhistory: []\nbase: {{}}\nchange: {{}}\n{expect}"
        ))
        .unwrap()
    }

    #[test]
    fn a_citation_needs_a_mention_and_a_pull_request_number() {
        let cites = |text: &str| cites_past_thread(&finding("a.py", 1, None, text));
        assert!(cites("Log with the logger, as @alice asked in #12."));
        assert!(!cites("Log with the logger, as the team asked."));
        assert!(!cites("see #12"), "a number without a person");
        assert!(!cites("mail me@ or see # 3"), "neither a login nor a number follows");
    }

    #[test]
    fn a_model_finding_is_at_the_target_near_the_dismissed_rules_line_or_the_conventions_line() {
        let dismissed = case("dismissed", "expect: {rule: sql-string-building, path: s.py}");
        let without = review(
            vec![
                finding("s.py", 20, Some("sql-string-building"), ""),
                finding("s.py", 21, None, "query built from strings"),
                finding("s.py", 40, None, "elsewhere"),
            ],
            vec![],
        );
        let with = review(
            vec![finding("s.py", 40, None, "elsewhere")],
            vec![(
                finding("s.py", 22, None, "query built from strings"),
                "memory M-1: rejected ×2",
            )],
        );
        let v = model_view(&dismissed, &without, &with);
        assert_eq!((v.at_target_without, v.at_target_with), (1, 0));
        assert_eq!((v.proposed_at_target_without, v.proposed_at_target_with), (1, 1));
        assert_eq!(v.suppressed_by_memory_with, 1);
        assert_eq!(v.without.len(), 2, "offline rules' findings are not the model's");
        assert_eq!(v.rejected_with, ["s.py:22 t — memory M-1: rejected ×2"]);

        let convention = case("convention", "expect: {path: a.py, line: 10}");
        let with = review(
            vec![
                finding("a.py", 12, None, "use the logger, as @bob asked in #7"),
                finding("b.py", 10, None, "other file"),
            ],
            vec![(finding("a.py", 11, None, "as @bob asked in #7"), "speculative")],
        );
        let v = model_view(&convention, &review(vec![], vec![]), &with);
        assert_eq!((v.at_target_without, v.at_target_with), (0, 1));
        assert_eq!(v.proposed_at_target_with, 2);
        assert_eq!(
            v.suppressed_by_memory_with, 0,
            "the critic's own rejection is not memory's"
        );
        assert_eq!(
            v.citing_with,
            ["a.py:12 t", "a.py:11 t"],
            "rejected proposals are counted too"
        );

        let t = model_totals(&[MemoryCaseResult {
            id: "x".into(),
            kind: CaseKind::Clean,
            without: false,
            with: false,
            unchanged: true,
            items: vec![],
            kept_without: vec![],
            kept_with: vec![],
            model: Some(v),
        }]);
        assert_eq!((t.clean_findings_with, t.clean_citing_with, t.citing_with), (2, 2, 2));
        assert_eq!((t.proposed_with, t.findings_with), (3, 2));
    }
}
