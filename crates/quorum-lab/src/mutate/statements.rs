//! Statement mutations that the offline engine's rules claim, rather than
//! the graph: an inverted condition (`condition-inverted`) and a dropped
//! re-raise (`swallowed-exception`). A site is one line, sampled across the
//! codebase; the mutant changes that line, and its control rewrites the
//! same line without changing what it means (`if (x):` for `if x:`, a
//! comment after `raise`), so the control's diff has the same shape as the
//! mutant's and any finding on it is noise.

use std::collections::BTreeMap;

use quorum_core::lang::{Lang, is_test_path};
use quorum_core::{AgentRole, FileDiff, FileStatus, Finding};

use super::edit::closing;

/// The statement classes, in report order.
pub(super) const STATEMENT_CLASSES: [&str; 2] = ["invert-condition", "drop-reraise"];

/// How far (in lines) from the mutated line a finding may sit and still be
/// about it: a rule may report at the handler or the `if` above a hunk.
const NEAR: i64 = 10;

/// One mutable line.
#[derive(Debug, Clone)]
pub(super) struct LineSite {
    pub key: String,
    pub path: String,
    /// 0-based index into the file's lines.
    pub index: usize,
    pub mutant: String,
    pub control: String,
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The mutant and control lines for an `if` whose condition is on one line.
fn invert(lang: Lang, line: &str) -> Option<(String, String)> {
    let t = line.trim();
    let ind = indent(line);
    match lang {
        Lang::Python => {
            let cond = t.strip_prefix("if ")?.strip_suffix(':')?.trim();
            if cond.is_empty() || cond.contains('#') || cond.contains(":=") {
                return None;
            }
            Some((format!("{ind}if not ({cond}):"), format!("{ind}if ({cond}):")))
        }
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Java => {
            let rest = t.strip_prefix("if ")?.strip_suffix('{')?.trim_end();
            // The parentheses around the condition must be the whole of it.
            if !rest.starts_with('(') || closing(rest, 0)? != rest.len() - 1 {
                return None;
            }
            let cond = &rest[1..rest.len() - 1];
            Some((format!("{ind}if (!({cond})) {{"), format!("{ind}if (({cond})) {{")))
        }
        Lang::Go | Lang::Rust => {
            let cond = t.strip_prefix("if ")?.strip_suffix('{')?.trim_end();
            // `if let`, and Go's `if x := f(); x {`, are not plain conditions.
            if cond.is_empty() || cond.starts_with("let ") || cond.contains(';') || cond.contains(":=") {
                return None;
            }
            Some((format!("{ind}if !({cond}) {{"), format!("{ind}if ({cond}) {{")))
        }
    }
}

/// The mutant and control lines for a re-raise inside a handler: a bare
/// `raise` in Python; in JavaScript/TypeScript/Java a `throw e;` of the
/// name the enclosing `catch (e)` (within the 15 lines above) binds.
fn drop_reraise(lang: Lang, lines: &[&str], index: usize) -> Option<(String, String)> {
    let line = lines[index];
    let t = line.trim();
    let ind = indent(line);
    match lang {
        Lang::Python if t == "raise" => Some((format!("{ind}pass"), format!("{ind}raise  # re-raised"))),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Java => {
            let name = t.strip_prefix("throw ")?.strip_suffix(';')?.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                return None;
            }
            let caught = lines[index.saturating_sub(15)..index].iter().rev().any(|l| {
                l.split("catch").nth(1).is_some_and(|after| {
                    after.trim_start().strip_prefix('(').is_some_and(|p| {
                        p.trim_start()
                            .strip_prefix(name)
                            .is_some_and(|r| r.trim_start().starts_with([')', ':']))
                    })
                })
            });
            caught.then(|| (format!("{ind}console.error({name});"), format!("{line} // rethrown")))
        }
        _ => None,
    }
}

/// Every line of every non-test source file where `class` applies.
pub(super) fn line_sites(class: &str, files: &BTreeMap<String, String>) -> Vec<LineSite> {
    let mut out = vec![];
    for (path, text) in files {
        let Some(lang) = Lang::detect(path) else { continue };
        if is_test_path(path) {
            continue;
        }
        let lines: Vec<&str> = text.split('\n').collect();
        for index in 0..lines.len() {
            let made = match class {
                "invert-condition" => invert(lang, lines[index]),
                "drop-reraise" => drop_reraise(lang, &lines, index),
                _ => None,
            };
            if let Some((mutant, control)) = made {
                out.push(LineSite {
                    key: format!("{path}:{}", index + 1),
                    path: path.clone(),
                    index,
                    mutant,
                    control,
                });
            }
        }
    }
    out
}

/// What the offline engine's rules (the reviewer's and the static agent's)
/// find when `site`'s line becomes `new_line`.
pub(super) fn review(files: &BTreeMap<String, String>, site: &LineSite, new_line: &str) -> Vec<Finding> {
    let old = &files[&site.path];
    let new = super::edit::replace_line(old, site.index, new_line);
    let patch = quorum_scm::unified_patch(old.as_bytes(), new.as_bytes());
    let diff: FileDiff = quorum_core::diff::parse_file_patch(&site.path, None, FileStatus::Modified, &patch).0;
    let head = BTreeMap::from([(site.path.clone(), new)]);
    let mut rules = quorum_engine::offline::OfflineEngine::new(AgentRole::Reviewer).rules();
    rules.extend(quorum_engine::static_rules::rules());
    quorum_engine::rules::run_rules(&rules, &[diff], &head, AgentRole::Reviewer)
}

/// A finding about the mutated line: in its file, within `NEAR` lines.
pub(super) fn about(found: &[Finding], site: &LineSite) -> bool {
    let line = site.index as i64 + 1;
    found
        .iter()
        .any(|f| f.file == site.path && (f.line as i64 - line).abs() <= NEAR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_invert_and_controls_keep_their_meaning() {
        assert_eq!(
            invert(Lang::Python, "    if user.is_admin:").unwrap(),
            ("    if not (user.is_admin):".into(), "    if (user.is_admin):".into())
        );
        assert_eq!(
            invert(Lang::TypeScript, "  if (a && f(b)) {").unwrap().0,
            "  if (!(a && f(b))) {"
        );
        assert_eq!(invert(Lang::JavaScript, "if (a) x(); else {"), None);
        assert_eq!(invert(Lang::Rust, "if let Some(x) = y {"), None);
        assert_eq!(invert(Lang::Go, "\tif err := f(); err != nil {"), None);
        assert_eq!(invert(Lang::Go, "\tif err != nil {").unwrap().0, "\tif !(err != nil) {");
    }

    #[test]
    fn only_a_rethrow_of_the_caught_name_is_dropped() {
        let js = ["try {", "  run();", "} catch (err) {", "  throw err;", "}"];
        assert_eq!(
            drop_reraise(Lang::JavaScript, &js, 3).unwrap(),
            ("  console.error(err);".into(), "  throw err; // rethrown".into())
        );
        let other = ["} catch (err) {", "  throw new Error('x');", "}"];
        assert_eq!(drop_reraise(Lang::JavaScript, &other, 1), None);
        assert_eq!(
            drop_reraise(Lang::Python, &["    except E:", "        raise"], 1)
                .unwrap()
                .0,
            "        pass"
        );
    }

    #[test]
    fn a_dropped_reraise_is_found_and_its_control_is_quiet() {
        let files = BTreeMap::from([(
            "app/pay.py".to_string(),
            "def charge(card):\n    try:\n        gateway.charge(card)\n    except GatewayError:\n        log.warning(\"charge failed\")\n        raise\n    return True\n".to_string(),
        )]);
        let sites = line_sites("drop-reraise", &files);
        assert_eq!(sites.len(), 1);
        assert!(about(&review(&files, &sites[0], &sites[0].mutant), &sites[0]));
        assert!(review(&files, &sites[0], &sites[0].control).is_empty());
    }
}
