//! Mutable default arguments.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, added_lines};
use crate::lang::Lang;

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

static DEF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(async\s+)?def\s+\w+\s*\(.*\w+\s*(:\s*[^=,)]+)?=\s*(\[\s*\]|\{\s*\}|list\(\)|dict\(\)|set\(\))")
        .unwrap()
});

impl Rule for MutableDefault {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, file: &FileDiff, lang: Lang) -> Vec<Hit> {
        if lang != Lang::Python {
            return vec![];
        }
        added_lines(file)
            .filter(|(_, t)| DEF.is_match(t))
            .map(|(n, t)| Hit::at(n, t))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    #[test]
    fn mutable_defaults() {
        let n = |l: &str| MutableDefault.check(&diff("a.py", &[l]), Lang::Python).len();
        assert_eq!(n("+def add(item, into=[]):"), 1);
        assert_eq!(n("+def add(item, into: dict = {}):"), 1);
        assert_eq!(n("+def add(item, into=None):"), 0);
        assert_eq!(n("+def add(item, into=()):"), 0);
    }
}
