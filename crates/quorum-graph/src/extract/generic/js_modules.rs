//! JavaScript/TypeScript imports and exports: ES-module `import` and
//! `export` in all their forms, and CommonJS `require` and
//! `exports`/`module.exports` assignments.

use tree_sitter::Node;

use super::Walker;
use crate::extract::{ExportFact, ImportFact, line_of, text};

impl Walker<'_, '_> {
    pub(super) fn js_import(&mut self, node: Node<'_>) {
        let Some(source) = node.child_by_field_name("source") else {
            return;
        };
        let module = text(source, self.src).trim_matches(['"', '\'']).to_string();
        let line = line_of(node);
        let mut pushed = false;
        let mut c = node.walk();
        for clause in node.named_children(&mut c).filter(|n| n.kind() == "import_clause") {
            let mut c2 = clause.walk();
            for part in clause.named_children(&mut c2) {
                match part.kind() {
                    "identifier" => {
                        self.facts.imports.push(ImportFact {
                            module: module.clone(),
                            name: Some("default".into()),
                            local: text(part, self.src).to_string(),
                            line,
                        });
                        pushed = true;
                    }
                    "namespace_import" => {
                        let local = part.named_child(0).map(|n| text(n, self.src)).unwrap_or("*");
                        self.facts.imports.push(ImportFact {
                            module: module.clone(),
                            name: None,
                            local: local.to_string(),
                            line,
                        });
                        pushed = true;
                    }
                    "named_imports" => {
                        let mut c3 = part.walk();
                        for spec in part.named_children(&mut c3).filter(|n| n.kind() == "import_specifier") {
                            let name = spec
                                .child_by_field_name("name")
                                .map(|n| text(n, self.src))
                                .unwrap_or("");
                            let alias = spec
                                .child_by_field_name("alias")
                                .map(|n| text(n, self.src))
                                .unwrap_or(name);
                            self.facts.imports.push(ImportFact {
                                module: module.clone(),
                                name: Some(name.to_string()),
                                local: alias.to_string(),
                                line,
                            });
                            pushed = true;
                        }
                    }
                    _ => {}
                }
            }
        }
        if !pushed {
            // `import "./side-effect"`.
            self.facts.imports.push(ImportFact {
                module,
                name: None,
                local: String::new(),
                line,
            });
        }
    }
    /// `export …` in all its ES-module forms.
    pub(super) fn js_export(&mut self, node: Node<'_>) {
        let line = line_of(node);
        let from = node
            .child_by_field_name("source")
            .map(|s| text(s, self.src).trim_matches(['"', '\'', '`']).to_string());
        let is_default = {
            let mut c = node.walk();
            node.children(&mut c).any(|ch| ch.kind() == "default")
        };
        let mut push = |name: String, local: Option<String>, from: Option<String>| {
            self.facts.exports.push(ExportFact {
                name,
                local,
                from,
                line,
            });
        };
        if let Some(decl) = node.child_by_field_name("declaration") {
            let mut names = vec![];
            match decl.kind() {
                "lexical_declaration" | "variable_declaration" => {
                    let mut c = decl.walk();
                    for d in decl
                        .named_children(&mut c)
                        .filter(|d| d.kind() == "variable_declarator")
                    {
                        if let Some(n) = d.child_by_field_name("name").filter(|n| n.kind() == "identifier") {
                            names.push(text(n, self.src).to_string());
                        }
                    }
                }
                _ => {
                    if let Some(n) = decl.child_by_field_name("name") {
                        names.push(text(n, self.src).to_string());
                    }
                }
            }
            for n in names {
                let exported = if is_default { "default".to_string() } else { n.clone() };
                push(exported, Some(n), None);
            }
            return;
        }
        if let Some(value) = node.child_by_field_name("value") {
            // `export default <expression>`.
            let local = match value.kind() {
                "identifier" => Some(text(value, self.src).to_string()),
                _ => value.child_by_field_name("name").map(|n| text(n, self.src).to_string()),
            };
            push("default".into(), local, None);
            return;
        }
        let mut c = node.walk();
        let mut any = false;
        for child in node.named_children(&mut c) {
            match child.kind() {
                "export_clause" => {
                    let mut c2 = child.walk();
                    for spec in child.named_children(&mut c2).filter(|n| n.kind() == "export_specifier") {
                        let name = spec
                            .child_by_field_name("name")
                            .map(|n| text(n, self.src).trim_matches(['"', '\'']).to_string())
                            .unwrap_or_default();
                        let alias = spec
                            .child_by_field_name("alias")
                            .map(|n| text(n, self.src).trim_matches(['"', '\'']).to_string())
                            .unwrap_or_else(|| name.clone());
                        push(alias, Some(name), from.clone());
                        any = true;
                    }
                }
                "namespace_export" => {
                    let ns = child
                        .named_child(0)
                        .map(|n| text(n, self.src).to_string())
                        .unwrap_or_default();
                    push(ns, Some("*".into()), from.clone());
                    any = true;
                }
                _ => {}
            }
        }
        if !any && from.is_some() {
            push("*".into(), None, from);
        }
    }

    /// `const x = require('m')`, `const { a, b: c } = require('m')`,
    /// `const y = require('m').y`.
    pub(super) fn js_require(&mut self, node: Node<'_>) {
        let (Some(name), Some(value)) = (node.child_by_field_name("name"), node.child_by_field_name("value")) else {
            return;
        };
        let (call, member) = match value.kind() {
            "member_expression" => match (
                value.child_by_field_name("object"),
                value.child_by_field_name("property"),
            ) {
                (Some(o), Some(p)) => (o, Some(text(p, self.src).to_string())),
                _ => return,
            },
            _ => (value, None),
        };
        let Some(module) = require_source(call, self.src) else {
            return;
        };
        let line = line_of(node);
        match name.kind() {
            "identifier" => self.facts.imports.push(ImportFact {
                module,
                name: member,
                local: text(name, self.src).to_string(),
                line,
            }),
            "object_pattern" if member.is_none() => {
                let mut c = name.walk();
                for p in name.named_children(&mut c) {
                    let (imported, local) = match p.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let t = text(p, self.src).to_string();
                            (t.clone(), t)
                        }
                        "pair_pattern" => match (p.child_by_field_name("key"), p.child_by_field_name("value")) {
                            (Some(k), Some(v)) if v.kind() == "identifier" => {
                                (text(k, self.src).to_string(), text(v, self.src).to_string())
                            }
                            _ => continue,
                        },
                        _ => continue,
                    };
                    self.facts.imports.push(ImportFact {
                        module: module.clone(),
                        name: Some(imported),
                        local,
                        line,
                    });
                }
            }
            _ => {}
        }
    }

    /// CommonJS: `exports.A = A`, `module.exports.A = …`, `module.exports = { A, B: C }`,
    /// `module.exports = X`.
    pub(super) fn cjs_export(&mut self, node: Node<'_>) {
        let (Some(left), Some(right)) = (node.child_by_field_name("left"), node.child_by_field_name("right")) else {
            return;
        };
        let target = text(left, self.src);
        let line = line_of(node);
        let local = |n: Node<'_>| match n.kind() {
            "identifier" => Some(text(n, self.src).to_string()),
            "class" | "function_expression" | "function" => {
                n.child_by_field_name("name").map(|x| text(x, self.src).to_string())
            }
            _ => None,
        };
        if target == "module.exports" {
            if right.kind() == "object" {
                let mut c = right.walk();
                for p in right.named_children(&mut c) {
                    match p.kind() {
                        "shorthand_property_identifier" => {
                            let t = text(p, self.src).to_string();
                            self.facts.exports.push(ExportFact {
                                name: t.clone(),
                                local: Some(t),
                                from: None,
                                line,
                            });
                        }
                        "pair" => {
                            if let (Some(k), Some(v)) = (p.child_by_field_name("key"), p.child_by_field_name("value")) {
                                self.facts.exports.push(ExportFact {
                                    name: text(k, self.src).trim_matches(['"', '\'']).to_string(),
                                    local: local(v),
                                    from: None,
                                    line,
                                });
                            }
                        }
                        _ => {}
                    }
                }
            } else {
                self.facts.exports.push(ExportFact {
                    name: "default".into(),
                    local: local(right),
                    from: None,
                    line,
                });
            }
            return;
        }
        let name = target
            .strip_prefix("module.exports.")
            .or_else(|| target.strip_prefix("exports."));
        if let Some(name) = name.filter(|n| !n.contains(['.', '['])) {
            self.facts.exports.push(ExportFact {
                name: name.to_string(),
                local: local(right),
                from: None,
                line,
            });
        }
    }
}

/// `require('m')` → `m`.
fn require_source(call: Node<'_>, src: &[u8]) -> Option<String> {
    if call.kind() != "call_expression" {
        return None;
    }
    let f = call.child_by_field_name("function")?;
    if text(f, src) != "require" {
        return None;
    }
    let arg = call.child_by_field_name("arguments")?.named_child(0)?;
    (arg.kind() == "string").then(|| text(arg, src).trim_matches(['"', '\'', '`']).to_string())
}
