//! The types of a Python function's local names, where the source says them
//! plainly, so `x.m(…)` can be resolved through `x`'s class like
//! `self.m(…)`: a parameter annotated with a class (`ctx: Context`,
//! `ctx: "Context"`, `ctx: t.Optional[Context]`, `ctx: Context | None`), or a
//! name assigned a constructor call (`ctx = Context(…)`, `f = fmt.HelpFormatter()`).
//! A name bound to two different types, or also assigned anything else, has
//! no type: a guess would turn a name-only edge into a wrong resolved one.
//! Whether the named thing is a class is decided at resolution (a function
//! of that name leaves the call unresolved, as before).

use std::collections::HashMap;

use tree_sitter::Node;

use super::text;

/// Local name → the dotted type it is bound to (`None`: ambiguous).
pub(super) type Locals = HashMap<String, Option<String>>;

/// The typed locals of the function `def` (its parameters and its own body,
/// not nested definitions).
pub(super) fn locals(def: Node<'_>, src: &[u8]) -> Locals {
    let mut out = Locals::new();
    if let Some(params) = def.child_by_field_name("parameters") {
        let mut c = params.walk();
        for p in params.named_children(&mut c) {
            if !matches!(p.kind(), "typed_parameter" | "typed_default_parameter") {
                continue;
            }
            let name = match p.kind() {
                "typed_parameter" => p.named_child(0).filter(|n| n.kind() == "identifier"),
                _ => p.child_by_field_name("name"),
            };
            let (Some(name), Some(ty)) = (name, p.child_by_field_name("type")) else {
                continue;
            };
            let name = text(name, src);
            if name != "self" && name != "cls" {
                bind(&mut out, name, annotation(text(ty, src)));
            }
        }
    }
    if let Some(body) = def.child_by_field_name("body") {
        assignments(body, src, &mut out);
    }
    out
}

/// The typed attributes of a class's instances, from its methods:
/// `self.x = C(…)`, `self.x: C = …`, and `self.x = p` with `p` a parameter of
/// that method annotated with a class. An attribute also assigned anything
/// else has no type.
pub(super) fn attributes(class: Node<'_>, src: &[u8]) -> Locals {
    let mut out = Locals::new();
    let Some(body) = class.child_by_field_name("body") else {
        return out;
    };
    let mut c = body.walk();
    for item in body.named_children(&mut c) {
        let def = match item.kind() {
            "function_definition" => Some(item),
            "decorated_definition" => item.child_by_field_name("definition"),
            _ => None,
        };
        let Some(def) = def.filter(|d| d.kind() == "function_definition") else {
            continue;
        };
        let params = locals_of_params(def, src);
        if let Some(body) = def.child_by_field_name("body") {
            self_assignments(body, src, &params, &mut out);
        }
    }
    out
}

fn locals_of_params(def: Node<'_>, src: &[u8]) -> Locals {
    let mut out = Locals::new();
    if let Some(params) = def.child_by_field_name("parameters") {
        let mut c = params.walk();
        for p in params.named_children(&mut c) {
            let name = match p.kind() {
                "typed_parameter" => p.named_child(0).filter(|n| n.kind() == "identifier"),
                "typed_default_parameter" => p.child_by_field_name("name"),
                _ => None,
            };
            if let (Some(name), Some(ty)) = (name, p.child_by_field_name("type")) {
                bind(&mut out, text(name, src), annotation(text(ty, src)));
            }
        }
    }
    out
}

/// Every `self.x = …` in `node`, outside nested definitions.
fn self_assignments(node: Node<'_>, src: &[u8], params: &Locals, out: &mut Locals) {
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        match child.kind() {
            "function_definition" | "class_definition" | "decorated_definition" | "lambda" => {}
            "assignment" => {
                if let Some(left) = child.child_by_field_name("left")
                    && left.kind() == "attribute"
                    && left
                        .child_by_field_name("object")
                        .is_some_and(|o| text(o, src) == "self")
                    && let Some(attr) = left.child_by_field_name("attribute")
                {
                    let right = child.child_by_field_name("right");
                    let ty = child
                        .child_by_field_name("type")
                        .and_then(|t| annotation(text(t, src)))
                        .or_else(|| right.and_then(|r| constructed(r, src)))
                        .or_else(|| {
                            right
                                .filter(|r| r.kind() == "identifier")
                                .and_then(|r| params.get(text(r, src)).cloned().flatten())
                        });
                    bind(out, text(attr, src), ty);
                }
                self_assignments(child, src, params, out);
            }
            _ => self_assignments(child, src, params, out),
        }
    }
}

fn bind(out: &mut Locals, name: &str, ty: Option<String>) {
    match out.get(name) {
        None => {
            out.insert(name.to_string(), ty);
        }
        Some(prev) if *prev != ty => {
            out.insert(name.to_string(), None);
        }
        Some(_) => {}
    }
}

/// Every `name = …` in `node`, outside nested definitions.
fn assignments(node: Node<'_>, src: &[u8], out: &mut Locals) {
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        match child.kind() {
            "function_definition" | "class_definition" | "decorated_definition" | "lambda" => {}
            "assignment" => {
                if let Some(left) = child.child_by_field_name("left")
                    && left.kind() == "identifier"
                {
                    let ty = child
                        .child_by_field_name("type")
                        .and_then(|t| annotation(text(t, src)))
                        .or_else(|| child.child_by_field_name("right").and_then(|r| constructed(r, src)));
                    bind(out, text(left, src), ty);
                }
                assignments(child, src, out);
            }
            // Other bindings of a name (loops, `with … as`, walrus, unpacking)
            // are not typed here: the name stays ambiguous if also assigned.
            "for_statement" | "with_item" | "named_expression" => {
                mark_targets(child, src, out);
                assignments(child, src, out);
            }
            _ => assignments(child, src, out),
        }
    }
}

/// Names bound by a loop, `with … as` or `:=` become ambiguous.
fn mark_targets(node: Node<'_>, src: &[u8], out: &mut Locals) {
    let target = match node.kind() {
        "for_statement" => node.child_by_field_name("left"),
        "named_expression" => node.child_by_field_name("name"),
        _ => node
            .child_by_field_name("value")
            .and_then(|v| v.child_by_field_name("alias")),
    };
    if let Some(t) = target
        && t.kind() == "identifier"
    {
        out.insert(text(t, src).to_string(), None);
    }
}

/// `Class(…)` / `mod.Class(…)` → the dotted callee, when it reads as a
/// class (its last part is capitalised, as PEP 8 names classes).
fn constructed(right: Node<'_>, src: &[u8]) -> Option<String> {
    if right.kind() != "call" {
        return None;
    }
    let f = right.child_by_field_name("function")?;
    let name = dotted_name(text(f, src))?;
    let last = name.rsplit('.').next()?;
    last.chars().next().is_some_and(char::is_uppercase).then_some(name)
}

/// The class an annotation names: `C`, `"C"`, `mod.C`, `Optional[C]`,
/// `t.Optional["C"]`, `C | None`, `None | C`. Anything else (generics,
/// unions of classes, builtins) is not a receiver type.
fn annotation(raw: &str) -> Option<String> {
    let t = raw.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    if let Some(inner) = t
        .strip_suffix(']')
        .and_then(|s| s.split_once('['))
        .filter(|(head, _)| head.rsplit('.').next() == Some("Optional"))
        .map(|(_, inner)| inner)
    {
        return annotation(inner);
    }
    if t.contains('|') {
        let parts: Vec<&str> = t.split('|').map(str::trim).filter(|p| *p != "None").collect();
        return match parts.as_slice() {
            [one] => annotation(one),
            _ => None,
        };
    }
    let name = dotted_name(t)?;
    let last = name.rsplit('.').next()?;
    // Builtins and typing names are not classes of the repository.
    let builtin = matches!(
        last,
        "int" | "str" | "bytes" | "float" | "bool" | "dict" | "list" | "tuple" | "set" | "object" | "Any"
    );
    (!builtin).then_some(name)
}

fn dotted_name(t: &str) -> Option<String> {
    let ok = !t.is_empty()
        && t.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
    ok.then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::annotation;

    #[test]
    fn annotations_that_name_one_class() {
        for (raw, want) in [
            ("Context", Some("Context")),
            ("\"Context\"", Some("Context")),
            ("t.Optional[\"Context\"]", Some("Context")),
            ("Optional[fmt.HelpFormatter]", Some("fmt.HelpFormatter")),
            ("Context | None", Some("Context")),
            ("None | Context", Some("Context")),
            ("int", None),
            ("A | B", None),
            ("List[Context]", None),
            ("t.Any", None),
        ] {
            assert_eq!(annotation(raw).as_deref(), want, "{raw}");
        }
    }
}
