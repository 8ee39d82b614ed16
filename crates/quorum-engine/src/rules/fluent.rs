//! A method that returned its receiver (`return this` / `return self`, the
//! builder style that lets calls chain: `new Option(f).env("PORT").default(80)`)
//! and, after the change, returns nothing at all. Every chained call on its
//! result now fails on `undefined` / `None`, in this repository and in every
//! user's code, which the graph cannot see. The evidence is the change
//! itself (it removed the `return`) plus the head file (no `return` is left
//! in the method), so a `return this` that merely moved is not reported.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, LineKind, Severity};
use regex::Regex;

use super::scope::{Block, enclosing_braces, enclosing_def, lines_of};
use super::{Context, Hit, Rule, RuleMeta, removed_with_anchor};
use crate::lang::Family;

pub struct ReceiverReturnRemoved;

static META: RuleMeta = RuleMeta {
    id: "receiver-return-removed",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.8,
    title: "Method no longer returns its receiver",
    rationale: "The change removes `return this` (`return self`) and the method now returns nothing, so \
every chained call on its result (`obj.a().b()`) fails on undefined/None, in this repository and in \
the callers of a public API. Keep returning the receiver.",
};

static RETURN_THIS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*return\s+this\s*;?\s*(//.*)?$").unwrap());
static RETURN_SELF: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*return\s+self\s*(#.*)?$").unwrap());
/// A method or function header that opens its body on the line:
/// `env(name) {`, `async run(): Promise<void> {`, `function f(a) {`,
/// `const f = (a) => {`. Control-flow headers are excluded by the caller.
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\bfunction\b[^{]*\{\s*$|=>\s*\{\s*$|^\s*(?:(?:static|async|public|private|protected|override|get|set)\s+)*[\w$]+\s*\([^()]*\)\s*(?::\s*[^{]+)?\{\s*$)").unwrap()
});
static CONTROL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(\}\s*)?(if|else|for|while|switch|catch|try|do|with)\b").unwrap());
static RETURN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\breturn\b").unwrap());

impl Rule for ReceiverReturnRemoved {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, _file: &FileDiff, _lang: Family) -> Vec<Hit> {
        // Without the head file the method's remaining body is unknown.
        vec![]
    }
    fn check_in(&self, file: &FileDiff, lang: Family, ctx: &Context<'_>) -> Vec<Hit> {
        let Some(head) = ctx.head else { return vec![] };
        let pattern: &Regex = match lang {
            Family::JavaScript => &RETURN_THIS,
            Family::Python => &RETURN_SELF,
            // Java and Rust: a method that stops returning fails to compile.
            _ => return vec![],
        };
        let mut hits = Vec::new();
        for h in &file.hunks {
            let readded = h
                .lines
                .iter()
                .any(|l| l.kind == LineKind::Added && pattern.is_match(&l.text));
            if readded {
                continue;
            }
            for (anchor, text) in removed_with_anchor(h) {
                if !pattern.is_match(text) {
                    continue;
                }
                let Some(block) = method_around(head, anchor, lang) else {
                    continue;
                };
                let body = lines_of(head, block);
                let header = body.first().copied().unwrap_or("");
                if body.iter().skip(1).any(|l| RETURN.is_match(l)) {
                    continue;
                }
                let mut hit = Hit::at(
                    anchor.min(block.close),
                    format!(
                        "`{}` no longer returns (the change removed `{}`)",
                        header.trim(),
                        text.trim()
                    ),
                );
                hit.start_line = Some(block.open);
                if hits.iter().all(|x: &Hit| x.line != hit.line) {
                    hits.push(hit);
                }
            }
        }
        hits
    }
}

/// The method the removed line was in: for brace languages the innermost
/// block around the removal, which must be a function's body; for Python
/// the `def` above the line before the removal.
fn method_around(head: &str, anchor: u32, lang: Family) -> Option<Block> {
    if lang == Family::Python {
        // The line after the removal may already be the next `def`; the
        // line before it is then the method's own last line.
        return [anchor, anchor.saturating_sub(1).max(1)]
            .into_iter()
            .filter_map(|at| enclosing_def(head, at))
            .find(|b| b.open < anchor && b.close + 1 >= anchor.saturating_sub(1));
    }
    let block = enclosing_braces(head, anchor)?;
    let header = head.lines().nth(block.open as usize - 1)?;
    (HEADER.is_match(header) && !CONTROL.is_match(header)).then_some(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    fn hits(path: &str, lines: &[&str], head: &str) -> Vec<u32> {
        let lang = Family::of(path);
        ReceiverReturnRemoved
            .check_in(
                &diff(path, lines),
                lang,
                &Context {
                    head: Some(head),
                    ..Context::default()
                },
            )
            .into_iter()
            .map(|h| h.line)
            .collect()
    }

    #[test]
    fn a_builder_method_that_stops_returning_this() {
        let d = [
            " class Query {",
            "   limit(n) {",
            "+    if (n < 0) throw new RangeError('negative');",
            "     this.max = n;",
            "-    return this;",
            "   }",
            " }",
        ];
        let head = "class Query {\n  limit(n) {\n    if (n < 0) throw new RangeError('negative');\n    this.max = n;\n  }\n}\n";
        assert_eq!(hits("q.js", &d, head), [5]);
    }

    #[test]
    fn a_return_this_that_moved_or_stayed_is_not_reported() {
        // Moved within the hunk.
        let d = [
            " class Query {",
            "   limit(n) {",
            "-    return this;",
            "+    this.max = n;",
            "+    return this;",
            "   }",
            " }",
        ];
        let head = "class Query {\n  limit(n) {\n    this.max = n;\n    return this;\n  }\n}\n";
        assert!(hits("q.ts", &d, head).is_empty());
        // The method still returns something else (an early exit path).
        let d = [
            "   limit(n) {",
            "     if (n === this.max) return this.clone();",
            "     this.max = n;",
            "-    return this;",
            "   }",
        ];
        let head = "  limit(n) {\n    if (n === this.max) return this.clone();\n    this.max = n;\n  }\n";
        assert!(hits("q.js", &d, head).is_empty());
        // A `return this` removed from an `if` block, not the method's end.
        let d = [
            "   m() {",
            "     if (x) {",
            "-      return this;",
            "+      y();",
            "     }",
            "   }",
        ];
        let head = "  m() {\n    if (x) {\n      y();\n    }\n  }\n";
        assert!(hits("q.js", &d, head).is_empty());
    }

    #[test]
    fn python_return_self_removed() {
        let d = [
            " class Builder:",
            "     def add(self, x):",
            "-        self.items.append(x)",
            "-        return self",
            "+        self.items.append(validate(x))",
            " ",
            "     def build(self):",
        ];
        let head = "class Builder:\n    def add(self, x):\n        self.items.append(validate(x))\n\n    def build(self):\n        return list(self.items)\n";
        assert_eq!(hits("b.py", &d, head), [3]);
        // Without the head file the rule says nothing.
        assert!(
            ReceiverReturnRemoved
                .check(&diff("b.py", &d), Family::Python)
                .is_empty()
        );
    }
}
