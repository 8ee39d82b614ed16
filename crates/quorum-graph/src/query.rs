//! Tree-sitter queries over one file, for repository conventions declared in
//! `.quorum.yml` (`(float) @f` finds float literals in code, never in strings
//! or comments, which a regex cannot promise).

use tree_sitter::StreamingIterator;

use crate::extract::parse;
use crate::lang::Lang;

/// A compiled query for one language.
pub struct CodeQuery {
    lang: Lang,
    query: tree_sitter::Query,
}

impl std::fmt::Debug for CodeQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeQuery")
            .field("lang", &self.lang)
            .finish_non_exhaustive()
    }
}

impl CodeQuery {
    /// Compiles `source`; the error names the row and column tree-sitter rejected.
    pub fn compile(lang: Lang, source: &str) -> Result<CodeQuery, String> {
        let query = tree_sitter::Query::new(&crate::lang::grammar(lang), source).map_err(|e| {
            format!(
                "invalid {} query at row {}, column {}: {:?} error",
                lang.as_str(),
                e.row + 1,
                e.column + 1,
                e.kind
            )
        })?;
        if query.capture_names().is_empty() {
            return Err("query has no capture (add `@name` to the node to report)".into());
        }
        Ok(CodeQuery { lang, query })
    }

    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// 1-based lines where a capture starts, with the captured text (first line), in order, once per line.
    pub fn matches(&self, src: &str) -> Vec<(u32, String)> {
        let tree = parse(self.lang, src);
        let mut cursor = tree_sitter::QueryCursor::new();
        let mut captures = cursor.captures(&self.query, tree.root_node(), src.as_bytes());
        let mut out: Vec<(u32, String)> = vec![];
        while let Some((m, idx)) = captures.next() {
            let node = m.captures[*idx].node;
            let line = node.start_position().row as u32 + 1;
            let text = node
                .utf8_text(src.as_bytes())
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            out.push((line, text));
        }
        out.sort_by_key(|(l, _)| *l);
        out.dedup_by_key(|(l, _)| *l);
        out
    }

    /// Every capture's 1-based first and last line, and whether it begins
    /// its first line (only whitespace before it), in order.
    pub fn spans(&self, src: &str) -> Vec<Span> {
        let tree = parse(self.lang, src);
        let mut cursor = tree_sitter::QueryCursor::new();
        let mut captures = cursor.captures(&self.query, tree.root_node(), src.as_bytes());
        let mut out = vec![];
        while let Some((m, idx)) = captures.next() {
            let node = m.captures[*idx].node;
            let (start, end) = (node.start_position(), node.end_position());
            // A node that ends with its newline (a Rust `//` comment) ends on
            // the line before.
            let last = if end.column == 0 && end.row > start.row {
                end.row - 1
            } else {
                end.row
            };
            let line_start = src[..node.start_byte()].rfind('\n').map_or(0, |i| i + 1);
            out.push(Span {
                first: start.row as u32 + 1,
                last: last as u32 + 1,
                begins_line: src[line_start..node.start_byte()].trim().is_empty(),
            });
        }
        out.sort_unstable_by_key(|s| (s.first, s.last));
        out.dedup();
        out
    }
}

/// Where a capture lies (see [`CodeQuery::spans`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first: u32,
    pub last: u32,
    pub begins_line: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_code_not_strings_and_applies_predicates() {
        let q = CodeQuery::compile(Lang::Python, r#"[(float) @f ((identifier) @t (#eq? @t "float"))]"#).unwrap();
        let src = "x = 1\ny = x / 100.0  # 2.5 in a comment\ns = \"3.5 in a string\"\ndef f(p: float) -> int:\n    return int(p)\n";
        let lines: Vec<u32> = q.matches(src).into_iter().map(|(l, _)| l).collect();
        assert_eq!(lines, [2, 4]);
    }

    #[test]
    fn spans_cover_multi_line_nodes() {
        let q = CodeQuery::compile(Lang::Python, "(expression_statement (string) @doc)").unwrap();
        let src = "def f():\n    \"\"\"Doc.\n\n    More.\n    \"\"\"\n    q = \"\"\"\n    not a doc\n    \"\"\"\n";
        let spans: Vec<(u32, u32, bool)> = q.spans(src).iter().map(|s| (s.first, s.last, s.begins_line)).collect();
        assert_eq!(spans, [(2, 5, true)]);
        let c = CodeQuery::compile(Lang::Python, "(comment) @c").unwrap();
        let spans: Vec<(u32, bool)> = c
            .spans("x = 1  # trailing\n# own line\n")
            .iter()
            .map(|s| (s.first, s.begins_line))
            .collect();
        assert_eq!(spans, [(1, false), (2, true)]);
    }

    #[test]
    fn bad_queries_say_where() {
        let e = CodeQuery::compile(Lang::Python, "(no_such_node) @x").unwrap_err();
        assert!(e.contains("row 1"), "{e}");
        assert!(
            CodeQuery::compile(Lang::Python, "(float)")
                .unwrap_err()
                .contains("capture")
        );
    }
}
