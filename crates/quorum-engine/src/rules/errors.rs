//! Errors that are swallowed: an `except` block that neither re-raises nor
//! returns an explicit error.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, new_side};
use crate::lang::{Lang, indent};

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

static EXCEPT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*except\b([^:]*):\s*(#.*)?$").unwrap());
/// Exceptions routinely used for control flow, where a fallback is the point.
static CONTROL_FLOW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(KeyError|IndexError|StopIteration|StopAsyncIteration|ImportError|ModuleNotFoundError|AttributeError|FileNotFoundError|NotImplementedError|CancelledError|GeneratorExit|KeyboardInterrupt)\b").unwrap()
});

impl Rule for SwallowedException {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, file: &FileDiff, lang: Lang) -> Vec<Hit> {
        if lang != Lang::Python {
            return vec![];
        }
        let mut hits = Vec::new();
        for h in &file.hunks {
            let side = new_side(h);
            for (i, (n, text, added)) in side.iter().enumerate() {
                let Some(c) = EXCEPT.captures(text) else { continue };
                if CONTROL_FLOW.is_match(&c[1]) {
                    continue;
                }
                let level = indent(text);
                let body: Vec<&(u32, &str, bool)> = side[i + 1..]
                    .iter()
                    .take_while(|(_, t, _)| t.trim().is_empty() || indent(t) > level)
                    .filter(|(_, t, _)| !t.trim().is_empty())
                    .collect();
                // The block must be complete within the hunk to be judged.
                let complete = side.len() > i + 1 + body.len();
                if body.is_empty() || !complete {
                    continue;
                }
                let touched = *added || body.iter().any(|(_, _, a)| *a);
                if !touched {
                    continue;
                }
                let stmts: Vec<&str> = body.iter().map(|(_, t, _)| t.trim()).collect();
                let raises = stmts.iter().any(|s| s.starts_with("raise") || s.contains("sys.exit"));
                // Returning an error value explicitly is handling it.
                let returns_error = stmts.iter().any(|s| {
                    s.starts_with("return") && (s.contains("rror") || s.contains("fail") || s.contains("False"))
                });
                if raises || returns_error {
                    continue;
                }
                let only_pass = stmts.iter().all(|s| *s == "pass" || *s == "..." || *s == "continue");
                let mut hit = Hit::at(*n, format!("{} → {}", text.trim(), stmts.join("; ")));
                hit.start_line = None;
                if !only_pass {
                    hit.confidence = Some(0.75);
                }
                hits.push(hit);
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    fn lines(l: &[&str]) -> Vec<u32> {
        SwallowedException
            .check(&diff("o.py", l), Lang::Python)
            .into_iter()
            .map(|h| h.line)
            .collect()
    }

    #[test]
    fn swallowed_by_pass_or_log_and_return() {
        assert_eq!(
            lines(&[
                "     try:",
                "         pay()",
                "+    except PaymentError:",
                "+        pass",
                " done()"
            ]),
            vec![3]
        );
        assert_eq!(
            lines(&[
                "     try:",
                "         refund()",
                "-    except PaymentError:",
                "-        raise",
                "+    except PaymentError as exc:",
                "+        log.warning('failed: %s', exc)",
                "+        return order",
                "     return order",
            ]),
            vec![3]
        );
        assert_eq!(
            lines(&["+    except Exception:", "+        logger.info('x')", " y = 1"]),
            vec![1]
        );
    }

    #[test]
    fn handled_or_control_flow_is_fine() {
        assert!(
            lines(&[
                "+    except PaymentError as e:",
                "+        raise OrderError('x') from e",
                " y"
            ])
            .is_empty()
        );
        assert!(lines(&["+    except KeyError:", "+        value = default", " y"]).is_empty());
        assert!(
            lines(&[
                "+    except ValueError:",
                "+        return Response.error(400, 'bad')",
                " y"
            ])
            .is_empty()
        );
        // Block cut off by the end of the hunk: cannot judge.
        assert!(lines(&["+    except Exception:", "+        log.info('x')"]).is_empty());
        // Untouched handler.
        assert!(lines(&["     except Exception:", "         pass", " y", "+z = 1"]).is_empty());
    }
}
