//! Errors that are swallowed. Two shapes, both judged on the handler's whole
//! block:
//! - a handler that used to re-raise (or return an error) and now carries on:
//!   the change itself removed the propagation, which is the strongest
//!   evidence there is (any exception type). In brace languages this is
//!   also seen when the `catch` line is above the hunk (read from the head
//!   file), and when a `try/finally`, which let every error through, became
//!   a `try/catch` that does not rethrow;
//! - a *broad* handler (`except:`, `Exception`, `BaseException`) whose body
//!   does nothing but pass, log, or return nothing.
//!
//! A narrow handler with a fallback (`except ValueError: return None`,
//! `except OSError: size = 0`) in new code is a deliberate choice the diff
//! cannot second-guess, so it is not reported: on real code (click,
//! requests) those are most handlers.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Hunk, Severity};
use regex::Regex;

use super::{Context, Hit, Rule, RuleMeta, new_side, old_side, reraise_removed};
use crate::lang::{Family, indent};

pub struct SwallowedException;

static META: RuleMeta = RuleMeta {
    id: "swallowed-exception",
    category: Category::ErrorHandling,
    severity: Severity::Major,
    confidence: 0.8,
    title: "Exception swallowed",
    rationale: "The handler catches the error and carries on as if the operation had succeeded: the \
caller cannot tell it failed, and the failure is at best a log line. Re-raise (possibly wrapped), or \
return an explicit error the caller must handle.",
};

pub(super) static EXCEPT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*except\b([^:]*):\s*(#.*)?$").unwrap());
static BROAD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(\(?\s*(Exception|BaseException)\s*\)?)?\s*(as\s+\w+)?\s*$").unwrap());
static AS_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+as\s+\w+\s*$").unwrap());
/// A statement that only reports: a logger, `print`, `warnings.warn`, `traceback.print_exc`.
static LOG_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\w*log\w*|LOG|self\.\w*log\w*|warnings|traceback|sys\.stderr)\.\w+\(|^print\(").unwrap()
});

/// The handler's body: the lines after `lines[at]` indented deeper than
/// it, or `None` when the hunk ends inside the block (it cannot be judged).
fn block<'a>(lines: &[(u32, &'a str, bool)], at: usize) -> Option<Vec<(u32, &'a str, bool)>> {
    let level = indent(lines[at].1);
    let body: Vec<_> = lines[at + 1..]
        .iter()
        .take_while(|(_, t, _)| t.trim().is_empty() || indent(t) > level)
        .filter(|(_, t, _)| !t.trim().is_empty())
        .copied()
        .collect();
    let complete = lines.len() > at + 1 + body.len();
    (complete && !body.is_empty()).then_some(body)
}

/// Whether a body propagates the error: re-raises, exits, or returns an
/// explicit error value.
pub(super) fn propagates(stmts: &[&str]) -> bool {
    stmts.iter().any(|s| {
        s.starts_with("raise")
            || s.contains("sys.exit")
            || (s.starts_with("return") && (s.contains("rror") || s.contains("fail") || s.contains("False")))
    })
}

/// Whether a body does nothing but pass, log, or return nothing.
fn only_reports(stmts: &[&str]) -> bool {
    let mut depth = 0i32;
    stmts.iter().all(|s| {
        let inside_call = depth > 0;
        depth += s.matches('(').count() as i32 - s.matches(')').count() as i32;
        inside_call
            || matches!(*s, "pass" | "..." | "continue" | "break" | "return" | "return None")
            || LOG_CALL.is_match(s)
    })
}

fn caught(clause: &str) -> String {
    AS_NAME
        .replace(clause.trim(), "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The removed line of an old handler for the same exceptions, at the same
/// indent, whose block propagated the error, if the change removed that.
fn removed_propagation<'a>(h: &'a Hunk, clause: &str, level: usize) -> Option<&'a str> {
    let old = old_side(h);
    (0..old.len()).find_map(|i| {
        let c = EXCEPT.captures(old[i].1)?;
        if indent(old[i].1) != level || caught(&c[1]) != caught(clause) {
            return None;
        }
        let body = block(&old, i)?;
        body.iter()
            .find(|(_, t, removed)| *removed && propagates(&[t.trim()]))
            .map(|(_, t, _)| t.trim())
    })
}

/// JavaScript/TypeScript and Java: `} catch (e) {` / `catch (IOException e) {` / `catch {`.
pub(super) static CATCH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:\}\s*)?catch\s*(?:\(([^)]*)\))?\s*\{\s*(?://.*)?$").unwrap());

/// Whether a brace-language catch body passes the error on: `throw`, a
/// rejection, an exit, an error return, or an error handed to a callback.
pub(super) fn propagates_braced(stmts: &[&str]) -> bool {
    stmts.iter().any(|s| {
        s.starts_with("throw")
            || s.contains("reject(")
            || s.contains("process.exit")
            || s.contains("System.exit")
            || (s.starts_with("return") && (s.contains("rror") || s.contains("fail") || s.contains("false")))
            || CALLBACK_ERR.is_match(s)
    })
}

/// `callback(err)`, `return next(error)`: the error handed on (Node style).
static CALLBACK_ERR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(return\s+)?(callback|cb|next|done)\s*\(\s*\w*err").unwrap());

/// The caught type of a Java clause (`IOException e` → `IOException`);
/// empty for JavaScript (one untyped binding).
fn caught_braced(clause: &str) -> String {
    let words: Vec<&str> = clause.split_whitespace().collect();
    words[..words.len().saturating_sub(1)].join(" ")
}

static FINALLY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(?:\}\s*)?finally\s*\{").unwrap());
/// `throw err;`: the caught error passed on unchanged.
pub(super) static RETHROW: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*throw\s+([\w$]+)\s*;?\s*$").unwrap());

/// A removed `finally` at `level` that no `finally` on the new side of the
/// hunk replaces: the block that let every error through is gone.
fn finally_replaced(h: &Hunk, level: usize) -> Option<&str> {
    let gone = old_side(h)
        .into_iter()
        .find(|(_, t, removed)| *removed && FINALLY.is_match(t) && indent(t) == level)?;
    let kept = new_side(h)
        .iter()
        .any(|(_, t, _)| FINALLY.is_match(t) && indent(t) == level);
    (!kept).then_some(gone.1.trim())
}

/// Brace languages: a catch block whose `throw` (or other propagation) the
/// change removed and whose new body does not propagate.
fn braced(file: &FileDiff, head: Option<&str>) -> Vec<Hit> {
    let mut hits = Vec::new();
    for h in &file.hunks {
        let side = new_side(h);
        for (i, (n, text, added)) in side.iter().enumerate() {
            let Some(c) = CATCH.captures(text) else { continue };
            let clause = c.get(1).map_or("", |m| m.as_str());
            let Some(body) = block(&side, i) else { continue };
            if !*added && !body.iter().any(|(_, _, a)| *a) {
                continue;
            }
            let stmts: Vec<&str> = body.iter().map(|(_, t, _)| t.trim()).filter(|t| *t != "}").collect();
            if propagates_braced(&stmts) {
                continue;
            }
            let old = old_side(h);
            let removed = (0..old.len()).find_map(|j| {
                let oc = CATCH.captures(old[j].1)?;
                let oclause = oc.get(1).map_or("", |m| m.as_str());
                if indent(old[j].1) != indent(text) || caught_braced(oclause) != caught_braced(clause) {
                    return None;
                }
                let ob = block(&old, j)?;
                ob.iter()
                    .find(|(_, t, removed)| *removed && propagates_braced(&[t.trim()]))
                    .map(|(_, t, _)| t.trim())
            });
            let evidence = format!("{} → {}", text.trim(), stmts.join("; "));
            if let Some(removed) = removed {
                let mut hit = Hit::at(*n, format!("{evidence} (the change removed `{removed}`)"));
                hit.confidence = Some(0.85);
                hits.push(hit);
            } else if *added && let Some(gone) = finally_replaced(h, indent(text)) {
                let mut hit = Hit::at(
                    *n,
                    format!("{evidence} (the change replaced `{gone}`, which let every error through)"),
                );
                hit.confidence = Some(0.8);
                hits.push(hit);
            }
        }
    }
    if let Some(head) = head {
        add_apart(&mut hits, reraise_removed::braced(file, head));
    }
    hits
}

/// Adds each of `more` not within three lines of a hit already there (the
/// same swallow seen from the hunk and from the head file).
fn add_apart(hits: &mut Vec<Hit>, more: Vec<Hit>) {
    for hit in more {
        if hits.iter().all(|h| h.line.abs_diff(hit.line) > 3) {
            hits.push(hit);
        }
    }
}

impl Rule for SwallowedException {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        self.check_in(file, lang, &Context::default())
    }
    fn check_in(&self, file: &FileDiff, lang: Family, ctx: &Context<'_>) -> Vec<Hit> {
        if matches!(lang, Family::JavaScript | Family::Java) {
            return braced(file, ctx.head);
        }
        if lang != Family::Python {
            return vec![];
        }
        let mut hits = Vec::new();
        for h in &file.hunks {
            let side = new_side(h);
            for (i, (n, text, added)) in side.iter().enumerate() {
                let Some(c) = EXCEPT.captures(text) else { continue };
                let Some(body) = block(&side, i) else { continue };
                if !*added && !body.iter().any(|(_, _, a)| *a) {
                    continue;
                }
                let stmts: Vec<&str> = body.iter().map(|(_, t, _)| t.trim()).collect();
                if propagates(&stmts) {
                    continue;
                }
                let evidence = format!("{} → {}", text.trim(), stmts.join("; "));
                if let Some(removed) = removed_propagation(h, &c[1], indent(text)) {
                    let mut hit = Hit::at(*n, format!("{evidence} (the change removed `{removed}`)"));
                    hit.confidence = Some(0.85);
                    hits.push(hit);
                } else if BROAD.is_match(&c[1]) && only_reports(&stmts) {
                    let mut hit = Hit::at(*n, format!("{evidence} (catches every exception)"));
                    hit.confidence = Some(0.7);
                    hits.push(hit);
                }
            }
        }
        if let Some(head) = ctx.head {
            add_apart(&mut hits, reraise_removed::python(file, head));
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{diff, hit_lines};

    fn lines(l: &[&str]) -> Vec<u32> {
        hit_lines(&SwallowedException, "o.py", l)
    }

    #[test]
    fn a_handler_that_no_longer_propagates() {
        // The handler re-raised; now it logs and hands back a value.
        assert_eq!(
            lines(&[
                "     try:",
                "         upload(blob)",
                "-    except StorageError:",
                "-        log.exception('upload failed')",
                "-        raise",
                "+    except StorageError as err:",
                "+        log.warning('upload failed: %s', err)",
                "+        return blob",
                "     return blob",
            ]),
            vec![3]
        );
        // Only the raise was replaced; the clause is unchanged context.
        assert_eq!(
            lines(&[
                "     try:",
                "         send()",
                "     except TimeoutError:",
                "-        raise",
                "+        pass",
                "     done()",
            ]),
            vec![3]
        );
        // An explicit error return removed counts too.
        assert_eq!(
            lines(&[
                "     try:",
                "         parse(doc)",
                "     except SchemaError:",
                "-        return Result.error('bad document')",
                "+        return None",
                " y = 1",
            ]),
            vec![3]
        );
    }

    #[test]
    fn a_broad_handler_that_only_passes_or_logs() {
        assert_eq!(lines(&["+    except Exception:", "+        pass", " y = 1"]), vec![1]);
        assert_eq!(
            lines(&[
                "+    except:",
                "+        logger.warning(",
                "+            'sync failed for %s', user_id)",
                "+    return",
                " y = 1",
            ]),
            vec![1]
        );
        assert_eq!(
            lines(&[
                "+    except BaseException as e:",
                "+        print(e)",
                "+        continue",
                " y"
            ]),
            vec![1]
        );
    }

    #[test]
    fn deliberate_or_handled_is_fine() {
        // Narrow handlers with a fallback, in new code.
        assert!(lines(&["+    except OSError:", "+        pass", " y"]).is_empty());
        assert!(lines(&["+    except ValueError:", "+        return None", " y"]).is_empty());
        assert!(
            lines(&[
                "+    except UnicodeError:",
                "+        text = raw.decode('latin-1')",
                " y"
            ])
            .is_empty()
        );
        assert!(lines(&["+    except KeyError:", "+        value = default", " y"]).is_empty());
        // A broad handler with a real fallback, or that converts the error.
        assert!(lines(&["+    except Exception:", "+        value = compute_default()", " y"]).is_empty());
        assert!(
            lines(&[
                "+    except Exception as e:",
                "+        raise OrderError('x') from e",
                " y"
            ])
            .is_empty()
        );
        assert!(
            lines(&[
                "+    except Exception:",
                "+        return Response.error(400, 'bad')",
                " y"
            ])
            .is_empty()
        );
        // The old handler propagated a different exception type.
        assert!(
            lines(&[
                "     try:",
                "         send()",
                "-    except TimeoutError:",
                "-        raise",
                "+    except ConnectionError:",
                "+        pass",
                "     done()",
            ])
            .is_empty()
        );
        // Still propagates after the change.
        assert!(
            lines(&[
                "     except TimeoutError:",
                "-        raise",
                "+        raise RetryLater()",
                "     done()",
            ])
            .is_empty()
        );
        // Block cut off by the end of the hunk: cannot judge.
        assert!(lines(&["+    except Exception:", "+        log.info('x')"]).is_empty());
        // Untouched handler.
        assert!(lines(&["     except Exception:", "         pass", " y", "+z = 1"]).is_empty());
    }

    #[test]
    fn a_javascript_or_java_catch_that_no_longer_rethrows() {
        let js = |l: &[&str]| -> Vec<u32> {
            SwallowedException
                .check(&diff("a.ts", l), Family::JavaScript)
                .into_iter()
                .map(|h| h.line)
                .collect()
        };
        assert_eq!(
            js(&[
                "   try {",
                "     save(doc);",
                "   } catch (err) {",
                "-    log.error(err);",
                "-    throw err;",
                "+    log.error(err);",
                "   }",
                "   done();",
            ]),
            vec![3]
        );
        // Still rethrows (wrapped), or never did: nothing.
        assert!(
            js(&[
                "   try {",
                "     save(doc);",
                "   } catch (err) {",
                "-    throw err;",
                "+    throw new SaveError('save failed', { cause: err });",
                "   }",
                "   done();",
            ])
            .is_empty()
        );
        assert!(
            js(&[
                "   try {",
                "     save(doc);",
                "   } catch (err) {",
                "-    log.warn(err);",
                "+    log.error(err);",
                "   }",
                "   done();",
            ])
            .is_empty()
        );
        // Handing the error to a callback propagates it.
        assert!(
            js(&[
                "   } catch (err) {",
                "-    throw err;",
                "+    callback(err);",
                "   }",
                "   done();",
            ])
            .is_empty()
        );
        let java = SwallowedException.check(
            &diff(
                "A.java",
                &[
                    "     } catch (IOException e) {",
                    "-        throw new UncheckedIOException(e);",
                    "+        logger.warn(\"read failed\", e);",
                    "     }",
                    "     return data;",
                ],
            ),
            Family::Java,
        );
        assert_eq!(java.len(), 1);
    }

    #[test]
    fn a_finally_that_became_a_catch_without_rethrow() {
        let d = diff(
            "run.ts",
            &[
                "   function run(job) {",
                "     try {",
                "       job.start();",
                "-    } finally {",
                "+    } catch (e) {",
                "       job.release();",
                "     }",
                "   }",
            ],
        );
        let hits = SwallowedException.check(&d, Family::JavaScript);
        assert_eq!(hits.iter().map(|h| h.line).collect::<Vec<_>>(), [4]);
        assert!(hits[0].detail.contains("finally"), "{hits:?}");
        // Rethrowing in the new catch keeps the error flowing.
        let d = diff(
            "run.ts",
            &[
                "     try {",
                "       job.start();",
                "-    } finally {",
                "+    } catch (e) {",
                "       job.release();",
                "+      throw e;",
                "     }",
            ],
        );
        assert!(SwallowedException.check(&d, Family::JavaScript).is_empty());
        // A catch added before a finally that stays is not a replacement.
        let d = diff(
            "run.ts",
            &[
                "     try {",
                "       job.start();",
                "-    } finally {",
                "+    } catch (e) {",
                "+      log(e);",
                "+    } finally {",
                "       job.release();",
                "     }",
            ],
        );
        assert!(SwallowedException.check(&d, Family::JavaScript).is_empty());
    }

    #[test]
    fn a_rethrow_removed_below_a_catch_above_the_hunk() {
        // Above the hunk: only the head file shows the catch.
        let d = diff(
            "p.js",
            &[
                "     if (err.code === 'invalid') {",
                "       report(err);",
                "     }",
                "-    throw err;",
                "+    return prev;",
                "   }",
                " }",
            ],
        );
        let head = "function parse(v, prev) {\n  try {\n    return fn(v, prev);\n  } catch (err) {\n    if (err.code === 'invalid') {\n      report(err);\n    }\n    return prev;\n  }\n}\n";
        // The helper numbers the hunk from line 1; in the head it starts at 5.
        let d = renumber(d, 4);
        let hits = SwallowedException.check_in(&d, Family::JavaScript, &with_head(head));
        assert_eq!(hits.iter().map(|h| h.line).collect::<Vec<_>>(), [8], "{hits:?}");
        // A throw left in one branch covers that branch only: the path
        // past it, which rethrew, now returns.
        let branch = head.replace("report(err)", "throw wrap(err)");
        assert_eq!(
            SwallowedException
                .check_in(&d, Family::JavaScript, &with_head(&branch))
                .len(),
            1
        );
        // A block that still throws on its own path is not reported.
        let still = head.replace("    return prev;\n", "    throw wrap(err);\n");
        assert!(
            SwallowedException
                .check_in(&d, Family::JavaScript, &with_head(&still))
                .is_empty()
        );
        // Without the head file nothing is claimed.
        assert!(SwallowedException.check(&d, Family::JavaScript).is_empty());
    }

    fn with_head(head: &str) -> Context<'_> {
        Context {
            head: Some(head),
            ..Context::default()
        }
    }

    #[test]
    fn a_reraise_removed_from_a_branch_of_the_handler() {
        // click's shape: the handler re-raises on one branch only; the hunk
        // shows the branch, not the handler.
        let d = renumber(
            diff(
                "o.py",
                &[
                    "         if e.errno != errno.EPIPE:",
                    "-            raise",
                    "+            pass",
                    "     return written",
                ],
            ),
            4,
        );
        let head = "def echo(data):\n    try:\n        written = out.write(data)\n    except OSError as e:\n        if e.errno != errno.EPIPE:\n            pass\n    return written\n";
        let hits = SwallowedException.check_in(&d, Family::Python, &with_head(head));
        assert_eq!(hits.iter().map(|h| h.line).collect::<Vec<_>>(), [6], "{hits:?}");
        assert!(
            hits[0].detail.contains("`if e.errno != errno.EPIPE:` no longer"),
            "{hits:?}"
        );
        // The hunk alone cannot tell: no claim without the head.
        assert!(SwallowedException.check(&d, Family::Python).is_empty());
        // A branch that still raises something else is passing it on.
        let wrapped = head.replace("            pass", "            raise WriteError(e)");
        assert!(
            SwallowedException
                .check_in(&d, Family::Python, &with_head(&wrapped))
                .is_empty()
        );
        // Outside a handler a removed `raise` is not a swallowed error.
        let plain = head.replace("    except OSError as e:", "    if failed:");
        assert!(
            SwallowedException
                .check_in(&d, Family::Python, &with_head(&plain))
                .is_empty()
        );
    }

    #[test]
    fn a_reraise_removed_past_a_branch_that_raises() {
        // marshmallow's shape: one branch wraps the error, the rest re-raise
        // it; removing the re-raise swallows every error but the wrapped one.
        let d = renumber(
            diff(
                "s.py",
                &[
                    "             raise TypeError(msg) from error",
                    "-        raise error",
                    "+        pass",
                    "     self.bind(name)",
                ],
            ),
            5,
        );
        let head = "def bind(self, name):\n    try:\n        self.field.bind(name)\n    except TypeError as error:\n        if isinstance(self.field, type):\n            raise TypeError(msg) from error\n        pass\n    self.bind(name)\n";
        let hits = SwallowedException.check_in(&d, Family::Python, &with_head(head));
        assert_eq!(hits.iter().map(|h| h.line).collect::<Vec<_>>(), [7], "{hits:?}");
        assert!(hits[0].detail.contains("the handler no longer"), "{hits:?}");
    }

    #[test]
    fn a_reraise_moved_within_the_handler_is_not_a_swallow() {
        // `if strict: raise` / `return default` became
        // `if not strict: return default` / `raise`.
        let d = renumber(
            diff(
                "o.py",
                &[
                    "     except KeyError:",
                    "-        if strict:",
                    "-            raise",
                    "-        return default",
                    "+        if not strict:",
                    "+            return default",
                    "+        raise",
                ],
            ),
            2,
        );
        let head = "def get(d, k, strict, default):\n    try:\n        return d[k]\n    except KeyError:\n        if not strict:\n            return default\n        raise\n";
        assert!(
            SwallowedException
                .check_in(&d, Family::Python, &with_head(head))
                .is_empty()
        );
    }

    #[test]
    fn a_rethrow_removed_from_a_branch_of_a_catch() {
        let d = renumber(
            diff(
                "p.ts",
                &[
                    "     if (err.code !== 'ENOENT') {",
                    "-      throw err;",
                    "+      console.error(err);",
                    "     }",
                    "   }",
                ],
            ),
            4,
        );
        let head = "function load(p) {\n  try {\n    return read(p);\n  } catch (err) {\n    if (err.code !== 'ENOENT') {\n      console.error(err);\n    }\n  }\n}\n";
        let hits = SwallowedException.check_in(&d, Family::JavaScript, &with_head(head));
        assert_eq!(hits.iter().map(|h| h.line).collect::<Vec<_>>(), [6], "{hits:?}");
        // Not under a catch: nothing to swallow.
        let plain = head.replace("} catch (err) {", "} finally {");
        assert!(
            SwallowedException
                .check_in(&d, Family::JavaScript, &with_head(&plain))
                .is_empty()
        );
    }

    /// `d` with every line number moved down by `by`.
    fn renumber(mut d: FileDiff, by: u32) -> FileDiff {
        for h in &mut d.hunks {
            h.new_start += by;
            h.old_start += by;
            for l in &mut h.lines {
                l.new_line = l.new_line.map(|n| n + by);
                l.old_line = l.old_line.map(|n| n + by);
            }
        }
        d
    }
}
