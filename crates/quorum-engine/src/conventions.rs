//! Team conventions from the repository's own `.quorum.yml` (F-AG-6): rules
//! a team writes down once — "money is never a float" — and every review
//! then holds changes to. Each rule is a regex over added lines or a
//! tree-sitter query over the head file, limited by path globs; it reports
//! only on lines the change adds, so existing code is never re-litigated.
//!
//! ```yaml
//! conventions:
//!   - id: money-is-never-float
//!     message: Amounts are integer cents or Decimal, never float.
//!     paths: ["shop/**/*.py"]
//!     exclude: ["shop/legacy/**"]
//!     language: python
//!     query: '[(float) @f ((identifier) @t (#eq? @t "float"))]'
//!     severity: major        # critical | major | minor | nitpick
//!     category: convention   # default
//!     confidence: 0.9        # default
//! ```

use std::collections::{BTreeMap, BTreeSet, HashSet};

use globset::{Glob, GlobSet, GlobSetBuilder};
use quorum_core::Lang;
use quorum_core::repo_config::{ConventionSpec, RepoConfig};
use quorum_core::{AgentRole, Category, Evidence, FileDiff, Finding, Severity};
use quorum_graph::query::CodeQuery;
use regex::Regex;

use crate::rules::added_lines;

pub use quorum_core::repo_config::CONFIG_PATH;
const MAX_RULES: usize = 200;

#[derive(Debug)]
enum Matcher {
    Pattern(Regex),
    Query(CodeQuery),
}

#[derive(Debug)]
struct Convention {
    id: String,
    message: String,
    paths: Option<GlobSet>,
    exclude: Option<GlobSet>,
    matcher: Matcher,
    severity: Severity,
    category: Category,
    confidence: f64,
}

/// A repository's compiled conventions.
#[derive(Debug, Default)]
pub struct Conventions {
    rules: Vec<Convention>,
}

/// Parses and compiles `.quorum.yml`. Every problem names the rule and the
/// field, so a team can fix its file from the message alone.
pub fn parse(yaml: &str) -> Result<Conventions, String> {
    let cfg = RepoConfig::parse(yaml).map_err(|e| format!("{CONFIG_PATH}: {e}"))?;
    compile(cfg.conventions, CONFIG_PATH)
}

/// Compiles conventions given as specs (review memory's `avoid` items);
/// `origin` names where they came from in errors.
pub fn compile(specs: Vec<ConventionSpec>, origin: &str) -> Result<Conventions, String> {
    if specs.len() > MAX_RULES {
        return Err(format!("{origin}: at most {MAX_RULES} conventions"));
    }
    let mut seen = HashSet::new();
    let mut rules = vec![];
    for spec in specs {
        let at = |m: String| format!("{origin}: convention `{}`: {m}", spec.id);
        if spec.id.trim().is_empty() {
            return Err(format!("{origin}: a convention has an empty `id`"));
        }
        if !seen.insert(spec.id.clone()) {
            return Err(at("duplicate id".into()));
        }
        if spec.message.trim().is_empty() {
            return Err(at("`message` is empty".into()));
        }
        if !(spec.confidence > 0.0 && spec.confidence <= 1.0) {
            return Err(at(format!("`confidence` {} must be in (0, 1]", spec.confidence)));
        }
        let matcher = match (&spec.pattern, &spec.query) {
            (Some(p), None) => Matcher::Pattern(Regex::new(p).map_err(|e| at(format!("`pattern`: {e}")))?),
            (None, Some(q)) => {
                let lang = match spec.language.as_deref() {
                    Some(l) => Lang::from_name(l).ok_or_else(|| at(format!("unknown `language` `{l}`")))?,
                    None => return Err(at("a `query` needs a `language`".into())),
                };
                Matcher::Query(CodeQuery::compile(lang, q).map_err(|e| at(format!("`query`: {e}")))?)
            }
            _ => return Err(at("exactly one of `pattern` or `query` is required".into())),
        };
        let paths = globs(&spec.paths).map_err(|e| at(format!("`paths`: {e}")))?;
        let exclude = globs(&spec.exclude).map_err(|e| at(format!("`exclude`: {e}")))?;
        rules.push(Convention {
            id: spec.id,
            message: spec.message,
            paths,
            exclude,
            matcher,
            severity: spec.severity,
            category: spec.category,
            confidence: spec.confidence,
        });
    }
    Ok(Conventions { rules })
}

fn globs(patterns: &[String]) -> Result<Option<GlobSet>, globset::Error> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p)?);
    }
    b.build().map(Some)
}

impl Conventions {
    /// Adds another set's rules (memory's beside `.quorum.yml`'s).
    pub fn extend(&mut self, other: Conventions) {
        self.rules.extend(other.rules);
    }

    /// `(id, message)` of every rule, for a model's prompt.
    pub fn summaries(&self) -> Vec<(String, String)> {
        self.rules.iter().map(|r| (r.id.clone(), r.message.clone())).collect()
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| r.id.as_str())
    }

    /// Findings on lines the change adds. `head_files` has the head content
    /// of changed files (queries need the whole file to parse).
    pub fn check(&self, diffs: &[FileDiff], head_files: &BTreeMap<String, String>, agent: AgentRole) -> Vec<Finding> {
        let mut out = vec![];
        for file in diffs.iter().filter(|f| !f.binary) {
            let added: BTreeMap<u32, &str> = added_lines(file).collect();
            if added.is_empty() {
                continue;
            }
            for rule in &self.rules {
                if rule.paths.as_ref().is_some_and(|g| !g.is_match(&file.path))
                    || rule.exclude.as_ref().is_some_and(|g| g.is_match(&file.path))
                {
                    continue;
                }
                let hits: BTreeSet<(u32, String)> = match &rule.matcher {
                    Matcher::Pattern(re) => added
                        .iter()
                        .filter_map(|(&n, t)| re.find(t).map(|m| (n, m.as_str().to_string())))
                        .collect(),
                    Matcher::Query(q) => {
                        if Lang::detect(&file.path) != Some(q.lang()) {
                            continue;
                        }
                        let Some(src) = head_files.get(&file.path) else {
                            continue;
                        };
                        q.matches(src)
                            .into_iter()
                            .filter(|(n, _)| added.contains_key(n))
                            .collect()
                    }
                };
                for (line, matched) in hits {
                    out.push(Finding {
                        file: file.path.clone(),
                        line,
                        start_line: None,
                        category: rule.category,
                        severity: rule.severity,
                        confidence: rule.confidence,
                        title: format!("Breaks the team convention `{}`", rule.id),
                        explanation: rule.message.clone(),
                        suggestion: None,
                        rule: Some(format!("convention:{}", rule.id)),
                        agent,
                        evidence: vec![Evidence {
                            source: format!("{CONFIG_PATH}:{}", rule.id),
                            detail: format!(
                                "{}:{line}: matched `{}` in `{}`",
                                file.path,
                                matched.trim(),
                                added[&line].trim()
                            ),
                        }],
                        agreed_by: vec![],
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quorum_core::FileStatus;
    use quorum_core::diff::parse_file_patch;

    fn diff(path: &str, patch: &str) -> FileDiff {
        parse_file_patch(path, None, FileStatus::Modified, patch).0
    }

    const INVENTORY: &str = r#"
conventions:
  - id: weights-in-grams
    message: Weights are integer grams; never a float.
    paths: ["inventory/**/*.py"]
    language: python
    query: '[(float) @f ((identifier) @t (#eq? @t "float"))]'
  - id: no-print
    message: Use the logger, not print().
    exclude: ["scripts/**"]
    pattern: '\bprint\('
    severity: minor
    category: style
    confidence: 0.7
"#;

    #[test]
    fn query_rules_report_added_code_only() {
        let c = parse(INVENTORY).unwrap();
        assert_eq!(c.ids().collect::<Vec<_>>(), ["weights-in-grams", "no-print"]);
        let head = "def ship(kg: float) -> int:\n    \"\"\"Ship 1.5 kg parcels.\"\"\"\n    grams = kg * 1000.0\n    old = 2.0\n    return int(grams)\n";
        let d = diff(
            "inventory/ship.py",
            "@@ -1,4 +1,5 @@\n-def ship(kg: int) -> int:\n+def ship(kg: float) -> int:\n+    \"\"\"Ship 1.5 kg parcels.\"\"\"\n-    grams = kg * 1000\n+    grams = kg * 1000.0\n     old = 2.0\n     return int(grams)\n",
        );
        let files = BTreeMap::from([("inventory/ship.py".to_string(), head.to_string())]);
        let f = c.check(&[d], &files, AgentRole::Static);
        let lines: Vec<u32> = f.iter().map(|f| f.line).collect();
        // Line 2 (a float in a docstring) and line 4 (unchanged) are not reported.
        assert_eq!(lines, [1, 3]);
        assert_eq!(f[0].rule.as_deref(), Some("convention:weights-in-grams"));
        assert!(f[0].evidence[0].detail.contains("float"));
    }

    #[test]
    fn path_globs_and_patterns() {
        let c = parse(INVENTORY).unwrap();
        let d = diff("tools/x.py", "@@ -1,1 +1,2 @@\n x = 1\n+print(2.5)\n");
        let f = c.check(&[d], &BTreeMap::new(), AgentRole::Static);
        // The float rule is limited to inventory/; the print rule applies everywhere but scripts/.
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].line, f[0].severity, f[0].category),
            (2, Severity::Minor, Category::Style)
        );
        let d = diff("scripts/x.py", "@@ -1,1 +1,2 @@\n x = 1\n+print(2.5)\n");
        assert!(c.check(&[d], &BTreeMap::new(), AgentRole::Static).is_empty());
    }

    /// The storefront's shipped rules, on code that is not the storefront's.
    #[test]
    fn storefront_money_rule_on_other_code() {
        let c = parse(include_str!("../../../storefront-fixture/.quorum.yml")).unwrap();
        let head = "def invoice(total_cents: int, fee_rate: float) -> int:\n    gross = price * 1.2\n    w = weight_kg * 2.5\n    return float(balance)\n\n\ndef mean(ratings: list[float]) -> float:\n    return sum(ratings) / 2.0\n";
        let patch = "@@ -0,0 +1,8 @@\n+def invoice(total_cents: int, fee_rate: float) -> int:\n+    gross = price * 1.2\n+    w = weight_kg * 2.5\n+    return float(balance)\n+\n+\n+def mean(ratings: list[float]) -> float:\n+    return sum(ratings) / 2.0\n";
        let d = diff("shop/billing.py", patch);
        let files = BTreeMap::from([("shop/billing.py".to_string(), head.to_string())]);
        let lines: Vec<u32> = c
            .check(&[d], &files, AgentRole::Static)
            .iter()
            .map(|f| f.line)
            .collect();
        // A float-typed rate, a price times a float, float() of a balance; not
        // a weight, not ratings.
        assert_eq!(lines, [1, 2, 4]);
        let sql = diff(
            "shop/report.py",
            "@@ -1,1 +1,2 @@\n x = 1\n+rows = db.execute(\"SELECT id FROM orders\")\n",
        );
        let f = c.check(&[sql], &BTreeMap::new(), AgentRole::Static);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].rule.as_deref(), Some("convention:sql-only-in-repository"));
        let allowed = diff(
            "shop/repository.py",
            "@@ -1,1 +1,2 @@\n x = 1\n+rows = db.execute(\"SELECT id FROM orders\")\n",
        );
        assert!(c.check(&[allowed], &BTreeMap::new(), AgentRole::Static).is_empty());
    }

    #[test]
    fn bad_files_get_precise_errors() {
        let cases = [
            ("conventions: [{id: a, message: m}]", "exactly one of"),
            ("conventions: [{id: a, message: m, pattern: '('}]", "`pattern`"),
            (
                "conventions: [{id: a, message: m, query: '(float) @f'}]",
                "needs a `language`",
            ),
            (
                "conventions: [{id: a, message: m, query: '(nope) @f', language: python}]",
                "`query`",
            ),
            (
                "conventions: [{id: a, message: m, query: '(float) @f', language: cobol}]",
                "unknown `language`",
            ),
            (
                "conventions: [{id: a, message: m, pattern: x}, {id: a, message: m, pattern: y}]",
                "duplicate id",
            ),
            (
                "conventions: [{id: a, message: m, pattern: x, confidence: 2}]",
                "confidence",
            ),
            (
                "conventions: [{id: a, message: m, pattern: x, paths: ['a/[']}]",
                "`paths`",
            ),
            (
                "conventions: [{id: a, message: m, pattern: x, severity: huge}]",
                "severity",
            ),
            ("conventions: [{id: a, message: m, pattern: x, colour: red}]", "colour"),
            ("conventions: 3", "invalid type"),
        ];
        for (yaml, want) in cases {
            let e = parse(yaml).unwrap_err();
            assert!(e.contains(want), "{yaml}: {e}");
        }
        assert!(parse("").unwrap().is_empty());
    }
}
