//! How a condition's text was edited, for [`super::condition_changed`]: the
//! comparisons of a line and their negations and boundary twins, a logical
//! connector swapped, one negation added or dropped (also in a reordered
//! chain), a variable the change introduced expanded back into its
//! expression, and the early-return refactor that inverts a test without
//! changing behaviour. Kept apart from the rule so the rule reads as the
//! order in which it weighs this evidence.

use std::sync::LazyLock;

use quorum_core::{Hunk, LineKind};
use regex::Regex;

use crate::lang::Family;

/// Comparison operators and their negation.
pub(super) const NEGATION: [(&str, &str); 6] = [
    (">=", "<"),
    ("<=", ">"),
    ("==", "!="),
    ("<", ">="),
    (">", "<="),
    ("!=", "=="),
];
/// Boundary moves: same direction, other inclusiveness.
pub(super) const BOUNDARY: [(&str, &str); 4] = [("<", "<="), ("<=", "<"), (">", ">="), (">=", ">")];

/// `lhs op rhs` where each side is a name, attribute, call or literal.
static CMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"([\w.]+(?:\([^()]*\))?|"[^"]*"|'[^']*')\s*(<=|>=|==|!=|<|>)\s*([\w.]+(?:\([^()]*\))?|"[^"]*"|'[^']*')"#,
    )
    .unwrap()
});

/// Every comparison of a line as (lhs, op, rhs). Lines with arrows or shifts
/// are skipped: their `<`/`>` are not comparisons.
pub(super) fn comparisons(line: &str) -> Vec<(String, &str, String)> {
    if line.contains("->") || line.contains("<<") || line.contains(">>") || line.contains("=>") {
        return vec![];
    }
    CMP.captures_iter(line)
        .map(|c| (c[1].to_string(), c.get(2).map_or("", |m| m.as_str()), c[3].to_string()))
        .collect()
}

/// The operator of the same comparison with its operands swapped.
pub(super) fn mirrored(op: &str) -> &str {
    match op {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        other => other,
    }
}

pub(super) fn is_guard(line: &str) -> bool {
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

/// `const|let|var name = expr;` (JavaScript, TypeScript, Rust `let`) or
/// `name = expr` (Python) on one line.
pub(super) static ALIAS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:(?:const|let|var)\s+(?:mut\s+)?)?([A-Za-z_$][\w$]*)\s*=\s*([^=].*?);?\s*$").unwrap()
});

/// A variable the change introduced, and the expression it names.
pub(super) struct Alias {
    name: String,
    word: Regex,
    expr: String,
}

impl Alias {
    pub(super) fn new(name: &str, expr: &str) -> Alias {
        Alias {
            name: name.to_string(),
            word: Regex::new(&format!(r"\b{}\b", regex::escape(name))).expect("escaped word"),
            expr: expr.to_string(),
        }
    }
}

/// `line` with each introduced variable replaced by the expression it names
/// (whole words only; the assignment lines themselves are left as they are).
pub(super) fn expand_aliases(line: &str, aliases: &[Alias]) -> String {
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
pub(super) fn word_key(line: &str) -> String {
    let words: Vec<&str> = WORD
        .find_iter(line)
        .map(|m| m.as_str())
        .filter(|w| !matches!(*w, "and" | "or" | "not"))
        .collect();
    words.join(" ")
}

/// `Some(true)` when `new` is `old` with one comparison operator replaced by
/// its negation, `Some(false)` by its boundary twin; every other token the same.
pub(super) fn operator_flipped(old: &str, new: &str) -> Option<bool> {
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
pub(super) fn became_guard_clause(h: &Hunk, n: u32) -> bool {
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
/// elsewhere) inserted or removed, every other token the same — the negated
/// part may be wrapped in parentheses of its own (`a and b` → `not (a and
/// b)`, `x != y` → `!(x != y)`), as a compound condition must be.
pub(super) fn negation_toggled(old: &str, new: &str, lang: Family) -> bool {
    let neg = if lang == Family::Python { "not" } else { "!" };
    let tokens = |s: &str| TOKEN.find_iter(s).map(|m| m.as_str().to_string()).collect::<Vec<_>>();
    let (a, b) = (tokens(old), tokens(new));
    let one_more = |long: &[String], short: &[String]| {
        (0..long.len()).any(|i| {
            if long[i] != neg || i > short.len() || long[..i] != short[..i] {
                return false;
            }
            if long[i + 1..] == short[i..] {
                return true;
            }
            // `neg ( … )`: the same with that pair of parentheses dropped.
            if long.get(i + 1).map(String::as_str) != Some("(") {
                return false;
            }
            let mut depth = 0;
            let close = (i + 1..long.len()).find(|&k| {
                match long[k].as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            close.is_some_and(|k| {
                let unwrapped: Vec<&String> = long[i + 2..k].iter().chain(&long[k + 1..]).collect();
                unwrapped.len() == short.len() - i && unwrapped.iter().zip(&short[i..]).all(|(x, y)| *x == y)
            })
        })
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
pub(super) fn chain_negation_toggled(old: &str, new: &str, lang: Family) -> bool {
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
pub(super) fn connector_swapped(old: &str, new: &str, lang: Family) -> bool {
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
