//! Network calls without a timeout.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, new_side};
use crate::lang::{Lang, strip_comment};

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
    fn check(&self, file: &FileDiff, lang: Lang) -> Vec<Hit> {
        if lang != Lang::Python {
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
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    fn lines(l: &[&str]) -> Vec<u32> {
        MissingTimeout
            .check(&diff("c.py", l), Lang::Python)
            .into_iter()
            .map(|h| h.line)
            .collect()
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
                .check(&diff("c.js", &["+requests.get(url)"]), Lang::JavaScript)
                .is_empty()
        );
    }

    #[test]
    fn single_line_positive() {
        assert_eq!(lines(&["+data = urlopen(url).read()"]), vec![1]);
    }
}
