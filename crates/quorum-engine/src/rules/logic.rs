//! Logic-change heuristics on replaced lines: a comparison turned into its
//! opposite, a logical connector swapped (`&&` ↔ `||`), a boundary moved (`<` ↔ `<=`), a `(n - 1) * size` offset that
//! lost its `- 1`. They read only what changed, so confidence is lower than
//! for pattern rules and the critic's threshold decides what ships.

use std::collections::HashMap;
use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Hunk, LineKind, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, similar_pairs};
use crate::lang::Family;

/// Comparison operators and their negation.
const NEGATION: [(&str, &str); 6] = [
    (">=", "<"),
    ("<=", ">"),
    ("==", "!="),
    ("<", ">="),
    (">", "<="),
    ("!=", "=="),
];
/// Boundary moves: same direction, other inclusiveness.
const BOUNDARY: [(&str, &str); 4] = [("<", "<="), ("<=", "<"), (">", ">="), (">=", ">")];

/// `lhs op rhs` where each side is a name, attribute, call or literal.
static CMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"([\w.]+(?:\([^()]*\))?|"[^"]*"|'[^']*')\s*(<=|>=|==|!=|<|>)\s*([\w.]+(?:\([^()]*\))?|"[^"]*"|'[^']*')"#,
    )
    .unwrap()
});

/// Every comparison of a line as (lhs, op, rhs). Lines with arrows or shifts
/// are skipped: their `<`/`>` are not comparisons.
fn comparisons(line: &str) -> Vec<(String, &str, String)> {
    if line.contains("->") || line.contains("<<") || line.contains(">>") || line.contains("=>") {
        return vec![];
    }
    CMP.captures_iter(line)
        .map(|c| (c[1].to_string(), c.get(2).map_or("", |m| m.as_str()), c[3].to_string()))
        .collect()
}

/// The operator of the same comparison with its operands swapped.
fn mirrored(op: &str) -> &str {
    match op {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        other => other,
    }
}

fn is_guard(line: &str) -> bool {
    let t = line.trim_start();
    // `for (init; test; step)`: the middle clause guards the loop.
    [
        "if ",
        "elif ",
        "while ",
        "return ",
        "assert ",
        "} else if",
        "else if",
        "for (",
        "for(",
    ]
    .iter()
    .any(|k| t.starts_with(k))
        || t.contains(" if ")
}

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

/// `const|let|var name = expr;` (JavaScript, TypeScript, Rust `let`) or
/// `name = expr` (Python) on one line.
static ALIAS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(?:const|let|var)\s+(?:mut\s+)?)?([A-Za-z_$][\w$]*)\s*=\s*([^=].*?);?\s*$").unwrap()
});

/// A variable the change introduced, and the expression it names.
struct Alias {
    name: String,
    word: Regex,
    expr: String,
}

impl Alias {
    fn new(name: &str, expr: &str) -> Alias {
        Alias {
            name: name.to_string(),
            word: Regex::new(&format!(r"\b{}\b", regex::escape(name))).expect("escaped word"),
            expr: expr.to_string(),
        }
    }
}

/// `line` with each introduced variable replaced by the expression it names
/// (whole words only; the assignment lines themselves are left as they are).
fn expand_aliases(line: &str, aliases: &[Alias]) -> String {
    if ALIAS.is_match(line) {
        return line.to_string();
    }
    let mut out = line.to_string();
    for a in aliases {
        if out.contains(&a.name) {
            out = a.word.replace_all(&out, regex::NoExpand(&a.expr)).into_owned();
        }
    }
    out
}

static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\w+").unwrap());

/// The words of a line without logical connectors and `not`: what a
/// connector swap, a negation toggle or an operator flip leaves unchanged.
fn word_key(line: &str) -> String {
    let words: Vec<&str> = WORD
        .find_iter(line)
        .map(|m| m.as_str())
        .filter(|w| !matches!(*w, "and" | "or" | "not"))
        .collect();
    words.join(" ")
}

/// `Some(true)` when `new` is `old` with one comparison operator replaced by
/// its negation, `Some(false)` by its boundary twin; every other token the same.
fn operator_flipped(old: &str, new: &str) -> Option<bool> {
    fn tokens(s: &str) -> Vec<&str> {
        LOGIC_TOKEN.find_iter(s).map(|m| m.as_str()).collect()
    }
    let (a, b) = (tokens(old), tokens(new));
    if a.len() != b.len() {
        return None;
    }
    let diffs: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    let [i] = diffs.as_slice() else { return None };
    let pair = (a[*i], b[*i]);
    if NEGATION.contains(&pair) {
        Some(true)
    } else if BOUNDARY.contains(&pair) {
        Some(false)
    } else {
        None
    }
}

/// Whether the added `if` at new line `n` is an inverted test turned into
/// a guard clause: its body (the next added line) is an exit — `return`,
/// `raise`, `throw`, `continue`, `break` — and a removed `else` branch held
/// that same exit. The behaviour is unchanged: the branches swapped with the
/// test (`if ok: … else: return False` → `if not ok: return False` + …).
fn became_guard_clause(h: &Hunk, n: u32) -> bool {
    let at = h
        .lines
        .iter()
        .position(|l| l.kind == LineKind::Added && l.new_line == Some(n));
    let Some(body) = at.and_then(|i| h.lines[i + 1..].iter().find(|l| l.kind == LineKind::Added)) else {
        return false;
    };
    let exit = body.text.trim().trim_end_matches(';');
    let exits = ["return", "raise", "throw", "continue", "break"];
    if !exits.iter().any(|e| exit == *e || exit.starts_with(&format!("{e} "))) {
        return false;
    }
    // The old file's lines in order (removed and context): the removed
    // `else`'s first statement may survive as context (it is the same text
    // as the new guard's, and the diff can pair it with another copy).
    let old_side: Vec<(LineKind, &str)> = h
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Added)
        .map(|l| (l.kind, l.text.trim()))
        .collect();
    old_side.windows(2).any(|w| {
        let is_else = w[0].0 == LineKind::Removed && matches!(w[0].1, "else:" | "else {" | "} else {" | "else");
        is_else && w[1].1.trim_end_matches(';') == exit
    })
}

static TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\w+|!=|==|<=|>=|\S").unwrap());

/// Whether `new` is `old` with exactly one negation (`not` in Python, `!`
/// elsewhere) inserted or removed, every other token the same.
fn negation_toggled(old: &str, new: &str, lang: Family) -> bool {
    let neg = if lang == Family::Python { "not" } else { "!" };
    let tokens = |s: &str| TOKEN.find_iter(s).map(|m| m.as_str().to_string()).collect::<Vec<_>>();
    let (a, b) = (tokens(old), tokens(new));
    let one_more = |long: &[String], short: &[String]| {
        long.len() == short.len() + 1
            && (0..long.len()).any(|i| long[i] == neg && long[..i] == short[..i] && long[i + 1..] == short[i..])
    };
    one_more(&b, &a) || one_more(&a, &b)
}

/// The language's logical connectors: (and, or).
fn connectors(lang: Family) -> (&'static str, &'static str) {
    if lang == Family::Python {
        ("and", "or")
    } else {
        ("&&", "||")
    }
}

static LOGIC_TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\w+|&&|\|\||!=|==|<=|>=|\S").unwrap());

/// A guard's condition as a chain of one connector at the top level: the
/// connector and the operands (tokens joined by single spaces). `None` when
/// both connectors are mixed there or there is no connector at all.
fn chain(line: &str, lang: Family) -> Option<(String, Vec<String>)> {
    let (and, or) = connectors(lang);
    let t = line.trim();
    // The condition: inside the guard's parentheses, or (Python) between
    // the keyword and the colon.
    let cond = if lang == Family::Python {
        let rest = ["if ", "elif ", "while ", "return ", "assert "]
            .iter()
            .find_map(|k| t.strip_prefix(k))?;
        rest.strip_suffix(':').unwrap_or(rest)
    } else {
        let open = t.find('(')?;
        let head = t[..open].trim().trim_start_matches('}').trim();
        if !matches!(head, "if" | "else if" | "while") {
            return None;
        }
        let mut depth = 0;
        let close = t[open..].char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(open + i);
                    }
                }
                _ => {}
            }
            None
        })?;
        &t[open + 1..close]
    };
    let mut operands = vec![vec![]];
    let mut connector: Option<&str> = None;
    let mut depth = 0i32;
    for tok in LOGIC_TOKEN.find_iter(cond).map(|m| m.as_str()) {
        match tok {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            _ => {}
        }
        if depth == 0 && (tok == and || tok == or) {
            if connector.is_some_and(|c| c != tok) {
                return None;
            }
            connector = Some(tok);
            operands.push(vec![]);
            continue;
        }
        operands.last_mut()?.push(tok);
    }
    let connector = connector?;
    let operands: Vec<String> = operands.into_iter().map(|o| o.join(" ")).collect();
    operands
        .iter()
        .all(|o| !o.is_empty())
        .then(|| (connector.to_string(), operands))
}

/// Whether `new` is `old`'s chain of one connector (`a || b || !c`) with the
/// operands in any order and exactly one of them negated or un-negated
/// (`c || b || a`): a reorder that also lost (or gained) a negation.
fn chain_negation_toggled(old: &str, new: &str, lang: Family) -> bool {
    let neg = if lang == Family::Python { "not " } else { "! " };
    let (Some((ca, a)), Some((cb, b))) = (chain(old, lang), chain(new, lang)) else {
        return false;
    };
    if ca != cb || a.len() != b.len() {
        return false;
    }
    let mut only_old = a.clone();
    let mut only_new = vec![];
    for o in b {
        match only_old.iter().position(|x| *x == o) {
            Some(i) => {
                only_old.remove(i);
            }
            None => only_new.push(o),
        }
    }
    let [was] = only_old.as_slice() else { return false };
    let [now] = only_new.as_slice() else { return false };
    was.strip_prefix(neg) == Some(now.as_str()) || now.strip_prefix(neg) == Some(was.as_str())
}

/// Whether `new` is `old` with its logical connectors replaced by the other
/// (`&&` → `||` or `||` → `&&`, one or all in the same direction; `and` ↔
/// `or` in Python), every other token the same.
fn connector_swapped(old: &str, new: &str, lang: Family) -> bool {
    let (and, or) = connectors(lang);
    let tokens = |s: &str| {
        LOGIC_TOKEN
            .find_iter(s)
            .map(|m| m.as_str().to_string())
            .collect::<Vec<_>>()
    };
    let (a, b) = (tokens(old), tokens(new));
    if a.len() != b.len() {
        return false;
    }
    let diffs: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    // Every difference is the same replacement (`a && b && c` → `a || b || c`).
    let all = |from: &str, to: &str| diffs.iter().all(|&i| a[i] == from && b[i] == to);
    !diffs.is_empty() && (all(and, or) || all(or, and))
}

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

#[cfg(test)]
mod moved_lines {
    use super::*;
    use crate::rules::testutil::diff;

    fn lines(path: &str, l: &[&str]) -> Vec<u32> {
        ConditionChanged
            .check(&diff(path, l), Family::of(path))
            .iter()
            .map(|h| h.line)
            .collect()
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
    use crate::rules::testutil::diff;

    fn lines(path: &str, l: &[&str]) -> Vec<u32> {
        IndexPastEnd
            .check(&diff(path, l), Family::of(path))
            .iter()
            .map(|h| h.line)
            .collect()
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
