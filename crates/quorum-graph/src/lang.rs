//! Which grammar reads which file. The languages themselves, and which
//! file is in which, are defined once in `quorum_core::lang`.

pub use quorum_core::lang::{Lang, is_test_path};

/// The tree-sitter grammar of `lang`.
pub(crate) fn grammar(lang: Lang) -> tree_sitter::Language {
    match lang {
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_a_grammar_that_loads_on_this_tree_sitter() {
        for lang in Lang::ALL {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&grammar(lang))
                .unwrap_or_else(|e| panic!("{lang:?}: {e}"));
        }
    }
}
