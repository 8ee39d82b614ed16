//! A `finally` block the change deleted while the `try` it guarded stays:
//! the cleanup it ran on every path (a lock released, a file closed, a
//! state restored) now runs on no path, or — when its statements were moved
//! below the `try` — only when nothing failed.
//!
//! Not this rule's business: a `finally` that became a `catch`/`except`
//! (the swallowed-exception rule judges that), cleanup moved into a context
//! manager or its equivalent (`with`, `using`, `defer`, Java's
//! try-with-resources), and a `try` deleted together with its `finally`
//! whose cleanup went with it (the resource itself is gone).

use std::sync::LazyLock;

use quorum_core::{Category, DiffLine, FileDiff, Hunk, LineKind, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta};
use crate::lang::{Family, indent};

pub struct FinallyRemoved;

static META: RuleMeta = RuleMeta {
    id: "finally-removed",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.75,
    title: "Cleanup in `finally` removed",
    rationale: "The `finally` block ran its cleanup whether or not the guarded code failed; without \
it, an exception leaves the lock held, the file or connection open, or the state half-changed. Keep \
the `finally`, or move the cleanup into a context manager (`with`, `using`, `defer`).",
};

static PY_FINALLY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*finally\s*:\s*(#.*)?$").unwrap());
static BRACED_FINALLY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:\}\s*)?finally\s*\{\s*(//.*)?$").unwrap());
static PY_TRY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*try\s*:").unwrap());
static BRACED_TRY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(?:\}\s*)?try\s*[{(]").unwrap());
/// What takes over a `finally`'s job: a handler (judged elsewhere) or a
/// construct that cleans up by itself.
static TAKES_OVER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:\}\s*)?(?:except\b|catch\b|finally\b|with\b|async\s+with\b|using\b|await\s+using\b|defer\b|try\s*\()",
    )
    .unwrap()
});

/// A deleted `finally` block of a hunk: its header's index among the
/// hunk's lines, and its body's statements.
struct Deleted<'a> {
    at: usize,
    header: &'a str,
    body: Vec<&'a str>,
}

/// Every `finally` block the hunk deletes whole (header and body).
fn deleted_blocks(h: &Hunk, lang: Family) -> Vec<Deleted<'_>> {
    let lines = &h.lines;
    let mut out = Vec::new();
    for (at, l) in lines.iter().enumerate() {
        let braced = lang != Family::Python;
        let is_header = if braced {
            BRACED_FINALLY.is_match(&l.text)
        } else {
            PY_FINALLY.is_match(&l.text)
        };
        if l.kind != LineKind::Removed || !is_header {
            continue;
        }
        let level = indent(&l.text);
        // The body on the old side: deeper lines (Python) or up to the
        // brace that closes at the header's indent.
        let old: Vec<&DiffLine> = lines[at + 1..].iter().filter(|x| x.kind != LineKind::Added).collect();
        let mut body = Vec::new();
        let mut closed = false;
        for x in old {
            let t = x.text.trim();
            if t.is_empty() {
                continue;
            }
            let ends = if braced {
                indent(&x.text) <= level && t.starts_with('}')
            } else {
                indent(&x.text) <= level
            };
            if ends {
                closed = true;
                break;
            }
            if x.kind != LineKind::Removed {
                // Part of the body stays: the block was edited, not deleted.
                body.clear();
                break;
            }
            body.push(t);
        }
        // A hunk that ends inside the block cannot show it was deleted whole.
        if closed && !body.is_empty() {
            out.push(Deleted {
                at,
                header: l.text.trim(),
                body,
            });
        }
    }
    out
}

impl Rule for FinallyRemoved {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if !matches!(lang, Family::Python | Family::JavaScript | Family::Java) {
            return vec![];
        }
        let try_line: &Regex = if lang == Family::Python { &PY_TRY } else { &BRACED_TRY };
        let mut hits = Vec::new();
        for h in &file.hunks {
            let added: Vec<&str> = h
                .lines
                .iter()
                .filter(|l| l.kind == LineKind::Added)
                .map(|l| l.text.as_str())
                .collect();
            if added.iter().any(|t| TAKES_OVER.is_match(t)) {
                continue;
            }
            for d in deleted_blocks(h, lang) {
                let level = indent(h.lines[d.at].text.as_str());
                let try_deleted = h.lines[..d.at]
                    .iter()
                    .any(|l| l.kind == LineKind::Removed && try_line.is_match(&l.text) && indent(&l.text) == level);
                let moved = d.body.iter().all(|s| added.iter().any(|a| a.trim() == *s));
                if try_deleted && !moved {
                    continue;
                }
                // Anchored on the first line after the deleted block.
                let Some(line) = h.lines[d.at..]
                    .iter()
                    .find_map(|l| l.new_line)
                    .or_else(|| h.lines[..d.at].iter().rev().find_map(|l| l.new_line))
                else {
                    continue;
                };
                let cleanup = d.body.join("; ");
                let detail = if moved {
                    format!(
                        "`{}` removed and `{cleanup}` moved out of it: it now runs only when nothing failed",
                        d.header
                    )
                } else {
                    format!(
                        "`{}` removed with `{cleanup}`: the cleanup no longer runs when the guarded code fails",
                        d.header
                    )
                };
                hits.push(Hit::at(line, detail));
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::hit_lines;

    #[test]
    fn a_deleted_finally_is_reported() {
        let py = [
            " def save(path, data):",
            "     lock.acquire()",
            "     try:",
            "         write(path, data)",
            "     except OSError:",
            "         log.warning('failed')",
            "-    finally:",
            "-        lock.release()",
            "     return True",
        ];
        assert_eq!(hit_lines(&FinallyRemoved, "s.py", &py), [7]);
        let js = [
            " try {",
            "   await run(job);",
            " } catch (e) {",
            "   report(e);",
            "-} finally {",
            "-  job.release();",
            " }",
            " next();",
        ];
        assert_eq!(hit_lines(&FinallyRemoved, "s.ts", &js), [5]);
    }

    #[test]
    fn cleanup_moved_below_the_try_is_reported() {
        let py = [
            "-    try:",
            "-        write(path, data)",
            "-    finally:",
            "-        lock.release()",
            "+    write(path, data)",
            "+    lock.release()",
            "     return True",
        ];
        let hits = FinallyRemoved.check(&crate::rules::testutil::diff("s.py", &py), Family::Python);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].detail.contains("only when nothing failed"), "{hits:?}");
    }

    #[test]
    fn a_finally_replaced_or_gone_with_its_resource_is_not() {
        // Into a context manager.
        let with = [
            "-    lock.acquire()",
            "-    try:",
            "-        write(path, data)",
            "-    finally:",
            "-        lock.release()",
            "+    with lock:",
            "+        write(path, data)",
            "     return True",
        ];
        assert!(hit_lines(&FinallyRemoved, "s.py", &with).is_empty());
        // The try, its finally and the resource all gone.
        let gone = [
            "-    lock.acquire()",
            "-    try:",
            "-        write(path, data)",
            "-    finally:",
            "-        lock.release()",
            "+    write(path, data)",
            "     return True",
        ];
        assert!(hit_lines(&FinallyRemoved, "s.py", &gone).is_empty());
        // The finally edited, not deleted.
        let edited = [
            "     finally:",
            "-        lock.release()",
            "+        lock.release_all()",
            "     return True",
        ];
        assert!(hit_lines(&FinallyRemoved, "s.py", &edited).is_empty());
        // Only the header's comment changed (the harness's control shape).
        let control = [
            "     except OSError:",
            "         pass",
            "-    finally:",
            "+    finally:  # cleanup",
            "         lock.release()",
            "     return True",
        ];
        assert!(hit_lines(&FinallyRemoved, "s.py", &control).is_empty());
    }
}
