//! The `condition-inverted` rule: a guard's comparison replaced by its
//! negation or with its boundary moved (`<` ↔ `<=`), a logical connector
//! swapped (`&&` ↔ `||`), or one negation added or dropped, every operand the
//! same. It reads only what changed, so confidence is lower than for pattern
//! rules and the critic's threshold decides what ships. The text comparisons
//! it relies on are in `condition_edits`.

use std::collections::HashMap;

use quorum_core::{Category, FileDiff, LineKind, Severity};

use super::condition_edits::{
    ALIAS, Alias, BOUNDARY, NEGATION, became_guard_clause, chain_negation_toggled, comparisons, connector_swapped,
    expand_aliases, is_guard, mirrored, negation_toggled, operator_flipped, word_key,
};
use super::{Hit, Rule, RuleMeta, similar_pairs};
use crate::lang::Family;

/// A comparison replaced by its negation or a moved boundary.
pub struct ConditionChanged;

static INVERTED_META: RuleMeta = RuleMeta {
    id: "condition-inverted",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.7,
    title: "Condition inverted",
    rationale: "This change replaces a comparison with its exact opposite (or `&&`/`and` with \
`||`/`or`, or the reverse) while every operand stays the same, so the guard now accepts what it rejected and rejects what it accepted. If the behaviour really \
was meant to flip, the callers and tests that relied on it need to change too.",
};

impl Rule for ConditionChanged {
    fn meta(&self) -> &'static RuleMeta {
        &INVERTED_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if !lang.is_code() {
            return vec![];
        }
        let mut hits = Vec::new();
        for h in &file.hunks {
            for (old, n, new) in similar_pairs(h) {
                // A logical connector replaced (`&&` ↔ `||`, `and` ↔ `or`),
                // every operand the same: in any boolean expression, guard or not.
                if connector_swapped(old, new, lang) {
                    hits.push(Hit::at(n, format!("`{}` became `{}`", old.trim(), new.trim())));
                    continue;
                }
                if !is_guard(new) {
                    continue;
                }
                // `a <= b` is `b >= a`: the old comparisons both ways round,
                // so swapped operands are still the same comparison.
                let mut before = comparisons(old);
                before.extend(before.clone().into_iter().map(|(l, op, r)| (r, mirrored(op), l)));
                let after = comparisons(new);
                // The same operands compared the opposite way (or with the
                // boundary moved), and the old comparison is gone.
                let change = after.iter().find_map(|(l, op, r)| {
                    let same_ops = |(ol, _, or): &&(String, &str, String)| ol == l && or == r;
                    let old = before.iter().filter(same_ops).map(|(_, o, _)| *o).collect::<Vec<_>>();
                    if old.contains(op) {
                        return None;
                    }
                    old.iter().find_map(|o| {
                        if NEGATION.contains(&(*o, *op)) {
                            Some(true)
                        } else if BOUNDARY.contains(&(*o, *op)) {
                            Some(false)
                        } else {
                            None
                        }
                    })
                });
                // Or the same guard with one negation added or dropped.
                let change = change.or_else(|| {
                    (negation_toggled(old, new, lang) || chain_negation_toggled(old, new, lang)).then_some(true)
                });
                // An inverted test that now guards what was the `else`
                // branch is the early-return refactor, not a flipped guard.
                let change = change.filter(|_| !became_guard_clause(h, n));
                let detail = format!("`{}` became `{}`", old.trim(), new.trim());
                match change {
                    Some(true) => hits.push(Hit::at(n, detail)),
                    Some(false) => {
                        let mut hit = Hit::at(n, detail);
                        hit.severity = Some(Severity::Minor);
                        hit.confidence = Some(0.6);
                        hits.push(hit);
                    }
                    None => {}
                }
            }
            // A line moved within the hunk (an `else` dissolved, a match arm
            // reordered) is not next to its old version, so the similarity
            // pairing above never sees it. Across the whole hunk only the
            // strictest evidence counts: the same tokens but for the
            // connectors, one negation or one comparison operator.
            // Removed lines by their words (connectors and `not` left out):
            // every kind of evidence below keeps the words, so only lines
            // with the same key can match, and a large hunk costs one pass.
            let mut removed: HashMap<String, Vec<&str>> = HashMap::new();
            for l in h.lines.iter().filter(|l| l.kind == LineKind::Removed) {
                removed.entry(word_key(&l.text)).or_default().push(l.text.as_str());
            }
            // Variables the change introduced (`const found = find(x);`): a
            // guard on one is compared with the expression it names, so
            // `if (!find(x))` → `const found = find(x); if (found)` is seen.
            let aliases: Vec<Alias> = h
                .lines
                .iter()
                .filter(|l| l.kind == LineKind::Added)
                .filter_map(|l| ALIAS.captures(&l.text))
                .map(|c| Alias::new(&c[1], c[2].trim()))
                .collect();
            for l in h.lines.iter().filter(|l| l.kind == LineKind::Added) {
                let Some(n) = l.new_line else { continue };
                if hits.iter().any(|h: &Hit| h.line == n) {
                    continue;
                }
                let expanded = expand_aliases(&l.text, &aliases);
                let new = expanded.as_str();
                let candidates = removed.get(&word_key(new)).map_or(&[][..], Vec::as_slice);
                let change = candidates.iter().find_map(|old| {
                    if connector_swapped(old, new, lang) {
                        return Some((*old, true));
                    }
                    if !is_guard(new) || became_guard_clause(h, n) {
                        return None;
                    }
                    if negation_toggled(old, new, lang) {
                        return Some((*old, true));
                    }
                    operator_flipped(old, new).map(|negated| (*old, negated))
                });
                if let Some((old, negated)) = change {
                    let mut hit = Hit::at(n, format!("`{}` became `{}`", old.trim(), l.text.trim()));
                    if !negated {
                        hit.severity = Some(Severity::Minor);
                        hit.confidence = Some(0.6);
                    }
                    hits.push(hit);
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

    fn hits(rule: &dyn Rule, l: &[&str]) -> Vec<Hit> {
        rule.check(&diff("c.py", l), Family::Python)
    }

    #[test]
    fn inverted_and_boundary() {
        let h = hits(
            &ConditionChanged,
            &[
                "-    return product.stock >= quantity",
                "+    return product.stock < quantity",
            ],
        );
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].severity, None);
        let h = hits(&ConditionChanged, &["-    if n < limit:", "+    if n <= limit:"]);
        assert_eq!(h[0].severity, Some(Severity::Minor));
        assert_eq!(
            hits(&ConditionChanged, &["-    while x == y:", "+    while x != y:"]).len(),
            1
        );
        // A restructured guard: the conjunction split out, the comparison flipped.
        let h = hits(
            &ConditionChanged,
            &[
                "-    return user.enabled and len(user.keys) > limit",
                "+    if not user.enabled:",
                "+        return False",
                "+    return len(user.keys) <= limit",
            ],
        );
        assert_eq!(h.iter().map(|h| h.line).collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn negation_added_or_dropped() {
        let h = hits(
            &ConditionChanged,
            &[
                "-        if url.startswith(\"https\") and verify:",
                "+        if url.startswith(\"https\") and not verify:",
            ],
        );
        assert_eq!(h.len(), 1);
        assert_eq!(
            hits(&ConditionChanged, &["-    while not done:", "+    while done:"]).len(),
            1
        );
        let js = ConditionChanged.check(
            &diff("a.js", &["-  if (user.isAdmin()) {", "+  if (!user.isAdmin()) {"]),
            Family::JavaScript,
        );
        assert_eq!(js.len(), 1);
        // A negation plus another change is a different condition.
        assert!(hits(&ConditionChanged, &["-    if ready:", "+    if not ready and retry:"]).is_empty());
        // `!=` is a comparison, not a negation token.
        assert!(hits(&ConditionChanged, &["-    if a:", "+    if a != b:"]).is_empty());
        // Not a guard.
        assert!(hits(&ConditionChanged, &["-    flag = verify", "+    flag = not verify"]).is_empty());
    }

    /// A compound condition can only be negated whole in parentheses; that
    /// is the same one negation (found by the mutation harness's
    /// `invert-condition`, which no rule caught).
    #[test]
    fn a_compound_condition_negated_in_parentheses() {
        assert_eq!(
            hits(
                &ConditionChanged,
                &[
                    "-    if e.errno != errno.EPIPE:",
                    "+    if not (e.errno != errno.EPIPE):"
                ]
            )
            .len(),
            1
        );
        let go = ConditionChanged.check(
            &diff("a.go", &["-\tif n > 0 && ok {", "+\tif !(n > 0 && ok) {"]),
            Family::Go,
        );
        assert_eq!(go.len(), 1);
        let js = ConditionChanged.check(
            &diff("a.js", &["-  if (a && b) {", "+  if (!(a && b)) {"]),
            Family::JavaScript,
        );
        assert_eq!(js.len(), 1);
        // Parentheses alone change nothing.
        assert!(hits(&ConditionChanged, &["-    if a and b:", "+    if (a and b):"]).is_empty());
        // A negation of part of it, plus parentheses elsewhere, is a different condition.
        assert!(
            hits(
                &ConditionChanged,
                &["-    if a and b:", "+    if not (a) and (b or c):"]
            )
            .is_empty()
        );
    }

    #[test]
    fn a_reordered_chain_that_lost_or_gained_a_negation() {
        let js = |l: &[&str]| ConditionChanged.check(&diff("a.ts", l), Family::JavaScript);
        let h = js(&[
            "-  if (cache.stale(key) || closing || !enabled(key)) return fallback",
            "+  if (enabled(key) || closing || cache.stale(key)) return fallback",
        ]);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(
            hits(
                &ConditionChanged,
                &["-    if done and not queue.empty():", "+    if queue.empty() and done:"]
            )
            .len(),
            1
        );
        // Reordered, every operand intact: the same condition.
        assert!(js(&["-  if (a(x) || b || !c) {", "+  if (!c || a(x) || b) {"]).is_empty());
        // The negation moved to another operand: not one toggle.
        assert!(js(&["-  if (!a || b) {", "+  if (b || !c) {"]).is_empty());
        // A connector mixed in, or a different operand: not this evidence.
        assert!(js(&["-  if (a || b || !c) {", "+  if (c && b || a) {"]).is_empty());
        assert!(js(&["-  if (a || b || !c) {", "+  if (c || b || d) {"]).is_empty());
        // Not a guard.
        assert!(js(&["-  const f = a || !b;", "+  const f = b || a;"]).is_empty());
    }

    #[test]
    fn not_an_inversion() {
        // Operands changed too: a different condition, not an inversion.
        assert!(hits(&ConditionChanged, &["-    if a >= b:", "+    if a < c:"]).is_empty());
        // Not a guard.
        assert!(hits(&ConditionChanged, &["-    flag = a >= b", "+    flag = a < b"]).is_empty());
        assert!(hits(&ConditionChanged, &["-def f(a) -> int:", "+def f(a) -> str:"]).is_empty());
        assert!(hits(&ConditionChanged, &["     if a >= b:", "+        x = 1"]).is_empty());
    }

    #[test]
    fn an_inverted_test_that_became_a_guard_clause_is_a_refactor() {
        // `if ok: … else: return False` → `if not ok: return False` + the body.
        let refactor = [
            "-    if s.count(\"/\") == 1:",
            "-        mask = int(s.split(\"/\")[1])",
            "-    else:",
            "-        return False",
            "+    if s.count(\"/\") != 1:",
            "+        return False",
            "+    mask = int(s.split(\"/\")[1])",
            "     return mask > 0",
        ];
        assert!(hits(&ConditionChanged, &refactor).is_empty());
        // The else's exit kept as context (git paired it with another copy).
        let kept = [
            "-    if s.count(\"/\") == 1:",
            "-        try:",
            "-            go()",
            "-        except OSError:",
            "-            return False",
            "-    else:",
            "+    if s.count(\"/\") != 1:",
            "+        return False",
            "+    try:",
            "+        go()",
            "+    except OSError:",
            "         return False",
            "     return True",
        ];
        assert!(hits(&ConditionChanged, &kept).is_empty());
        let js = [
            "-  if (user.ok) {",
            "-    run(user);",
            "-  } else {",
            "-    return null;",
            "+  if (!user.ok) {",
            "+    return null;",
            "+  }",
            "+  run(user);",
        ];
        assert!(
            ConditionChanged
                .check(&diff("a.js", &js), Family::JavaScript)
                .is_empty()
        );
        // The same inversion without the else branch moving is still flagged,
        // and so is one whose early exit is not what the else branch did.
        let flipped = [
            "-    if s.count(\"/\") == 1:",
            "+    if s.count(\"/\") != 1:",
            "         return False",
        ];
        assert_eq!(hits(&ConditionChanged, &flipped).len(), 1);
        let other_exit = [
            "-    if n == 1:",
            "-        go()",
            "-    else:",
            "-        return False",
            "+    if n != 1:",
            "+        return True",
            "+    go()",
        ];
        assert_eq!(hits(&ConditionChanged, &other_exit).len(), 1);
    }

    #[test]
    fn a_logical_connector_swapped_with_the_same_operands() {
        let js = |l: &[&str]| ConditionChanged.check(&diff("a.js", l), Family::JavaScript);
        assert_eq!(
            js(&[
                "-  const ok = isReady(a) || isCached(a);",
                "+  const ok = isReady(a) && isCached(a);"
            ])
            .len(),
            1
        );
        assert_eq!(
            hits(
                &ConditionChanged,
                &["-    if user and user.active:", "+    if user or user.active:"]
            )
            .len(),
            1
        );
        // Another operand too, or a connector added: not a plain swap.
        assert!(js(&["-  if (a || b) {", "+  if (a && c) {"]).is_empty());
        assert!(js(&["-  if (a || b) {", "+  if (a || b || c) {"]).is_empty());
        // `|` and `&` (bitwise) are not connectors.
        assert!(js(&["-  const m = a | b;", "+  const m = a & b;"]).is_empty());
    }
}

#[cfg(test)]
mod moved_lines {
    use super::*;
    use crate::rules::testutil::hit_lines;

    fn lines(path: &str, l: &[&str]) -> Vec<u32> {
        hit_lines(&ConditionChanged, path, l)
    }

    #[test]
    fn a_mutation_on_a_line_that_moved_within_the_hunk_is_seen() {
        // The `else` dissolved: the changed return is no longer next to its old self.
        let ts = [
            " \tif (x === y) {",
            " \t\treturn x !== 0 || 1 / x === 1 / y",
            "-\t} else {",
            "-\t\treturn x !== x && y !== y",
            " \t}",
            "+\treturn x !== x || y !== y",
            " }",
        ];
        assert_eq!(lines("utils/common.ts", &ts), vec![4]);
        // A match arm moved below another, its connector swapped.
        let rs = [
            "         Op::Greater => matches_greater(cmp, ver),",
            "-        Op::GreaterEq => matches_exact(cmp, ver) || matches_greater(cmp, ver),",
            "         Op::Less => matches_less(cmp, ver),",
            "+        Op::GreaterEq => matches_exact(cmp, ver) && matches_greater(cmp, ver),",
        ];
        assert_eq!(lines("src/eval.rs", &rs), vec![3]);
        // A guard's comparison flipped on a moved line.
        let py = ["-    if n >= limit:", "     log()", "+    if n < limit:"];
        assert_eq!(lines("a.py", &py), vec![2]);
    }

    #[test]
    fn a_loop_bound_with_its_operands_swapped_and_its_boundary_moved() {
        let ts = [
            "-\t\tfor (let i = copy_.length - 1; base_.length <= i; --i) {",
            "+\t\tfor (let i = copy_.length - 1; i > base_.length; i--) {",
        ];
        assert_eq!(lines("plugins/patches.ts", &ts), vec![1]);
        // Operands swapped, same comparison: a rewrite, not a change.
        let same = ["-    if (limit >= n) {", "+    if (n <= limit) {"];
        assert!(lines("a.js", &same).is_empty());
        let flipped = ["-    if (limit >= n) {", "+    if (n > limit) {"];
        assert_eq!(lines("a.js", &flipped), vec![1]);
    }

    #[test]
    fn a_negation_dropped_through_an_extracted_variable() {
        let js = [
            "-      if (!this._findOption(positiveLongFlag)) {",
            "+      const positiveOption = this._findOption(positiveLongFlag);",
            "+      if (positiveOption) {",
            "         this.setDefault(name);",
        ];
        assert_eq!(lines("lib/command.js", &js), vec![2]);
        // The same extraction keeping the test's sense is a refactor.
        let same = [
            "-      if (!this._findOption(positiveLongFlag)) {",
            "+      const positiveOption = this._findOption(positiveLongFlag);",
            "+      if (!positiveOption) {",
        ];
        assert!(lines("lib/command.js", &same).is_empty());
        let py = [
            "-    if not cache.get(key):",
            "+    hit = cache.get(key)",
            "+    if hit:",
        ];
        assert_eq!(lines("a.py", &py), vec![2]);
    }

    #[test]
    fn every_connector_replaced_the_same_way_is_a_connector_swap() {
        let js = [
            "-    return !this.required && !this.optional && !this.negate;",
            "+    return !this.required || !this.optional || !this.negate;",
        ];
        assert_eq!(lines("lib/option.js", &js), vec![1]);
        // Mixed directions, or another token changed too: a rewrite, not a swap.
        let mixed = ["-    return a && b || c;", "+    return a || b && c;"];
        assert!(lines("a.js", &mixed).is_empty());
        let other = ["-    return a && b && c;", "+    return a || b || d;"];
        assert!(lines("a.js", &other).is_empty());
    }

    #[test]
    fn unrelated_moved_lines_are_not_paired() {
        // Same shape, different operands: not the same line.
        let moved = ["-    if a >= b:", "     x()", "+    if c < d:"];
        assert!(lines("a.py", &moved).is_empty());
        // Not a guard: an assignment's comparison flipped elsewhere is left alone.
        let assign = ["-    ok = a >= b", "     x()", "+    ok = a < b"];
        assert!(lines("a.py", &assign).is_empty());
    }
}
