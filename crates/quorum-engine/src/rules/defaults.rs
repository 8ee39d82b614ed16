//! Mutable default arguments.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, new_side};
use crate::lang::Family;

pub struct MutableDefault;

static META: RuleMeta = RuleMeta {
    id: "mutable-default-argument",
    category: Category::Bug,
    severity: Severity::Minor,
    confidence: 0.7,
    title: "Mutable default argument",
    rationale: "A default value is evaluated once, when the function is defined: every call that \
relies on it shares (and mutates) the same list or dict. Default to `None` and create it inside.",
};

const MUTABLE: &str = r"(\[\s*\]|\{\s*\}|list\(\)|dict\(\)|set\(\))";

static DEF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^\s*(async\s+)?def\s+\w+\s*\(.*\w+\s*(:\s*[^=,)]+)?=\s*{MUTABLE}"
    ))
    .unwrap()
});
/// One parameter per line, as in a long signature: `items: list = [],`.
static PARAM_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"^\s*\*?\w+\s*(:\s*[^=]+)?=\s*{MUTABLE}\s*,?\s*(#.*)?$")).unwrap());
static DEF_OPEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(async\s+)?def\s+\w+\s*\(").unwrap());

/// Whether new-side line `at` sits inside an open `def (...)` signature: a
/// `def name(` above it with nothing in between that closes the signature
/// (the same line shape in a call, `f(items=[])`, is fine). `None` when the
/// hunk starts before the answer is known.
fn in_signature(side: &[(u32, &str, bool)], at: usize) -> Option<bool> {
    for (_, text, _) in side[..at].iter().rev() {
        if DEF_OPEN.is_match(text) {
            return Some(!text.contains("):") && !text.contains(") ->"));
        }
        let t = text.trim();
        if t.ends_with(':') || t.starts_with(')') || t.contains("):") || !PARAMISH.is_match(t) {
            return Some(false);
        }
    }
    None
}

/// A line that can be part of a parameter list.
static PARAMISH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\*{0,2}\w+\b.*,?|\*,?|/,?)$").unwrap());

impl Rule for MutableDefault {
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
            for (i, (n, text, added)) in side.iter().enumerate() {
                if !*added {
                    continue;
                }
                let parameter = PARAM_LINE.captures(text).is_some_and(|c| {
                    // An annotated `name: T = []` only occurs in a signature, so
                    // it needs no `def` in sight; a bare `name=[]` could be a call.
                    let annotated = c.get(1).is_some();
                    in_signature(&side, i).unwrap_or(annotated)
                });
                if DEF.is_match(text) || parameter {
                    hits.push(Hit::at(*n, *text));
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

    #[test]
    fn mutable_defaults() {
        let n = |l: &str| MutableDefault.check(&diff("a.py", &[l]), Family::Python).len();
        assert_eq!(n("+def add(item, into=[]):"), 1);
        assert_eq!(n("+def add(item, into: dict = {}):"), 1);
        assert_eq!(n("+def add(item, into=None):"), 0);
        assert_eq!(n("+def add(item, into=()):"), 0);
    }

    #[test]
    fn one_parameter_per_line() {
        let lines = |l: &[&str]| -> Vec<u32> {
            MutableDefault
                .check(&diff("a.py", l), Family::Python)
                .into_iter()
                .map(|h| h.line)
                .collect()
        };
        let signature = [
            "     def __init__(",
            "         self,",
            "         name: str,",
            "-        tags: t.Optional[t.List[str]] = None,",
            "+        tags: t.List[str] = [],",
            "         *,",
            "         hidden: bool = False,",
            "     ) -> None:",
        ];
        assert_eq!(lines(&signature), vec![4]);
        // The `def` is above the hunk's context: an annotated default is
        // still a signature; a bare `name=[]` might be a call argument.
        assert_eq!(lines(&signature[3..]), vec![1]);
        assert!(lines(&["         name,", "+        tags=[],", "     )"]).is_empty());
        // The same shape in a call is a keyword argument, not a default.
        assert!(lines(&["     build(", "         name,", "+        tags=[],", "     )"]).is_empty());
        assert!(lines(&["     x = dict(", "+        tags=[],", "     )"]).is_empty());
        // After the signature closed, in the body.
        assert!(lines(&["     def f(a):", "+        seen = []", "     return a"]).is_empty());
    }
}
