#![allow(dead_code)]

use std::path::Path;

use quorum_core::FileDiff;
use quorum_core::diff::parse_unified;
use quorum_graph::{EdgeKind, Graph, ImpactOptions, ImpactReport, Target, build, impact, overlay};

/// Every file under `root`, as (relative path, content), sorted.
pub fn read_tree(root: &Path) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

/// Every file under each of `dirs` (relative to the repository), as
/// (path relative to the repository, content), in path order: corpora of
/// real files where no two share a path.
pub fn read_repo_dirs(dirs: &[&str]) -> Vec<(String, String)> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = vec![];
    for dir in dirs {
        collect(&repo, &repo.join(dir), &mut out);
    }
    out.sort();
    out
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            collect(root, &p, out);
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.push((rel, text));
        }
    }
}

pub fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

pub fn storefront() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture")
}

/// The targets of `kind` edges out of `from`, as qualified names (or `name?` when unresolved), with lines.
pub fn targets(g: &Graph, from: &str, kind: EdgeKind) -> Vec<(String, u32)> {
    let id = g.find(from).unwrap_or_else(|| panic!("no symbol {from}"));
    g.outgoing(id)
        .filter(|e| e.kind == kind)
        .map(|e| {
            let t = match &e.to {
                Target::Symbol(t) => g.qname(*t),
                Target::Name(n) => format!("{n}?"),
            };
            (t, e.line)
        })
        .collect()
}

pub fn names(g: &Graph, from: &str, kind: EdgeKind) -> Vec<String> {
    targets(g, from, kind).into_iter().map(|(t, _)| t).collect()
}

/// The graph of a few files written for a test.
pub fn graph(files: &[(&str, &str)]) -> Graph {
    build(files.iter().map(|(p, s)| (p.to_string(), s.to_string())), None).0
}

/// The unified diff of one file, as git writes it.
pub fn diff(path: &str, old: &str, new: &str) -> Vec<FileDiff> {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, old).unwrap();
    std::fs::write(&b, new).unwrap();
    let out = std::process::Command::new("git")
        .args(["diff", "--no-index", "--no-color", "-U3"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let body = text.split_once("\n@@").map(|(_, rest)| format!("@@{rest}")).unwrap();
    let patch = format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{body}");
    let (diffs, errors) = parse_unified(&patch);
    assert!(errors.is_empty(), "{errors:?}");
    diffs
}

/// The impact report of replacing `find` (which must occur once) with
/// `replace` in `path`, over a graph of `files`.
pub fn impact_of_edit(files: &[(&str, &str)], path: &str, find: &str, replace: &str) -> ImpactReport {
    let base = graph(files);
    let old = files.iter().find(|(p, _)| *p == path).unwrap().1;
    assert_eq!(old.matches(find).count(), 1, "{find}");
    let new = old.replace(find, replace);
    let (head, _) = overlay(&base, &[(path.to_string(), Some(new.clone()))]);
    impact(&base, &head, &diff(path, old, &new), ImpactOptions::default())
}
