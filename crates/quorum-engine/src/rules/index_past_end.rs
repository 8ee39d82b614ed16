//! The `index-past-end` rule: an added line that reads a sequence at its own
//! length (`xs[xs.length]`, `xs[len(xs)]`, `xs[xs.len()]`), one element past
//! the end in every language.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta};
use crate::lang::Family;

/// A read one past the end: `xs[xs.length]` (JavaScript/TypeScript,
/// always `undefined`), `xs[len(xs)]` (Python, always `IndexError`),
/// `xs[xs.len()]` (Rust, always a panic). The last element is `length - 1`.
/// Writes are left alone: `xs[xs.length] = v` is an append in JavaScript.
pub struct IndexPastEnd;

static PAST_END_META: RuleMeta = RuleMeta {
    id: "index-past-end",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.85,
    title: "Index one past the end",
    rationale: "Indexing a sequence at its own length reads one element past the end: JavaScript gives \
`undefined`, Python raises `IndexError`, Rust panics. The last element is at `length - 1`.",
};

static PAST_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([A-Za-z_$][\w$.]*)\s*\[\s*(?:len\(\s*([A-Za-z_$][\w$.]*)\s*\)|([A-Za-z_$][\w$.]*)\s*\.\s*(?:length|len\(\s*\)))\s*\]").unwrap()
});

impl Rule for IndexPastEnd {
    fn meta(&self) -> &'static RuleMeta {
        &PAST_END_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if !lang.is_code() {
            return vec![];
        }
        super::added_lines(file)
            .filter(|(_, t)| {
                let t = crate::lang::strip_comment(t, lang);
                PAST_END.captures_iter(t).any(|c| {
                    let indexed = &c[1];
                    let measured = c.get(2).or(c.get(3)).map_or("", |m| m.as_str());
                    // `xs[xs.length] = v` appends in JavaScript: a write is fine.
                    let rest = t[c.get(0).map_or(0, |m| m.end())..].trim_start();
                    let write = rest.starts_with('=') && !rest.starts_with("==");
                    indexed == measured && !write
                })
            })
            .map(|(n, t)| Hit::at(n, t))
            .collect()
    }
}

#[cfg(test)]
mod past_end {
    use super::*;
    use crate::rules::testutil::hit_lines;

    fn lines(path: &str, l: &[&str]) -> Vec<u32> {
        hit_lines(&IndexPastEnd, path, l)
    }

    #[test]
    fn indexing_at_the_length_is_flagged_in_every_language() {
        assert_eq!(
            lines("a.js", &["+    const last = this.args[this.args.length];"]),
            vec![1]
        );
        assert_eq!(lines("a.py", &["+    last = items[len(items)]"]), vec![1]);
        assert_eq!(lines("a.rs", &["+    let last = v[v.len()];"]), vec![1]);
    }

    #[test]
    fn the_last_element_and_other_arrays_are_fine() {
        assert!(lines("a.js", &["+    const last = xs[xs.length - 1];"]).is_empty());
        assert!(lines("a.js", &["+    const y = ys[xs.length];"]).is_empty());
        assert!(lines("a.py", &["+    tail = items[len(items) - 1]"]).is_empty());
        assert!(lines("a.js", &["+    // xs[xs.length] is undefined"]).is_empty());
        // Writing at the length appends (JavaScript's `push` by hand).
        assert!(lines("a.js", &["+    queue[queue.length] = job;"]).is_empty());
        assert_eq!(lines("a.js", &["+    if (queue[queue.length] === job) {"]), vec![1]);
        assert!(
            lines("a.js", &["     const last = xs[xs.length];"]).is_empty(),
            "only added lines"
        );
    }
}
