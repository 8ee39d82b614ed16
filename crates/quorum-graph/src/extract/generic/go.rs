//! Go: import specs (the local name is the alias or the path's last
//! element), the receiver type that qualifies a method, and the names a
//! signature types with one of the package's own types (`func (c *Command)
//! Run(ctx *Context)`: `c.m()` and `ctx.m()` name `Command().m` and
//! `Context().m`).

use tree_sitter::Node;

use super::Walker;
use crate::extract::{ImportFact, line_of, text};

impl Walker<'_, '_> {
    /// The receiver and parameters of a Go function or method whose type is
    /// a plain named type (`T`, `*T`, `T[K]`); every other parameter still
    /// shadows an outer name, typed as unknown.
    pub(super) fn go_param_types(&mut self, func: Node<'_>, idx: u32) {
        for field in ["receiver", "parameters"] {
            let Some(list) = func.child_by_field_name(field) else {
                continue;
            };
            let mut c = list.walk();
            for p in list.named_children(&mut c) {
                if p.kind() != "parameter_declaration" {
                    continue;
                }
                let class = p
                    .child_by_field_name("type")
                    .and_then(|t| go_named_type(t, self.src))
                    .map(|t| format!("{t}()"))
                    .unwrap_or_default();
                let mut cc = p.walk();
                for name in p.children_by_field_name("name", &mut cc) {
                    self.typed
                        .insert((Some(idx), text(name, self.src).to_string()), class.clone());
                }
            }
        }
    }

    /// `import alias "path"` (one spec of an import declaration).
    pub(super) fn go_import(&mut self, node: Node<'_>) {
        if let Some(path) = node.child_by_field_name("path") {
            let module = text(path, self.src).trim_matches('"').to_string();
            let local = node
                .child_by_field_name("name")
                .map(|n| text(n, self.src).to_string())
                .unwrap_or_else(|| module.rsplit('/').next().unwrap_or(&module).to_string());
            self.facts.imports.push(ImportFact {
                module,
                name: None,
                local,
                line: line_of(node),
            });
        }
    }
}

pub(super) fn go_receiver(node: Node<'_>, src: &[u8]) -> String {
    // `(s *Server)` → `Server`
    let t = text(node, src);
    t.trim_matches(['(', ')'])
        .split_whitespace()
        .last()
        .unwrap_or("")
        .trim_start_matches('*')
        .split('[')
        .next()
        .unwrap_or("")
        .to_string()
}

/// `T`, `*T` or `T[K]` → `T`; a qualified (`pkg.T`), slice, map, func or
/// interface type → `None`.
fn go_named_type<'a>(t: Node<'_>, src: &'a [u8]) -> Option<&'a str> {
    match t.kind() {
        "type_identifier" => Some(text(t, src)),
        "pointer_type" => t.named_child(0).and_then(|i| go_named_type(i, src)),
        "generic_type" => t.child_by_field_name("type").and_then(|i| go_named_type(i, src)),
        _ => None,
    }
}
