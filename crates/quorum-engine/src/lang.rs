//! Language detection by file name, and small text helpers shared by rules.

/// Languages the rules know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    JavaScript,
    Go,
    Java,
    Rust,
    Other,
}

impl Lang {
    pub fn of(path: &str) -> Lang {
        let ext = path.rsplit('.').next().unwrap_or("");
        match ext {
            "py" | "pyi" => Lang::Python,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" => Lang::JavaScript,
            "go" => Lang::Go,
            "java" | "kt" => Lang::Java,
            "rs" => Lang::Rust,
            _ => Lang::Other,
        }
    }

    pub fn is_code(self) -> bool {
        self != Lang::Other
    }
}

/// Whether a path looks like a test file.
pub fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    path.split('/')
        .any(|seg| seg == "tests" || seg == "test" || seg == "__tests__")
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file.ends_with("_test.go")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file.ends_with("Test.java")
}

/// The line, or nothing when it is a comment or a Python doctest line
/// (strings are not parsed; good enough to keep rules from firing on
/// commented-out code and documented examples).
pub fn strip_comment(line: &str, lang: Lang) -> &str {
    let trimmed = line.trim_start();
    let marker = match lang {
        Lang::Python => "#",
        Lang::Other => return line,
        _ => "//",
    };
    if trimmed.starts_with(marker) {
        return "";
    }
    // A doctest example inside a docstring is documentation, not code.
    if lang == Lang::Python && (trimmed.starts_with(">>> ") || trimmed.starts_with("... ")) {
        return "";
    }
    line
}

/// Leading whitespace width (tabs count as 4).
pub fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_languages_and_tests() {
        assert_eq!(Lang::of("a/b.py"), Lang::Python);
        assert_eq!(Lang::of("x.tsx"), Lang::JavaScript);
        assert_eq!(Lang::of("README.md"), Lang::Other);
        assert!(is_test_path("tests/test_cart.py"));
        assert!(is_test_path("pkg/cart_test.go"));
        assert!(!is_test_path("shop/cart.py"));
        assert!(!is_test_path("shop/contest.py"));
    }

    #[test]
    fn comments_are_ignored() {
        assert_eq!(strip_comment("  # eval(x)", Lang::Python), "");
        assert_eq!(strip_comment("eval(x)", Lang::Python), "eval(x)");
    }
}
