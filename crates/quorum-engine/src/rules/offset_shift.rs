//! The `offset-shifted` rule: a `(n - 1) * size` offset that lost (or
//! gained) its `- 1` on a replaced line, which moves every result by one
//! whole page.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, similar_pairs};
use crate::lang::Family;

/// `(page - 1) * size` replaced by `page * size` (or the reverse).
pub struct OffsetShift;

static OFFSET_META: RuleMeta = RuleMeta {
    id: "offset-shifted",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.7,
    title: "Offset shifted by one page",
    rationale: "An offset computed as `(n - 1) * size` now drops (or gains) the `- 1`, which moves every \
result by one whole page: with 1-based page numbers the first page is skipped. Check which numbering \
the callers use.",
};

static SHIFTED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\(\s*(\w+)\s*-\s*1\s*\)\s*\*\s*(\w+)").unwrap());

impl Rule for OffsetShift {
    fn meta(&self) -> &'static RuleMeta {
        &OFFSET_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if !lang.is_code() {
            return vec![];
        }
        let mut hits = Vec::new();
        for h in &file.hunks {
            for (old, n, new) in similar_pairs(h) {
                let dropped = SHIFTED.captures(old).filter(|c| {
                    let plain = format!("{} * {}", &c[1], &c[2]);
                    normalise(new).contains(&normalise(&plain)) && !SHIFTED.is_match(new)
                });
                let added = SHIFTED.captures(new).filter(|c| {
                    let plain = format!("{} * {}", &c[1], &c[2]);
                    normalise(old).contains(&normalise(&plain)) && !SHIFTED.is_match(old)
                });
                if dropped.is_some() || added.is_some() {
                    hits.push(Hit::at(n, format!("`{}` became `{}`", old.trim(), new.trim())));
                }
            }
        }
        hits
    }
}

fn normalise(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    fn hits(rule: &dyn Rule, l: &[&str]) -> Vec<Hit> {
        rule.check(&diff("c.py", l), Family::Python)
    }

    #[test]
    fn offsets() {
        assert_eq!(
            hits(
                &OffsetShift,
                &["-    return (page - 1) * size", "+    return page * size"]
            )
            .len(),
            1
        );
        assert_eq!(
            hits(
                &OffsetShift,
                &["-    start = page * size", "+    start = (page - 1) * size"]
            )
            .len(),
            1
        );
        // Validation merged above it: the offset line still pairs with its old self.
        assert_eq!(
            hits(
                &OffsetShift,
                &[
                    "-    if n < 1:",
                    "-        raise ValueError('n')",
                    "-    return (n - 1) * per_page",
                    "+    if n < 1 or per_page < 1:",
                    "+        raise ValueError('bad')",
                    "+    return n * per_page",
                ]
            )
            .len(),
            1
        );
        assert!(
            hits(
                &OffsetShift,
                &[
                    "-    return (page - 1) * size",
                    "+    return (page - 1) * size  # 1-based"
                ]
            )
            .is_empty()
        );
        assert!(
            hits(
                &OffsetShift,
                &["-    return (page - 1) * size", "+    return (page - 1) * per_page"]
            )
            .is_empty()
        );
    }
}
