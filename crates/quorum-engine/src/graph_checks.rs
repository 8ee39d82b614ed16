//! Checks that need the code graph (the offline reviewer's graph-aware
//! half): a signature change whose call sites no longer fit, and a removed
//! symbol that is still called. The impact report has already resolved the
//! call sites through imports and scopes and run the arity check; these
//! checks turn its `BREAKS` lines into one finding per changed symbol,
//! with every broken site as evidence. A finding is anchored on the change
//! (the new signature) when the changed code is still there; a removed
//! symbol has no code left to point at, so its finding sits on the first
//! call site that still uses it (in an untouched file the publisher puts it
//! in the review body) and names where the removal happened.

use quorum_core::{AgentRole, Category, Evidence, FileDiff, Finding, LineKind, Severity};
use quorum_graph::ImpactReport;
use quorum_graph::arg_swap::SwappedArguments;
use quorum_graph::impact::{BreakKind, BrokenCall, ChangeKind, ChangedSymbol};

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
        for kind in [
            BreakKind::Arity,
            BreakKind::Removed,
            BreakKind::NoneResult,
            BreakKind::ReturnShape,
        ] {
            let sites: Vec<&BrokenCall> = c.broken_calls.iter().filter(|b| b.kind == kind).collect();
            if sites.is_empty() {
                continue;
            }
            let name = short(&c.qname);
            let (title, why, rule, confidence) = match kind {
                BreakKind::Removed => (
                    format!("`{name}` is removed but still called at {} site(s)", sites.len()),
                    "The change deletes this symbol, and these call sites still use it; they fail at run time."
                        .to_string(),
                    "graph:removed-but-called",
                    0.85,
                ),
                BreakKind::Arity => {
                    let Some((old, new)) = &c.signature else { continue };
                    (
                        format!("Signature change of `{name}` breaks {} call site(s)", sites.len()),
                        format!(
                            "The signature changed from `{old}` to `{new}`, and these calls (resolved through imports and scopes) no longer fit it. Update every caller in the same change, or give the new parameter a default."
                        ),
                        "graph:signature-breaks-callers",
                        0.9,
                    )
                }
                BreakKind::NoneResult => {
                    let none = if c.path.ends_with(".py") || c.path.ends_with(".pyi") {
                        "None"
                    } else {
                        "null/undefined"
                    };
                    (
                        format!(
                            "`{name}` can now return {none}; {} caller(s) use the result directly",
                            sites.len()
                        ),
                        format!(
                            "`{name}` did not return {none} before this change and now can, while these callers dereference its result at once (attribute, index, call, destructuring or iteration) and would fail on {none}. Check the result at each call site, or keep returning a value."
                        ),
                        "graph:none-result-dereferenced",
                        0.8,
                    )
                }
                BreakKind::ReturnShape => (
                    format!(
                        "`{name}` changed the shape of its result; {} caller(s) still read the old keys",
                        sites.len()
                    ),
                    format!(
                        "Every `return` of `{name}` gave these keys before this change and none does now, while these callers still read them from the result (they get undefined). Update the callers in the same change, or keep the old keys."
                    ),
                    "graph:return-shape-breaks-callers",
                    0.85,
                ),
            };
            let (file, at, why) = match kind {
                BreakKind::Removed => (
                    sites[0].path.clone(),
                    sites[0].line,
                    format!("{why} It was removed at `{}:{line}`.", diff.path),
                ),
                _ => (diff.path.clone(), line, why),
            };
            out.push(finding(
                (file, at),
                &c.qname,
                &sites,
                diffs,
                title,
                why,
                rule,
                confidence,
                agent,
            ));
        }
    }
    out.extend(report.swapped_arguments.iter().map(|s| swapped(s, agent)));
    out
}

/// A call the change wrote with two arguments in each other's places.
fn swapped(s: &SwappedArguments, agent: AgentRole) -> Finding {
    let [(a, pa), (b, pb)] = &s.swapped;
    let name = short(&s.callee);
    Finding {
        file: s.path.clone(),
        line: s.line,
        start_line: (s.call_line < s.line).then_some(s.call_line),
        category: Category::Bug,
        severity: Severity::Major,
        confidence: 0.8,
        title: format!("Arguments `{a}` and `{b}` look swapped in the call to `{name}`"),
        explanation: format!(
            "`{name}` is declared as `{name}{sig}`: `{a}` is passed where `{pb}` goes and `{b}` where `{pa}` goes, \
while each names the other's parameter. Pass them in the declared order (or rename them if the order is right).",
            sig = s.signature
        ),
        suggestion: None,
        rule: Some("graph:arguments-swapped".into()),
        agent,
        evidence: vec![Evidence {
            source: "graph:impact".into(),
            detail: format!(
                "{}:{} `{}` calls {}{}",
                s.path, s.call_line, s.text, s.callee, s.signature
            ),
        }],
        agreed_by: vec![],
    }
}

#[allow(clippy::too_many_arguments)]
fn finding(
    (file, line): (String, u32),
    qname: &str,
    sites: &[&BrokenCall],
    diffs: &[FileDiff],
    title: String,
    why: String,
    rule: &str,
    confidence: f64,
    agent: AgentRole,
) -> Finding {
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
    let mut explanation = format!("{why}\n{}", listed.join("\n"));
    let more = sites.len().saturating_sub(MAX_LISTED);
    if more > 0 {
        explanation.push_str(&format!("\n- … and {more} more"));
    }
    let untouched = sites.iter().filter(|b| !diffs.iter().any(|d| d.path == b.path)).count();
    if untouched > 0 {
        explanation.push_str(&format!(
            "\n{untouched} of them are in files this change does not touch."
        ));
    }
    Finding {
        file,
        line,
        start_line: None,
        category: Category::Bug,
        severity: Severity::Major,
        confidence,
        title,
        explanation,
        suggestion: None,
        rule: Some(rule.into()),
        agent,
        evidence: sites
            .iter()
            .map(|b| Evidence {
                source: "graph:impact".into(),
                detail: format!("{qname} -> {}:{} `{}`: {}", b.path, b.line, b.text, b.problem),
            })
            .collect(),
        agreed_by: vec![],
    }
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
    fn a_new_none_return_is_reported_where_callers_dereference_the_result() {
        let tree = vec![
            ("inv/stock.py".to_string(), "def lookup(sku):\n    return {\"sku\": sku}\n".to_string()),
            (
                "web/views.py".to_string(),
                "from inv.stock import lookup\n\n\ndef show(sku):\n    return lookup(sku)[\"sku\"]\n\n\ndef safe(sku):\n    item = lookup(sku)\n    return item or {}\n\n\ndef load(sku):\n    item = lookup(sku)\n    log(item.sku)\n\n\ndef rebind(sku):\n    item = lookup(sku)\n    item = {}\n    return item[\"sku\"]\n".to_string(),
            ),
        ];
        let (base, _) = build(tree, None);
        let new = "def lookup(sku):\n    if not sku:\n        return None\n    return {\"sku\": sku}\n";
        let (head, _) = overlay(&base, &[("inv/stock.py".into(), Some(new.into()))]);
        let patch =
            "@@ -1,2 +1,4 @@\n def lookup(sku):\n+    if not sku:\n+        return None\n     return {\"sku\": sku}\n";
        let diffs = vec![parse_file_patch("inv/stock.py", None, FileStatus::Modified, patch).0];
        let f = check(
            &impact(&base, &head, &diffs, ImpactOptions::default()),
            &diffs,
            AgentRole::Reviewer,
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].rule.as_deref(), Some("graph:none-result-dereferenced"));
        assert_eq!(f[0].line, 2);
        // `show` indexes the result at once and `load` assigns it and then
        // reads an attribute; `safe` tests it first (`item or {}`), and
        // `rebind` replaces it before use.
        assert!(f[0].explanation.contains("web/views.py:5"), "{}", f[0].explanation);
        assert!(f[0].explanation.contains("web/views.py:14"), "{}", f[0].explanation);
        assert!(
            f[0].explanation.contains("dereferences it at line 15"),
            "{}",
            f[0].explanation
        );
        assert!(!f[0].explanation.contains("web/views.py:9"), "{}", f[0].explanation);
        assert!(!f[0].explanation.contains("web/views.py:19"), "{}", f[0].explanation);
        // A function that could already return None changes nothing.
        let (base2, _) = build(
            vec![
                ("inv/stock.py".to_string(), new.to_string()),
                (
                    "web/views.py".to_string(),
                    "from inv.stock import lookup\n\n\ndef show(sku):\n    return lookup(sku)[\"sku\"]\n".to_string(),
                ),
            ],
            None,
        );
        let newer = new.replace("if not sku:", "if sku is None:");
        let (head2, _) = overlay(&base2, &[("inv/stock.py".into(), Some(newer))]);
        let patch2 =
            "@@ -1,3 +1,3 @@\n def lookup(sku):\n-    if not sku:\n+    if sku is None:\n         return None\n";
        let diffs2 = vec![parse_file_patch("inv/stock.py", None, FileStatus::Modified, patch2).0];
        assert!(
            check(
                &impact(&base2, &head2, &diffs2, ImpactOptions::default()),
                &diffs2,
                AgentRole::Reviewer
            )
            .is_empty()
        );
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
        assert_eq!(
            (f[0].file.as_str(), f[0].line),
            ("app/report.py", 5),
            "on the call site that still uses it"
        );
        assert!(
            f[0].explanation.contains("removed at `lib/units.py:2`"),
            "{}",
            f[0].explanation
        );

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

    #[test]
    fn typescript_contract_breaks_in_untouched_files_are_reported_and_std_namesakes_are_not() {
        let tree = vec![
            (
                "src/geo.ts".to_string(),
                "export function area(w: number, h: number) {\n  return { size: w * h, unit: 'm2' };\n}\n".to_string(),
            ),
            (
                "src/view.ts".to_string(),
                "import { area } from './geo';\n\nexport function label(w: number, h: number) {\n  const { size } = area(w, h);\n  return `${size}`;\n}\n".to_string(),
            ),
        ];
        let (base, _) = build(tree, None);
        let new = "export function area(w: number, h: number) {\n  return { value: w * h, unit: 'm2' };\n}\n";
        let (head, _) = overlay(&base, &[("src/geo.ts".into(), Some(new.into()))]);
        let patch = "@@ -1,3 +1,3 @@\n export function area(w: number, h: number) {\n-  return { size: w * h, unit: 'm2' };\n+  return { value: w * h, unit: 'm2' };\n }\n";
        let diffs = vec![parse_file_patch("src/geo.ts", None, FileStatus::Modified, patch).0];
        let f = check(
            &impact(&base, &head, &diffs, ImpactOptions::default()),
            &diffs,
            AgentRole::Reviewer,
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].rule.as_deref(), Some("graph:return-shape-breaks-callers"));
        assert_eq!((f[0].file.as_str(), f[0].line), ("src/geo.ts", 2));
        assert!(f[0].explanation.contains("src/view.ts:4"), "{}", f[0].explanation);
        assert!(f[0].explanation.contains("files this change does not touch"));

        // A Rust associated function renamed: only calls through its own type
        // are broken, never the standard library's function of that name.
        let tree = vec![
            (
                "src/id.rs".to_string(),
                "pub struct Id;\n\nimpl Id {\n    pub fn new_unchecked(s: &str) -> Id {\n        let _ = unsafe { std::ptr::NonNull::new_unchecked(s.as_ptr() as *mut u8) };\n        Id\n    }\n}\n".to_string(),
            ),
            ("src/lib.rs".to_string(), "mod id;\n".to_string()),
        ];
        let (base, _) = build(tree, None);
        let new = "pub struct Id;\n\nimpl Id {\n    pub fn from_str_unchecked(s: &str) -> Id {\n        let _ = unsafe { std::ptr::NonNull::new_unchecked(s.as_ptr() as *mut u8) };\n        Id\n    }\n}\n";
        let (head, _) = overlay(&base, &[("src/id.rs".into(), Some(new.into()))]);
        let patch = "@@ -1,6 +1,6 @@\n pub struct Id;\n \n impl Id {\n-    pub fn new_unchecked(s: &str) -> Id {\n+    pub fn from_str_unchecked(s: &str) -> Id {\n         let _ = unsafe { std::ptr::NonNull::new_unchecked(s.as_ptr() as *mut u8) };\n         Id\n     }\n";
        let diffs = vec![parse_file_patch("src/id.rs", None, FileStatus::Modified, patch).0];
        let f = check(
            &impact(&base, &head, &diffs, ImpactOptions::default()),
            &diffs,
            AgentRole::Reviewer,
        );
        assert!(f.is_empty(), "{f:?}");
    }
}
