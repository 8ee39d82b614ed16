//! The graph: every file's facts plus the resolved edges, with the indexes
//! readers need. Symbol ids are dense: each file contributes one `Module`
//! pseudo-symbol (the owner of module-level code) followed by its symbols, in
//! path order, so ids are derived, never stored.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::extract::{FileFacts, Param, SymbolKind};
use crate::lang::Lang;

/// Kinds of edge (F-IDX-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EdgeKind {
    Calls,
    Imports,
    Inherits,
    /// A test function exercises the symbol (it calls it).
    Tests,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Calls => "calls",
            EdgeKind::Imports => "imports",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Tests => "tests",
        }
    }
}

/// Where an edge points: a resolved symbol, or only a name when resolution
/// failed (kept, at lower confidence, rather than dropped).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Target {
    Symbol(u32),
    /// Shared: an incremental build carries most edges over, and a copied
    /// name costs a reference count rather than an allocation.
    Name(Arc<str>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub kind: EdgeKind,
    pub from: u32,
    pub to: Target,
    /// Where the edge is written (the call, import or class line).
    pub line: u32,
    /// 1.0 resolved through scopes/imports; lower for name-only matches.
    pub confidence: f32,
    /// For calls: index into the caller file's `calls`, for arity checks.
    pub call: Option<u32>,
}

/// What is persisted: facts (for incremental builds) and edges. Facts are
/// shared: a build that reuses a file's facts shares them with the graph it
/// came from rather than copying them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GraphData {
    pub files: Vec<Arc<FileFacts>>,
    pub edges: Vec<Edge>,
    /// Per file, what resolving it read from other files: which edges an
    /// incremental build must recompute (`resolve::deps`).
    pub deps: Vec<crate::resolve::FileDeps>,
}

/// A symbol's place: its file and its index in that file's facts (`None`
/// for the module pseudo-symbol).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolRef {
    pub file: u32,
    pub local: Option<u32>,
}

/// A readable view of one symbol.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolInfo<'g> {
    pub id: u32,
    pub qname: String,
    pub name: &'g str,
    pub kind: SymbolKind,
    pub path: &'g str,
    pub start_line: u32,
    pub end_line: u32,
    pub params: Option<&'g [Param]>,
    pub decorators: &'g [String],
    pub is_test: bool,
    pub returns_none: bool,
}

/// The code graph of one commit.
#[derive(Debug, Clone)]
pub struct Graph {
    pub(crate) data: GraphData,
    pub(crate) refs: Vec<SymbolRef>,
    pub(crate) modules: Vec<String>,
    /// Id of each file's module pseudo-symbol.
    file_base: Vec<u32>,
    /// Symbol ids by qualified name (the first of duplicates), hashed
    /// without building the names: see [`crate::index`].
    by_qname: hashbrown::HashTable<u32>,
    /// Symbol ids sharing a name, hashed by the name.
    by_name: hashbrown::HashTable<Vec<u32>>,
    by_path: HashMap<String, u32>,
    incoming: Adjacency,
    outgoing: Adjacency,
    incoming_by_name: HashMap<Arc<str>, Vec<u32>>,
}

/// Edge indexes per symbol, compressed: the edges of symbol `s` are
/// `edges[start[s]..start[s + 1]]`. Two passes over the edges and two
/// allocations, where a vector per symbol took one allocation each.
#[derive(Debug, Clone, Default)]
struct Adjacency {
    start: Vec<u32>,
    edges: Vec<u32>,
}

impl Adjacency {
    /// `key(edge)` is the symbol an edge belongs to, if any.
    fn build(symbols: usize, edges: &[Edge], key: impl Fn(&Edge) -> Option<u32>) -> Adjacency {
        let mut start = vec![0u32; symbols + 1];
        for e in edges {
            if let Some(s) = key(e) {
                start[s as usize + 1] += 1;
            }
        }
        for i in 0..symbols {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut out = vec![0u32; start[symbols] as usize];
        for (ei, e) in edges.iter().enumerate() {
            if let Some(s) = key(e) {
                out[fill[s as usize] as usize] = ei as u32;
                fill[s as usize] += 1;
            }
        }
        Adjacency { start, edges: out }
    }

    fn of(&self, s: u32) -> &[u32] {
        match (self.start.get(s as usize), self.start.get(s as usize + 1)) {
            (Some(&a), Some(&b)) => &self.edges[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// The module name of a file: `shop/pricing.py` → `shop.pricing`,
/// `pkg/__init__.py` → `pkg`, a leading `src/` dropped; other languages keep
/// their path without the extension.
pub fn module_name(path: &str, lang: Lang) -> String {
    let stem = path.rsplit_once('.').map(|(s, _)| s).unwrap_or(path);
    if lang != Lang::Python {
        return stem.to_string();
    }
    let stem = stem.strip_prefix("src/").unwrap_or(stem);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    if stem == "__init__" {
        return String::new();
    }
    stem.replace('/', ".")
}

/// The qualified name of symbol `local` of file `f` (its module pseudo-symbol
/// for `None`) in three pieces: module, separator, name in the module.
pub(crate) fn qname_parts<'a>(module: &'a str, f: &'a FileFacts, local: Option<u32>) -> [&'a str; 3] {
    match local {
        None => [module, "", ""],
        Some(l) => {
            let q = f.symbols[l as usize].qname.as_str();
            if module.is_empty() {
                ["", "", q]
            } else if f.lang == Lang::Python {
                [module, ".", q]
            } else {
                [module, "::", q]
            }
        }
    }
}

/// The bare name of symbol `local` of file `f` (the module's last segment
/// for `None`).
pub(crate) fn bare_name<'a>(module: &'a str, f: &'a FileFacts, local: Option<u32>) -> &'a str {
    match local {
        None => module.rsplit('.').next().unwrap_or(""),
        Some(l) => &f.symbols[l as usize].name,
    }
}

impl Graph {
    pub(crate) fn from_data(data: GraphData) -> Graph {
        let mut refs = vec![];
        let mut modules = vec![];
        let mut file_base = vec![];
        for (fi, f) in data.files.iter().enumerate() {
            file_base.push(refs.len() as u32);
            modules.push(module_name(&f.path, f.lang));
            refs.push(SymbolRef {
                file: fi as u32,
                local: None,
            });
            for li in 0..f.symbols.len() {
                refs.push(SymbolRef {
                    file: fi as u32,
                    local: Some(li as u32),
                });
            }
        }
        let mut g = Graph {
            data,
            refs,
            modules,
            file_base,
            by_qname: hashbrown::HashTable::new(),
            by_name: hashbrown::HashTable::new(),
            by_path: HashMap::new(),
            incoming: Adjacency::default(),
            outgoing: Adjacency::default(),
            incoming_by_name: HashMap::new(),
        };
        let (by_qname, by_name) = crate::index::symbol_tables(&g);
        g.by_qname = by_qname;
        g.by_name = by_name;
        for (fi, f) in g.data.files.iter().enumerate() {
            g.by_path.insert(f.path.clone(), fi as u32);
        }
        g.index_edges();
        g
    }

    /// Sets resolution's output, the edges and what each file's resolution
    /// read, and re-indexes only the edges: the symbol indexes do not depend
    /// on them.
    pub(crate) fn set_resolution(&mut self, edges: Vec<Edge>, deps: Vec<crate::resolve::FileDeps>) {
        self.data.edges = edges;
        self.data.deps = deps;
        self.index_edges();
    }

    /// This graph without its record of what each file's resolution read:
    /// a build from it resolves every file, as builds did before that
    /// record existed. For benchmarks that compare the two.
    #[doc(hidden)]
    pub fn without_resolution_record(&self) -> Graph {
        let mut g = self.clone();
        g.data.deps.clear();
        g
    }

    /// What resolving each file read (empty when the graph has none).
    pub(crate) fn deps(&self) -> &[crate::resolve::FileDeps] {
        &self.data.deps
    }

    fn index_edges(&mut self) {
        let edges = &self.data.edges;
        self.outgoing = Adjacency::build(self.refs.len(), edges, |e| Some(e.from));
        self.incoming = Adjacency::build(self.refs.len(), edges, |e| match e.to {
            Target::Symbol(t) => Some(t),
            Target::Name(_) => None,
        });
        let mut by_name: HashMap<Arc<str>, Vec<u32>> = HashMap::new();
        for (ei, e) in edges.iter().enumerate() {
            if let Target::Name(n) = &e.to {
                by_name.entry(Arc::clone(n)).or_default().push(ei as u32);
            }
        }
        self.incoming_by_name = by_name;
    }

    pub fn files(&self) -> &[Arc<FileFacts>] {
        &self.data.files
    }

    pub fn edges(&self) -> &[Edge] {
        &self.data.edges
    }

    pub fn symbol_count(&self) -> usize {
        self.refs.len()
    }

    pub fn file(&self, path: &str) -> Option<&FileFacts> {
        self.by_path.get(path).map(|&i| &*self.data.files[i as usize])
    }

    /// The kind of a symbol, without building its [`SymbolInfo`].
    pub(crate) fn kind_of(&self, id: u32) -> SymbolKind {
        match self.fact(id) {
            Some(s) => s.kind,
            None => SymbolKind::Module,
        }
    }

    /// The id of the module pseudo-symbol of file index `fi`.
    pub(crate) fn module_id(&self, fi: u32) -> u32 {
        self.file_base[fi as usize]
    }

    /// The id of `local` in file `fi`.
    pub(crate) fn id_of(&self, fi: u32, local: Option<u32>) -> u32 {
        let m = self.module_id(fi);
        match local {
            None => m,
            Some(l) => m + 1 + l,
        }
    }

    /// The id of the innermost class around `scope` (a symbol of file
    /// `fi`), if any: where `self` / `this` in that scope points.
    pub(crate) fn enclosing_class(&self, fi: u32, scope: Option<u32>) -> Option<u32> {
        let f = &self.files()[fi as usize];
        let mut s = scope;
        while let Some(sc) = s {
            let sym = &f.symbols[sc as usize];
            if sym.kind == SymbolKind::Class {
                return Some(self.id_of(fi, Some(sc)));
            }
            s = sym.parent;
        }
        None
    }

    pub fn find(&self, qname: &str) -> Option<u32> {
        crate::index::find_qname(self, &self.by_qname, qname)
    }

    pub fn named(&self, name: &str) -> &[u32] {
        crate::index::find_name(self, &self.by_name, name)
    }

    pub(crate) fn name(&self, id: u32) -> &str {
        let r = self.refs[id as usize];
        bare_name(
            &self.modules[r.file as usize],
            &self.data.files[r.file as usize],
            r.local,
        )
    }

    /// `module.Class.method`.
    pub fn qname(&self, id: u32) -> String {
        self.qname_parts(id).concat()
    }

    /// `qname(id)` in three pieces (module, separator, name in the module),
    /// for indexing and comparing it without building the string.
    pub(crate) fn qname_parts(&self, id: u32) -> [&str; 3] {
        let r = self.refs[id as usize];
        qname_parts(
            &self.modules[r.file as usize],
            &self.data.files[r.file as usize],
            r.local,
        )
    }

    pub fn symbol(&self, id: u32) -> SymbolInfo<'_> {
        let r = self.refs[id as usize];
        let f = &self.data.files[r.file as usize];
        match r.local {
            None => SymbolInfo {
                id,
                qname: self.qname(id),
                name: self.name(id),
                kind: SymbolKind::Module,
                path: &f.path,
                start_line: 1,
                end_line: f.lines,
                params: None,
                decorators: &[],
                is_test: false,
                returns_none: false,
            },
            Some(l) => {
                let s = &f.symbols[l as usize];
                SymbolInfo {
                    id,
                    qname: self.qname(id),
                    name: &s.name,
                    kind: s.kind,
                    path: &f.path,
                    start_line: s.start_line,
                    end_line: s.end_line,
                    params: s.params.as_deref(),
                    decorators: &s.decorators,
                    is_test: s.is_test,
                    returns_none: s.returns_none,
                }
            }
        }
    }

    /// The extracted facts of a symbol (`None` for a module).
    pub fn fact(&self, id: u32) -> Option<&crate::extract::SymbolFact> {
        let r = self.refs[id as usize];
        r.local.map(|l| &self.data.files[r.file as usize].symbols[l as usize])
    }

    pub fn file_of(&self, id: u32) -> &FileFacts {
        &self.data.files[self.refs[id as usize].file as usize]
    }

    /// The innermost symbol covering `path:line` (the module when none does).
    pub fn enclosing(&self, path: &str, line: u32) -> Option<u32> {
        let fi = *self.by_path.get(path)?;
        let local = self.data.files[fi as usize].innermost(line);
        Some(self.id_of(fi, local))
    }

    /// Edges into `id`: resolved ones, then name-only ones with its name.
    pub fn incoming(&self, id: u32) -> impl Iterator<Item = &Edge> {
        let named = match self.refs[id as usize].local {
            Some(_) => self
                .incoming_by_name
                .get(self.name(id))
                .map(Vec::as_slice)
                .unwrap_or(&[]),
            None => &[],
        };
        self.incoming
            .of(id)
            .iter()
            .chain(named.iter())
            .map(|&e| &self.data.edges[e as usize])
    }

    /// Edges out of `id`.
    pub fn outgoing(&self, id: u32) -> impl Iterator<Item = &Edge> {
        self.outgoing.of(id).iter().map(|&e| &self.data.edges[e as usize])
    }

    /// The call fact behind a call edge.
    pub fn call_of(&self, e: &Edge) -> Option<&crate::extract::CallFact> {
        let f = self.file_of(e.from);
        e.call.and_then(|c| f.calls.get(c as usize))
    }
}
