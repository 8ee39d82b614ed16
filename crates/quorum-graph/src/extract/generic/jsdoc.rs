//! JSDoc: the comment just above a node, the types a `@typedef {import("m").X}`
//! tag imports, and the class a `@param {C} x` tag gives a parameter. Plain
//! JavaScript states its types only here.

use tree_sitter::Node;

use super::is_ident_char;
use crate::extract::text;

/// `@typedef {import("m").X} Y` → `(m, X, Y)`.
pub(super) fn jsdoc_type_imports(comment: &str) -> Vec<(String, String, String)> {
    let mut out = vec![];
    for tag in comment.split("@typedef").skip(1) {
        let Some(body) = tag.trim_start().strip_prefix('{') else {
            continue;
        };
        let Some((ty, after)) = body.split_once('}') else {
            continue;
        };
        let ty = ty.trim();
        let Some(rest) = ty.strip_prefix("import(") else {
            continue;
        };
        let Some((module, member)) = rest.split_once(')') else {
            continue;
        };
        let module = module.trim().trim_matches(['"', '\'']).to_string();
        let name = member.trim().trim_start_matches('.').to_string();
        let local = after.split_whitespace().next().unwrap_or("").to_string();
        if !name.is_empty() && name.chars().all(is_ident_char) && !local.is_empty() && local.chars().all(is_ident_char)
        {
            out.push((module, name, local));
        }
    }
    out
}

/// `@param {Type} name` in a JSDoc comment, for a plain class name.
pub(super) fn jsdoc_param_type<'d>(doc: &'d str, name: &str) -> Option<&'d str> {
    doc.split("@param").skip(1).find_map(|tag| {
        let tag = tag.trim_start();
        let rest = tag.strip_prefix('{')?;
        let (ty, after) = rest.split_once('}')?;
        let param = after.split_whitespace().next()?;
        let ok = param == name && capitalized(ty) && ty.chars().all(is_ident_char);
        ok.then_some(ty)
    })
}

fn capitalized(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_uppercase)
}

/// The comment just above a node (JSDoc), or the one above its declaration.
pub(super) fn preceding_comment(node: Node<'_>, src: &[u8]) -> String {
    let mut n = node;
    for _ in 0..4 {
        if let Some(prev) = n.prev_named_sibling()
            && prev.kind() == "comment"
        {
            return text(prev, src).to_string();
        }
        match n.parent() {
            Some(p) if !matches!(p.kind(), "program" | "class_body" | "statement_block") => n = p,
            _ => break,
        }
    }
    String::new()
}
