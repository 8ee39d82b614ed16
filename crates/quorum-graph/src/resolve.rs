//! Cross-file resolution: turns each file's calls, imports and bases into
//! edges.
//!
//! Python is resolved the way the interpreter would look names up, without
//! running anything: enclosing function scopes (nested functions), then the
//! module's own top-level names, then its imports — `import m`, `import a.b
//! as c`, `from x import y as z`, relative imports, and re-exports followed
//! through a package's `__init__.py`. `mod.f` goes through the module bound
//! to `mod`; `self.m` / `cls.m` through the enclosing class and its bases;
//! `Class.m` through the class; a decorator is a call from the decorated
//! function. What cannot be resolved (an attribute of an unknown object, a
//! builtin) is kept as a name-only edge at confidence 0.3.
//!
//! Other languages are resolved by [`other_langs`]: imports, exports,
//! modules and qualifiers the way each language looks names up; what is not
//! found is a name-only edge (0.3).

mod deps;
mod incremental;
mod other_langs;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

pub(crate) use deps::FileDeps;

use crate::extract::{FileFacts, SymbolKind};
use crate::lang::Lang;
use crate::model::{Edge, EdgeKind, Graph, GraphData, Target};
use other_langs::OtherLangs;

/// Confidence of an edge resolved through scopes and imports.
pub const RESOLVED: f32 = 1.0;
/// Name-only edge: nothing resolved; matched by bare name at query time.
pub const NAME_ONLY: f32 = 0.3;

/// How deep re-export chains are followed (`a/__init__` → `a.b` → …).
const MAX_DEPTH: u32 = 8;

#[derive(Debug, Clone)]
enum Binding {
    Symbol(u32),
    Module(String),
    From(String, String),
}

/// Resolves every file's references on `threads` threads. Each file's
/// edges depend only on the (read-only) index, and they are concatenated in
/// file order, so the graph is the same whatever the thread count. With a
/// `previous` graph, files a change cannot have affected keep their edges
/// ([`incremental::Plan`]); returns the graph and how many files were
/// resolved.
pub(crate) fn resolve(files: Vec<Arc<FileFacts>>, threads: usize, previous: Option<&Graph>) -> (Graph, usize) {
    let mut graph = Graph::from_data(GraphData {
        files,
        edges: vec![],
        deps: vec![],
    });
    let plan = previous.and_then(|p| incremental::Plan::new(p, &graph));
    let r = Resolver::new(&graph);
    let per_file = crate::par::map_ordered(
        graph.files().len(),
        threads,
        |fi| {
            if let Some(kept) = plan.as_ref().and_then(|p| p.carry_over(fi as u32, &graph)) {
                return (kept, false);
            }
            let resolved = deps::recording(fi as u32, || {
                let mut edges = vec![];
                r.file_edges(fi as u32, &mut edges);
                edges
            });
            (resolved, true)
        },
        &mut |_| {},
    );
    let resolved = per_file.iter().filter(|(_, fresh)| *fresh).count();
    let mut edges = Vec::with_capacity(per_file.iter().map(|((e, _), _)| e.len()).sum());
    let mut deps = Vec::with_capacity(per_file.len());
    for ((e, d), _) in per_file {
        edges.extend(e);
        deps.push(d);
    }
    drop(r);
    graph.set_resolution(edges, deps);
    (graph, resolved)
}

struct Resolver<'g> {
    g: &'g Graph,
    other_langs: OtherLangs<'g>,
    module_file: HashMap<&'g str, u32>,
    /// Each Python module's top-level names, computed when first needed:
    /// an incremental build resolves a few files and needs few of them.
    bindings: Vec<OnceLock<HashMap<String, Binding>>>,
}

impl<'g> Resolver<'g> {
    fn new(g: &'g Graph) -> Self {
        let mut module_file = HashMap::new();
        for (fi, m) in g.modules.iter().enumerate() {
            if g.files()[fi].lang == Lang::Python {
                module_file.entry(m.as_str()).or_insert(fi as u32);
            }
        }
        Resolver {
            g,
            other_langs: OtherLangs::new(g),
            module_file,
            bindings: (0..g.files().len()).map(|_| OnceLock::new()).collect(),
        }
    }

    fn file(&self, fi: u32) -> &'g FileFacts {
        deps::facts(self.g, fi)
    }

    fn kind(&self, id: u32) -> SymbolKind {
        deps::kind(self.g, id)
    }

    /// The file of Python module `m`, noted as a lookup of that key: a file
    /// added or removed can change the answer.
    fn module_file_of(&self, m: &str) -> Option<u32> {
        deps::read_path(deps::PY_MODULE, &[m]);
        self.module_file.get(m).copied()
    }

    /// Module `fi`'s top-level names, noted as a read of it.
    fn bindings(&self, fi: u32) -> &HashMap<String, Binding> {
        deps::read_file(fi);
        self.bindings[fi as usize].get_or_init(|| module_bindings(self.g, fi))
    }

    fn file_edges(&self, fi: u32, out: &mut Vec<Edge>) {
        let f = self.file(fi);
        let python = f.lang == Lang::Python;
        for (ci, call) in f.calls.iter().enumerate() {
            let from = self.g.id_of(fi, call.caller);
            let (to, confidence) = if python {
                self.resolve_path(fi, call.caller, &call.callee)
            } else {
                self.other_langs.call(fi, call.caller, &call.callee)
            };
            out.push(Edge {
                kind: EdgeKind::Calls,
                from,
                to: to.clone(),
                line: call.line,
                confidence,
                call: Some(ci as u32),
            });
            let caller_is_test = call.caller.is_some_and(|c| f.symbols[c as usize].is_test);
            if caller_is_test && let Target::Symbol(_) = to {
                out.push(Edge {
                    kind: EdgeKind::Tests,
                    from,
                    to,
                    line: call.line,
                    confidence,
                    call: Some(ci as u32),
                });
            }
        }
        let module = self.g.id_of(fi, None);
        for imp in &f.imports {
            let to = if python {
                let abs = absolute_module(&self.g.modules[fi as usize], is_package(f), &imp.module);
                match &imp.name {
                    Some(n) if n != "*" => self.qualified(&abs, n, 0),
                    _ => self.module_file_of(&abs).map(|m| self.g.id_of(m, None)),
                }
                .map(Target::Symbol)
                .unwrap_or_else(|| Target::Name(imp.name.clone().unwrap_or(abs).into()))
            } else {
                match self.other_langs.import(fi, imp) {
                    Some(m) => Target::Symbol(m),
                    None => Target::Name(imp.module.as_str().into()),
                }
            };
            let confidence = if matches!(to, Target::Symbol(_)) {
                RESOLVED
            } else {
                NAME_ONLY
            };
            out.push(Edge {
                kind: EdgeKind::Imports,
                from: module,
                to,
                line: imp.line,
                confidence,
                call: None,
            });
        }
        for (li, s) in f.symbols.iter().enumerate() {
            for base in &s.bases {
                let (to, confidence) = if python {
                    self.resolve_path(fi, s.parent, base)
                } else {
                    self.other_langs.call(fi, s.parent, base)
                };
                out.push(Edge {
                    kind: EdgeKind::Inherits,
                    from: self.g.id_of(fi, Some(li as u32)),
                    to,
                    line: s.start_line,
                    confidence,
                    call: None,
                });
            }
        }
    }

    /// Resolves a dotted path used inside `scope` of file `fi`.
    fn resolve_path(&self, fi: u32, scope: Option<u32>, path: &str) -> (Target, f32) {
        let unresolved = || (Target::Name(last_segment(path).into()), NAME_ONLY);
        if let Some(called) = called_result(path) {
            return called;
        }
        let parts: Vec<&str> = path.split('.').collect();
        let Some((&first, rest)) = parts.split_first() else {
            return unresolved();
        };
        // `Class(...)` as a path part is an instance of the class.
        let (first, first_called) = match first.strip_suffix("()") {
            Some(f) => (f, true),
            None => (first, false),
        };
        let start = if (first == "self" || first == "cls") && !first_called {
            match deps::enclosing_class(self.g, fi, scope) {
                Some(class) => {
                    let Some((&m, rest2)) = rest.split_first() else {
                        return unresolved();
                    };
                    if !rest2.is_empty() {
                        return unresolved();
                    }
                    return self
                        .member(class, m, 0)
                        .map(|id| (Target::Symbol(id), RESOLVED))
                        .unwrap_or_else(unresolved);
                }
                None => return unresolved(),
            }
        } else {
            match self.lookup(fi, scope, first) {
                Some(id) => id,
                None => return unresolved(),
            }
        };
        let mut cur = start;
        let mut called = first_called;
        for &p in rest {
            let kind = self.kind(cur);
            if called && kind != SymbolKind::Class {
                // The result of calling a function: its type is unknown.
                return unresolved();
            }
            let (p, c) = match p.strip_suffix("()") {
                Some(p) => (p, true),
                None => (p, false),
            };
            called = c;
            let next = match kind {
                SymbolKind::Module => self.qualified(&self.g.qname(cur), p, 0),
                SymbolKind::Class => self.member(cur, p, 0),
                _ => None,
            };
            match next {
                Some(n) => cur = n,
                None => return unresolved(),
            }
        }
        (Target::Symbol(cur), RESOLVED)
    }

    /// A bare name as seen from `scope`: enclosing functions' nested
    /// definitions, then module-level names and imports. Class bodies are not
    /// enclosing scopes for their methods (as in Python).
    fn lookup(&self, fi: u32, scope: Option<u32>, name: &str) -> Option<u32> {
        let f = self.file(fi);
        let mut s = scope;
        while let Some(sc) = s {
            let sym = &f.symbols[sc as usize];
            if sym.kind != SymbolKind::Class
                && let Some(li) = f.symbols.iter().position(|c| c.parent == Some(sc) && c.name == name)
            {
                return Some(self.g.id_of(fi, Some(li as u32)));
            }
            s = sym.parent;
        }
        self.binding(fi, name, 0)
    }

    fn binding(&self, fi: u32, name: &str, depth: u32) -> Option<u32> {
        match self.bindings(fi).get(name)? {
            Binding::Symbol(id) => Some(*id),
            Binding::Module(m) => self.module_file_of(m).map(|m| self.g.id_of(m, None)),
            Binding::From(m, n) => self.qualified(m, n, depth + 1),
        }
    }

    /// `module.name`: a symbol defined there, a submodule, or a name the
    /// module imports (a re-export).
    fn qualified(&self, module: &str, name: &str, depth: u32) -> Option<u32> {
        if depth > MAX_DEPTH {
            return None;
        }
        let full = if module.is_empty() {
            name.to_string()
        } else {
            format!("{module}.{name}")
        };
        if let Some(m) = self.module_file_of(&full) {
            return Some(self.g.id_of(m, None));
        }
        let fi = self.module_file_of(module)?;
        let f = self.file(fi);
        if let Some(li) = f.symbols.iter().position(|s| s.parent.is_none() && s.name == name) {
            return Some(self.g.id_of(fi, Some(li as u32)));
        }
        self.binding(fi, name, depth + 1)
    }

    /// A method or nested class of `class`, looked up through its bases.
    fn member(&self, class: u32, name: &str, depth: u32) -> Option<u32> {
        if depth > MAX_DEPTH {
            return None;
        }
        let r = self.g.refs[class as usize];
        let f = self.file(r.file);
        let local = r.local?;
        if let Some(li) = f.symbols.iter().position(|s| s.parent == Some(local) && s.name == name) {
            return Some(self.g.id_of(r.file, Some(li as u32)));
        }
        let s = &f.symbols[local as usize];
        s.bases
            .iter()
            .find_map(|b| match self.resolve_path(r.file, s.parent, b) {
                (Target::Symbol(base), _) if self.kind(base) == SymbolKind::Class => self.member(base, name, depth + 1),
                _ => None,
            })
    }
}

/// A Python module's top-level names: its definitions, then its imports
/// (a later binding of the same name wins, as at run time).
fn module_bindings(g: &Graph, fi: u32) -> HashMap<String, Binding> {
    let f = &g.files()[fi as usize];
    let mut out = HashMap::new();
    if f.lang != Lang::Python {
        return out;
    }
    let module = &g.modules[fi as usize];
    let mut items: Vec<(u32, String, Binding)> = vec![];
    for (li, s) in f.symbols.iter().enumerate() {
        if s.parent.is_none() {
            items.push((
                s.start_line,
                s.name.clone(),
                Binding::Symbol(g.id_of(fi, Some(li as u32))),
            ));
        }
    }
    for imp in &f.imports {
        let abs = absolute_module(module, is_package(f), &imp.module);
        let b = match &imp.name {
            Some(n) if n == "*" => continue,
            Some(n) => Binding::From(abs, n.clone()),
            None if imp.local == imp.module || !imp.module.contains('.') => Binding::Module(abs),
            // `import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`.
            None if imp.module.starts_with(&format!("{}.", imp.local)) => Binding::Module(imp.local.clone()),
            None => Binding::Module(abs),
        };
        items.push((imp.line, imp.local.clone(), b));
    }
    items.sort_by_key(|(line, _, _)| *line);
    for (_, name, b) in items {
        out.insert(name, b);
    }
    out
}

fn is_package(f: &FileFacts) -> bool {
    f.path.ends_with("__init__.py") || f.path.ends_with("__init__.pyi")
}

/// Resolves a relative import against the importing module.
/// In `shop.checkout`, `.pricing` is `shop.pricing` and `..` is the parent package.
pub(crate) fn absolute_module(current: &str, current_is_package: bool, written: &str) -> String {
    let dots = written.chars().take_while(|&c| c == '.').count();
    if dots == 0 {
        return written.to_string();
    }
    let rest = &written[dots..];
    let mut base: Vec<&str> = if current.is_empty() {
        vec![]
    } else {
        current.split('.').collect()
    };
    if !current_is_package {
        base.pop();
    }
    for _ in 1..dots {
        base.pop();
    }
    let mut out = base.join(".");
    if !rest.is_empty() {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(rest);
    }
    out
}

/// A callee that is itself a call's result (`group(*a)(f)` is `group()`,
/// `make_base()` as a base class): the value called is unknown, so the edge
/// is name-only under a name no symbol has (`group()`), never an edge to the
/// function whose result it is — the outer call's arguments are not that
/// function's. The inner call has its own edge.
pub(crate) fn called_result(callee: &str) -> Option<(Target, f32)> {
    let last = last_segment(callee);
    last.ends_with("()").then(|| (Target::Name(last.into()), NAME_ONLY))
}

fn last_segment(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::absolute_module;

    #[test]
    fn relative_imports_resolve_against_the_package() {
        assert_eq!(absolute_module("shop.checkout", false, ".pricing"), "shop.pricing");
        assert_eq!(absolute_module("shop.checkout", false, "."), "shop");
        assert_eq!(absolute_module("shop", true, ".pricing"), "shop.pricing");
        assert_eq!(absolute_module("a.b.c", false, "..x"), "a.x");
        assert_eq!(absolute_module("a.b.c", false, "os.path"), "os.path");
    }
}
