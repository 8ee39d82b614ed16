//! JavaScript/TypeScript names whose class is known in a scope (`const x =
//! new C(…)`, a parameter annotated `x: C` or documented `@param {C} x`, a
//! class field `private repo: Repo`), so a call `x.m()` names `C().m`; and
//! the bases a class declaration states (`extends`, `implements`).

use tree_sitter::Node;

use super::jsdoc::{jsdoc_param_type, preceding_comment};
use super::{Walker, collect_names, has_child};
use crate::extract::text;
use crate::lang::Lang;

impl Walker<'_, '_> {
    /// `x.m` where `x`'s class is known in scope → `C().m`.
    pub(super) fn typed_callee(&self, callee: String, scope: Option<u32>) -> String {
        // `this.repo.find`: a class field (or parameter property) of known class.
        let parts: Vec<&str> = callee.splitn(3, '.').collect();
        if let [this @ "this", field, rest] = parts.as_slice() {
            let key = format!("{this}.{field}");
            let mut s = scope;
            while let Some(sc) = s {
                if let Some(t) = self.typed.get(&(Some(sc), key.clone())) {
                    return format!("{t}.{rest}");
                }
                s = self.facts.symbols[sc as usize].parent;
            }
            return callee;
        }
        let Some((first, rest)) = callee.split_once('.') else {
            return callee;
        };
        let mut s = scope;
        loop {
            if let Some(t) = self.typed.get(&(s, first.to_string())) {
                return if t.is_empty() { callee } else { format!("{t}.{rest}") };
            }
            // A nested function or class shares its parents' names, unless
            // it declares its own (looked up first).
            match s {
                Some(sc) => s = self.facts.symbols[sc as usize].parent,
                None => return callee,
            }
        }
    }

    /// `const x = new C(…)`: `x` is a `C` for the rest of the scope.
    pub(super) fn const_instance(&mut self, node: Node<'_>, scope: Option<u32>) {
        let is_const = node
            .parent()
            .filter(|p| p.kind() == "lexical_declaration")
            .and_then(|p| p.child(0))
            .is_some_and(|k| k.kind() == "const");
        let (Some(name), Some(value)) = (node.child_by_field_name("name"), node.child_by_field_name("value")) else {
            return;
        };
        if !is_const || name.kind() != "identifier" || value.kind() != "new_expression" {
            return;
        }
        let Some(class) = value
            .child_by_field_name("constructor")
            .filter(|c| c.kind() == "identifier")
        else {
            return;
        };
        self.typed.insert(
            (scope, text(name, self.src).to_string()),
            format!("{}()", text(class, self.src)),
        );
    }

    /// `private repo: Repo;` (TypeScript): `this.repo` is a `Repo` in the class.
    pub(super) fn ts_field_type(&mut self, node: Node<'_>, scope: Option<u32>) {
        // `private repo: Repo;` — `this.repo` is a `Repo` in the class.
        if let (Some(name), Some(t)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("type").and_then(|t| t.named_child(0)),
        ) && t.kind() == "type_identifier"
            && scope.is_some()
        {
            self.typed.insert(
                (scope, format!("this.{}", text(name, self.src))),
                format!("{}()", text(t, self.src)),
            );
        }
    }

    /// TypeScript parameters annotated with a plain class name: `x: C`.
    pub(super) fn param_types(&mut self, func: Node<'_>, idx: u32) {
        let Some(list) = func.child_by_field_name("parameters") else {
            return;
        };
        let doc = preceding_comment(func, self.src);
        let mut c = list.walk();
        for p in list.named_children(&mut c) {
            // Every parameter shadows an outer name; only `x: C` gives a class.
            let (pat, ty) = match p.kind() {
                "identifier" => (p, None),
                "assignment_pattern" => match p.child_by_field_name("left") {
                    Some(l) => (l, None),
                    None => continue,
                },
                "required_parameter" | "optional_parameter" => match p.child_by_field_name("pattern") {
                    Some(pat) => (pat, p.child_by_field_name("type").and_then(|t| t.named_child(0))),
                    None => continue,
                },
                _ => continue,
            };
            if pat.kind() != "identifier" {
                continue;
            }
            let name = text(pat, self.src);
            let class = match ty {
                Some(t) if t.kind() == "type_identifier" => format!("{}()", text(t, self.src)),
                Some(_) => String::new(),
                None if self.lang == Lang::JavaScript => jsdoc_param_type(&doc, name)
                    .map(|t| format!("{t}()"))
                    .unwrap_or_default(),
                None => String::new(),
            };
            // `constructor(private repo: Repo)`: also `this.repo` in the class.
            let property = has_child(p, &["accessibility_modifier", "readonly"]);
            if property
                && !class.is_empty()
                && let Some(class_idx) = self.facts.symbols[idx as usize].parent
            {
                self.typed
                    .insert((Some(class_idx), format!("this.{name}")), class.clone());
            }
            self.typed.insert((Some(idx), name.to_string()), class);
        }
    }
}

pub(super) fn heritage(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        if matches!(
            child.kind(),
            "class_heritage" | "extends_clause" | "implements_clause" | "extends_type_clause"
        ) {
            collect_names(child, src, &mut out);
        }
    }
    out
}
