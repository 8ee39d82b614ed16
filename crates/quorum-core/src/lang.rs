//! Which language a file is in, and whether it is a test file: the one
//! definition the code graph, the rule engine and search share.
//!
//! A language listed here gets both a code graph (the graph crate maps each
//! variant to its tree-sitter grammar) and the rules of its [`Family`]. A file
//! whose extension is not listed gets neither: Kotlin (`.kt`) used to get the
//! Java rules but no graph; it now gets neither until it has a grammar.

use serde::{Deserialize, Serialize};

/// A language Quorum reads.
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

/// The rule engine's grouping: rules are written per syntax family, so
/// JavaScript, TypeScript and TSX share one set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    Python,
    JavaScript,
    Go,
    Java,
    Rust,
    /// Not code Quorum reads (Markdown, YAML, an unknown extension).
    Other,
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

    /// The language of `path`, from its extension; `None` for files Quorum
    /// does not read as code.
    pub fn detect(path: &str) -> Option<Lang> {
        let file = path.rsplit('/').next().unwrap_or(path);
        let ext = file.rsplit_once('.').map(|(_, e)| e)?;
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

    pub fn family(self) -> Family {
        match self {
            Lang::Python => Family::Python,
            Lang::Rust => Family::Rust,
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => Family::JavaScript,
            Lang::Go => Family::Go,
            Lang::Java => Family::Java,
        }
    }
}

impl Family {
    /// The family of `path`; [`Family::Other`] when it is not code.
    pub fn of(path: &str) -> Family {
        Lang::detect(path).map_or(Family::Other, Lang::family)
    }

    pub fn is_code(self) -> bool {
        self != Family::Other
    }
}

/// Whether `path` is a test file.
///
/// Go's toolchain decides by name alone (`*_test.go`), so for Go that is the
/// whole rule: a `TestX` function in `test/helpers.go` is not a test. Other
/// languages follow their runners' common conventions: a `test`, `tests` or
/// `__tests__` directory, pytest's `test_*.py` / `*_test.py`, Jest's and
/// Mocha's `*.test.*` / `*.spec.*`, JUnit's `*Test.java`.
pub fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    if Lang::detect(path) == Some(Lang::Go) {
        return file.ends_with("_test.go");
    }
    path.split('/')
        .any(|seg| seg == "tests" || seg == "test" || seg == "__tests__")
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file.ends_with("Test.java")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension() {
        assert_eq!(Lang::detect("shop/a.py"), Some(Lang::Python));
        assert_eq!(Lang::detect("src/App.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::detect("x.ts"), Some(Lang::TypeScript));
        assert_eq!(Lang::detect("src/esm.mts"), Some(Lang::TypeScript));
        assert_eq!(Lang::detect("src/cjs.cts"), Some(Lang::TypeScript));
        assert_eq!(Lang::detect("Main.java"), Some(Lang::Java));
        assert_eq!(Lang::detect("README.md"), None);
        assert_eq!(Lang::detect("Makefile"), None);
        // A dot in a directory name is not an extension.
        assert_eq!(Lang::detect("pkg.py/Makefile"), None);
        // Kotlin has no grammar, so it gets neither graph nor rules.
        assert_eq!(Lang::detect("app/Main.kt"), None);
        for lang in Lang::ALL {
            assert_eq!(Lang::from_name(lang.as_str()), Some(lang));
        }
    }

    #[test]
    fn every_language_has_a_rule_family_and_mts_gets_the_javascript_rules() {
        assert_eq!(Family::of("src/index.mts"), Family::JavaScript);
        assert_eq!(Family::of("src/App.tsx"), Family::JavaScript);
        assert_eq!(Family::of("app/Main.kt"), Family::Other);
        assert_eq!(Family::of("docs/x.md"), Family::Other);
        assert!(Lang::ALL.iter().all(|l| l.family().is_code()));
    }

    #[test]
    fn test_files_follow_each_runners_convention() {
        for test in [
            "tests/test_cart.py",
            "shop/test_cart.py",
            "shop/cart_test.py",
            "pkg/cart_test.go",
            "src/cart.test.ts",
            "src/__tests__/cart.js",
            "src/cart.spec.mts",
            "src/test/java/CartTest.java",
        ] {
            assert!(is_test_path(test), "{test}");
        }
        for not_test in [
            "shop/cart.py",
            "shop/contest.py",
            "src/cart.ts",
            // Go's toolchain: only `_test.go` files hold tests.
            "test/helpers.go",
            "pkg/test_helpers.go",
        ] {
            assert!(!is_test_path(not_test), "{not_test}");
        }
    }
}
