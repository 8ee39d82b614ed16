//! Extraction for the other indexed languages: symbols with ranges, calls by
//! name, imports, inheritance where written, and each language's tests.

mod common;

use common::*;
use quorum_graph::{EdgeKind, Graph, SymbolKind, build};

fn one(path: &str, src: &str) -> Graph {
    build([(path.to_string(), src.to_string())], None).0
}

#[test]
fn rust_items_impls_uses_and_tests() {
    let g = one(
        "src/lib.rs",
        "use std::collections::HashMap;\nuse crate::a::{b, c as d};\n\npub struct Cart { items: Vec<u32> }\n\nimpl Cart {\n    pub fn total(&self) -> u32 {\n        helper(self.items.len())\n    }\n}\n\nfn helper(n: usize) -> u32 {\n    n as u32\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn totals() {\n        super::helper(1);\n    }\n\n    #[tokio::test]\n    async fn async_totals() {}\n}\n",
    );
    let total = g.symbol(g.find("src/lib::Cart.total").unwrap());
    assert_eq!(
        (total.kind, total.start_line, total.end_line),
        (SymbolKind::Method, 7, 9)
    );
    assert_eq!(g.symbol(g.find("src/lib::Cart").unwrap()).kind, SymbolKind::Class);
    assert_eq!(
        names(&g, "src/lib::Cart.total", EdgeKind::Calls),
        ["src/lib::helper", "len?"]
    );
    assert!(g.symbol(g.find("src/lib::tests.totals").unwrap()).is_test);
    assert!(g.symbol(g.find("src/lib::tests.async_totals").unwrap()).is_test);
    assert!(!g.symbol(g.find("src/lib::helper").unwrap()).is_test);
    let imports = names(&g, "src/lib", EdgeKind::Imports);
    assert_eq!(imports, ["std::collections::HashMap?", "crate::a::b?", "crate::a::c?"]);
}

#[test]
fn javascript_functions_classes_imports_and_test_blocks() {
    let g = one(
        "web/cart.test.js",
        "import { total as sum } from './cart';\nimport * as api from \"./api\";\n\nclass Cart extends Base {\n  add(item) {\n    return api.post(item);\n  }\n}\n\nconst price = (x) => sum(x) * 2;\n\ndescribe('cart', () => {\n  it('adds', () => {\n    new Cart().add(1);\n  });\n});\n",
    );
    assert_eq!(
        g.symbol(g.find("web/cart.test::Cart.add").unwrap()).kind,
        SymbolKind::Method
    );
    assert_eq!(names(&g, "web/cart.test::Cart", EdgeKind::Inherits), ["Base?"]);
    assert_eq!(names(&g, "web/cart.test::price", EdgeKind::Calls), ["sum?"]);
    assert_eq!(names(&g, "web/cart.test::Cart.add", EdgeKind::Calls), ["post?"]);
    let it = g.find("web/cart.test::describe(cart).it(adds)").unwrap();
    assert!(g.symbol(it).is_test);
    assert!(!g.symbol(g.find("web/cart.test::describe(cart)").unwrap()).is_test);
    let calls = names(&g, "web/cart.test::describe(cart).it(adds)", EdgeKind::Calls);
    assert!(calls.contains(&"web/cart.test::Cart".to_string()), "{calls:?}");
    assert!(calls.contains(&"web/cart.test::Cart.add".to_string()), "{calls:?}");
    assert_eq!(names(&g, "web/cart.test", EdgeKind::Imports), ["./cart?", "./api?"]);
}

#[test]
fn typescript_and_tsx() {
    let g = one(
        "src/a.ts",
        "import { z } from 'zod';\ninterface Shape { area(): number }\nexport abstract class Square implements Shape {\n  area(): number { return compute(2); }\n}\nexport function compute(n: number): number { return n * n; }\n",
    );
    assert_eq!(g.symbol(g.find("src/a::Square").unwrap()).kind, SymbolKind::Class);
    assert_eq!(names(&g, "src/a::Square", EdgeKind::Inherits), ["src/a::Shape"]);
    assert_eq!(names(&g, "src/a::Square.area", EdgeKind::Calls), ["src/a::compute"]);
    let g = one(
        "src/App.tsx",
        "import React from 'react';\nexport function App() {\n  return <div onClick={() => track('x')}>{render()}</div>;\n}\nfunction render() { return null; }\n",
    );
    let calls = names(&g, "src/App::App", EdgeKind::Calls);
    assert_eq!(calls, ["track?", "src/App::render"]);
    assert!(!g.files()[0].has_errors);
}

#[test]
fn go_functions_methods_imports_and_tests() {
    let g = one(
        "pkg/cart_test.go",
        "package cart\n\nimport (\n\t\"testing\"\n\tstr \"strings\"\n)\n\ntype Cart struct{}\n\nfunc (c *Cart) Total() int {\n\treturn helper(str.Count(\"a\", \"a\"))\n}\n\nfunc helper(n int) int { return n }\n\nfunc TestTotal(t *testing.T) {\n\t(&Cart{}).Total()\n}\n",
    );
    let m = g.symbol(g.find("pkg/cart_test::Cart.Total").unwrap());
    assert_eq!((m.kind, m.start_line, m.end_line), (SymbolKind::Method, 10, 12));
    assert_eq!(
        names(&g, "pkg/cart_test::Cart.Total", EdgeKind::Calls),
        ["pkg/cart_test::helper", "str.Count?"]
    );
    assert!(g.symbol(g.find("pkg/cart_test::TestTotal").unwrap()).is_test);
    assert!(!g.symbol(g.find("pkg/cart_test::helper").unwrap()).is_test);
    assert_eq!(names(&g, "pkg/cart_test", EdgeKind::Imports), ["testing?", "strings?"]);
}

/// A Go receiver or parameter of one of the package's own types types its
/// method calls, across the package's files; an interface, a qualified type
/// or an untyped name stays a name.
#[test]
fn go_method_calls_on_typed_receivers_and_parameters_resolve_in_the_package() {
    let cart = "package cart\n\ntype Cart struct{ items []int }\n\ntype Pricer interface{ Price() int }\n\nfunc (c *Cart) Total() int {\n\treturn c.count()\n}\n";
    let more = "package cart\n\nimport \"io\"\n\nfunc (c Cart) count() int { return len(c.items) }\n\nfunc Report(w io.Writer, c *Cart, p Pricer) int {\n\tw.Write(nil)\n\tp.Price()\n\treturn c.Total()\n}\n";
    let g = build(
        [
            ("pkg/cart.go".to_string(), cart.to_string()),
            ("pkg/more.go".to_string(), more.to_string()),
        ],
        None,
    )
    .0;
    assert_eq!(
        names(&g, "pkg/cart::Cart.Total", EdgeKind::Calls),
        ["pkg/more::Cart.count"]
    );
    assert_eq!(
        names(&g, "pkg/more::Report", EdgeKind::Calls),
        ["Write?", "Price?", "pkg/cart::Cart.Total"]
    );
}

#[test]
fn java_classes_methods_imports_and_junit_tests() {
    let g = one(
        "src/CartTest.java",
        "import org.junit.jupiter.api.Test;\nimport java.util.List;\n\nclass Cart extends Base implements Priced {\n  int total() { return helper(List.of(1)); }\n  static int helper(List<Integer> xs) { return xs.size(); }\n}\n\nclass CartTest {\n  @Test\n  void totals() { new Cart().total(); }\n  void notATest() {}\n}\n",
    );
    assert_eq!(
        g.symbol(g.find("src/CartTest::Cart.total").unwrap()).kind,
        SymbolKind::Method
    );
    assert_eq!(
        names(&g, "src/CartTest::Cart", EdgeKind::Inherits),
        ["Base?", "Priced?"]
    );
    assert_eq!(
        names(&g, "src/CartTest::Cart.total", EdgeKind::Calls),
        ["src/CartTest::Cart.helper", "List.of?"]
    );
    assert!(g.symbol(g.find("src/CartTest::CartTest.totals").unwrap()).is_test);
    assert!(!g.symbol(g.find("src/CartTest::CartTest.notATest").unwrap()).is_test);
    assert_eq!(
        names(&g, "src/CartTest", EdgeKind::Imports),
        ["org.junit.jupiter.api.Test?", "java.util.List?"]
    );
}
