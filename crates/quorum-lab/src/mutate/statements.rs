//! Statement mutations that the offline engine's rules claim, rather than
//! the graph: an inverted condition (`condition-inverted`), a dropped
//! re-raise (`swallowed-exception`), a dropped `await` (`await-removed`)
//! and a deleted `finally` block (`finally-removed`). A site is one line,
//! sampled across the codebase; the mutant changes that line (or, for
//! `finally`, deletes the block it opens), and its control rewrites the
//! same line without changing what it means (`if (x):` for `if x:`, a
//! comment after `raise`), so the control's diff has the same shape as the
//! mutant's and any finding on it is noise.

use std::collections::BTreeMap;

use quorum_core::lang::{Lang, is_test_path};
use quorum_core::{AgentRole, FileDiff, FileStatus, Finding};

use super::edit::closing;

/// The statement classes, in report order.
pub(super) const STATEMENT_CLASSES: [&str; 4] = ["invert-condition", "drop-reraise", "drop-await", "remove-finally"];

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
    /// How many lines from `index` the mutant replaces (1 but for a
    /// deleted block).
    pub span: usize,
    /// The replacement: one line, or nothing when the lines are deleted.
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
        Lang::Python if t == "raise" || python_reraises_bound(lines, index) => {
            Some((format!("{ind}pass"), format!("{line}  # re-raised")))
        }
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

/// `raise e` where the nearest `except … as e:` above (within 15 lines,
/// shallower) binds `e`: the caught error passed on.
fn python_reraises_bound(lines: &[&str], index: usize) -> bool {
    let Some(name) = lines[index].trim().strip_prefix("raise ").map(str::trim) else {
        return false;
    };
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return false;
    }
    let level = indent(lines[index]).len();
    lines[index.saturating_sub(15)..index]
        .iter()
        .rev()
        .find(|l| l.trim().starts_with("except") && indent(l).len() < level)
        .is_some_and(|l| {
            l.trim_end()
                .strip_suffix(':')
                .and_then(|c| c.rsplit_once(" as "))
                .is_some_and(|(_, bound)| bound.trim() == name)
        })
}

/// The mutant and control lines for an awaited call (`await f(…)`,
/// `f(…).await`) with its `await` removed. JavaScript's `return await f()`
/// is left out: returning the promise is the same but inside a `try`.
fn drop_await(lang: Lang, line: &str) -> Option<(String, String)> {
    let t = line.trim_start();
    let comment = match lang {
        Lang::Python => "#",
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Rust => "//",
        _ => return None,
    };
    if t.starts_with(comment) || t.starts_with('*') {
        return None;
    }
    if lang == Lang::Rust {
        let at = line.find(").await")? + 1;
        return Some((
            format!("{}{}", &line[..at], &line[at + ".await".len()..]),
            format!("{line} // awaited"),
        ));
    }
    let at = line.find("await ")?;
    if at > 0 && line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == '.') {
        return None;
    }
    if lang != Lang::Python && t.starts_with("return await ") {
        return None;
    }
    // The awaited thing is a call: a name chain, then `(`.
    let rest = &line[at + "await ".len()..];
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))?;
    if end == 0 || !rest[end..].starts_with('(') {
        return None;
    }
    Some((format!("{}{rest}", &line[..at]), format!("{line}  {comment} awaited")))
}

/// A `finally` block of a `try` that also has a handler (so the code still
/// parses without it): the lines to delete and the control (the header
/// with a comment). Python `finally:`; JavaScript/TypeScript/Java `} finally {`
/// up to, not including, the `}` that closes it (which then closes the catch).
fn remove_finally(lang: Lang, lines: &[&str], index: usize) -> Option<(usize, String, String)> {
    let line = lines[index];
    let t = line.trim();
    let level = indent(line).len();
    let (handler, opener, comment): (&str, &str, &str) = match lang {
        Lang::Python if t == "finally:" => ("except", "try:", "#"),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Java if t == "} finally {" => {
            ("} catch", "try {", "//")
        }
        _ => return None,
    };
    // A handler of the same `try` above: at this indent, before the `try`.
    let mut has_handler = false;
    for l in lines[..index].iter().rev() {
        if l.trim().is_empty() || indent(l).len() > level {
            continue;
        }
        if indent(l).len() < level {
            return None;
        }
        let lt = l.trim();
        if lt.starts_with(handler) {
            has_handler = true;
        }
        if lt.starts_with(opener) || lt.ends_with(opener) {
            break;
        }
    }
    if !has_handler {
        return None;
    }
    let body_end = (index + 1..lines.len()).find(|&k| {
        let l = lines[k];
        !l.trim().is_empty() && indent(l).len() <= level
    })?;
    let span = if lang == Lang::Python {
        // Trailing blank lines stay.
        (index + 1..body_end)
            .rev()
            .find(|&k| !lines[k].trim().is_empty())
            .map_or(1, |k| k + 1 - index)
    } else {
        if !lines[body_end].trim().starts_with('}') {
            return None;
        }
        body_end - index
    };
    (span > 1).then(|| (span, String::new(), format!("{line}  {comment} cleanup")))
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
        // Comments and docstrings (a doctest's `>>> await client.get(…)`)
        // are not code: a mutation there changes nothing.
        let docs = quorum_engine::documentation::documentation_lines(path, text);
        for index in 0..lines.len() {
            if docs.contains(&(index as u32 + 1)) {
                continue;
            }
            let made = match class {
                "invert-condition" => invert(lang, lines[index]).map(|(m, c)| (1, m, c)),
                "drop-reraise" => drop_reraise(lang, &lines, index).map(|(m, c)| (1, m, c)),
                "drop-await" => drop_await(lang, lines[index]).map(|(m, c)| (1, m, c)),
                "remove-finally" => remove_finally(lang, &lines, index),
                _ => None,
            };
            if let Some((span, mutant, control)) = made {
                out.push(LineSite {
                    key: format!("{path}:{}", index + 1),
                    path: path.clone(),
                    index,
                    span,
                    mutant,
                    control,
                });
            }
        }
    }
    out
}

/// What the offline engine's rules find in the mutant: `site`'s `span`
/// lines replaced by its mutant line (or deleted, for an empty one).
pub(super) fn review_mutant(files: &BTreeMap<String, String>, site: &LineSite) -> Vec<Finding> {
    review(files, site, site.span, &site.mutant)
}

/// What the offline engine's rules find in the control: `site`'s line
/// rewritten without changing what it means.
pub(super) fn review_control(files: &BTreeMap<String, String>, site: &LineSite) -> Vec<Finding> {
    review(files, site, 1, &site.control)
}

/// The reviewer's and the static agent's rules on `site`'s file with `span`
/// lines from the site replaced by `new_line` (none when it is empty).
fn review(files: &BTreeMap<String, String>, site: &LineSite, span: usize, new_line: &str) -> Vec<Finding> {
    let old = &files[&site.path];
    let mut lines: Vec<&str> = old.split('\n').collect();
    let replacement: Vec<&str> = if new_line.is_empty() { vec![] } else { vec![new_line] };
    lines.splice(site.index..site.index + span, replacement);
    let new = lines.join("\n");
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
    fn awaits_are_dropped_only_from_calls() {
        assert_eq!(
            drop_await(Lang::Python, "    row = await db.fetch(q)").unwrap(),
            (
                "    row = db.fetch(q)".into(),
                "    row = await db.fetch(q)  # awaited".into()
            )
        );
        assert_eq!(drop_await(Lang::TypeScript, "  return await load(id);"), None);
        assert_eq!(drop_await(Lang::TypeScript, "  for await (const x of xs) {"), None);
        assert_eq!(drop_await(Lang::JavaScript, "  const v = await ready;"), None);
        assert_eq!(
            drop_await(Lang::Rust, "    let r = client.get(url).await?;").unwrap().0,
            "    let r = client.get(url)?;"
        );
    }

    #[test]
    fn a_finally_is_deleted_only_where_the_try_keeps_a_handler() {
        let py = [
            "    try:",
            "        run()",
            "    except E:",
            "        log()",
            "    finally:",
            "        close()",
            "",
            "    done()",
        ];
        let (span, mutant, control) = remove_finally(Lang::Python, &py, 4).unwrap();
        assert_eq!((span, mutant.as_str()), (2, ""));
        assert_eq!(control, "    finally:  # cleanup");
        let bare = ["    try:", "        run()", "    finally:", "        close()"];
        assert_eq!(remove_finally(Lang::Python, &bare, 2), None);
        let js = [
            "  try {",
            "    run();",
            "  } catch (e) {",
            "    log(e);",
            "  } finally {",
            "    close();",
            "  }",
        ];
        assert_eq!(remove_finally(Lang::JavaScript, &js, 4).unwrap().0, 2);
    }

    #[test]
    fn the_new_statement_classes_are_found_and_their_controls_are_quiet() {
        let files = BTreeMap::from([
            (
                "app/io.py".to_string(),
                "import errno\n\n\ndef echo(out, data):\n    try:\n        out.write(data)\n    except OSError as e:\n        if e.errno != errno.EPIPE:\n            raise\n    return True\n\n\nasync def pay(gateway, order):\n    receipt = await gateway.charge(order)\n    return receipt.id\n\n\ndef save(lock, path):\n    lock.acquire()\n    try:\n        write(path)\n    except OSError:\n        log.warning(\"failed\")\n    finally:\n        lock.release()\n    return True\n".to_string(),
            ),
            (
                "web/load.ts".to_string(),
                "export async function load(db, id) {\n  try {\n    const row = await db.find(id);\n    return row.name;\n  } catch (err) {\n    if (err.code !== 'ENOENT') {\n      throw err;\n    }\n  } finally {\n    db.release();\n  }\n}\n".to_string(),
            ),
        ]);
        for class in ["drop-reraise", "drop-await", "remove-finally"] {
            let sites = line_sites(class, &files);
            assert_eq!(sites.len(), 2, "{class}: {sites:?}");
            for site in &sites {
                let found = review_mutant(&files, site);
                assert!(about(&found, site), "{class} at {}: {found:?}", site.key);
                let noise = review_control(&files, site);
                assert!(noise.is_empty(), "{class} control at {}: {noise:?}", site.key);
            }
        }
    }

    #[test]
    fn a_dropped_reraise_is_found_and_its_control_is_quiet() {
        let files = BTreeMap::from([(
            "app/pay.py".to_string(),
            "def charge(card):\n    try:\n        gateway.charge(card)\n    except GatewayError:\n        log.warning(\"charge failed\")\n        raise\n    return True\n".to_string(),
        )]);
        let sites = line_sites("drop-reraise", &files);
        assert_eq!(sites.len(), 1);
        assert!(about(&review_mutant(&files, &sites[0]), &sites[0]));
        assert!(review_control(&files, &sites[0]).is_empty());
    }
}
