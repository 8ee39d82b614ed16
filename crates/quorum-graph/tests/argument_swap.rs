//! Argument selection across files: a call the change wrote whose arguments
//! are named after the callee's parameters but sit in each other's places,
//! with the callee in another file (TypeScript, resolved through an import),
//! in the same class (JavaScript, through `this.`), and in Python. Code
//! written for these tests.

mod common;

use common::impact_of_edit as change;
use quorum_graph::ImpactReport;

/// (path, line, each argument with the parameter it names).
type Swap = (String, u32, [(String, String); 2]);

fn swaps(r: &ImpactReport) -> Vec<Swap> {
    r.swapped_arguments
        .iter()
        .map(|s| (s.path.clone(), s.line, s.swapped.clone()))
        .collect()
}

const LAYOUT: &str = "export function pad(text: string, width: number, indent: number): string {\n  return ' '.repeat(indent) + text.padEnd(width);\n}\n";
const VIEW: &str = "import { pad } from './layout';\n\nexport function row(label: string, columnWidth: number, leftIndent: number): string {\n  const line = label.trim();\n  return pad(line, columnWidth, leftIndent);\n}\n";

#[test]
fn a_call_to_an_imported_function_with_two_arguments_swapped() {
    let files = [("src/layout.ts", LAYOUT), ("src/view.ts", VIEW)];
    let r = change(
        &files,
        "src/view.ts",
        "  return pad(line, columnWidth, leftIndent);",
        "  return pad(\n    line,\n    leftIndent,\n    columnWidth,\n  );",
    );
    let got = swaps(&r);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "src/view.ts");
    assert_eq!(got[0].1, 5, "the call's first added line");
    assert_eq!(got[0].2[0], ("leftIndent".to_string(), "indent".to_string()));
    assert_eq!(got[0].2[1], ("columnWidth".to_string(), "width".to_string()));
    assert_eq!(r.swapped_arguments[0].callee, "src/layout::pad");

    // The right order, a call the change did not write, and names that say
    // nothing are all left alone.
    let r = change(
        &files,
        "src/view.ts",
        "  const line = label.trim();",
        "  const line = label.trim().toUpperCase();",
    );
    assert!(swaps(&r).is_empty(), "the call line is not part of the change");
    let r = change(
        &files,
        "src/view.ts",
        "  return pad(line, columnWidth, leftIndent);",
        "  return pad(line.trim(), columnWidth, leftIndent);",
    );
    assert!(swaps(&r).is_empty());
    let r = change(
        &files,
        "src/view.ts",
        "  return pad(line, columnWidth, leftIndent);",
        "  return pad(line, 2 * columnWidth, leftIndent);",
    );
    assert!(swaps(&r).is_empty());
}

const WIDGET: &str = "class Box {\n  resize(width, height) {\n    this.w = width;\n    this.h = height;\n  }\n\n  grow(by) {\n    const height = this.h + by;\n    const width = this.w + by;\n    this.resize(width, height);\n  }\n}\n";

#[test]
fn a_method_called_through_this_and_a_python_method() {
    let r = change(
        &[("box.js", WIDGET)],
        "box.js",
        "    this.resize(width, height);",
        "    this.resize(height, width);",
    );
    assert_eq!(swaps(&r).len(), 1, "{r:?}");
    let py = "class Range:\n    def __init__(self):\n        self.lo = 0\n\n    def set_bounds(self, lower, upper):\n        self.lo, self.hi = lower, upper\n\n    def widen(self, lower, upper):\n        self.set_bounds(lower - 1, upper + 1)\n";
    let r = change(
        &[("rng.py", py)],
        "rng.py",
        "        self.set_bounds(lower - 1, upper + 1)",
        "        self.set_bounds(upper, lower)",
    );
    let got = swaps(&r);
    assert_eq!(got.len(), 1, "{r:?}");
    assert_eq!(
        got[0].2[0],
        ("upper".to_string(), "upper".to_string()),
        "each argument with the parameter it names"
    );
    // A comparator's reversed order is on purpose.
    let cmp = "function compareBy(first, second) {\n  return first - second;\n}\nfunction sortDesc(xs) {\n  return xs.sort((older, newer) => compareBy(older, newer));\n}\n";
    let r = change(
        &[("s.js", cmp)],
        "s.js",
        "compareBy(older, newer)",
        "compareBy(second, first)",
    );
    assert!(swaps(&r).is_empty());
}
