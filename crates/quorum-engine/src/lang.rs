//! Small text helpers shared by rules. Which language a file is in, and
//! whether it is a test, is defined once in `quorum_core::lang`.

pub use quorum_core::lang::{Family, is_test_path};

/// The line, or nothing when it is a comment or a Python doctest line
/// (strings are not parsed; good enough to keep rules from firing on
/// commented-out code and documented examples).
pub fn strip_comment(line: &str, lang: Family) -> &str {
    let trimmed = line.trim_start();
    let marker = match lang {
        Family::Python => "#",
        Family::Other => return line,
        _ => "//",
    };
    if trimmed.starts_with(marker) {
        return "";
    }
    // A doctest example inside a docstring is documentation, not code.
    if lang == Family::Python && (trimmed.starts_with(">>> ") || trimmed.starts_with("... ")) {
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
    fn comments_are_ignored() {
        assert_eq!(strip_comment("  # eval(x)", Family::Python), "");
        assert_eq!(strip_comment("eval(x)", Family::Python), "eval(x)");
    }
}
