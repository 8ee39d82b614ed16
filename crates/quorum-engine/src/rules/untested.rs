//! Code changed with no test changed alongside.

use quorum_core::{Category, FileDiff, Severity};

use super::{Hit, RuleMeta};
use crate::lang::{Family, is_test_path};

static META: RuleMeta = RuleMeta {
    id: "untested-change",
    category: Category::Testing,
    severity: Severity::Minor,
    confidence: 0.6,
    title: "Behaviour changed without a test change",
    rationale: "This file's code changed but no test file in the change was touched, so nothing shows \
the new behaviour is intended or guards it against regressions. Add or update a test that exercises it.",
};

pub fn meta() -> &'static RuleMeta {
    &META
}

/// One hit per changed source file (on its first changed code line) when the
/// change touches no test file at all. Comments, blank lines and docstrings
/// do not count as code.
pub fn check_change(diffs: &[FileDiff]) -> Vec<(String, Hit)> {
    if diffs.iter().any(|d| is_test_path(&d.path)) {
        return vec![];
    }
    let mut out = Vec::new();
    for d in diffs {
        let lang = Family::of(&d.path);
        if !lang.is_code() || d.binary {
            continue;
        }
        let first_code = first_added_code_line(d);
        if let Some((n, t)) = first_code {
            out.push((d.path.clone(), Hit::at(n, t)));
        }
    }
    out
}

/// The first added line that is code: not blank, not a comment, not inside
/// a docstring (tracked over the hunk's new side).
fn first_added_code_line(d: &FileDiff) -> Option<(u32, &str)> {
    for h in &d.hunks {
        let mut in_doc = false;
        for (n, text, added) in super::new_side(h) {
            let t = text.trim();
            let quotes = t.matches("\"\"\"").count() + t.matches("\'\'\'").count();
            let doc_line = in_doc || quotes > 0;
            if quotes % 2 == 1 {
                in_doc = !in_doc;
            }
            let comment = t.starts_with('#') || t.starts_with("//") || t.starts_with("/*") || t.starts_with('*');
            if added && !t.is_empty() && !comment && !doc_line {
                return Some((n, text));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    #[test]
    fn flags_code_without_tests_only() {
        let code = diff("shop/a.py", &[" def f():", "+    return 2"]);
        assert_eq!(check_change(std::slice::from_ref(&code)).len(), 1);
        let test = diff("tests/test_a.py", &["+    assert f() == 2"]);
        assert!(check_change(&[code, test]).is_empty());
        let doc = diff(
            "shop/a.py",
            &[" def f():", "+    \"\"\"Return two.\"\"\"", "+    # note"],
        );
        assert!(check_change(&[doc]).is_empty());
    }
}
