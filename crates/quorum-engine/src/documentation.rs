//! Lines that are documentation, not code: comments, and in Python string
//! statements (docstrings, with their doctest and Markdown examples). A
//! rule's hit anchored on one of them is about prose — `requests.get(url)`
//! in a usage example has no timeout to lose — and is dropped.
//!
//! Found with tree-sitter on the head file, so a string that is assigned or
//! passed (a multi-line SQL f-string) is still code.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use quorum_core::Lang;
use quorum_graph::query::CodeQuery;

static QUERIES: LazyLock<HashMap<Lang, CodeQuery>> = LazyLock::new(|| {
    Lang::ALL
        .into_iter()
        .filter_map(|lang| {
            let source = match lang {
                Lang::Python => "[(comment) @doc (expression_statement (string) @doc)]",
                Lang::Rust | Lang::Java => "[(line_comment) @doc (block_comment) @doc]",
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Go => "(comment) @doc",
            };
            // A grammar that names its nodes differently loses only this filter.
            CodeQuery::compile(lang, source).ok().map(|q| (lang, q))
        })
        .collect()
});

/// The 1-based lines of `src` that lie wholly in documentation (a line
/// with code before a trailing comment is code).
pub fn documentation_lines(path: &str, src: &str) -> BTreeSet<u32> {
    let Some(query) = Lang::detect(path).and_then(|l| QUERIES.get(&l)) else {
        return BTreeSet::new();
    };
    query
        .spans(src)
        .into_iter()
        .flat_map(|s| (if s.begins_line { s.first } else { s.first + 1 })..=s.last)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstrings_and_comments_not_assigned_strings() {
        let src = r#"def get(url):
    """Fetch it.

    >>> get("https://example.org")
    """
    # requests.get(url) would hang
    r = requests.get(url)  # a trailing comment leaves the line code
    sql = f"""
        SELECT * FROM t WHERE id = {url}
    """
    return sql
"#;
        let lines = documentation_lines("a.py", src);
        assert_eq!(lines.into_iter().collect::<Vec<_>>(), [2, 3, 4, 5, 6]);
    }

    #[test]
    fn other_languages_comments() {
        let js = "// fetch(url) without a timeout\nconst r = fetch(url);\n/* a\n b */\n";
        assert_eq!(
            documentation_lines("a.js", js).into_iter().collect::<Vec<_>>(),
            [1, 3, 4]
        );
        let rs = "/// Doc\nfn f() {}\n";
        assert_eq!(documentation_lines("a.rs", rs).into_iter().collect::<Vec<_>>(), [1]);
        assert!(documentation_lines("notes.txt", "x").is_empty());
    }
}
