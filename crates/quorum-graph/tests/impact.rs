//! The impact report, the PR-head overlay, the arity check, incremental
//! re-indexing and the stored form, on the storefront fixture and on the
//! test project.

mod common;

use common::*;
use quorum_core::FileDiff;
use quorum_graph::impact::ChangeKind;
use quorum_graph::{ImpactOptions, blob, build, impact, overlay};

fn storefront_with(path: &str, find: &str, replace: &str) -> (quorum_graph::Graph, quorum_graph::Graph, Vec<FileDiff>) {
    let tree = read_tree(&storefront());
    let (base, _) = build(tree.clone(), None);
    let old = tree.iter().find(|(p, _)| p == path).unwrap().1.clone();
    assert_eq!(old.matches(find).count(), 1);
    let new = old.replace(find, replace);
    let (head, stats) = overlay(&base, &[(path.to_string(), Some(new.clone()))]);
    assert_eq!(stats.parsed, 1, "the overlay parses only the changed file");
    (base, head, diff(path, &old, &new))
}

#[test]
fn a_new_required_parameter_reports_the_broken_caller_in_an_untouched_file() {
    let (base, head, diffs) = storefront_with(
        "shop/pricing.py",
        "def compute_tax(amount_cents: int, region: str) -> int:",
        "def compute_tax(amount_cents: int, region: str, rates: dict) -> int:",
    );
    let report = impact(&base, &head, &diffs, ImpactOptions::default());
    let c = report
        .changed
        .iter()
        .find(|c| c.qname == "shop.pricing.compute_tax")
        .unwrap();
    assert_eq!(c.change, ChangeKind::Modified);
    assert_eq!(
        c.signature,
        Some(("(amount_cents, region)".into(), "(amount_cents, region, rates)".into()))
    );
    let broken: Vec<(&str, u32)> = c.broken_calls.iter().map(|b| (b.path.as_str(), b.line)).collect();
    assert!(broken.contains(&("shop/checkout.py", 69)), "{broken:?}");
    assert!(broken.contains(&("shop/pricing.py", 77)), "{broken:?}");
    assert!(c.broken_calls.iter().all(|b| b.problem.contains("`rates`")));
    // Callers two hops out, and the tests that reach it.
    assert!(
        c.callers
            .iter()
            .any(|k| k.qname == "shop.checkout.checkout" && k.hops == 1)
    );
    assert!(c.callers.iter().any(|k| k.hops == 2), "{:?}", c.callers);
    assert!(c.tests.iter().any(|t| t.starts_with("tests/test_pricing.py::")));
    let text = report.render(2_000);
    assert!(text.contains("BREAKS shop/checkout.py:69"), "{text}");
}

#[test]
fn an_optional_parameter_breaks_nothing() {
    let (base, head, diffs) = storefront_with(
        "shop/pricing.py",
        "def compute_tax(amount_cents: int, region: str) -> int:",
        "def compute_tax(amount_cents: int, region: str, rates: dict | None = None) -> int:",
    );
    let report = impact(&base, &head, &diffs, ImpactOptions::default());
    let c = report
        .changed
        .iter()
        .find(|c| c.qname == "shop.pricing.compute_tax")
        .unwrap();
    assert!(c.signature.is_some());
    assert!(c.broken_calls.is_empty(), "{:?}", c.broken_calls);
}

#[test]
fn symbols_the_pr_adds_resolve_against_the_head_overlay() {
    let (base, head, diffs) = storefront_with(
        "shop/pricing.py",
        "def compute_tax(amount_cents: int, region: str) -> int:",
        "def tax_for(amount_cents: int) -> int:\n    return compute_tax(amount_cents, \"US-CA\")\n\n\ndef compute_tax(amount_cents: int, region: str) -> int:",
    );
    let report = impact(&base, &head, &diffs, ImpactOptions::default());
    let added = report
        .changed
        .iter()
        .find(|c| c.qname == "shop.pricing.tax_for")
        .unwrap();
    assert_eq!(added.change, ChangeKind::Added);
    assert!(head.find("shop.pricing.tax_for").is_some() && base.find("shop.pricing.tax_for").is_none());
}

#[test]
fn removing_a_function_reports_its_remaining_callers() {
    let src = read_tree(&data("pyproj"));
    let (base, _) = build(src.clone(), None);
    let path = "app/core/engine.py";
    let old = src.iter().find(|(p, _)| p == path).unwrap().1.clone();
    let new = old.replace("    def helper(self):\n        return self.retries\n", "");
    let (head, _) = overlay(&base, &[(path.into(), Some(new.clone()))]);
    let report = impact(&base, &head, &diff(path, &old, &new), ImpactOptions::default());
    let c = report
        .changed
        .iter()
        .find(|c| c.qname.ends_with("Engine.helper"))
        .unwrap();
    assert_eq!(c.change, ChangeKind::Removed);
    assert_eq!(c.broken_calls.len(), 1, "{:?}", c.broken_calls);
    assert_eq!(c.broken_calls[0].line, 13);
}

#[test]
fn method_signatures_are_checked_with_self_bound() {
    let src = read_tree(&data("pyproj"));
    let (base, _) = build(src.clone(), None);
    let path = "app/core/engine.py";
    let old = src.iter().find(|(p, _)| p == path).unwrap().1.clone();
    let new = old.replace("def run_step(self, step):", "def run_step(self, step, budget):");
    let (head, _) = overlay(&base, &[(path.into(), Some(new.clone()))]);
    let report = impact(&base, &head, &diff(path, &old, &new), ImpactOptions::default());
    let c = report
        .changed
        .iter()
        .find(|c| c.qname.ends_with("Engine.run_step"))
        .unwrap();
    let sites: Vec<(&str, u32)> = c.broken_calls.iter().map(|b| (b.path.as_str(), b.line)).collect();
    // `E("cli").run_step(1)` in an untouched file and the unittest call: both resolved through the class.
    assert!(sites.contains(&("app/cli.py", 14)), "{sites:?}");
    assert!(sites.contains(&("tests/test_engine.py", 12)), "{sites:?}");
    // `engine = Engine("main")` then `engine.run_step(...)`: a local of a known
    // class is resolved through it, so its call is judged too.
    assert!(sites.contains(&("app/core/engine.py", 34)), "{sites:?}");
    // A constructor change is checked at the class's call sites, without self.
    let new = old.replace(
        "def __init__(self, name, retries=3):",
        "def __init__(self, name, retries, clock):",
    );
    let (head, _) = overlay(&base, &[(path.into(), Some(new.clone()))]);
    let report = impact(&base, &head, &diff(path, &old, &new), ImpactOptions::default());
    let c = report
        .changed
        .iter()
        .find(|c| c.qname.ends_with("Engine.__init__"))
        .unwrap();
    let lines: Vec<u32> = c
        .broken_calls
        .iter()
        .filter(|b| b.path == path)
        .map(|b| b.line)
        .collect();
    assert_eq!(lines, [29], "{:?}", c.broken_calls);
}

#[test]
fn incremental_reindex_parses_only_changed_files() {
    let mut tree = read_tree(&storefront());
    let (_, stats) = build(tree.clone(), None);
    assert_eq!(stats.reused, 0);
    let py = tree.iter().filter(|(p, _)| p.ends_with(".py")).count();
    assert_eq!(stats.parsed, py);
    // Two files with identical content (empty packages) must not confuse reuse.
    tree.push(("shop/empty_a/__init__.py".into(), String::new()));
    tree.push(("shop/empty_b/__init__.py".into(), String::new()));
    let (first, _) = build(tree.clone(), None);
    let py = py + 2;
    let i = tree.iter().position(|(p, _)| p == "shop/utils.py").unwrap();
    tree[i].1.push_str("\n\ndef added_later():\n    return 1\n");
    let (second, stats) = build(tree, Some(&first));
    assert_eq!((stats.parsed, stats.reused), (1, py - 1));
    assert!(second.find("shop.utils.added_later").is_some());
}

#[test]
fn blobs_round_trip_compressed_and_refuse_other_formats() {
    let (g, _) = build(read_tree(&storefront()), None);
    let bytes = blob::encode(&g);
    let raw: usize = g.files().iter().map(|f| f.lines as usize * 30).sum();
    assert!(bytes.len() < raw, "blob {} bytes", bytes.len());
    let back = blob::decode(&bytes).unwrap();
    assert_eq!(back.files(), g.files());
    assert_eq!(back.edges(), g.edges());
    assert!(matches!(blob::decode(b"nope"), Err(blob::BlobError::Magic)));
    let mut other = bytes.clone();
    other[3] = 99;
    assert!(matches!(blob::decode(&other), Err(blob::BlobError::Format(99))));
    let truncated = &bytes[..bytes.len() / 2];
    assert!(matches!(blob::decode(truncated), Err(blob::BlobError::Corrupt(_))));
}

#[test]
fn the_rendered_report_respects_its_token_budget() {
    let (base, head, diffs) = storefront_with(
        "shop/pricing.py",
        "def compute_tax(amount_cents: int, region: str) -> int:",
        "def compute_tax(amount_cents: int, region: str, rates: dict) -> int:",
    );
    let report = impact(&base, &head, &diffs, ImpactOptions { hops: 3, test_hops: 3 });
    let full = report.render(10_000);
    let small = report.render(60);
    assert!(small.len() < full.len());
    // What breaks is always kept; callers and tests give way.
    assert!(small.contains("BREAKS shop/checkout.py:69"), "{small}");
    assert!(small.contains("more lines omitted"), "{small}");
}

#[test]
fn a_javascript_parameter_named_self_is_an_ordinary_parameter() {
    // undici's `addSignal(self, signal)`: not a receiver, so dropping
    // `signal` breaks a caller that passes two arguments, and a caller
    // updated to pass one is fine.
    let def = "function addSignal (self, signal) {\n  self.signal = signal\n}\nmodule.exports = { addSignal }\n";
    let call = "const { addSignal } = require('./abort-signal')\nfunction connect (signal) {\n  addSignal(this, signal)\n}\nmodule.exports = { connect }\n";
    let files = vec![
        ("lib/abort-signal.js".to_string(), def.to_string()),
        ("lib/connect.js".to_string(), call.to_string()),
    ];
    let (base, _) = build(files, None);
    let new_def = def.replace("(self, signal)", "(self)");
    let (head, _) = overlay(&base, &[("lib/abort-signal.js".to_string(), Some(new_def.clone()))]);
    let diffs = diff("lib/abort-signal.js", def, &new_def);
    let report = impact(&base, &head, &diffs, ImpactOptions::default());
    let broken: Vec<(&str, u32)> = report
        .changed
        .iter()
        .flat_map(|c| &c.broken_calls)
        .map(|b| (b.path.as_str(), b.line))
        .collect();
    assert_eq!(broken, [("lib/connect.js", 3)], "{report:?}");

    let new_call = call.replace("addSignal(this, signal)", "addSignal(this)");
    let (head, _) = overlay(
        &base,
        &[
            ("lib/abort-signal.js".to_string(), Some(new_def.clone())),
            ("lib/connect.js".to_string(), Some(new_call.clone())),
        ],
    );
    let mut diffs = diff("lib/abort-signal.js", def, &new_def);
    diffs.extend(diff("lib/connect.js", call, &new_call));
    let report = impact(&base, &head, &diffs, ImpactOptions::default());
    assert!(report.changed.iter().all(|c| c.broken_calls.is_empty()), "{report:?}");
}

/// The (path, line) of every broken call in the report.
fn broken_calls(report: &quorum_graph::ImpactReport) -> Vec<(String, u32)> {
    report
        .changed
        .iter()
        .flat_map(|c| &c.broken_calls)
        .map(|b| (b.path.clone(), b.line))
        .collect()
}

#[test]
fn a_call_of_a_calls_result_is_not_a_call_of_the_function() {
    // click's `group(*args, **kwargs)(f)` and rxjs's
    // `pipeFromArray(operations)(this)`: the outer call's arguments go to
    // what the function returned, so a control that updates the inner call
    // after the function gains a parameter breaks nothing, and a caller
    // that did not update it is still found.
    for (def_path, def, old_sig, new_sig, use_path, call, old_call, new_call) in [
        (
            "pkg/deco.py",
            "def group(name, **attrs):\n    def wrap(f):\n        return f\n    return wrap\n",
            "def group(name, **attrs):",
            "def group(name, help, **attrs):",
            "pkg/cli.py",
            "from pkg.deco import group\n\n\ndef make(f):\n    return group('x')(f)\n",
            "group('x')(f)",
            "group('x', None)(f)",
        ),
        (
            "src/pipe.js",
            "export function pipeFromArray(fns) {\n  return (input) => fns.reduce((v, fn) => fn(v), input)\n}\n",
            "pipeFromArray(fns)",
            "pipeFromArray(fns, name)",
            "src/observable.js",
            "import { pipeFromArray } from './pipe'\nexport function pipe(source, ops) {\n  return pipeFromArray(ops)(source)\n}\n",
            "pipeFromArray(ops)(source)",
            "pipeFromArray(ops, undefined)(source)",
        ),
    ] {
        let files = vec![
            (def_path.to_string(), def.to_string()),
            (use_path.to_string(), call.to_string()),
        ];
        let (base, _) = build(files, None);
        let new_def = def.replace(old_sig, new_sig);
        let updated = call.replace(old_call, new_call);
        // The definition alone changed: the caller's inner call breaks.
        let (head, _) = overlay(&base, &[(def_path.to_string(), Some(new_def.clone()))]);
        let report = impact(&base, &head, &diff(def_path, def, &new_def), ImpactOptions::default());
        let line = call.lines().position(|l| l.contains(old_call)).unwrap() as u32 + 1;
        assert_eq!(
            broken_calls(&report),
            [(use_path.to_string(), line)],
            "{def_path}: {report:?}"
        );
        // The caller updated too: the outer call is not judged by the
        // function's signature.
        let (head, _) = overlay(
            &base,
            &[
                (def_path.to_string(), Some(new_def.clone())),
                (use_path.to_string(), Some(updated.clone())),
            ],
        );
        let mut diffs = diff(def_path, def, &new_def);
        diffs.extend(diff(use_path, call, &updated));
        let report = impact(&base, &head, &diffs, ImpactOptions::default());
        assert_eq!(broken_calls(&report), [], "{def_path}: {report:?}");
    }
}
