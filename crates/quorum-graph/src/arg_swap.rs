//! Argument selection: a call the change wrote whose arguments, named after
//! the callee's parameters, sit in each other's places
//! (`wrap(text, indent, width)` for `wrap(str, width, indent)`). The
//! mutation-testing "argument swap" operator, detected the way
//! Rice et al. ("Detecting Argument Selection Defects", OOPSLA 2017) and
//! Error Prone's `ArgumentSelectionDefectChecker` do: by names, which the
//! graph supplies for a callee in any file.
//!
//! Only the strongest evidence counts: each of the two arguments names the
//! *other's* parameter strictly better than its own (an exact name beats a
//! suffix: `inversePatches` is `inversePatches`, not `patches`), the call
//! is on a line the change added, and calls whose order is symmetric by
//! design (comparators, `min`/`max`, `swap`) or whose names carry no
//! meaning (`a`, `b`, `left`, `right`) are left alone.

use std::collections::BTreeSet;

use quorum_core::{FileDiff, LineKind};
use serde::Serialize;

use crate::extract::ParamKind;
use crate::model::{EdgeKind, Graph, Target};
use crate::signature;

/// A call whose two arguments look swapped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwappedArguments {
    pub path: String,
    /// The first added line of the call.
    pub line: u32,
    /// The call's first line.
    pub call_line: u32,
    pub callee: String,
    /// The callee's rendered signature.
    pub signature: String,
    pub text: String,
    /// Each argument with the parameter whose place it should take.
    pub swapped: [(String, String); 2],
}

/// Calls on added lines of `diffs` (head graph) with two swapped arguments.
/// Only the calls of the symbols that enclose an added line are read (the
/// report runs on every review; the whole graph's edges are not).
pub fn swapped_arguments(head: &Graph, diffs: &[FileDiff]) -> Vec<SwappedArguments> {
    let mut out = vec![];
    for d in diffs {
        let path = d.path.as_str();
        let lines: BTreeSet<u32> = d
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == LineKind::Added)
            .filter_map(|l| l.new_line)
            .collect();
        let callers: BTreeSet<u32> = lines.iter().filter_map(|&n| head.enclosing(path, n)).collect();
        for e in callers.iter().flat_map(|&c| head.outgoing(c)) {
            if e.kind != EdgeKind::Calls {
                continue;
            }
            let Some(call) = head.call_of(e) else { continue };
            let end = call.end_line.max(call.line);
            let Some(&first_added) = lines.range(call.line..=end).next() else {
                continue;
            };
            if call.spread || call.args.len() < 2 {
                continue;
            }
            let target = match &e.to {
                Target::Symbol(t) => Some(*t),
                // A name only one symbol has (the receiver's type was unknown).
                Target::Name(n) => match head.named(n) {
                    [one] => Some(*one),
                    _ => None,
                },
            };
            let Some(target) = target else { continue };
            let info = head.symbol(target);
            let Some(params) = info.params else { continue };
            if SYMMETRIC.iter().any(|w| info.name.to_lowercase().contains(w)) {
                continue;
            }
            let positional: Vec<&str> = params
                .iter()
                .filter(|p| matches!(p.kind, ParamKind::PositionalOnly | ParamKind::Normal))
                .map(|p| p.name.as_str())
                .skip_while(|n| matches!(*n, "self" | "cls"))
                .collect();
            if let Some(swapped) = swap(&call.args, &positional)
                && !out
                    .iter()
                    .any(|s: &SwappedArguments| s.path == path && s.call_line == call.line)
            {
                out.push(SwappedArguments {
                    path: path.to_string(),
                    line: first_added,
                    call_line: call.line,
                    callee: info.qname.clone(),
                    signature: signature::render(params),
                    text: call.text.clone(),
                    swapped,
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    out
}

/// Callee names whose argument order is symmetric or reversed on purpose.
const SYMMETRIC: [&str; 8] = ["compare", "cmp", "swap", "reverse", "equal", "assert", "min", "max"];
/// Parameter names that say nothing about which value goes where.
const MEANINGLESS: [&str; 16] = [
    "a", "b", "c", "x", "y", "z", "lhs", "rhs", "left", "right", "first", "second", "other", "one", "two", "args",
];

/// The first pair of arguments that name each other's parameters better
/// than their own.
fn swap(args: &[String], params: &[&str]) -> Option<[(String, String); 2]> {
    let n = args.len().min(params.len());
    for i in 0..n {
        for j in i + 1..n {
            let (ai, aj) = (last_segment(&args[i]), last_segment(&args[j]));
            let (pi, pj) = (params[i], params[j]);
            if ai.is_empty() || aj.is_empty() || !meaningful(pi) || !meaningful(pj) {
                continue;
            }
            if score(ai, pj) > score(ai, pi) && score(aj, pi) > score(aj, pj) {
                return Some([(args[i].clone(), pj.to_string()), (args[j].clone(), pi.to_string())]);
            }
        }
    }
    None
}

fn last_segment(arg: &str) -> &str {
    arg.rsplit('.').next().unwrap_or(arg)
}

fn meaningful(param: &str) -> bool {
    let p = param.trim_matches('_').to_lowercase();
    p.len() >= 3 && !MEANINGLESS.contains(&p.as_str()) && p.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// How well an argument's name names a parameter: 2 the same words, 1 one
/// ends with the other's words (`wrapWidth` / `width`), 0 otherwise.
fn score(arg: &str, param: &str) -> u8 {
    let (a, p) = (words(arg), words(param));
    if a.is_empty() || p.is_empty() {
        return 0;
    }
    if a == p {
        return 2;
    }
    let ends = |long: &[String], short: &[String]| {
        long.len() > short.len() && long[long.len() - short.len()..] == *short && short.concat().len() >= 3
    };
    u8::from(ends(&a, &p) || ends(&p, &a))
}

/// Lower-case words of a camelCase or snake_case name.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '$' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn names_in_each_others_places() {
        let p = ["str", "width", "indent", "minColumnWidth"];
        let got = swap(&s(&["fullText", "descriptionIndent", "wrapWidth"]), &p).unwrap();
        assert_eq!(got[0], ("descriptionIndent".to_string(), "indent".to_string()));
        assert_eq!(got[1], ("wrapWidth".to_string(), "width".to_string()));
        // An exact name beats a suffix.
        let p = ["base", "replacement", "patches", "inversePatches"];
        assert!(swap(&s(&["base", "result", "inversePatches", "patches"]), &p).is_some());
        assert!(swap(&s(&["base", "result", "patches", "inversePatches"]), &p).is_none());
        // Member accesses count by their last segment.
        assert!(swap(&s(&["this.height", "this.width"]), &["width", "height"]).is_some());
        assert!(swap(&s(&["self.max_size", "self.min_size"]), &["min_size", "max_size"]).is_some());
    }

    #[test]
    fn weak_or_meaningless_names_are_not_a_swap() {
        // Both arguments name the same parameter: no evidence of a swap.
        assert!(swap(&s(&["userName", "fileName"]), &["name", "path"]).is_none());
        // Only one argument names the other's place.
        assert!(swap(&s(&["height", "value"]), &["width", "height"]).is_none());
        // Meaningless parameter names.
        assert!(swap(&s(&["right", "left"]), &["left", "right"]).is_none());
        assert!(swap(&s(&["b", "a"]), &["a", "b"]).is_none());
        // Literals and expressions carry no name.
        assert!(swap(&s(&["", "width"]), &["width", "height"]).is_none());
    }

    #[test]
    fn words_of_names() {
        assert_eq!(words("minColumnWidth"), ["min", "column", "width"]);
        assert_eq!(words("max_size_"), ["max", "size"]);
        assert_eq!(words("HTTPServer"), ["httpserver"]);
        assert_eq!(score("wrapWidth", "width"), 1);
        assert_eq!(score("width", "Width"), 2);
        assert_eq!(score("ab", "b"), 0);
    }
}
