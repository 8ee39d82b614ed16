//! Incremental resolution changes nothing but the time: after random edits
//! to a few files, a build from the previous graph is the same, byte for
//! byte, as a build from nothing, in every language the graph resolves,
//! and it resolves only part of the tree.

mod common;

use quorum_graph::{Graph, SymbolKind, Target, blob, build, overlay};

/// The storefront fixture, this crate's sources, and a generated tree of
/// six languages whose modules import, call and subclass each other.
fn corpus() -> Vec<(String, String)> {
    let mut out = common::read_repo_dirs(&[
        "storefront-fixture",
        "crates/quorum-graph/src",
        "crates/quorum-graph/tests/data",
    ]);
    out.extend(generated(8));
    out.sort();
    out
}

/// `n` modules per language, module i using module (i + 1) % n and
/// (i + 3) % n: imports, re-exports, calls through qualifiers and
/// receivers, subclasses.
fn generated(n: usize) -> Vec<(String, String)> {
    let mut out = vec![];
    out.push(("gen/py/pkg/__init__.py".into(), "from .m0 import f0 as top\n".into()));
    for i in 0..n {
        let (j, k) = ((i + 1) % n, (i + 3) % n);
        out.push((
            format!("gen/py/pkg/m{i}.py"),
            format!(
                "from .m{j} import f{j}, C{j}\nfrom . import m{k}\nimport pkg\n\n\
                 def f{i}(a):\n    return f{j}(a) + m{k}.f{k}(a) + pkg.top(a)\n\n\
                 class C{i}(C{j}):\n    def m{i}(self):\n        return self.m{j}() + m{k}.C{k}().m{k}()\n"
            ),
        ));
        out.push((
            format!("gen/js/m{i}.js"),
            format!(
                "import {{ f{j}, C{j} }} from './m{j}.js';\nimport * as ns from './m{k}.js';\n\
                 export function f{i}(a) {{ return f{j}(a) + ns.f{k}(a); }}\n\
                 export class C{i} extends C{j} {{ m{i}() {{ return this.m{j}() + new ns.C{k}().m{k}(); }} }}\n"
            ),
        ));
        out.push((
            format!("gen/ts/m{i}.ts"),
            format!(
                "import {{ f{j} }} from './m{j}';\nexport {{ f{k} as g{i} }} from './m{k}';\n\
                 export function f{i}(a: number): number {{ return f{j}(a); }}\n\
                 export class C{i} {{ m{i}(): number {{ return f{i}(1); }} }}\n"
            ),
        ));
        out.push((
            format!("gen/rs/src/m{i}.rs"),
            format!(
                "use crate::m{j}::T{j};\nuse crate::m{k};\n\n\
                 pub struct T{i};\n\nimpl T{i} {{\n    pub fn new() -> Self {{ T{i} }}\n    \
                 pub fn m(&self) -> u32 {{ T{j}::new().m() + m{k}::f{k}() + self.n() }}\n    \
                 fn n(&self) -> u32 {{ 1 }}\n}}\n\npub fn f{i}() -> u32 {{ T{i}::new().m() }}\n"
            ),
        ));
        out.push((
            format!("gen/go/p{i}/p.go"),
            format!(
                "package p{i}\n\nimport \"example.com/gen/go/p{j}\"\n\n\
                 type T{i} struct{{}}\n\nfunc (t *T{i}) M() int {{ return p{j}.F{j}() + t.N() }}\n\n\
                 func (t *T{i}) N() int {{ return 1 }}\n\nfunc F{i}() int {{ t := &T{i}{{}}; return t.M() }}\n"
            ),
        ));
        out.push((
            format!("gen/java/com/gen/C{i}.java"),
            format!(
                "package com.gen;\n\nimport com.gen.C{j};\n\npublic class C{i} extends C{j} {{\n    \
                 public int m{i}() {{ return new C{k}().m{k}() + m{j}(); }}\n}}\n"
            ),
        ));
    }
    out.push((
        "gen/rs/src/lib.rs".into(),
        (0..n).map(|i| format!("pub mod m{i};\n")).collect(),
    ));
    out
}

/// A small deterministic generator (xorshift), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A definition of `name` in the language of `path`, to append to it.
fn definition(path: &str, name: &str) -> Option<String> {
    let ext = path.rsplit('.').next()?;
    Some(match ext {
        "py" => format!("\n\ndef {name}(*args):\n    return None\n"),
        "js" | "ts" => format!("\nexport function {name}() {{ return 1; }}\n"),
        "rs" => format!("\npub fn {name}() -> u32 {{ 1 }}\n"),
        "go" => format!("\nfunc {name}() int {{ return 1 }}\n"),
        _ => return None,
    })
}

/// Replaces whole-word occurrences of `from` by `to`.
fn rename_word(text: &str, from: &str, to: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        // The character before: in the rest, or at the end of what is written.
        let before = rest[..at].chars().next_back().or_else(|| out.chars().next_back());
        let before_ok = !before.is_some_and(is_word);
        let after_ok = !rest[at + from.len()..].chars().next().is_some_and(is_word);
        out.push_str(&rest[..at]);
        out.push_str(if before_ok && after_ok { to } else { from });
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

fn drop_lines(text: &str, first: u32, last: u32) -> String {
    text.lines()
        .enumerate()
        .filter(|(i, _)| !(first..=last).contains(&(*i as u32 + 1)))
        .map(|(_, l)| format!("{l}\n"))
        .collect()
}

/// One random edit to file `fi` of `sources`, guided by the graph's facts:
/// rename a symbol it defines (its callers elsewhere break), delete a
/// symbol or an import, define a name another file calls, or duplicate a
/// definition. Returns what it did, for the failure message.
fn edit(sources: &mut [(String, String)], graph: &Graph, fi: usize, rng: &mut Rng) -> String {
    let path = sources[fi].0.clone();
    let Some(facts) = graph.file(&path) else {
        return format!("{path}: not indexed, untouched");
    };
    let text = sources[fi].1.clone();
    let symbols = &facts.symbols;
    let pick = rng.below(5);
    let new_text = match pick {
        0 if !symbols.is_empty() => {
            let s = &symbols[rng.below(symbols.len())];
            let to = format!("{}_renamed", s.name);
            sources[fi].1 = rename_word(&text, &s.name, &to);
            return format!("{path}: renamed {} to {to}", s.name);
        }
        1 if !symbols.is_empty() => {
            let s = &symbols[rng.below(symbols.len())];
            sources[fi].1 = drop_lines(&text, s.start_line, s.end_line);
            return format!("{path}: deleted {} (lines {}-{})", s.name, s.start_line, s.end_line);
        }
        2 if !facts.imports.is_empty() => {
            let i = &facts.imports[rng.below(facts.imports.len())];
            drop_lines(&text, i.line, i.line)
        }
        3 => {
            // A name some file calls: a bare callee's last segment.
            let other = graph.files()[rng.below(graph.files().len())].clone();
            let Some(call) = (!other.calls.is_empty()).then(|| &other.calls[rng.below(other.calls.len())]) else {
                return format!("{path}: untouched");
            };
            let name = call
                .callee
                .rsplit(['.', ':'])
                .next()
                .unwrap_or("")
                .trim_end_matches("()");
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return format!("{path}: untouched");
            }
            let Some(def) = definition(&path, name) else {
                return format!("{path}: untouched");
            };
            sources[fi].1 = format!("{text}{def}");
            return format!("{path}: defined {name}");
        }
        _ if !symbols.is_empty() => {
            let s = &symbols[rng.below(symbols.len())];
            let lines: Vec<&str> = text.lines().collect();
            let (a, b) = (s.start_line as usize - 1, (s.end_line as usize).min(lines.len()));
            let copy: String = lines[a..b].iter().map(|l| format!("{l}\n")).collect();
            format!("{text}\n{copy}")
        }
        _ => return format!("{path}: untouched"),
    };
    sources[fi].1 = new_text;
    format!("{path}: edit {pick}")
}

/// Renames or deletes a symbol that another file's edge resolves to: the
/// other file's edge must change, and change back when the edit is undone.
fn break_a_cross_file_target(sources: &mut [(String, String)], graph: &Graph, rng: &mut Rng) -> String {
    let targets: Vec<u32> = graph
        .edges()
        .iter()
        .filter_map(|e| match e.to {
            Target::Symbol(t) if graph.symbol(t).path != graph.symbol(e.from).path => Some(t),
            _ => None,
        })
        .filter(|&t| graph.symbol(t).kind != SymbolKind::Module)
        .collect();
    let t = graph.symbol(targets[rng.below(targets.len())]);
    let fi = sources
        .iter()
        .position(|(p, _)| p == t.path)
        .expect("indexed files are sources");
    let text = sources[fi].1.clone();
    if rng.below(2) == 0 {
        let to = format!("{}_renamed", t.name);
        sources[fi].1 = rename_word(&text, t.name, &to);
        format!("{}: renamed {} to {to}", t.path, t.name)
    } else {
        sources[fi].1 = drop_lines(&text, t.start_line, t.end_line);
        format!("{}: deleted {}", t.path, t.name)
    }
}

#[test]
fn incremental_builds_after_random_edits_equal_builds_from_nothing() {
    let original = corpus();
    let mut sources = original.clone();
    assert!(sources.len() > 100, "{}", sources.len());
    // A longer run: QUORUM_INCREMENTAL_STEPS=500 QUORUM_INCREMENTAL_SEED=7.
    let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ env("QUORUM_INCREMENTAL_SEED", 0));
    let (mut base, _) = build(sources.clone(), None);
    let mut partial = 0;
    let steps = env("QUORUM_INCREMENTAL_STEPS", 40) as usize;
    for step in 0..steps {
        // The previous graph as a reader would have it: from its blob.
        let previous = blob::decode(&blob::encode(&base)).unwrap();
        let indexed: Vec<usize> = (0..sources.len())
            .filter(|&i| previous.file(&sources[i].0).is_some())
            .collect();
        let mut did = vec![];
        for _ in 0..1 + rng.below(3) {
            let edited: Vec<usize> = (0..sources.len()).filter(|&i| sources[i] != original[i]).collect();
            if !edited.is_empty() && rng.below(3) == 0 {
                // Undo an earlier edit: callers it broke (now name-only
                // edges) resolve into the file again, which only the
                // recorded reads can tell.
                let fi = edited[rng.below(edited.len())];
                sources[fi].1 = original[fi].1.clone();
                did.push(format!("{}: restored", sources[fi].0));
                continue;
            }
            if rng.below(2) == 0 {
                did.push(break_a_cross_file_target(&mut sources, &previous, &mut rng));
                continue;
            }
            let fi = indexed[rng.below(indexed.len())];
            did.push(edit(&mut sources, &previous, fi, &mut rng));
        }
        let (incremental, stats) = build(sources.clone(), Some(&previous));
        let (scratch, _) = build(sources.clone(), None);
        assert!(
            blob::encode(&incremental) == blob::encode(&scratch),
            "step {step}: the incremental graph differs from a build from nothing after {did:?}"
        );
        assert_eq!(incremental.edges(), scratch.edges(), "step {step}: {did:?}");
        if stats.resolved < stats.files {
            partial += 1;
        }
        base = scratch;
    }
    // Most steps touch a few files among hundreds: the plan must apply.
    assert!(
        partial * 4 >= steps * 3,
        "only {partial} of {steps} builds resolved part of the tree"
    );
}

/// A file to add next to `path` whose path a lookup can find: the same
/// module as a package or directory index (found when `path` is gone), a
/// sibling module, a Go file in the same package, or a Java class of the
/// same file name in another package.
fn new_path(path: &str, k: usize, rng: &mut Rng) -> Option<String> {
    let (dir, file) = path.rsplit_once('/')?;
    let (stem, ext) = file.rsplit_once('.')?;
    Some(match (ext, rng.below(2)) {
        ("py", 0) => format!("{dir}/{stem}/__init__.py"),
        ("js" | "ts", 0) => format!("{dir}/{stem}/index.{ext}"),
        ("rs", 0) if stem != "lib" && stem != "mod" => format!("{dir}/{stem}/mod.rs"),
        ("java", 0) => format!("{dir}/other{k}/{file}"),
        ("go", _) => format!("{dir}/extra{k}.go"),
        ("py" | "js" | "ts" | "rs" | "java", _) => format!("{dir}/{stem}_copy{k}.{ext}"),
        _ => return None,
    })
}

#[test]
fn incremental_builds_after_files_are_added_removed_and_renamed_equal_builds_from_nothing() {
    let original = corpus();
    let mut files: std::collections::BTreeMap<String, String> = original.iter().cloned().collect();
    let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ env("QUORUM_INCREMENTAL_SEED", 0));
    let (mut base, _) = build(files.clone(), None);
    let steps = env("QUORUM_INCREMENTAL_STEPS", 40) as usize;
    let (mut partial, mut path_steps) = (0, 0);
    for step in 0..steps {
        let previous = blob::decode(&blob::encode(&base)).unwrap();
        let mut did = vec![];
        for _ in 0..1 + rng.below(2) {
            let paths: Vec<String> = files.keys().cloned().collect();
            let path = paths[rng.below(paths.len())].clone();
            let gone: Vec<&(String, String)> = original.iter().filter(|(p, _)| !files.contains_key(p)).collect();
            match rng.below(4) {
                // Bring back a removed file: its importers resolve into it again.
                0 if !gone.is_empty() => {
                    let (p, text) = gone[rng.below(gone.len())].clone();
                    did.push(format!("restored {p}"));
                    files.insert(p, text);
                }
                1 => {
                    let text = files.remove(&path).unwrap();
                    match new_path(&path, step, &mut rng) {
                        Some(to) if rng.below(2) == 0 => {
                            did.push(format!("renamed {path} to {to}"));
                            files.insert(to, text);
                        }
                        _ => did.push(format!("removed {path}")),
                    }
                }
                _ => {
                    if let Some(to) = new_path(&path, step, &mut rng) {
                        let text = files[&path].clone();
                        did.push(format!("added {to} (a copy of {path})"));
                        files.insert(to, text);
                    }
                }
            }
        }
        let sources: Vec<(String, String)> = files.clone().into_iter().collect();
        let (incremental, stats) = build(sources.clone(), Some(&previous));
        let (scratch, _) = build(sources, None);
        assert!(
            blob::encode(&incremental) == blob::encode(&scratch),
            "step {step}: the incremental graph differs from a build from nothing after {did:?}"
        );
        assert_eq!(incremental.edges(), scratch.edges(), "step {step}: {did:?}");
        if previous.files().len() != scratch.files().len()
            || previous
                .files()
                .iter()
                .zip(scratch.files())
                .any(|(a, b)| a.path != b.path)
        {
            path_steps += 1;
            if stats.resolved < stats.files {
                partial += 1;
            }
        }
        base = scratch;
    }
    // A few paths among hundreds: the plan applies, except when the
    // directories holding Go files change.
    assert!(
        path_steps * 2 >= steps,
        "only {path_steps} of {steps} steps changed a path"
    );
    assert!(
        partial * 2 >= path_steps,
        "only {partial} of {path_steps} builds after a path change resolved part of the tree"
    );
}

#[test]
fn a_module_removed_then_restored_in_each_language_resolves_only_its_readers() {
    let sources = corpus();
    let (base, _) = build(sources.clone(), None);
    for path in [
        "gen/py/pkg/m3.py",
        "gen/js/m3.js",
        "gen/ts/m3.ts",
        "gen/rs/src/m3.rs",
        "gen/go/p3/p.go",
        "gen/java/com/gen/C3.java",
    ] {
        let without: Vec<(String, String)> = sources.iter().filter(|(p, _)| p != path).cloned().collect();
        let (gone, stats) = build(without.clone(), Some(&base));
        let (scratch, _) = build(without, None);
        assert!(blob::encode(&gone) == blob::encode(&scratch), "{path} removed");
        // Its importers lose their edges into it; the Go package is a
        // directory that goes with it, which declines the plan.
        assert!(stats.resolved > 0, "{path} removed: {stats:?}");
        if !path.ends_with(".go") {
            assert!(stats.resolved * 10 < stats.files, "{path} removed: {stats:?}");
        }
        let previous = blob::decode(&blob::encode(&gone)).unwrap();
        let (back, stats) = build(sources.clone(), Some(&previous));
        assert!(blob::encode(&back) == blob::encode(&base), "{path} restored");
        if !path.ends_with(".go") {
            assert!(stats.resolved * 10 < stats.files, "{path} restored: {stats:?}");
        }
    }
}

#[test]
fn a_body_edit_resolves_only_the_file_and_its_readers() {
    let mut sources = corpus();
    let (base, _) = build(sources.clone(), None);
    let i = sources.iter().position(|(p, _)| p == "gen/py/pkg/m2.py").unwrap();
    sources[i].1 = sources[i].1.replace("return f3(a)", "return 2 * f3(a)");
    let (g, stats) = build(sources.clone(), Some(&base));
    assert_eq!(stats.parsed, 1);
    assert!(
        stats.resolved >= 1 && stats.resolved * 10 < stats.files,
        "resolved {} of {}",
        stats.resolved,
        stats.files
    );
    let (scratch, _) = build(sources, None);
    assert!(blob::encode(&g) == blob::encode(&scratch));
}

#[test]
fn the_review_overlay_is_incremental_too_for_a_new_or_removed_file() {
    let sources = corpus();
    let (base, _) = build(sources.clone(), None);
    let edited = "gen/js/m4.js".to_string();
    let text = sources
        .iter()
        .find(|(p, _)| *p == edited)
        .unwrap()
        .1
        .replace("f5(a)", "f5(a, 2)");
    let (head, stats) = overlay(&base, &[(edited.clone(), Some(text.clone()))]);
    assert!(stats.resolved * 10 < stats.files, "{stats:?}");
    let mut all = sources.clone();
    all.iter_mut().find(|(p, _)| *p == edited).unwrap().1 = text;
    let (scratch, _) = build(all, None);
    assert!(blob::encode(&head) == blob::encode(&scratch));

    // A new path: only the files that looked its keys up resolve again.
    let added = ("gen/js/new.js".to_string(), "export function f1() {}\n".to_string());
    let (head, stats) = overlay(&base, &[(added.0.clone(), Some(added.1.clone()))]);
    assert!(stats.resolved * 10 < stats.files, "{stats:?}");
    let mut all = sources.clone();
    all.push(added);
    let (scratch, _) = build(all, None);
    assert!(blob::encode(&head) == blob::encode(&scratch));

    // A removed module: its importers resolve again, to names.
    let removed = "gen/py/pkg/m3.py".to_string();
    let (head, stats) = overlay(&base, &[(removed.clone(), None)]);
    assert!(stats.resolved * 10 < stats.files && stats.resolved > 1, "{stats:?}");
    let (scratch, _) = build(sources.into_iter().filter(|(p, _)| *p != removed), None);
    assert!(blob::encode(&head) == blob::encode(&scratch));
}
