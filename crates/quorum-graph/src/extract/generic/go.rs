//! Go: import specs (the local name is the alias or the path's last
//! element) and the receiver type that qualifies a method.

use tree_sitter::Node;

use super::Walker;
use crate::extract::{ImportFact, line_of, text};

impl Walker<'_, '_> {
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
