//! JavaScript/TypeScript across files: ES module imports and exports (named,
//! default, `export * from`, re-exports, `import * as ns`), CommonJS
//! `require`/`exports`, class members through `this.`, and the impact
//! report's contract checks at the resolved call sites in files the change
//! does not touch. Code written for these tests.

mod common;

use common::impact_of_edit as change;
use common::*;
use quorum_graph::impact::BreakKind;
use quorum_graph::{EdgeKind, ImpactOptions, ImpactReport, impact, overlay};

fn breaks(r: &ImpactReport) -> Vec<(String, BreakKind)> {
    let mut v: Vec<_> = r.changed.iter().flat_map(|c| c.broken_calls.iter()).collect();
    v.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    v.into_iter()
        .map(|b| (format!("{}:{}", b.path, b.line), b.kind))
        .collect()
}

fn at(site: &str, kind: BreakKind) -> (String, BreakKind) {
    (site.to_string(), kind)
}

const MONEY: &str = "export function applyDiscount(price: number, rate: number): number {\n  return price * (1 - rate);\n}\n\nexport default function format(cents: number): string {\n  return `$${cents / 100}`;\n}\n\nexport const round = (x: number) => Math.round(x);\n\nfunction internal(a: number) {\n  return a;\n}\n\nexport { internal as exposed };\n";
const INDEX: &str = "export * from './money';\nexport { default as formatMoney } from './money';\n";
const CART: &str = "import { applyDiscount, exposed } from './lib';\nimport formatMoney from './lib/money';\nimport * as money from './lib/money.js';\nimport { formatMoney as fm } from './lib/index';\nimport { parse } from 'some-package';\n\nexport class Cart {\n  total(items: number[]): string {\n    const sum = this.sum(items);\n    const cut = applyDiscount(sum, 0.1);\n    money.round(cut);\n    exposed(cut);\n    parse(cut);\n    fm(cut);\n    return formatMoney(cut);\n  }\n\n  sum(items: number[]): number {\n    return items.length;\n  }\n}\n";

fn shop() -> Vec<(&'static str, &'static str)> {
    vec![
        ("src/lib/money.ts", MONEY),
        ("src/lib/index.ts", INDEX),
        ("src/cart.ts", CART),
    ]
}

#[test]
fn es_imports_resolve_through_exports_reexports_and_namespaces() {
    let g = graph(&shop());
    assert_eq!(
        names(&g, "src/cart::Cart.total", EdgeKind::Calls),
        [
            "src/cart::Cart.sum",
            // `export * from './money'` in src/lib/index.ts.
            "src/lib/money::applyDiscount",
            // `import * as money from './lib/money.js'` (the .ts file).
            "src/lib/money::round",
            // `export { internal as exposed }`.
            "src/lib/money::internal",
            // A package outside the repository.
            "parse?",
            // `export { default as formatMoney } from './money'`.
            "src/lib/money::format",
            // `import formatMoney from './lib/money'` (the default export).
            "src/lib/money::format",
        ]
    );
    assert_eq!(
        names(&g, "src/cart", EdgeKind::Imports),
        // One edge per imported name.
        [
            "src/lib/index",
            "src/lib/index",
            "src/lib/money",
            "src/lib/money",
            "src/lib/index",
            "some-package?"
        ]
    );
}

#[test]
fn a_new_required_parameter_breaks_the_caller_in_another_file() {
    let r = change(
        &shop(),
        "src/lib/money.ts",
        "applyDiscount(price: number, rate: number)",
        "applyDiscount(price: number, rate: number, currency: string)",
    );
    assert_eq!(breaks(&r), [at("src/cart.ts:10", BreakKind::Arity)]);
    // An optional or defaulted parameter breaks nobody.
    for new in [
        "applyDiscount(price: number, rate: number, currency?: string)",
        "applyDiscount(price: number, rate: number, currency = 'EUR')",
        "applyDiscount(price: number, rate: number, ...tags: string[])",
    ] {
        let r = change(
            &shop(),
            "src/lib/money.ts",
            "applyDiscount(price: number, rate: number)",
            new,
        );
        assert_eq!(breaks(&r), [], "{new}");
    }
}

#[test]
fn a_removed_parameter_and_reordered_parameters_break_callers() {
    let r = change(
        &shop(),
        "src/lib/money.ts",
        "applyDiscount(price: number, rate: number)",
        "applyDiscount(price: number)",
    );
    assert_eq!(breaks(&r), [at("src/cart.ts:10", BreakKind::Arity)]);
    let r = change(
        &shop(),
        "src/lib/money.ts",
        "applyDiscount(price: number, rate: number)",
        "applyDiscount(rate: number, price: number)",
    );
    assert_eq!(breaks(&r), [at("src/cart.ts:10", BreakKind::Arity)]);
    let b = &r
        .changed
        .iter()
        .find(|c| !c.broken_calls.is_empty())
        .unwrap()
        .broken_calls[0];
    assert!(b.problem.contains("old order"), "{}", b.problem);
    // Renaming a parameter in place is not a reorder.
    let r = change(
        &shop(),
        "src/lib/money.ts",
        "applyDiscount(price: number, rate: number)",
        "applyDiscount(price: number, discount: number)",
    );
    assert_eq!(breaks(&r), []);
}

#[test]
fn positional_parameters_turned_into_an_options_object_and_back() {
    let lib = "export function connect(host, port) {\n  return host + port;\n}\n\nexport function open({ path, mode }) {\n  return path + mode;\n}\n";
    let app = "const { connect, open } = require('./net');\n\nfunction main() {\n  connect('localhost', 80);\n  connect(config);\n  open({ path: '/tmp', mode: 'r' });\n}\n";
    let files = [("lib/net.js", lib), ("lib/app.js", app)];
    let r = change(&files, "lib/net.js", "connect(host, port)", "connect({ host, port })");
    // `connect('localhost', 80)` passes a plain value (and one too many);
    // `connect(config)` may already pass an object: not judged.
    assert_eq!(breaks(&r), [at("lib/app.js:4", BreakKind::Arity)]);
    let r = change(&files, "lib/net.js", "open({ path, mode })", "open(path, mode)");
    assert_eq!(breaks(&r), [at("lib/app.js:6", BreakKind::Arity)]);
}

#[test]
fn a_flag_turned_into_a_typed_options_object_breaks_literal_callers() {
    let lib = "export function freeze<T>(obj: T, deep: boolean = false): T {\n  return deep ? deepFreeze(obj) : Object.freeze(obj);\n}\n";
    let app = "import { freeze } from './freeze';\n\nexport function seal(state: object, nested: boolean) {\n  freeze(state, true);\n  freeze(state, nested);\n  freeze(state);\n}\n";
    let files = [("src/freeze.ts", lib), ("src/app.ts", app)];
    let r = change(
        &files,
        "src/freeze.ts",
        "deep: boolean = false): T {\n  return deep ?",
        "options: { deep?: boolean } = {}): T {\n  return options.deep ?",
    );
    // `freeze(state, true)` passes a flag where the options object now
    // goes; `freeze(state, nested)` may hold anything, `freeze(state)` fits.
    assert_eq!(breaks(&r), [at("src/app.ts:4", BreakKind::Arity)]);
    // A named options type is not judged (it may be a boolean union).
    let r = change(
        &files,
        "src/freeze.ts",
        "deep: boolean = false): T {\n  return deep ?",
        "options: FreezeOptions = {}): T {\n  return options.deep ?",
    );
    assert_eq!(breaks(&r), []);
}

#[test]
fn a_parameter_destructured_from_an_options_object_breaks_callers_passing_it_by_name() {
    let lib = "export function draft(base, strict) {\n  return strict ? copy(base) : base;\n}\n";
    let app = "import { draft } from './draft';\n\nexport function run(base, strict, opts) {\n  draft(base, strict);\n  draft(base, this.strict);\n  draft(base, opts);\n  draft(base, { strict });\n}\n";
    let files = [("src/draft.js", lib), ("src/app.js", app)];
    let r = change(&files, "src/draft.js", "(base, strict) {", "(base, { strict }) {");
    // The value itself, by its own name, where an object now goes; `opts`
    // may well be that object, and `{ strict }` is one.
    assert_eq!(
        breaks(&r),
        [
            at("src/app.js:4", BreakKind::Arity),
            at("src/app.js:5", BreakKind::Arity)
        ]
    );
}

#[test]
fn a_plain_javascript_parameter_the_function_treats_as_optional_is_not_required() {
    let lib = "exports.greet = greet;\n\nfunction greet(name) {\n  return 'hi ' + name;\n}\n";
    let app = "const lib = require('./lib');\n\nlib.greet('a');\n";
    let files = [("src/lib.js", lib), ("src/app.js", app)];
    let r = change(
        &files,
        "src/lib.js",
        "function greet(name) {\n  return 'hi ' + name;",
        "function greet(name, greeting) {\n  if (greeting === undefined) greeting = 'hi';\n  return greeting + ' ' + name;",
    );
    assert_eq!(breaks(&r), []);
    let r = change(
        &files,
        "src/lib.js",
        "function greet(name) {\n  return 'hi ' + name;",
        "function greet(name, greeting) {\n  return greeting.trim() + ' ' + name;",
    );
    assert_eq!(breaks(&r), [at("src/app.js:3", BreakKind::Arity)]);
}

#[test]
fn a_removed_export_still_imported_breaks_and_a_moved_reexported_one_does_not() {
    let r = change(
        &shop(),
        "src/lib/money.ts",
        "export const round = (x: number) => Math.round(x);\n",
        "",
    );
    assert_eq!(breaks(&r), [at("src/cart.ts:11", BreakKind::Removed)]);
    // Moved to another module and re-exported under the same name: the
    // call still resolves in the head.
    let mut files = shop();
    files.push(("src/lib/rounding.ts", "export const round2 = (x: number) => x;\n"));
    let base = graph(&files);
    let money = MONEY.replace(
        "export const round = (x: number) => Math.round(x);\n",
        "export { round2 as round } from './rounding';\n",
    );
    let (head, _) = overlay(&base, &[("src/lib/money.ts".into(), Some(money.clone()))]);
    let r = impact(
        &base,
        &head,
        &diff("src/lib/money.ts", MONEY, &money),
        ImpactOptions::default(),
    );
    assert_eq!(breaks(&r), []);
}

#[test]
fn a_result_that_can_now_be_null_breaks_callers_that_dereference_it() {
    let lib = "export function findUser(id: string) {\n  return { id, name: 'x' };\n}\n";
    let app = "import { findUser } from './users';\n\nexport function show(id: string) {\n  return findUser(id).name;\n}\n\nexport function safe(id: string) {\n  return findUser(id)?.name;\n}\n\nexport function later(id: string) {\n  const u = findUser(id);\n  if (!u) return '';\n  return u.name;\n}\n\nexport function direct(id: string) {\n  const u = findUser(id);\n  return u.name;\n}\n";
    let files = [("src/users.ts", lib), ("src/app.ts", app)];
    let r = change(
        &files,
        "src/users.ts",
        "  return { id, name: 'x' };",
        "  if (!id) return null;\n  return { id, name: 'x' };",
    );
    assert_eq!(
        breaks(&r),
        [
            at("src/app.ts:4", BreakKind::NoneResult),
            at("src/app.ts:18", BreakKind::NoneResult)
        ]
    );
}

#[test]
fn a_renamed_result_key_breaks_callers_that_still_read_it() {
    let lib = "export function stats(xs) {\n  return { count: xs.length, total: 0 };\n}\n";
    let app = "import { stats } from './stats';\n\nexport function a(xs) {\n  const { count } = stats(xs);\n  return count;\n}\n\nexport function b(xs) {\n  return stats(xs).total;\n}\n\nexport function c(xs) {\n  const s = stats(xs);\n  return s.count + 1;\n}\n";
    let files = [("src/stats.js", lib), ("src/app.js", app)];
    let r = change(
        &files,
        "src/stats.js",
        "{ count: xs.length, total: 0 }",
        "{ size: xs.length, total: 0 }",
    );
    assert_eq!(
        breaks(&r),
        [
            at("src/app.js:4", BreakKind::ReturnShape),
            at("src/app.js:13", BreakKind::ReturnShape)
        ]
    );
    // A key added, none removed: nothing breaks.
    let r = change(
        &files,
        "src/stats.js",
        "{ count: xs.length, total: 0 }",
        "{ count: xs.length, total: 0, mean: 0 }",
    );
    assert_eq!(breaks(&r), []);
}

#[test]
fn class_members_through_this_and_constructors_through_new() {
    let lib = "export class Queue {\n  constructor(name) {\n    this.name = name;\n  }\n\n  push(item) {\n    this.check(item);\n  }\n\n  check(item) {\n    return item;\n  }\n}\n";
    let app = "import { Queue } from './queue';\n\nconst q = new Queue('jobs');\nnew Queue('other').push(1);\n";
    let files = [("src/queue.js", lib), ("src/app.js", app)];
    let g = graph(&files);
    assert_eq!(
        names(&g, "src/queue::Queue.push", EdgeKind::Calls),
        ["src/queue::Queue.check"]
    );
    assert_eq!(
        names(&g, "src/app", EdgeKind::Calls),
        ["src/queue::Queue", "src/queue::Queue.push", "src/queue::Queue"]
    );
    let r = change(
        &files,
        "src/queue.js",
        "constructor(name) {",
        "constructor(name, limit) {",
    );
    assert_eq!(
        breaks(&r),
        [
            at("src/app.js:3", BreakKind::Arity),
            at("src/app.js:4", BreakKind::Arity)
        ]
    );
    let r = change(&files, "src/queue.js", "  check(item) {", "  check(item, strict) {");
    assert_eq!(breaks(&r), [at("src/queue.js:7", BreakKind::Arity)]);
}

#[test]
fn the_rendered_impact_report_names_broken_call_sites_in_untouched_files() {
    // What `quorum impact` prints for a TypeScript repository.
    let r = change(
        &shop(),
        "src/lib/money.ts",
        "applyDiscount(price: number, rate: number)",
        "applyDiscount(price: number, rate: number, currency: string)",
    );
    let text = r.render(4000);
    assert!(text.contains("src/cart.ts:10"), "{text}");
    assert!(text.contains("applyDiscount(sum, 0.1)"), "{text}");
}

#[test]
fn receivers_of_a_known_class_resolve_and_shadowed_or_untyped_ones_do_not() {
    let lib = "export class Store {\n  get(key: string) {\n    return key;\n  }\n\n  has = (key: string) => this.get(key) !== '';\n}\n";
    let app = "import { Store } from './store';\n\nconst shared = new Store();\n\nexport function a(s: Store) {\n  return s.get('a');\n}\n\nexport function b() {\n  return shared.get('b');\n}\n\nexport function c(shared: Map<string, string>) {\n  return shared.get('c');\n}\n\nexport function d(s) {\n  return s.get('d');\n}\n";
    let files = [("src/store.ts", lib), ("src/app.ts", app)];
    let g = graph(&files);
    // A class field holding an arrow function is a method.
    assert_eq!(
        names(&g, "src/store::Store.has", EdgeKind::Calls),
        ["src/store::Store.get"]
    );
    assert_eq!(names(&g, "src/app::a", EdgeKind::Calls), ["src/store::Store.get"]);
    assert_eq!(names(&g, "src/app::b", EdgeKind::Calls), ["src/store::Store.get"]);
    // A parameter shadows the module's `shared`; an untyped one is unknown.
    assert_eq!(names(&g, "src/app::c", EdgeKind::Calls), ["get?"]);
    assert_eq!(names(&g, "src/app::d", EdgeKind::Calls), ["get?"]);
    let r = change(
        &files,
        "src/store.ts",
        "get(key: string) {",
        "get(key: string, fallback: string) {",
    );
    assert_eq!(
        breaks(&r),
        [
            at("src/app.ts:6", BreakKind::Arity),
            at("src/app.ts:10", BreakKind::Arity),
            at("src/store.ts:6", BreakKind::Arity)
        ]
    );
}

#[test]
fn a_jsdoc_parameter_type_names_the_receiver_class_in_plain_javascript() {
    let lib = "class Command {\n  name(n) {\n    return n;\n  }\n}\nexports.Command = Command;\n";
    let help = "/**\n * @param {Command} cmd\n * @param {string} title\n */\nfunction title(cmd, title) {\n  return cmd.name(title) + title.trim();\n}\n\n/** @param {Object} cmd */\nfunction other(cmd) {\n  return cmd.name('x');\n}\n";
    let g = graph(&[("lib/command.js", lib), ("lib/help.js", help)]);
    // `Command` is not imported into help.js: its type resolves by name only
    // when the file can see it; here it cannot, so the call stays unknown.
    assert_eq!(names(&g, "lib/help::title", EdgeKind::Calls), ["name?", "trim?"]);
    let help = format!("const {{ Command }} = require('./command');\n{help}");
    let g = graph(&[("lib/command.js", lib), ("lib/help.js", &help)]);
    assert_eq!(
        names(&g, "lib/help::title", EdgeKind::Calls),
        ["lib/command::Command.name", "trim?"]
    );
    assert_eq!(names(&g, "lib/help::other", EdgeKind::Calls), ["name?"]);
    // A JSDoc type import works like `require` for the type.
    let help = format!(
        "/**\n * @typedef {{ import(\"./command.js\").Command }} Command\n */\n{}",
        &help[help.find('\n').unwrap() + 1..]
    );
    let g = graph(&[("lib/command.js", lib), ("lib/help.js", &help)]);
    assert_eq!(
        names(&g, "lib/help::title", EdgeKind::Calls),
        ["lib/command::Command.name", "trim?"]
    );
}

#[test]
fn typescript_class_fields_and_parameter_properties_name_the_receiver() {
    let repo = "export class Repo {\n  find(id: string) {\n    return id;\n  }\n}\n";
    let svc = "import { Repo } from './repo';\n\nexport class Service {\n  private cache: Repo;\n  private other;\n\n  constructor(private repo: Repo, plain: Repo) {\n    this.cache = plain;\n  }\n\n  load(id: string) {\n    this.repo.find(id);\n    this.cache.find(id);\n    this.other.find(id);\n  }\n}\n";
    let g = graph(&[("src/repo.ts", repo), ("src/service.ts", svc)]);
    assert_eq!(
        names(&g, "src/service::Service.load", EdgeKind::Calls),
        ["src/repo::Repo.find", "src/repo::Repo.find", "find?"]
    );
}

#[test]
fn a_typescript_return_type_that_now_admits_undefined() {
    let lib = "export function first(xs: string[]): string {\n  return xs[0];\n}\n";
    let app = "import { first } from './list';\n\nexport function upper(xs: string[]) {\n  return first(xs).toUpperCase();\n}\n";
    let files = [("src/list.ts", lib), ("src/app.ts", app)];
    let r = change(&files, "src/list.ts", "): string {", "): string | undefined {");
    assert_eq!(breaks(&r), [at("src/app.ts:4", BreakKind::NoneResult)]);
    // A return type that already admitted it: no change to report.
    let lib = "export function first(xs: string[]): string | null {\n  return xs[0];\n}\n";
    let files = [("src/list.ts", lib), ("src/app.ts", app)];
    let r = change(&files, "src/list.ts", "): string | null {", "): string | undefined {");
    assert_eq!(breaks(&r), []);
}
