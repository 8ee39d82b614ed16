//! Qualified calls (`Type::f`, `mod::f`, `this.f`, `ns.f`, `pkg.F`) count as
//! calls of a repository symbol only when the qualifier resolves to that
//! symbol's owner; a standard-library or third-party function of the same
//! name is never one of its call sites. Code written for these tests.

mod common;

use common::*;
use quorum_graph::impact::{BreakKind, ChangeKind};
use quorum_graph::{EdgeKind, ImpactOptions, ImpactReport, impact, overlay};

/// The impact report of changing `path` from its content in `files` to `new`.
pub fn change(files: &[(&str, &str)], path: &str, new: &str) -> ImpactReport {
    let base = graph(files);
    let old = files.iter().find(|(p, _)| *p == path).unwrap().1;
    let (head, _) = overlay(&base, &[(path.to_string(), Some(new.to_string()))]);
    impact(&base, &head, &diff(path, old, new), ImpactOptions::default())
}

/// `(path:line, kind)` of every broken call site in the report.
fn breaks(r: &ImpactReport) -> Vec<(String, BreakKind)> {
    let mut v: Vec<_> = r.changed.iter().flat_map(|c| c.broken_calls.iter()).collect();
    v.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    v.into_iter()
        .map(|b| (format!("{}:{}", b.path, b.line), b.kind))
        .collect()
}

const TOKEN_RS: &str = "use std::ptr::NonNull;\n\npub struct Token {\n    ptr: NonNull<u8>,\n}\n\nimpl Token {\n    pub unsafe fn new_unchecked(s: &str) -> Self {\n        let ptr = unsafe { NonNull::new_unchecked(s.as_ptr() as *mut u8) };\n        Token { ptr }\n    }\n\n    pub fn empty() -> Self {\n        unsafe { Self::new_unchecked(\"\") }\n    }\n\n    fn width(&self) -> usize {\n        let n = unsafe { std::num::NonZeroUsize::new_unchecked(1) };\n        n.get()\n    }\n}\n";
const LEXER_RS: &str = "use crate::token::Token;\n\npub fn word(s: &str) -> Token {\n    unsafe { Token::new_unchecked(s) }\n}\n\npub fn other(p: *mut u8) {\n    let _ = unsafe { core::ptr::NonNull::new_unchecked(p) };\n}\n";

#[test]
fn rust_type_paths_resolve_by_their_type_not_by_the_method_name() {
    let g = graph(&[
        ("src/token.rs", TOKEN_RS),
        ("src/lexer.rs", LEXER_RS),
        ("src/lib.rs", "mod lexer;\nmod token;\n"),
    ]);
    // `Token::new_unchecked` in another file, through `use crate::token::Token`.
    assert_eq!(
        names(&g, "src/lexer::word", EdgeKind::Calls),
        ["src/token::Token.new_unchecked"]
    );
    // The standard library's functions of the same name stay outside.
    assert_eq!(
        names(&g, "src/lexer::other", EdgeKind::Calls),
        ["core.ptr.NonNull.new_unchecked?"]
    );
    assert_eq!(
        names(&g, "src/token::Token.new_unchecked", EdgeKind::Calls),
        ["NonNull.new_unchecked?", "as_ptr?"]
    );
    assert_eq!(
        names(&g, "src/token::Token.width", EdgeKind::Calls),
        ["std.num.NonZeroUsize.new_unchecked?", "get?"]
    );
    // `Self::` is the impl's type.
    assert_eq!(
        names(&g, "src/token::Token.empty", EdgeKind::Calls),
        ["src/token::Token.new_unchecked"]
    );
}

#[test]
fn renaming_a_rust_associated_function_breaks_its_callers_only() {
    let renamed = TOKEN_RS.replace("pub unsafe fn new_unchecked", "pub unsafe fn from_ascii_unchecked");
    let r = change(
        &[
            ("src/token.rs", TOKEN_RS),
            ("src/lexer.rs", LEXER_RS),
            ("src/lib.rs", "mod lexer;\nmod token;\n"),
        ],
        "src/token.rs",
        &renamed,
    );
    let c = r
        .changed
        .iter()
        .find(|c| c.qname == "src/token::Token.new_unchecked")
        .unwrap();
    assert_eq!(c.change, ChangeKind::Removed);
    // `Token::new_unchecked` in lexer.rs and `Self::new_unchecked` in
    // token.rs; never `NonNull::new_unchecked` (token.rs:9, lexer.rs:8) or
    // `NonZeroUsize::new_unchecked` (token.rs:18).
    assert_eq!(
        breaks(&r),
        [
            ("src/lexer.rs:4".to_string(), BreakKind::Removed),
            ("src/token.rs:14".to_string(), BreakKind::Removed)
        ]
    );
}

#[test]
fn two_rust_types_with_a_method_of_the_same_name_are_kept_apart() {
    let g = graph(&[
        (
            "src/a.rs",
            "pub struct A;\nimpl A {\n    pub fn make(n: u32) -> A { A }\n}\n",
        ),
        (
            "src/b.rs",
            "pub struct B;\nimpl B {\n    pub fn make(n: u32) -> B { B }\n}\n",
        ),
        (
            "src/lib.rs",
            "mod a;\nmod b;\nuse crate::a::A;\nuse b::B;\n\npub fn both(x: Thing) {\n    A::make(1);\n    B::make(2);\n    crate::a::A::make(3);\n    x.make(4);\n    Widget::make(5);\n}\n",
        ),
    ]);
    assert_eq!(
        names(&g, "src/lib::both", EdgeKind::Calls),
        [
            "src/a::A.make",
            "src/b::B.make",
            "src/a::A.make",
            "make?",
            "Widget.make?"
        ]
    );
}

#[test]
fn rust_module_paths_and_parameters() {
    let files = [
        (
            "src/eval.rs",
            "pub(crate) fn matches(req: &Req, v: &Version) -> bool {\n    true\n}\n",
        ),
        (
            "src/lib.rs",
            "mod eval;\n\npub struct Req;\npub struct Version;\n\nimpl Req {\n    pub fn matches(&self, v: &Version) -> bool {\n        eval::matches(self, v)\n    }\n\n    pub fn check(&self, v: &Version) -> bool {\n        self.matches(v) && Req::matches(self, v) && crate::eval::matches(self, v)\n    }\n}\n",
        ),
    ];
    let g = graph(&files);
    assert_eq!(
        names(&g, "src/lib::Req.matches", EdgeKind::Calls),
        ["src/eval::matches"]
    );
    assert_eq!(
        names(&g, "src/lib::Req.check", EdgeKind::Calls),
        ["src/lib::Req.matches", "src/lib::Req.matches", "src/eval::matches"]
    );
    // A parameter added to `eval::matches` breaks both module-path calls.
    let new = "pub(crate) fn matches(req: &Req, v: &Version, pre: bool) -> bool {\n    true\n}\n";
    let r = change(&files, "src/eval.rs", new);
    assert_eq!(
        breaks(&r),
        [
            ("src/lib.rs:8".to_string(), BreakKind::Arity),
            ("src/lib.rs:12".to_string(), BreakKind::Arity)
        ]
    );
    // A method's `self` is bound through `self.m(..)`, passed through `Type::m(obj, ..)`:
    // both calls fit the unchanged arity, and a new parameter breaks both.
    let lib = files[1].1;
    let grown = lib.replace(
        "pub fn matches(&self, v: &Version) -> bool {",
        "pub fn matches(&self, v: &Version, strict: bool) -> bool {",
    );
    let r = change(&files, "src/lib.rs", &grown);
    assert_eq!(
        breaks(&r),
        [
            ("src/lib.rs:12".to_string(), BreakKind::Arity),
            ("src/lib.rs:12".to_string(), BreakKind::Arity)
        ]
    );
    // Renaming a parameter changes the signature, and every call still fits
    // (`self` bound in `self.matches(v)`, passed in `Req::matches(self, v)`).
    let renamed = lib.replace(
        "pub fn matches(&self, v: &Version) -> bool {",
        "pub fn matches(&self, version: &Version) -> bool {",
    );
    let r = change(&files, "src/lib.rs", &renamed);
    assert!(r.changed.iter().any(|c| c.signature.is_some()));
    assert_eq!(breaks(&r), []);
}

#[test]
fn javascript_this_calls_resolve_to_the_class_and_its_bases() {
    let g = graph(&[(
        "lib/cmd.js",
        "const EventEmitter = require('events');\n\nclass Base {\n  name() { return 'x'; }\n}\n\nclass Command extends Base {\n  run(args) {\n    this.parse(args);\n    this.name();\n    this.emit('run');\n    Math.max(1, 2);\n    other.parse(args);\n    EventEmitter.once(this, 'x');\n  }\n  parse(args) { return args; }\n}\n",
    )]);
    assert_eq!(
        names(&g, "lib/cmd::Command.run", EdgeKind::Calls),
        [
            "lib/cmd::Command.parse",
            "lib/cmd::Base.name",
            "emit?",
            "max?",
            "parse?",
            "EventEmitter.once?"
        ]
    );
}

#[test]
fn java_and_go_qualifiers() {
    let g = graph(&[
        (
            "src/app/Cart.java",
            "package app;\nimport java.util.List;\n\nclass Cart {\n  int total() { return this.sum() + Prices.round(1) + List.of(1).size() + helper(); }\n  int sum() { return 0; }\n  int helper() { return 0; }\n}\n",
        ),
        (
            "src/app/Prices.java",
            "package app;\n\nclass Prices {\n  static int round(int x) { return x; }\n}\n",
        ),
    ]);
    assert_eq!(
        names(&g, "src/app/Cart::Cart.total", EdgeKind::Calls),
        [
            "src/app/Cart::Cart.sum",
            "src/app/Prices::Prices.round",
            "size?",
            "List.of?",
            "src/app/Cart::Cart.helper"
        ]
    );
    let g = graph(&[
        (
            "cmd/main.go",
            "package main\n\nimport (\n\t\"example.com/shop/pricing\"\n\t\"strings\"\n)\n\nfunc main() {\n\tpricing.Tax(1)\n\tstrings.Count(\"a\", \"a\")\n\tlocal()\n}\n",
        ),
        ("cmd/util.go", "package main\n\nfunc local() {}\n"),
        (
            "pricing/tax.go",
            "package pricing\n\nfunc Tax(n int) int { return n }\n",
        ),
    ]);
    assert_eq!(
        names(&g, "cmd/main::main", EdgeKind::Calls),
        ["pricing/tax::Tax", "strings.Count?", "cmd/util::local"]
    );
    // A new parameter of `pricing.Tax` breaks the call in another package.
    let r = change(
        &[
            (
                "cmd/main.go",
                "package main\n\nimport \"example.com/shop/pricing\"\n\nfunc main() {\n\tpricing.Tax(1)\n}\n",
            ),
            (
                "pricing/tax.go",
                "package pricing\n\nfunc Tax(n int) int { return n }\n",
            ),
        ],
        "pricing/tax.go",
        "package pricing\n\nfunc Tax(n int, rate float64) int { return n }\n",
    );
    assert_eq!(breaks(&r), [("cmd/main.go:6".to_string(), BreakKind::Arity)]);
}

#[test]
fn rust_test_crates_see_their_own_modules_and_glob_imports() {
    let g = graph(&[
        ("tests/util/mod.rs", "pub fn req(s: &str) -> u32 {\n    1\n}\n"),
        (
            "tests/test_req.rs",
            "mod util;\nuse crate::util::*;\n\n#[test]\nfn parses() {\n    req(\"1\");\n    util::req(\"2\");\n}\n",
        ),
        ("tests/test_other.rs", "#[test]\nfn other() {\n    req(\"3\");\n}\n"),
    ]);
    assert_eq!(
        names(&g, "tests/test_req::parses", EdgeKind::Calls),
        ["tests/util/mod::req", "tests/util/mod::req"]
    );
    // Without `mod util; use util::*` the name is not in scope.
    assert_eq!(names(&g, "tests/test_other::other", EdgeKind::Calls), ["req?"]);
}

#[test]
fn a_rust_method_called_on_a_unit_struct_value_is_bound() {
    let files = [(
        "src/lib.rs",
        "pub struct Rule;\n\nimpl Rule {\n    pub fn check(&self, input: &str) -> bool {\n        true\n    }\n}\n\npub fn run() -> bool {\n    Rule.check(\"a\") && Rule::check(&Rule, \"b\")\n}\n",
    )];
    let g = graph(&files);
    assert_eq!(
        names(&g, "src/lib::run", EdgeKind::Calls),
        ["src/lib::Rule.check", "src/lib::Rule.check"]
    );
    // Both calls fit; a new parameter breaks both.
    let lib = files[0].1;
    let r = change(
        &files,
        "src/lib.rs",
        &lib.replace("input: &str)", "input: &str, strict: bool)"),
    );
    assert_eq!(
        breaks(&r),
        [
            ("src/lib.rs:10".to_string(), BreakKind::Arity),
            ("src/lib.rs:10".to_string(), BreakKind::Arity)
        ]
    );
    let r = change(&files, "src/lib.rs", &lib.replace("input: &str)", "text: &str)"));
    assert_eq!(breaks(&r), []);
}
