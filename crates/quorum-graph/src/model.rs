//! The graph: every file's facts plus the resolved edges, with the indexes
//! readers need. Symbol ids are dense: each file contributes one `Module`
//! pseudo-symbol (the owner of module-level code) followed by its symbols, in
//! path order, so ids are derived, never stored.

use std::collections::HashMap;

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
    Name(String),
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

/// What is persisted: facts (for incremental builds) and edges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GraphData {
    pub files: Vec<FileFacts>,
    pub edges: Vec<Edge>,
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
    by_qname: HashMap<String, u32>,
    by_name: HashMap<String, Vec<u32>>,
    by_path: HashMap<String, u32>,
    incoming: Vec<Vec<u32>>,
    outgoing: Vec<Vec<u32>>,
    incoming_by_name: HashMap<String, Vec<u32>>,
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
            by_qname: HashMap::new(),
            by_name: HashMap::new(),
            by_path: HashMap::new(),
            incoming: vec![],
            outgoing: vec![],
            incoming_by_name: HashMap::new(),
        };
        for id in 0..g.refs.len() as u32 {
            let q = g.qname(id);
            g.by_qname.entry(q).or_insert(id);
            let name = g.name(id).to_string();
            g.by_name.entry(name).or_default().push(id);
        }
        for (fi, f) in g.data.files.iter().enumerate() {
            g.by_path.insert(f.path.clone(), fi as u32);
        }
        g.index_edges();
        g
    }

    /// Replaces the edges (resolution's output) and re-indexes only them:
    /// the symbol indexes do not depend on edges.
    pub(crate) fn set_edges(&mut self, edges: Vec<Edge>) {
        self.data.edges = edges;
        self.index_edges();
    }

    fn index_edges(&mut self) {
        self.incoming = vec![vec![]; self.refs.len()];
        self.outgoing = vec![vec![]; self.refs.len()];
        self.incoming_by_name = HashMap::new();
        for (ei, e) in self.data.edges.iter().enumerate() {
            self.outgoing[e.from as usize].push(ei as u32);
            match &e.to {
                Target::Symbol(t) => self.incoming[*t as usize].push(ei as u32),
                Target::Name(n) => self.incoming_by_name.entry(n.clone()).or_default().push(ei as u32),
            }
        }
    }

    pub fn files(&self) -> &[FileFacts] {
        &self.data.files
    }

    pub fn edges(&self) -> &[Edge] {
        &self.data.edges
    }

    pub fn symbol_count(&self) -> usize {
        self.refs.len()
    }

    pub fn file(&self, path: &str) -> Option<&FileFacts> {
        self.by_path.get(path).map(|&i| &self.data.files[i as usize])
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
        self.by_qname.get(qname).copied()
    }

    pub fn named(&self, name: &str) -> &[u32] {
        self.by_name.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    fn name(&self, id: u32) -> &str {
        let r = self.refs[id as usize];
        let f = &self.data.files[r.file as usize];
        match r.local {
            None => self.modules[r.file as usize].rsplit('.').next().unwrap_or(""),
            Some(l) => &f.symbols[l as usize].name,
        }
    }

    /// `module.Class.method`.
    pub fn qname(&self, id: u32) -> String {
        let r = self.refs[id as usize];
        let module = &self.modules[r.file as usize];
        match r.local {
            None => module.clone(),
            Some(l) => {
                let q = &self.data.files[r.file as usize].symbols[l as usize].qname;
                if module.is_empty() {
                    q.clone()
                } else if self.data.files[r.file as usize].lang == Lang::Python {
                    format!("{module}.{q}")
                } else {
                    format!("{module}::{q}")
                }
            }
        }
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
        self.incoming[id as usize]
            .iter()
            .chain(named.iter())
            .map(|&e| &self.data.edges[e as usize])
    }

    /// Edges out of `id`.
    pub fn outgoing(&self, id: u32) -> impl Iterator<Item = &Edge> {
        self.outgoing[id as usize].iter().map(|&e| &self.data.edges[e as usize])
    }

    /// The call fact behind a call edge.
    pub fn call_of(&self, e: &Edge) -> Option<&crate::extract::CallFact> {
        let f = self.file_of(e.from);
        e.call.and_then(|c| f.calls.get(c as usize))
    }
}
