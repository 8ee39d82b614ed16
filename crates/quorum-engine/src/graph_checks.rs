//! Checks that need the code graph (the offline reviewer's graph-aware
//! half): a signature change whose call sites no longer fit, and a removed
//! symbol that is still called. The impact report has already resolved the
//! call sites through imports and scopes and run the arity check; these
//! checks turn its `BREAKS` lines into one finding per changed symbol,
//! anchored on the change itself, with every broken site as evidence.

use quorum_core::{AgentRole, Category, Evidence, FileDiff, Finding, LineKind, Severity};
use quorum_graph::ImpactReport;
use quorum_graph::impact::{ChangeKind, ChangedSymbol};

/// At most this many call sites are listed in one explanation.
const MAX_LISTED: usize = 10;

pub fn check(report: &ImpactReport, diffs: &[FileDiff], agent: AgentRole) -> Vec<Finding> {
    let mut out = vec![];
    for c in report.changed.iter().filter(|c| !c.broken_calls.is_empty()) {
        let Some(diff) = diffs
            .iter()
            .find(|d| d.path == c.path || d.old_path.as_deref() == Some(&c.path))
        else {
            continue;
        };
        let Some(line) = anchor(c, diff) else { continue };
        let sites = &c.broken_calls;
        let listed: Vec<String> = sites
            .iter()
            .take(MAX_LISTED)
            .map(|b| {
                format!(
                    "- `{}:{}` in `{}`: `{}` {}",
                    b.path, b.line, b.caller, b.text, b.problem
                )
            })
            .collect();
        let more = sites.len().saturating_sub(MAX_LISTED);
        let untouched = sites.iter().filter(|b| !diffs.iter().any(|d| d.path == b.path)).count();
        let (title, why) = match (c.change, &c.signature) {
            (ChangeKind::Removed, _) => (
                format!(
                    "`{}` is removed but still called at {} site(s)",
                    short(&c.qname),
                    sites.len()
                ),
                "The change deletes this symbol, and these call sites still use it; they fail at run time.".to_string(),
            ),
            (_, Some((old, new))) => (
                format!(
                    "Signature change of `{}` breaks {} call site(s)",
                    short(&c.qname),
                    sites.len()
                ),
                format!(
                    "The signature changed from `{old}` to `{new}`, and these calls (resolved through imports and scopes) no longer fit it. Update every caller in the same change, or give the new parameter a default."
                ),
            ),
            _ => continue,
        };
        let mut explanation = format!("{why}\n{}", listed.join("\n"));
        if more > 0 {
            explanation.push_str(&format!("\n- … and {more} more"));
        }
        if untouched > 0 {
            explanation.push_str(&format!(
                "\n{untouched} of them are in files this change does not touch."
            ));
        }
        out.push(Finding {
            file: diff.path.clone(),
            line,
            start_line: None,
            category: Category::Bug,
            severity: Severity::Major,
            confidence: if c.change == ChangeKind::Removed { 0.85 } else { 0.9 },
            title,
            explanation,
            suggestion: None,
            rule: Some(
                if c.change == ChangeKind::Removed {
                    "graph:removed-but-called"
                } else {
                    "graph:signature-breaks-callers"
                }
                .into(),
            ),
            agent,
            evidence: sites
                .iter()
                .map(|b| Evidence {
                    source: "graph:impact".into(),
                    detail: format!("{} -> {}:{} `{}`: {}", c.qname, b.path, b.line, b.text, b.problem),
                })
                .collect(),
            agreed_by: vec![],
        });
    }
    out
}

/// The first added line inside the symbol (its new signature, usually); for
/// a removed symbol, the new-side line where the removal happened.
fn anchor(c: &ChangedSymbol, diff: &FileDiff) -> Option<u32> {
    let lines = diff.hunks.iter().flat_map(|h| h.lines.iter());
    match c.change {
        ChangeKind::Removed => {
            for h in &diff.hunks {
                let mut last_new = h.new_start.max(1);
                for l in &h.lines {
                    if let Some(n) = l.new_line {
                        last_new = n;
                    }
                    if l.kind == LineKind::Removed && l.old_line.is_some_and(|o| o >= c.start_line && o <= c.end_line) {
                        return Some(last_new);
                    }
                }
            }
            None
        }
        _ => {
            let mut lines = lines;
            lines
                .find(|l| l.kind == LineKind::Added && l.new_line.is_some_and(|n| n >= c.start_line && n <= c.end_line))
                .and_then(|l| l.new_line)
        }
    }
}

fn short(qname: &str) -> &str {
    qname.rsplit(['.', ':']).next().unwrap_or(qname)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quorum_core::FileStatus;
    use quorum_core::diff::parse_file_patch;
    use quorum_graph::{ImpactOptions, build, impact, overlay};

    fn tree() -> Vec<(String, String)> {
        vec![
            ("lib/units.py".into(), "def convert(value, unit):\n    return value\n\n\ndef helper():\n    return 1\n".into()),
            (
                "app/report.py".into(),
                "from lib.units import convert, helper\n\n\ndef render(x):\n    helper()\n    return convert(x, \"kg\")\n".into(),
            ),
        ]
    }

    #[test]
    fn a_required_parameter_is_reported_on_the_signature_with_the_untouched_caller() {
        let (base, _) = build(tree(), None);
        let new = "def convert(value, unit, precision):\n    return value\n\n\ndef helper():\n    return 1\n";
        let (head, _) = overlay(&base, &[("lib/units.py".into(), Some(new.into()))]);
        let patch =
            "@@ -1,2 +1,2 @@\n-def convert(value, unit):\n+def convert(value, unit, precision):\n     return value\n";
        let diffs = vec![parse_file_patch("lib/units.py", None, FileStatus::Modified, patch).0];
        let report = impact(&base, &head, &diffs, ImpactOptions::default());
        let f = check(&report, &diffs, AgentRole::Reviewer);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].file.as_str(), f[0].line), ("lib/units.py", 1));
        assert!(f[0].explanation.contains("app/report.py:6"), "{}", f[0].explanation);
        assert!(f[0].explanation.contains("files this change does not touch"));
        assert_eq!(f[0].evidence.len(), 1);
    }

    #[test]
    fn removing_a_called_function_is_reported_and_a_compatible_change_is_not() {
        let (base, _) = build(tree(), None);
        let new = "def convert(value, unit):\n    return value\n";
        let (head, _) = overlay(&base, &[("lib/units.py".into(), Some(new.into()))]);
        let patch =
            "@@ -1,6 +1,2 @@\n def convert(value, unit):\n     return value\n-\n-\n-def helper():\n-    return 1\n";
        let diffs = vec![parse_file_patch("lib/units.py", None, FileStatus::Modified, patch).0];
        let f = check(
            &impact(&base, &head, &diffs, ImpactOptions::default()),
            &diffs,
            AgentRole::Reviewer,
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].rule.as_deref(), Some("graph:removed-but-called"));
        assert!(f[0].explanation.contains("app/report.py:5"));

        let new = "def convert(value, unit, precision=2):\n    return value\n\n\ndef helper():\n    return 1\n";
        let (head, _) = overlay(&base, &[("lib/units.py".into(), Some(new.into()))]);
        let patch =
            "@@ -1,2 +1,2 @@\n-def convert(value, unit):\n+def convert(value, unit, precision=2):\n     return value\n";
        let diffs = vec![parse_file_patch("lib/units.py", None, FileStatus::Modified, patch).0];
        assert!(
            check(
                &impact(&base, &head, &diffs, ImpactOptions::default()),
                &diffs,
                AgentRole::Reviewer
            )
            .is_empty()
        );
    }
}
