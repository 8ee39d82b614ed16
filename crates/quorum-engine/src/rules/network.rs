//! Network calls without a timeout.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, new_side};
use crate::lang::{Family, strip_comment};

/// An HTTP call that can wait forever.
pub struct MissingTimeout;

static META: RuleMeta = RuleMeta {
    id: "missing-timeout",
    category: Category::ErrorHandling,
    severity: Severity::Major,
    confidence: 0.85,
    title: "Network call without a timeout",
    rationale: "`requests`/`httpx`/`urlopen` wait forever by default: one slow or dead peer then holds a \
worker (and whatever lock or connection it has) indefinitely. Pass an explicit `timeout=`.",
};

static CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(requests|httpx)\.(get|post|put|patch|delete|head|options|request)\s*\(|\burlopen\s*\(").unwrap()
});

impl Rule for MissingTimeout {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if lang != Family::Python {
            return vec![];
        }
        let mut hits = Vec::new();
        for h in &file.hunks {
            let side = new_side(h);
            for (i, (n, text, _)) in side.iter().enumerate() {
                let text = strip_comment(text, lang);
                let Some(m) = CALL.find(text) else { continue };
                // Gather the call's text until its parentheses balance; a call
                // that runs past the hunk cannot be judged, so it is skipped.
                let mut depth = 0i32;
                let mut call = String::new();
                let mut touched = false;
                let mut complete = false;
                'lines: for (j, (_, t, added)) in side.iter().enumerate().skip(i) {
                    let t = if j == i { &text[m.start()..] } else { t };
                    touched |= *added;
                    for c in t.chars() {
                        call.push(c);
                        match c {
                            '(' => depth += 1,
                            ')' => {
                                depth -= 1;
                                if depth == 0 {
                                    complete = true;
                                    break 'lines;
                                }
                            }
                            _ => {}
                        }
                    }
                    call.push('\n');
                }
                if complete && touched && !call.contains("timeout") && !call.contains("**") {
                    hits.push(Hit::at(*n, text));
                }
            }
            // Any client (a session, an SDK, a socket helper): the change took
            // a `timeout` argument out of a call that is still there.
            for (line, detail) in dropped_timeouts(h) {
                if !hits.iter().any(|x| x.line == line) {
                    let mut hit = Hit::at(line, detail);
                    hit.confidence = Some(0.8);
                    hits.push(hit);
                }
            }
        }
        hits
    }
}

static TIMEOUT_ARG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(timeout|connect_timeout|read_timeout)\s*=").unwrap());
static CALLEE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"([A-Za-z_][\w.]*)\s*\(").unwrap());

/// A signature, where `timeout=` is a parameter's default, not an argument.
fn is_definition(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("def ") || t.starts_with("async def ") || t.starts_with("class ")
}

/// Calls whose `timeout=` argument the change removed while the call stays:
/// a replaced line that lost it, or a deleted argument line inside a call
/// whose opening line is still on the new side.
fn dropped_timeouts(h: &quorum_core::Hunk) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let added_timeout = h
        .lines
        .iter()
        .any(|l| l.kind == quorum_core::LineKind::Added && l.text.contains("timeout"));
    if added_timeout {
        return out;
    }
    // One line replaced by one without the argument, the same callee on both.
    for (old, n, new) in super::similar_pairs(h) {
        if TIMEOUT_ARG.is_match(old) && !new.contains("timeout") && !is_definition(new) {
            let callees = |s: &str| CALLEE.captures_iter(s).map(|c| c[1].to_string()).collect::<Vec<_>>();
            let before = callees(old);
            if callees(new).iter().any(|c| before.contains(c)) {
                out.push((n, format!("`{}` became `{}`", old.trim(), new.trim())));
            }
        }
    }
    // A whole `timeout=…,` argument line deleted from a multi-line call.
    let side = new_side(h);
    for (at, removed) in super::removed_with_anchor(h) {
        let t = removed.trim();
        if !(TIMEOUT_ARG.is_match(t) && t.starts_with(|c: char| c.is_alphabetic() || c == '_')) {
            continue;
        }
        // Walk up from where the line was to the call's opening line.
        let mut depth = 0i32;
        for (n, text, _) in side.iter().rev().filter(|(n, _, _)| *n < at) {
            depth += text.matches('(').count() as i32 - text.matches(')').count() as i32;
            if depth > 0 {
                if CALLEE.is_match(text) && !is_definition(text) && !out.iter().any(|(l, _)| l == n) {
                    out.push((*n, format!("`{t}` was removed from this call")));
                }
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{diff, hit_lines};

    fn lines(l: &[&str]) -> Vec<u32> {
        hit_lines(&MissingTimeout, "c.py", l)
    }

    #[test]
    fn multi_line_call_that_lost_its_timeout() {
        assert_eq!(
            lines(&[
                "     r = requests.post(",
                "         url,",
                "-        json=body,",
                "-        timeout=self.timeout,",
                "+        json=body2,",
                "     )",
            ]),
            vec![1]
        );
    }

    #[test]
    fn negatives() {
        assert!(lines(&["+r = requests.get(url, timeout=5)"]).is_empty());
        assert!(lines(&["+r = requests.get(url, **opts)"]).is_empty());
        // A doctest example in a docstring is documentation.
        assert!(
            lines(&[
                "+    >>> r = requests.get('https://example.org')",
                "+    >>> r.status_code"
            ])
            .is_empty()
        );
        // Untouched call: not this change's doing.
        assert!(lines(&[" r = requests.get(url)", "+x = 1"]).is_empty());
        // Runs past the end of the hunk: unknown, not reported.
        assert!(lines(&["+r = requests.get(", "+    url,"]).is_empty());
        assert!(
            MissingTimeout
                .check(&diff("c.js", &["+requests.get(url)"]), Family::JavaScript)
                .is_empty()
        );
    }

    #[test]
    fn any_client_that_lost_its_timeout() {
        assert_eq!(
            lines(&[
                "     resp = self.session.get(",
                "         self.url,",
                "-        timeout=self.timeout,",
                "         headers=h,",
                "     )",
            ]),
            vec![1]
        );
        assert_eq!(
            lines(&[
                "-    data = client.fetch(key, timeout=2.0)",
                "+    data = client.fetch(key)",
            ]),
            vec![1]
        );
        // The timeout moved, or was replaced by another one: not lost.
        assert!(lines(&["-    c.fetch(key, timeout=2)", "+    c.fetch(key, timeout=self.t)"]).is_empty());
        assert!(
            lines(&[
                "-    c.fetch(key, timeout=2)",
                "+    c.fetch(key)",
                "+    c.settimeout(2)",
            ])
            .is_empty()
        );
        // A different call replaced it.
        assert!(lines(&["-    c.fetch(key, timeout=2)", "+    cached(key)"]).is_empty());
        // A parameter's default, not a call's argument.
        assert!(lines(&["-def fetch(key, timeout=2):", "+def fetch(key):", "     pass"]).is_empty());
        assert!(
            lines(&[
                "     def fetch(",
                "         key,",
                "-        timeout=2,",
                "     ):",
                "         pass",
            ])
            .is_empty()
        );
    }

    #[test]
    fn single_line_positive() {
        assert_eq!(lines(&["+data = urlopen(url).read()"]), vec![1]);
    }
}
