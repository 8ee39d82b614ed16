//! Rust: `use` trees flattened into imports, the type an `impl` block
//! qualifies its methods with, and the attributes above an item (`#[test]`).

use tree_sitter::Node;

use super::Walker;
use crate::extract::{ImportFact, text};

impl Walker<'_, '_> {
    pub(super) fn rust_use(&mut self, node: Node<'_>, prefix: &str, line: u32) {
        let join = |a: &str, b: &str| {
            if a.is_empty() {
                b.to_string()
            } else {
                format!("{a}::{b}")
            }
        };
        match node.kind() {
            "scoped_use_list" => {
                let p = node
                    .child_by_field_name("path")
                    .map(|p| text(p, self.src))
                    .unwrap_or("");
                let p = join(prefix, p);
                if let Some(list) = node.child_by_field_name("list") {
                    self.rust_use(list, &p, line);
                }
            }
            "use_list" => {
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    self.rust_use(child, prefix, line);
                }
            }
            "use_as_clause" => {
                let p = node
                    .child_by_field_name("path")
                    .map(|p| text(p, self.src))
                    .unwrap_or("");
                let alias = node
                    .child_by_field_name("alias")
                    .map(|a| text(a, self.src))
                    .unwrap_or(p);
                self.facts.imports.push(ImportFact {
                    module: join(prefix, p),
                    name: None,
                    local: alias.to_string(),
                    line,
                });
            }
            _ => {
                let full = join(prefix, text(node, self.src));
                let local = full.rsplit("::").next().unwrap_or(&full).to_string();
                self.facts.imports.push(ImportFact {
                    module: full,
                    name: None,
                    local,
                    line,
                });
            }
        }
    }
}

pub(super) fn base_type(node: Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "generic_type" => node
            .child_by_field_name("type")
            .map(|t| base_type(t, src))
            .unwrap_or_default(),
        _ => text(node, src).to_string(),
    }
}

/// `#[test]`, `#[tokio::test]`, … on the lines just above a Rust item.
pub(super) fn preceding_attributes(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut prev = node.prev_named_sibling();
    while let Some(p) = prev {
        if p.kind() != "attribute_item" {
            break;
        }
        let t = text(p, src).trim_start_matches("#[").trim_end_matches(']');
        let name = t.split(['(', ' ', '=']).next().unwrap_or(t).to_string();
        out.push(name);
        prev = p.prev_named_sibling();
    }
    out
}
