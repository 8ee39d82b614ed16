//! Arithmetic edge cases: division by a length that can be zero.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, new_side};
use crate::lang::{Family, indent};

pub struct DivisionByLength;

static META: RuleMeta = RuleMeta {
    id: "division-by-length",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.75,
    title: "Division by a length that can be zero",
    rationale: "Dividing by `len(x)` raises `ZeroDivisionError` when `x` is empty, and nothing before \
the division in this function rules that out. Guard the empty case (and decide what it should return).",
};

static DIV_LEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"/\s*len\(\s*([\w.]+)\s*\)").unwrap());

impl Rule for DivisionByLength {
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
                if !added {
                    continue;
                }
                let Some(c) = DIV_LEN.captures(text) else { continue };
                let var = regex::escape(&c[1]);
                let guard = Regex::new(&format!(
                    r"(if\s+(not\s+)?{var}\b|len\(\s*{var}\s*\)\s*(==|!=|>|<|>=|<=)|\bif\s+len\(\s*{var}\s*\)|\bor\b|\bif\b.*\belse\b|assert\s+{var}\b)"
                ))
                .expect("escaped pattern");
                // Look back through the enclosing function (stop at its `def`).
                let level = indent(text);
                let mut guarded = guard.is_match(text);
                let mut saw_def = false;
                for (_, t, _) in side[..i].iter().rev() {
                    if guard.is_match(t) {
                        guarded = true;
                        break;
                    }
                    if t.trim_start().starts_with("def ") && indent(t) < level {
                        saw_def = true;
                        break;
                    }
                }
                // Without the start of the function in view we cannot know.
                if !guarded && saw_def {
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
    use crate::rules::testutil::hit_lines;

    fn lines(l: &[&str]) -> Vec<u32> {
        hit_lines(&DivisionByLength, "u.py", l)
    }

    #[test]
    fn unguarded_division() {
        assert_eq!(
            lines(&[
                " def mean(xs):",
                "-    if not xs:",
                "-        return 0.0",
                "+    return sum(xs) / len(xs)"
            ]),
            vec![2]
        );
    }

    #[test]
    fn guarded_or_unknown() {
        assert!(
            lines(&[
                " def mean(xs):",
                "     if not xs:",
                "         return 0.0",
                "+    return sum(xs) / len(xs)"
            ])
            .is_empty()
        );
        assert!(lines(&[" def mean(xs):", "+    return sum(xs) / len(xs) if xs else 0.0"]).is_empty());
        assert!(
            lines(&[
                " def mean(xs):",
                "     if len(xs) == 0:",
                "         raise ValueError",
                "+    return sum(xs) / len(xs)"
            ])
            .is_empty()
        );
        // The function's start is not in the hunk: a guard may sit above it.
        assert!(lines(&["     total = sum(xs)", "+    return total / len(xs)"]).is_empty());
    }
}
