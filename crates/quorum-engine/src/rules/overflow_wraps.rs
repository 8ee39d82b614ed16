//! The `overflow-now-wraps` rule (Rust): a `checked_*` operation replaced by
//! its `wrapping_*`, `overflowing_*` or `unchecked_*` form, so the overflow
//! error is gone. Matched on the operation and its receiver across a run of
//! replaced lines, since the error handling around it usually goes too.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, LineKind, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta};
use crate::lang::Family;

/// Rust: a `checked_*` operation replaced by its `wrapping_*` /
/// `overflowing_*` / `unchecked_*` form (the overflow error is gone).
pub struct OverflowNowWraps;

static WRAP_META: RuleMeta = RuleMeta {
    id: "overflow-now-wraps",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.75,
    title: "Overflow now wraps silently",
    rationale: "A `checked_*` operation that reported overflow is replaced by one that wraps (or is \
unchecked), so a value past the type's range now becomes a different, wrong number instead of an \
error (CWE-190). Keep the checked form, or show why overflow cannot happen here.",
};

static CHECKED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\w+)\s*\.\s*checked_(add|sub|mul|div|rem|pow|neg|shl|shr)\b").unwrap());
static WRAPPING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\w+)\s*\.\s*(?:wrapping|overflowing|unchecked)_(add|sub|mul|div|rem|pow|neg|shl|shr)\b").unwrap()
});

impl Rule for OverflowNowWraps {
    fn meta(&self) -> &'static RuleMeta {
        &WRAP_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if lang != Family::Rust {
            return vec![];
        }
        let mut hits = Vec::new();
        for h in &file.hunks {
            // Each run of removed lines and the added lines after it: an
            // added `x.wrapping_op(` where a removed line had `x.checked_op(`
            // (the error handling around it usually goes too, so the lines
            // are matched on the operation, not on similarity).
            let mut removed: Vec<&str> = vec![];
            let mut in_added = false;
            for l in &h.lines {
                match l.kind {
                    LineKind::Removed => {
                        if in_added {
                            removed.clear();
                            in_added = false;
                        }
                        removed.push(&l.text);
                    }
                    LineKind::Added => {
                        in_added = true;
                        if CHECKED.is_match(&l.text) {
                            continue;
                        }
                        // Joined, so a chain split over lines (`value\n.checked_mul(10)`)
                        // still names its receiver (the pattern allows newlines).
                        let run = removed.join("\n");
                        let hit = WRAPPING
                            .captures_iter(&l.text)
                            .find(|w| CHECKED.captures_iter(&run).any(|c| c[1] == w[1] && c[2] == w[2]));
                        if let (Some(w), Some(n)) = (hit, l.new_line) {
                            hits.push(Hit::at(
                                n,
                                format!("`{}.checked_{}` became `{}`", &w[1], &w[2], l.text.trim()),
                            ));
                        }
                    }
                    LineKind::Context => {
                        removed.clear();
                        in_added = false;
                    }
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
    fn a_checked_chain_split_over_lines_replaced_by_wrapping() {
        let lines = [
            "-        match value",
            "-            .checked_mul(10)",
            "-            .and_then(|value| value.checked_add(d))",
            "-        {",
            "-            Some(sum) => value = sum,",
            "-            None => return Err(overflow()),",
            "-        }",
            "+        value = value.wrapping_mul(10).wrapping_add(d);",
        ];
        let h = OverflowNowWraps.check(&diff("src/parse.rs", &lines), Family::Rust);
        assert_eq!(h.iter().map(|h| h.line).collect::<Vec<_>>(), vec![1]);
        // Another receiver's checked op does not count.
        let other = [
            "-        match total",
            "-            .checked_mul(10)",
            "+        value = value.wrapping_mul(10);",
        ];
        assert!(
            OverflowNowWraps
                .check(&diff("src/parse.rs", &other), Family::Rust)
                .is_empty()
        );
    }

    #[test]
    fn checked_arithmetic_replaced_by_wrapping() {
        let rs = |l: &[&str]| OverflowNowWraps.check(&diff("src/n.rs", l), Family::Rust);
        assert_eq!(
            rs(&[
                "-        value = value.checked_mul(10).ok_or(Error::Overflow)?;",
                "+        value = value.wrapping_mul(10);",
            ])
            .len(),
            1
        );
        // Still checked, another operation, or not Rust: nothing.
        assert!(
            rs(&[
                "-        let x = a.checked_add(b)?;",
                "+        let x = a.checked_add(b).ok_or(E)?;"
            ])
            .is_empty()
        );
        assert!(
            rs(&[
                "-        let x = a.checked_add(b)?;",
                "+        let x = a.wrapping_mul(b);"
            ])
            .is_empty()
        );
        assert!(
            rs(&[
                "-        let h = h.wrapping_mul(31);",
                "+        let h = h.wrapping_mul(37);"
            ])
            .is_empty()
        );
        assert!(
            OverflowNowWraps
                .check(
                    &diff("a.py", &["-    x = a.checked_add(b)", "+    x = a.wrapping_add(b)"]),
                    Family::Python
                )
                .is_empty()
        );
    }
}
