//! What a JavaScript/TypeScript function returns (whether it can return
//! `null`/`undefined`, the keys of the object it returns) and how a call's
//! result is used (dereferenced directly, assigned then dereferenced, and
//! the keys read from it): the facts the null-return and removed-key checks
//! compare across a change.

use tree_sitter::Node;

use super::has_child;
use crate::extract::{ResultUse, line_of, text};

/// The `return` statements of a function body, nested functions excluded.
fn returns<'t>(func: Node<'t>) -> Vec<Node<'t>> {
    fn walk<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>) {
        let mut c = n.walk();
        for ch in n.named_children(&mut c) {
            match ch.kind() {
                "return_statement" => out.push(ch),
                "function_declaration"
                | "function_expression"
                | "function"
                | "arrow_function"
                | "generator_function_declaration"
                | "method_definition"
                | "class"
                | "class_declaration" => {}
                _ => walk(ch, out),
            }
        }
    }
    let mut out = vec![];
    if let Some(body) = func.child_by_field_name("body") {
        walk(body, &mut out);
    }
    out
}

fn is_async_or_generator(func: Node<'_>) -> bool {
    has_child(func, &["async", "*"]) || func.kind().contains("generator")
}

/// A JavaScript/TypeScript function can return `null`/`undefined`: a bare
/// `return;`, `return null`, `return undefined`, or no value-returning
/// `return` at all (a block body). Async and generator functions never do.
pub(super) fn js_returns_none(func: Node<'_>, src: &[u8]) -> bool {
    if is_async_or_generator(func) {
        return false;
    }
    // TypeScript says so: `): T | undefined`, `): T | null`.
    if let Some(rt) = func.child_by_field_name("return_type") {
        let t = text(rt, src);
        if t.split(['|', ':', ' ', '<', '>', '(', ')'])
            .any(|w| matches!(w, "null" | "undefined"))
        {
            return true;
        }
    }
    let Some(body) = func.child_by_field_name("body") else {
        return false;
    };
    if body.kind() != "statement_block" {
        return matches!(text(body, src).trim(), "null" | "undefined" | "void 0");
    }
    if func.kind() == "method_definition"
        && func
            .child_by_field_name("name")
            .is_some_and(|n| matches!(text(n, src), "constructor" | "set"))
    {
        return false;
    }
    let rs = returns(func);
    fn value(r: Node<'_>) -> Option<Node<'_>> {
        r.named_child(0).filter(|v| v.kind() != "comment")
    }
    if !rs.iter().any(|r| value(*r).is_some()) {
        // Returns nothing at all: only a change *to* this is reported
        // (a function that returned a value and no longer does).
        return true;
    }
    rs.iter().any(|r| match value(*r) {
        None => true,
        Some(v) => matches!(text(v, src).trim(), "null" | "undefined" | "void 0"),
    })
}

/// The keys of the object literal every `return` gives, when they all do.
pub(super) fn js_return_keys(func: Node<'_>, src: &[u8]) -> Option<Vec<String>> {
    let body = func.child_by_field_name("body")?;
    let values: Vec<Node<'_>> = if body.kind() == "statement_block" {
        returns(func)
            .into_iter()
            .map(|r| r.named_child(0))
            .collect::<Option<_>>()?
    } else {
        vec![body]
    };
    if values.is_empty() {
        return None;
    }
    let mut keys = std::collections::BTreeSet::new();
    for v in values {
        let mut v = v;
        while v.kind() == "parenthesized_expression" {
            v = v.named_child(0)?;
        }
        if v.kind() != "object" {
            return None;
        }
        let mut c = v.walk();
        for p in v.named_children(&mut c) {
            match p.kind() {
                "shorthand_property_identifier" => {
                    keys.insert(text(p, src).to_string());
                }
                "pair" | "method_definition" => {
                    let k = p.child_by_field_name("key").or_else(|| p.child_by_field_name("name"))?;
                    if !matches!(k.kind(), "property_identifier" | "string") {
                        return None;
                    }
                    keys.insert(text(k, src).trim_matches(['"', '\'']).to_string());
                }
                "comment" => {}
                _ => return None,
            }
        }
    }
    Some(keys.into_iter().collect())
}

/// How a JavaScript/TypeScript call's result is used, and the keys read
/// from it.
pub(super) fn js_result_use(call: Node<'_>, src: &[u8]) -> (ResultUse, Vec<String>) {
    let Some(parent) = call.parent() else {
        return (ResultUse::Other, vec![]);
    };
    let optional = |n: Node<'_>| has_child(n, &["optional_chain"]);
    let is = |field: &str| parent.child_by_field_name(field).is_some_and(|n| n.id() == call.id());
    match parent.kind() {
        "member_expression" if is("object") && !optional(parent) => {
            let key = parent
                .child_by_field_name("property")
                .map(|p| text(p, src).to_string())
                .into_iter()
                .collect();
            (ResultUse::Direct, key)
        }
        "subscript_expression" if is("object") && !optional(parent) => (ResultUse::Direct, vec![]),
        "call_expression" if is("function") && !optional(parent) => (ResultUse::Direct, vec![]),
        "spread_element" => (ResultUse::Direct, vec![]),
        "for_in_statement" if is("right") => (ResultUse::Direct, vec![]),
        "variable_declarator" if is("value") => {
            let Some(name) = parent.child_by_field_name("name") else {
                return (ResultUse::Other, vec![]);
            };
            match name.kind() {
                "object_pattern" => (ResultUse::Direct, pattern_keys(name, src)),
                "array_pattern" => (ResultUse::Direct, vec![]),
                "identifier" => assigned_use(parent, text(name, src), src),
                _ => (ResultUse::Other, vec![]),
            }
        }
        _ => (ResultUse::Other, vec![]),
    }
}

fn pattern_keys(pattern: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut c = pattern.walk();
    for p in pattern.named_children(&mut c) {
        match p.kind() {
            "shorthand_property_identifier_pattern" => out.push(text(p, src).to_string()),
            "pair_pattern" => {
                if let Some(k) = p.child_by_field_name("key") {
                    out.push(text(k, src).trim_matches(['"', '\'']).to_string());
                }
            }
            "object_assignment_pattern" => {
                if let Some(l) = p.child_by_field_name("left") {
                    out.push(text(l, src).to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// `const x = f();` then the following statements of the block: the first
/// mention of `x` decides (a member read or destructuring before any test
/// is a dereference); every `x.key` read is collected.
fn assigned_use(declarator: Node<'_>, name: &str, src: &[u8]) -> (ResultUse, Vec<String>) {
    let Some(decl) = declarator.parent() else {
        return (ResultUse::Other, vec![]);
    };
    let mut first: Option<ResultUse> = None;
    let mut keys = vec![];
    let mut next = decl.next_named_sibling();
    while let Some(stmt) = next {
        let mut stop = false;
        visit_idents(stmt, &mut |id| {
            if stop || text(id, src) != name {
                return;
            }
            let Some(p) = id.parent() else { return };
            let is_obj = p.child_by_field_name("object").is_some_and(|o| o.id() == id.id());
            let member = p.kind() == "member_expression" && is_obj && !has_child(p, &["optional_chain"]);
            if p.kind() == "assignment_expression" && p.child_by_field_name("left").is_some_and(|l| l.id() == id.id()) {
                stop = true;
                first.get_or_insert(ResultUse::Other);
                return;
            }
            if member {
                if let Some(k) = p.child_by_field_name("property") {
                    keys.push(text(k, src).to_string());
                }
                first.get_or_insert(ResultUse::AssignedThenUsed(line_of(id)));
            } else {
                first.get_or_insert(ResultUse::Other);
            }
        });
        if stop {
            break;
        }
        next = stmt.next_named_sibling();
    }
    (first.unwrap_or(ResultUse::Other), keys)
}

fn visit_idents<'t>(n: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    if n.kind() == "identifier" || n.kind() == "shorthand_property_identifier" {
        f(n);
        return;
    }
    if matches!(
        n.kind(),
        "function_declaration" | "function_expression" | "arrow_function" | "class"
    ) {
        return;
    }
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        visit_idents(ch, f);
    }
}
