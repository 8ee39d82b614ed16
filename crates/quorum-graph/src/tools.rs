//! Back-ends of the agents' graph tools (F-AG-2):
//! `get_callers`, `find_tests`, `read_snippet`. Each validates its input and
//! answers with an error message a model can act on.

use serde::Serialize;

use crate::impact::{Caller, callers, tests_reaching};
use crate::model::{EdgeKind, Graph, Target};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("no symbol `{0}` in the graph (use a qualified name such as `pkg.module.func`, or a unique bare name)")]
    UnknownSymbol(String),
    #[error("`{name}` is ambiguous: {candidates}")]
    Ambiguous { name: String, candidates: String },
    #[error("hops must be 1-3, got {0}")]
    Hops(u8),
    #[error("path `{0}` is not a relative path inside the repository")]
    PathOutsideRepo(String),
    #[error("no file `{0}` in the repository at this commit")]
    NoSuchFile(String),
    #[error("line range {start}-{end} is invalid (1-based, start <= end, at most {max} lines)")]
    Range { start: u32, end: u32, max: u32 },
}

/// A symbol by qualified name, or by bare name when exactly one has it.
pub fn lookup(g: &Graph, symbol: &str) -> Result<u32, ToolError> {
    if let Some(id) = g.find(symbol) {
        return Ok(id);
    }
    match g.named(symbol) {
        [one] => Ok(*one),
        [] => Err(ToolError::UnknownSymbol(symbol.into())),
        many => Err(ToolError::Ambiguous {
            name: symbol.into(),
            candidates: many.iter().take(8).map(|&i| g.qname(i)).collect::<Vec<_>>().join(", "),
        }),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Callee {
    pub target: String,
    pub line: u32,
    pub resolved: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallersAnswer {
    pub symbol: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub callers: Vec<Caller>,
    /// What the symbol itself calls (one hop; callees are not followed).
    pub calls: Vec<Callee>,
}

pub fn get_callers(g: &Graph, symbol: &str, hops: u8) -> Result<CallersAnswer, ToolError> {
    if !(1..=3).contains(&hops) {
        return Err(ToolError::Hops(hops));
    }
    let id = lookup(g, symbol)?;
    let info = g.symbol(id);
    let calls = g
        .outgoing(id)
        .filter(|e| e.kind == EdgeKind::Calls)
        .map(|e| match &e.to {
            Target::Symbol(t) => Callee {
                target: g.qname(*t),
                line: e.line,
                resolved: true,
            },
            Target::Name(n) => Callee {
                target: n.to_string(),
                line: e.line,
                resolved: false,
            },
        })
        .collect();
    Ok(CallersAnswer {
        symbol: info.qname.clone(),
        path: info.path.to_string(),
        start_line: info.start_line,
        end_line: info.end_line,
        callers: callers(g, id, hops),
        calls,
    })
}

pub fn find_tests(g: &Graph, symbol: &str) -> Result<Vec<String>, ToolError> {
    let id = lookup(g, symbol)?;
    Ok(tests_reaching(g, id, 3))
}

/// Where snippets come from: the indexed tree or the PR head.
pub trait SourceTree {
    /// The content of `path` (already validated), `None` when absent.
    fn read(&self, path: &str) -> Option<String>;
}

/// Most lines one snippet returns.
pub const MAX_SNIPPET_LINES: u32 = 400;

/// Rejects anything that is not a plain relative path inside the repository.
pub fn validate_repo_path(path: &str) -> Result<(), ToolError> {
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path.contains('\0')
        || path.contains(':')
        || path.split('/').any(|c| c == ".." || c == "." || c.is_empty());
    if bad {
        return Err(ToolError::PathOutsideRepo(path.into()));
    }
    Ok(())
}

/// Lines `start..=end` of `path`, numbered as in the file.
pub fn read_snippet(tree: &dyn SourceTree, path: &str, start: u32, end: u32) -> Result<String, ToolError> {
    check_snippet_request(path, start, end)?;
    let src = tree.read(path).ok_or_else(|| ToolError::NoSuchFile(path.into()))?;
    Ok(number_lines(&src, start, end))
}

/// The path and range checks of [`read_snippet`], for callers that read the
/// file themselves (asynchronously, from a `TreeSource`).
pub fn check_snippet_request(path: &str, start: u32, end: u32) -> Result<(), ToolError> {
    validate_repo_path(path)?;
    if start == 0 || end < start || end - start >= MAX_SNIPPET_LINES {
        return Err(ToolError::Range {
            start,
            end,
            max: MAX_SNIPPET_LINES,
        });
    }
    Ok(())
}

/// Lines `start..=end` of `src`, each prefixed with its number.
pub fn number_lines(src: &str, start: u32, end: u32) -> String {
    src.lines()
        .enumerate()
        .skip(start.saturating_sub(1) as usize)
        .take((end.saturating_sub(start) + 1) as usize)
        .map(|(i, l)| format!("{:>5} {l}\n", i + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside_the_repo() {
        for bad in ["", "/etc/passwd", "../x", "a/../../b", "a//b", "./a", "C:\\x", "a\0b"] {
            assert!(validate_repo_path(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate_repo_path("shop/pricing.py").is_ok());
    }

    struct One;
    impl SourceTree for One {
        fn read(&self, path: &str) -> Option<String> {
            (path == "a.py").then(|| "one\ntwo\nthree\n".into())
        }
    }

    #[test]
    fn snippets_are_numbered_and_bounded() {
        assert_eq!(read_snippet(&One, "a.py", 2, 3).unwrap(), "    2 two\n    3 three\n");
        assert!(matches!(
            read_snippet(&One, "b.py", 1, 1),
            Err(ToolError::NoSuchFile(_))
        ));
        assert!(matches!(read_snippet(&One, "a.py", 3, 2), Err(ToolError::Range { .. })));
        assert!(matches!(read_snippet(&One, "a.py", 0, 2), Err(ToolError::Range { .. })));
        assert!(matches!(
            read_snippet(&One, "a.py", 1, 10_000),
            Err(ToolError::Range { .. })
        ));
    }
}
