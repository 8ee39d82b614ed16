//! Java: imports (static ones too), the superclass and interfaces a type
//! names, and the annotations on a method (`@Test`).

use tree_sitter::Node;

use super::{Walker, collect_names};
use crate::extract::{ImportFact, line_of, text};

impl Walker<'_, '_> {
    /// `import a.b.C;`, `import static a.b.C.m;`: the last element is the local name.
    pub(super) fn java_import(&mut self, node: Node<'_>) {
        let t = text(node, self.src);
        let path = t.trim_start_matches("import").trim().trim_end_matches(';').trim();
        let path = path.trim_start_matches("static ").trim();
        let local = path.rsplit('.').next().unwrap_or(path).to_string();
        self.facts.imports.push(ImportFact {
            module: path.to_string(),
            name: None,
            local,
            line: line_of(node),
        });
    }
}

pub(super) fn java_supers(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    for field in ["superclass", "interfaces"] {
        if let Some(n) = node.child_by_field_name(field) {
            collect_names(n, src, &mut out);
        }
    }
    out
}

pub(super) fn java_annotations(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut c = node.walk();
    for child in node.named_children(&mut c).filter(|n| n.kind() == "modifiers") {
        let mut c2 = child.walk();
        for m in child.named_children(&mut c2) {
            if matches!(m.kind(), "marker_annotation" | "annotation")
                && let Some(n) = m.child_by_field_name("name")
            {
                out.push(text(n, src).to_string());
            }
        }
    }
    out
}
