//! Rules: small units with a name, a category, a severity, a confidence and a
//! rationale, each tested on positive and negative snippets. A rule looks at
//! one file's diff and reports hits on new-side lines; [`to_finding`] turns a
//! hit into a finding that carries its evidence.

pub mod arith;
pub mod authz;
pub mod await_removed;
pub mod condition_changed;
mod condition_edits;
pub mod crypto;
pub mod defaults;
pub mod errors;
pub mod finally_removed;
pub mod fluent;
pub mod index_past_end;
pub mod injection;
pub mod network;
pub mod offset_shift;
pub mod overflow_wraps;
mod reraise_removed;
pub mod scope;
pub mod untested;

use quorum_core::{AgentRole, Category, Evidence, FileDiff, Finding, Hunk, LineKind, Severity};

use std::collections::{BTreeMap, BTreeSet};

use crate::documentation::documentation_lines;
use crate::lang::Family;

/// What a rule is, independent of where it fires.
#[derive(Debug, Clone, Copy)]
pub struct RuleMeta {
    pub id: &'static str,
    pub category: Category,
    pub severity: Severity,
    pub confidence: f64,
    pub title: &'static str,
    /// Why it matters, shown as the finding's explanation.
    pub rationale: &'static str,
}

/// Where and why a rule fired.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub line: u32,
    pub start_line: Option<u32>,
    /// The evidence: the matched text, or what was removed.
    pub detail: String,
    /// Overrides of the rule's defaults when the context is weaker or stronger.
    pub severity: Option<Severity>,
    pub confidence: Option<f64>,
    pub suggestion: Option<String>,
}

impl Hit {
    pub fn at(line: u32, detail: impl Into<String>) -> Hit {
        Hit {
            line,
            start_line: None,
            detail: detail.into(),
            severity: None,
            confidence: None,
            suggestion: None,
        }
    }
}

/// What a rule may know beyond one file's diff.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The file's head content: the block a hunk sits in (a `catch` whose
    /// opening line is outside the hunk). `None` when it could not be read.
    pub head: Option<&'a str>,
    /// Functions the change made synchronous (an `async` dropped from their
    /// definition), in any file of the change, by name.
    pub made_sync: Option<&'a BTreeSet<String>>,
}

/// A deterministic check over one file's diff.
pub trait Rule: Sync {
    fn meta(&self) -> &'static RuleMeta;
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit>;
    /// The same check with what else is known about the change; the
    /// default ignores it.
    fn check_in(&self, file: &FileDiff, lang: Family, ctx: &Context<'_>) -> Vec<Hit> {
        let _ = ctx;
        self.check(file, lang)
    }
}

/// Runs `rules` over every code file of the change. Hits anchored in
/// documentation (comments, docstrings) of a head file in `head_files` are
/// dropped; without the head file every hit stands.
pub fn run_rules(
    rules: &[&dyn Rule],
    diffs: &[FileDiff],
    head_files: &BTreeMap<String, String>,
    agent: AgentRole,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let made_sync = await_removed::made_sync(diffs);
    for file in diffs {
        let lang = Family::of(&file.path);
        if file.binary || !lang.is_code() {
            continue;
        }
        let head = head_files.get(&file.path).map(String::as_str);
        let docs = head.map(|src| documentation_lines(&file.path, src)).unwrap_or_default();
        let ctx = Context {
            head,
            made_sync: Some(&made_sync),
        };
        for rule in rules {
            for hit in rule.check_in(file, lang, &ctx) {
                if !docs.contains(&hit.line) {
                    out.push(to_finding(rule.meta(), &file.path, hit, agent));
                }
            }
        }
    }
    out
}

pub fn to_finding(meta: &RuleMeta, path: &str, hit: Hit, agent: AgentRole) -> Finding {
    Finding {
        file: path.to_string(),
        line: hit.line,
        start_line: hit.start_line,
        category: meta.category,
        severity: hit.severity.unwrap_or(meta.severity),
        confidence: hit.confidence.unwrap_or(meta.confidence),
        title: meta.title.to_string(),
        explanation: meta.rationale.to_string(),
        suggestion: hit.suggestion,
        rule: Some(meta.id.to_string()),
        agent,
        evidence: vec![Evidence {
            source: format!("rule:{}", meta.id),
            detail: format!("{path}:{}: {}", hit.line, hit.detail.trim()),
        }],
        agreed_by: vec![],
    }
}

/// A hunk's new side: (line number, text, was it added).
pub fn new_side(h: &Hunk) -> Vec<(u32, &str, bool)> {
    h.lines
        .iter()
        .filter_map(|l| l.new_line.map(|n| (n, l.text.as_str(), l.kind == LineKind::Added)))
        .collect()
}

/// A hunk's old side: (old line number, text, was it removed).
pub fn old_side(h: &Hunk) -> Vec<(u32, &str, bool)> {
    h.lines
        .iter()
        .filter_map(|l| l.old_line.map(|n| (n, l.text.as_str(), l.kind == LineKind::Removed)))
        .collect()
}

/// Added lines of a file with their numbers.
pub fn added_lines(file: &FileDiff) -> impl Iterator<Item = (u32, &str)> {
    file.hunks
        .iter()
        .flat_map(|h| h.lines.iter())
        .filter(|l| l.kind == LineKind::Added)
        .filter_map(|l| l.new_line.map(|n| (n, l.text.as_str())))
}

/// Removed lines of a hunk, each with the new-side line it sits before (the
/// place a comment about the removal can be anchored).
pub fn removed_with_anchor(h: &Hunk) -> Vec<(u32, &str)> {
    let mut out = Vec::new();
    let mut last_new = h.new_start.saturating_sub(1).max(1);
    let mut pending: Vec<&str> = Vec::new();
    for l in &h.lines {
        match l.kind {
            LineKind::Removed => pending.push(&l.text),
            _ => {
                if let Some(n) = l.new_line {
                    for p in pending.drain(..) {
                        out.push((n, p));
                    }
                    last_new = n;
                }
            }
        }
    }
    for p in pending {
        out.push((last_new, p));
    }
    out
}

/// (removed, new line number, added) pairs of lines that replaced each other:
/// each added line of a change block (removed lines followed by added lines)
/// is paired with the removed line it most resembles (word-set Jaccard ≥
/// 1/3), so a restructured block (lines merged, split or reordered) still
/// pairs up.
pub fn similar_pairs(h: &Hunk) -> Vec<(&str, u32, &str)> {
    fn words(s: &str) -> std::collections::BTreeSet<&str> {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect()
    }
    fn flush<'a>(removed: &mut Vec<&'a str>, added: &mut Vec<(u32, &'a str)>, out: &mut Vec<(&'a str, u32, &'a str)>) {
        for (n, a) in added.iter() {
            let wa = words(a);
            let best = removed
                .iter()
                .map(|r| {
                    let wr = words(r);
                    let inter = wa.intersection(&wr).count() as f64;
                    let union = wa.union(&wr).count().max(1) as f64;
                    (inter / union, *r)
                })
                .max_by(|x, y| x.0.total_cmp(&y.0));
            if let Some((sim, r)) = best
                && sim >= 1.0 / 3.0
            {
                out.push((r, *n, *a));
            }
        }
        removed.clear();
        added.clear();
    }
    let mut out = Vec::new();
    let mut removed: Vec<&str> = Vec::new();
    let mut added: Vec<(u32, &str)> = Vec::new();
    for l in &h.lines {
        match l.kind {
            LineKind::Removed => {
                if !added.is_empty() {
                    flush(&mut removed, &mut added, &mut out);
                }
                removed.push(&l.text);
            }
            LineKind::Added => added.push((l.new_line.unwrap_or(0), &l.text)),
            LineKind::Context => flush(&mut removed, &mut added, &mut out),
        }
    }
    flush(&mut removed, &mut added, &mut out);
    out
}

#[cfg(test)]
pub(crate) mod testutil {
    use quorum_core::{FileDiff, FileStatus, diff::parse_file_patch};

    /// Builds a one-hunk diff from lines prefixed with `+`, `-` or ` `.
    pub fn diff(path: &str, lines: &[&str]) -> FileDiff {
        let old = lines.iter().filter(|l| !l.starts_with('+')).count();
        let new = lines.iter().filter(|l| !l.starts_with('-')).count();
        let patch = format!("@@ -1,{old} +1,{new} @@\n{}\n", lines.join("\n"));
        let (d, errors) = parse_file_patch(path, None, FileStatus::Modified, &patch);
        assert!(errors.is_empty(), "{errors:?}");
        d
    }

    /// The lines `rule` flags in that diff of `path` (its language from the
    /// extension).
    pub fn hit_lines(rule: &dyn super::Rule, path: &str, lines: &[&str]) -> Vec<u32> {
        rule.check(&diff(path, lines), super::Family::of(path))
            .iter()
            .map(|h| h.line)
            .collect()
    }
}
