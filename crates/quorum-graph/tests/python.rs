//! Python extraction and resolution, one rule per test, on the multi-file
//! project in `tests/data/pyproj` (written for these tests) and on the
//! storefront fixture.

mod common;

use common::*;
use quorum_graph::{EdgeKind, Graph, SymbolKind, build};

fn pyproj() -> Graph {
    build(read_tree(&data("pyproj")), None).0
}

#[test]
fn symbols_have_qualified_names_kinds_and_exact_ranges() {
    let g = pyproj();
    let s = g.symbol(g.find("app.core.engine.Engine.run_step").unwrap());
    assert_eq!((s.kind, s.start_line, s.end_line), (SymbolKind::Method, 11, 14));
    let s = g.symbol(g.find("app.core.engine.Engine.make").unwrap());
    // The range starts at the decorator.
    assert_eq!((s.start_line, s.end_line), (16, 18));
    assert_eq!(s.decorators, ["staticmethod"]);
    let s = g.symbol(g.find("app.core.engine.run.inner").unwrap());
    assert_eq!((s.kind, s.start_line, s.end_line), (SymbolKind::NestedFunction, 31, 32));
    assert_eq!(
        g.symbol(g.find("app.core.engine.Engine").unwrap()).kind,
        SymbolKind::Class
    );
    // Packages are named after their directory.
    assert_eq!(g.symbol(g.find("app.core").unwrap()).path, "app/core/__init__.py");
}

#[test]
fn self_and_cls_calls_resolve_within_the_class_and_its_bases() {
    let g = pyproj();
    let calls = names(&g, "app.core.engine.Engine.run_step", EdgeKind::Calls);
    assert!(calls.contains(&"app.core.engine.Base.setup".to_string()), "{calls:?}");
    assert!(
        calls.contains(&"app.core.engine.Engine.helper".to_string()),
        "{calls:?}"
    );
    // `Engine.make()`: a class attribute.
    assert!(calls.contains(&"app.core.engine.Engine.make".to_string()), "{calls:?}");
    // `cls(name)` inside a classmethod is not a method call; the builtin
    // decorator stays a name-only edge.
    let calls = names(&g, "app.core.engine.Engine.create", EdgeKind::Calls);
    assert_eq!(calls, ["classmethod?", "cls?"]);
}

#[test]
fn nested_functions_and_constructors_resolve_in_scope() {
    let g = pyproj();
    let calls = targets(&g, "app.core.engine.run", EdgeKind::Calls);
    assert!(calls.contains(&("app.core.engine.run.inner".into(), 34)), "{calls:?}");
    assert!(calls.contains(&("app.core.engine.Engine".into(), 29)), "{calls:?}");
    assert!(
        calls.contains(&("app.core.engine.Engine.create".into(), 35)),
        "{calls:?}"
    );
    // `engine = Engine("main")` then `engine.run_step(...)`: a local of a
    // known class, resolved through it.
    assert!(
        calls.contains(&("app.core.engine.Engine.run_step".into(), 34)),
        "{calls:?}"
    );
}

#[test]
fn receivers_typed_by_annotations_or_constructors_resolve_and_ambiguous_ones_do_not() {
    let src = r#"
from typing import Optional
from app.fmt import Formatter


class Base:
    def emit(self):
        return 1


class Context(Base):
    def invoke(self, cmd):
        return cmd


def annotated(ctx: Context, f: "Formatter"):
    ctx.invoke(1)
    f.write()


def optional(ctx: Optional[Context] = None):
    ctx.invoke(2)
    ctx.emit()


def constructed():
    f = Formatter()
    f.write()


def reassigned(flag):
    x = Context()
    if flag:
        x = Formatter()
    x.write()


def looped(items):
    c = Context()
    for c in items:
        c.invoke(3)


def untyped(ctx):
    ctx.invoke(4)


class Command:
    def __init__(self, ctx: Context, other):
        self.ctx = ctx
        self.fmt = Formatter()
        self.other = other
        self.mixed = Formatter()

    def reset(self):
        self.mixed = None

    def run(self):
        self.ctx.invoke(5)
        self.fmt.write()
        self.other.invoke(6)
        self.mixed.write()
"#;
    let fmt = "class Formatter:
    def write(self):
        return 0
";
    let g = build(
        vec![
            ("app/cmd.py".to_string(), src.to_string()),
            ("app/fmt.py".to_string(), fmt.to_string()),
        ],
        None,
    )
    .0;
    let calls = |f: &str| names(&g, &format!("app.cmd.{f}"), EdgeKind::Calls);
    assert_eq!(
        calls("annotated"),
        ["app.cmd.Context.invoke", "app.fmt.Formatter.write"]
    );
    // Optional[...], and a method the class inherits.
    assert_eq!(calls("optional"), ["app.cmd.Context.invoke", "app.cmd.Base.emit"]);
    assert_eq!(calls("constructed"), ["app.fmt.Formatter", "app.fmt.Formatter.write"]);
    // Two types, or a loop rebinding the name: no guess.
    assert!(
        calls("reassigned").contains(&"write?".to_string()),
        "{:?}",
        calls("reassigned")
    );
    assert!(
        calls("looped").contains(&"invoke?".to_string()),
        "{:?}",
        calls("looped")
    );
    assert_eq!(calls("untyped"), ["invoke?"]);
    // Instance attributes typed in `__init__` (a typed parameter, a
    // constructor); untyped or also assigned something else: by name.
    assert_eq!(
        calls("Command.run"),
        ["app.cmd.Context.invoke", "app.fmt.Formatter.write", "invoke?", "write?"]
    );
}

#[test]
fn imports_aliases_relative_imports_and_reexports_resolve() {
    let g = pyproj();
    let calls = names(&g, "app.cli.main", EdgeKind::Calls);
    // `from app import start` → `app/__init__` re-exports `run as start` from `.core.engine`.
    assert!(calls.contains(&"app.core.engine.run".to_string()), "{calls:?}");
    // `from . import core` then `core.run`: module attribute through a package re-export.
    // `helpers.fmt` via `from .util import helpers`, `h.fmt` via `import app.util.helpers as h`.
    assert_eq!(
        calls.iter().filter(|c| *c == "app.util.helpers.fmt").count(),
        2,
        "{calls:?}"
    );
    assert_eq!(
        calls.iter().filter(|c| *c == "app.core.engine.run").count(),
        2,
        "{calls:?}"
    );
    // `E("cli")`: an aliased class import.
    assert!(calls.contains(&"app.core.engine.Engine".to_string()), "{calls:?}");
    assert!(calls.contains(&"method?".to_string()), "{calls:?}");
    let imports = names(&g, "app.cli", EdgeKind::Imports);
    assert!(imports.contains(&"app.util.helpers".to_string()), "{imports:?}");
    assert!(imports.contains(&"app.core".to_string()), "{imports:?}");
}

#[test]
fn decorators_are_calls_from_the_decorated_function() {
    let g = pyproj();
    let calls = targets(&g, "app.cli.main", EdgeKind::Calls);
    assert!(calls.contains(&("app.util.helpers.retry".into(), 8)), "{calls:?}");
    // Module-level code under `if __name__` belongs to the module.
    assert!(names(&g, "app.cli", EdgeKind::Calls).contains(&"app.cli.main".to_string()));
}

#[test]
fn inheritance_edges_resolve_bases() {
    let g = pyproj();
    assert_eq!(
        names(&g, "app.core.engine.Engine", EdgeKind::Inherits),
        ["app.core.engine.Base"]
    );
    assert_eq!(
        names(&g, "tests.test_engine.EngineTests", EdgeKind::Inherits),
        ["TestCase?"]
    );
}

#[test]
fn pytest_and_unittest_functions_are_tests_with_tests_edges() {
    let g = pyproj();
    let is_test = |q: &str| g.symbol(g.find(q).unwrap()).is_test;
    assert!(is_test("tests.test_engine.test_run"));
    assert!(is_test("tests.test_engine.EngineTests.test_step"));
    assert!(!is_test("tests.test_engine.EngineTests.helper_not_a_test"));
    assert!(!is_test("app.core.engine.run"));
    assert_eq!(
        names(&g, "tests.test_engine.test_run", EdgeKind::Tests),
        ["app.core.engine.run"]
    );
    let tests = quorum_graph::tools::find_tests(&g, "app.core.engine.Base.setup").unwrap();
    assert!(
        tests.contains(&"tests/test_engine.py::test_step".to_string()),
        "{tests:?}"
    );
}

#[test]
fn storefront_calls_resolve_across_modules() {
    let g = build(read_tree(&storefront()), None).0;
    let calls = targets(&g, "shop.checkout.checkout", EdgeKind::Calls);
    assert!(calls.iter().any(|(t, _)| t == "shop.pricing.compute_tax"), "{calls:?}");
    let tests = quorum_graph::tools::find_tests(&g, "shop.pricing.compute_tax").unwrap();
    assert!(
        tests.iter().any(|t| t.starts_with("tests/test_pricing.py::")),
        "{tests:?}"
    );
}

#[test]
fn call_results_and_none_returns_are_classified() {
    use quorum_graph::extract::ResultUse;
    let src = "def a() -> int:\n    return 1\n\n\ndef b():\n    if x:\n        return\n    return 2\n\n\ndef c() -> str | None:\n    return 's'\n\n\ndef d():\n    def inner():\n        return None\n    return 3\n\n\ndef use():\n    a().real\n    a()[0]\n    a() + 1\n    for _ in a():\n        pass\n    a()\n    v = a()\n    f(a())\n";
    let g = build([("m.py".to_string(), src.to_string())], None).0;
    let none = |q: &str| g.symbol(g.find(q).unwrap()).returns_none;
    assert!(!none("m.a") && none("m.b") && none("m.c"));
    assert!(!none("m.d"), "a nested function's return is its own");
    let uses: Vec<(u32, ResultUse)> = g.files()[0]
        .calls
        .iter()
        .filter(|c| c.callee == "a")
        .map(|c| (c.line, c.result_use))
        .collect();
    assert_eq!(
        uses,
        [
            (22, ResultUse::Direct),
            (23, ResultUse::Direct),
            (24, ResultUse::Direct),
            (25, ResultUse::Direct),
            (27, ResultUse::Discarded),
            (28, ResultUse::Other),
            (29, ResultUse::Other),
        ]
    );
}

/// A result assigned in one branch and dereferenced after the branch is
/// used on that path (the issue's "assigns the result in one branch and
/// calls it after"); a test after the branch, another branch, or a
/// function boundary ends the search.
#[test]
fn a_result_assigned_in_a_branch_is_used_after_it() {
    use quorum_graph::extract::ResultUse;
    let src = "\
def a():
    return 1


def after_if(text, strip):
    if strip:
        text = a()
    return text.encode()


def after_try(v):
    try:
        v = a()
    except E:
        raise
    v.x


def guarded_after(v):
    if c:
        v = a()
    if v is None:
        return
    v.x


def only_in_else(v):
    if c:
        v = a()
    else:
        v.y
    return 1
";
    let g = build([("m.py".to_string(), src.to_string())], None).0;
    let uses: Vec<(u32, ResultUse)> = g.files()[0]
        .calls
        .iter()
        .filter(|c| c.callee == "a")
        .map(|c| (c.line, c.result_use))
        .collect();
    assert_eq!(
        uses,
        [
            (7, ResultUse::AssignedThenUsed(8)),
            (13, ResultUse::AssignedThenUsed(16)),
            (21, ResultUse::Other),
            (29, ResultUse::Other),
        ]
    );
}
