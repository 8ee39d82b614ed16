//! Which grammar reads which file.

use serde::{Deserialize, Serialize};

/// A language the graph extracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Lang {
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
}

impl Lang {
    pub const ALL: [Lang; 7] = [
        Lang::Python,
        Lang::Rust,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Go,
        Lang::Java,
    ];

    /// A language by its [`as_str`](Lang::as_str) name.
    pub fn from_name(name: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The language of `path`, from its extension; `None` for files the graph skips.
    pub fn detect(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "py" | "pyi" => Lang::Python,
            "rs" => Lang::Rust,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "java" => Lang::Java,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Rust => "rust",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::Java => "java",
        }
    }

    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension() {
        assert_eq!(Lang::detect("shop/a.py"), Some(Lang::Python));
        assert_eq!(Lang::detect("src/App.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::detect("x.ts"), Some(Lang::TypeScript));
        assert_eq!(Lang::detect("Main.java"), Some(Lang::Java));
        assert_eq!(Lang::detect("README.md"), None);
        assert_eq!(Lang::detect("Makefile"), None);
    }

    #[test]
    fn every_grammar_loads_on_this_tree_sitter() {
        for lang in Lang::ALL {
            assert_eq!(Lang::from_name(lang.as_str()), Some(lang));
            let mut p = tree_sitter::Parser::new();
            p.set_language(&lang.grammar())
                .unwrap_or_else(|e| panic!("{lang:?}: {e}"));
        }
    }
}
