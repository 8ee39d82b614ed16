//! Per-file facts: what one file defines, calls and imports, before any
//! cross-file resolution. Facts depend only on the file's bytes, so they are
//! cached by content hash and an incremental build re-parses only files whose
//! hash changed.

mod generic;
mod python;
mod python_types;

use serde::{Deserialize, Serialize};

use crate::lang::Lang;

/// What a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SymbolKind {
    /// The file itself, as the owner of module-level code and imports.
    Module,
    Class,
    Function,
    Method,
    /// A function defined inside another function.
    NestedFunction,
}

impl SymbolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Module => "module",
            SymbolKind::Class => "class",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::NestedFunction => "nested function",
        }
    }
}

/// How a parameter can be bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamKind {
    PositionalOnly,
    /// Positional or keyword (the ordinary kind).
    Normal,
    /// `*args`
    VarArgs,
    KeywordOnly,
    /// `**kwargs`
    VarKeywords,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub has_default: bool,
    /// Declared with an inline object type (`options: { deep?: boolean }`,
    /// TypeScript): an options object, like a destructured parameter.
    #[serde(default)]
    pub object_type: bool,
}

/// A symbol as the file defines it. `qname` is qualified within the file
/// (`Cart.add`, `outer.inner`); the graph prefixes the module name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SymbolFact {
    pub name: String,
    pub qname: String,
    pub kind: SymbolKind,
    /// 1-based, inclusive; decorators included.
    pub start_line: u32,
    pub end_line: u32,
    /// Index of the enclosing symbol in the same file; `None` for top level.
    pub parent: Option<u32>,
    /// Parameters when the language and symbol have them (`None` = unknown).
    pub params: Option<Vec<Param>>,
    /// Decorator / annotation expressions, as written (`app.route`, `staticmethod`).
    pub decorators: Vec<String>,
    /// Base classes / implemented types, as written.
    pub bases: Vec<String>,
    pub is_test: bool,
    /// Python functions: may return `None` (a bare `return`, `return None`,
    /// or a return annotation that admits `None`).
    #[serde(default)]
    pub returns_none: bool,
    /// JavaScript/TypeScript functions whose every `return` gives an object
    /// literal with plain keys: the keys (sorted). `None` = unknown shape.
    #[serde(default)]
    pub return_keys: Option<Vec<String>>,
}

/// How a call's result is used where it is made. `Direct` and
/// `AssignedThenUsed` uses fail at run time on `None` (`f().x`, `f()[0]`,
/// `f() + 1`, `for x in f()`, `x = f(); x.y`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ResultUse {
    /// A statement of its own: the result is dropped.
    Discarded,
    /// Dereferenced at once: attribute, subscript, arithmetic, iteration.
    Direct,
    /// Assigned to a name that the following statements dereference (at
    /// this line) before any test of it: `x = f()` then `x.y`.
    AssignedThenUsed(u32),
    /// Anything else (assigned, passed on, returned, tested).
    #[default]
    Other,
}

/// A call site. `callee` is the called expression as written, reduced to a
/// dotted path (`self.repo.find`, `pricing.compute_tax`, `f`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFact {
    /// Innermost enclosing symbol; `None` for module-level code.
    pub caller: Option<u32>,
    pub callee: String,
    pub line: u32,
    /// Positional arguments given.
    pub positional: u32,
    /// Keyword argument names given.
    pub keywords: Vec<String>,
    /// `*xs` / `**kw` in the arguments: arity cannot be checked.
    pub spread: bool,
    /// The call expression's text (first line, trimmed), for reports.
    pub text: String,
    #[serde(default)]
    pub result_use: ResultUse,
    /// Keys read from the result where the call is made (`f().a`,
    /// `const { a } = f()`, `x = f(); x.a`), JavaScript/TypeScript.
    #[serde(default)]
    pub result_keys: Vec<String>,
    /// Positions of positional arguments written as object literals
    /// (`f({ a: 1 })`), JavaScript/TypeScript.
    #[serde(default)]
    pub object_args: Vec<u32>,
    /// Positions of positional arguments written as scalar literals
    /// (numbers, strings, booleans), JavaScript/TypeScript.
    #[serde(default)]
    pub literal_args: Vec<u32>,
    /// Each positional argument's text when it is a plain name or a member
    /// access (`width`, `this.indent`, `self.size`), else empty: for
    /// argument-selection checks against the callee's parameter names.
    #[serde(default)]
    pub args: Vec<String>,
    /// Last line of the call expression (its arguments may span lines).
    #[serde(default)]
    pub end_line: u32,
}

/// The text of an argument node when it is a plain name or a member access
/// (`a`, `this.a`, `self.a`, `opts.a`), else empty.
pub(crate) fn simple_arg(node: tree_sitter::Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "identifier"
        | "member_expression"
        | "attribute"
        | "field_expression"
        | "selector_expression"
        | "field_access" => {
            let t = node.utf8_text(src).unwrap_or("");
            if t.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.')
            {
                t.to_string()
            } else {
                String::new()
            }
        }
        _ => String::new(),
    }
}

/// An import binding: `local` names `module` (and `name` within it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportFact {
    /// As written, relative dots included (`.pricing`, `..`, `os.path`).
    pub module: String,
    /// `from module import name`; `None` for `import module`.
    pub name: Option<String>,
    /// The name bound in this file (`z` in `from x import y as z`).
    pub local: String,
    pub line: u32,
}

/// A name a JavaScript/TypeScript module exports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportFact {
    /// The exported name: `default`, or `*` for `export * from 'm'`.
    pub name: String,
    /// The name it refers to: a local binding, or the name in `from`'s
    /// module (`*` for `export * as ns from 'm'`); `None` when it is an
    /// expression (`export default a + b`).
    pub local: Option<String>,
    /// `export … from 'm'`.
    pub from: Option<String>,
    pub line: u32,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileFacts {
    pub path: String,
    pub lang: Lang,
    /// SHA-256 of the content, hex.
    pub hash: String,
    pub lines: u32,
    pub symbols: Vec<SymbolFact>,
    pub calls: Vec<CallFact>,
    pub imports: Vec<ImportFact>,
    /// What the module exports (JavaScript/TypeScript: ES modules and CommonJS).
    #[serde(default)]
    pub exports: Vec<ExportFact>,
    /// The tree had syntax errors (facts are best effort).
    pub has_errors: bool,
    /// Hashes of the file's symbol names, computed when a graph first
    /// indexes the file and shared by every graph that shares its facts.
    #[serde(skip)]
    pub(crate) name_hashes: crate::index::NameHashes,
}

impl FileFacts {
    /// The innermost symbol whose range covers `line`.
    pub fn innermost(&self, line: u32) -> Option<u32> {
        self.symbols
            .iter()
            .enumerate()
            .filter(|(_, s)| s.start_line <= line && line <= s.end_line)
            .min_by_key(|(_, s)| s.end_line - s.start_line)
            .map(|(i, _)| i as u32)
    }
}

/// Content hash used for incremental builds.
pub fn content_hash(src: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(src.as_bytes()))
}

/// Parses `src` and extracts its facts. Never fails: a file with syntax
/// errors yields what tree-sitter recovered, flagged in `has_errors`.
pub fn extract(path: &str, lang: Lang, src: &str) -> FileFacts {
    let tree = parse(lang, src);
    let root = tree.root_node();
    let mut facts = FileFacts {
        path: path.to_string(),
        lang,
        hash: content_hash(src),
        lines: src.lines().count().max(1) as u32,
        symbols: vec![],
        calls: vec![],
        imports: vec![],
        exports: vec![],
        has_errors: root.has_error(),
        name_hashes: Default::default(),
    };
    match lang {
        Lang::Python => python::extract(root, src.as_bytes(), &mut facts),
        other => generic::extract(other, root, src.as_bytes(), &mut facts),
    }
    facts
}

/// Parses only (the benchmark's baseline).
pub fn parse(lang: Lang, src: &str) -> tree_sitter::Tree {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&crate::lang::grammar(lang))
        .expect("grammar ABI is checked by a unit test");
    parser
        .parse(src, None)
        .expect("parse only fails without a language or on cancellation")
}

pub(crate) fn text<'a>(node: tree_sitter::Node<'_>, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

pub(crate) fn line_of(node: tree_sitter::Node<'_>) -> u32 {
    node.start_position().row as u32 + 1
}

pub(crate) fn end_line_of(node: tree_sitter::Node<'_>) -> u32 {
    let end = node.end_position();
    // A node ending at column 0 ends on the previous line's newline.
    if end.column == 0 && end.row > node.start_position().row {
        end.row as u32
    } else {
        end.row as u32 + 1
    }
}

/// The first line of a node's text, trimmed and bounded, for reports.
pub(crate) fn snippet(node: tree_sitter::Node<'_>, src: &[u8]) -> String {
    let t = text(node, src);
    let first = t.lines().next().unwrap_or("").trim();
    let mut s: String = first.chars().take(120).collect();
    if t.contains('\n') || first.chars().count() > 120 {
        s.push('…');
    }
    s
}
