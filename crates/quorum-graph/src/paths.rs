//! Resolution for Rust, JavaScript/TypeScript (TSX), Go and Java: a call is
//! an edge to a symbol only when the name is found the way the language
//! finds it.
//!
//! - A bare name `f(…)`: the enclosing functions' nested definitions, the
//!   file's top-level items (methods are never called bare, except a Java
//!   class's own methods), then the file's imports: ES `import` (named,
//!   default, `* as ns`) and CommonJS `require`, followed through the
//!   target module's exports (`export { a as b }`, `export default`,
//!   `export * from`, `export { x } from`, `exports.x = …`,
//!   `module.exports = { … }`); Rust `use` paths (`crate::`, `super::`,
//!   `self::`, `pub use` re-exports, module files); Go files of the same
//!   package (directory).
//! - A qualified call `Q.f(…)` / `Q::f(…)` counts as a call of `f` only
//!   when the qualifier `Q` resolves to `f`'s owner: a class or type
//!   (`Type::f`, `Self::f`, `Class.f`), an instance of it (`this.f`,
//!   `self.f`, `new Class().f`), a module or namespace (`mod::f`,
//!   `ns.f`, `pkg.F`). A qualifier that names something outside the
//!   repository (`NonNull::new_unchecked`, `Math.max`, an imported
//!   package) gives a name-only edge carrying the whole path, which never
//!   matches a repository symbol of the same bare name; a qualifier of
//!   unknown type (a local variable, a field, a call's result) gives a
//!   name-only edge on the bare name (shown among possible callers at low
//!   confidence, never counted as a broken call site).

use std::collections::HashMap;

use crate::extract::{FileFacts, ImportFact, SymbolKind};
use crate::lang::Lang;
use crate::model::{Graph, Target};
use crate::resolve::{NAME_ONLY, RESOLVED};

const MAX_DEPTH: u32 = 8;

/// What a qualifier names.
#[derive(Debug, Clone, PartialEq)]
enum Entity {
    /// A class, struct, enum, trait or interface.
    Class(u32),
    /// A value of that class (`this`, `self`, `new C()`).
    Instance(u32),
    /// A function or other item.
    Item(u32),
    /// A JavaScript module (file index), as `import * as ns` / `require`.
    Namespace(u32),
    /// A Rust module: crate prefix and module path.
    RustMod(String, String),
    /// A Go package: its directory.
    GoPkg(String),
    /// Outside the repository: std, a package, a type not defined here.
    External,
    /// Not known statically (a variable, a field, a call's result).
    Unknown,
}

pub(crate) struct Paths<'g> {
    g: &'g Graph,
    by_path: HashMap<&'g str, u32>,
    rust_mods: HashMap<(String, String), u32>,
    /// (crate prefix, type name) → class ids.
    rust_types: HashMap<(String, String), Vec<u32>>,
    /// (crate prefix, `Type.method`) → method ids.
    rust_methods: HashMap<(String, String), Vec<u32>>,
    go_dirs: HashMap<&'g str, Vec<u32>>,
    /// Java files by file name (`Cart.java`).
    java_files: HashMap<&'g str, Vec<u32>>,
    /// Go import path → the repository directory it names (computed once).
    go_imports: HashMap<&'g str, Option<String>>,
}

fn is_js(lang: Lang) -> bool {
    matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
}

fn capitalized(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_uppercase)
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// A Rust file's crate (the path up to its `src/`, or the file itself for
/// `tests/`, `benches/`, `examples/`) and module path (`a::b`).
pub(crate) fn rust_module(path: &str) -> (String, String) {
    let root = |d: &str| {
        path.rfind(d)
            .filter(|&i| i == 0 || path[..i].ends_with('/'))
            .map(|i| i + d.len())
    };
    let Some(i) = root("src/")
        .or_else(|| root("tests/"))
        .or_else(|| root("benches/"))
        .or_else(|| root("examples/"))
    else {
        return (path.to_string(), String::new());
    };
    let (prefix, rest) = path.split_at(i);
    // `tests/x.rs` is a crate root of its own (its `mod util;` is `tests/util`).
    let own_root = !prefix.ends_with("src/") && !rest.contains('/');
    let rest = rest.strip_suffix(".rs").unwrap_or(rest);
    let rest = rest.strip_suffix("/mod").unwrap_or(rest);
    let m = if rest == "lib" || rest == "main" || own_root {
        String::new()
    } else {
        rest.replace('/', "::")
    };
    (prefix.to_string(), m)
}

fn join_mod(m: &str, seg: &str) -> String {
    if m.is_empty() {
        seg.to_string()
    } else {
        format!("{m}::{seg}")
    }
}

fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = vec![];
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

impl<'g> Paths<'g> {
    pub(crate) fn new(g: &'g Graph) -> Self {
        let mut by_path = HashMap::new();
        let mut rust_mods = HashMap::new();
        let mut rust_types: HashMap<(String, String), Vec<u32>> = HashMap::new();
        let mut rust_methods: HashMap<(String, String), Vec<u32>> = HashMap::new();
        let mut go_dirs: HashMap<&str, Vec<u32>> = HashMap::new();
        let mut java_files: HashMap<&str, Vec<u32>> = HashMap::new();
        for (fi, f) in g.files().iter().enumerate() {
            let fi = fi as u32;
            by_path.insert(f.path.as_str(), fi);
            match f.lang {
                Lang::Rust => {
                    let (prefix, m) = rust_module(&f.path);
                    if !m.is_empty() || prefix.ends_with("src/") {
                        rust_mods.entry((prefix.clone(), m)).or_insert(fi);
                    }
                    for (li, s) in f.symbols.iter().enumerate() {
                        let id = g.id_of(fi, Some(li as u32));
                        match s.kind {
                            SymbolKind::Class => {
                                rust_types.entry((prefix.clone(), s.name.clone())).or_default().push(id)
                            }
                            SymbolKind::Method => rust_methods
                                .entry((prefix.clone(), s.qname.clone()))
                                .or_default()
                                .push(id),
                            _ => {}
                        }
                    }
                }
                Lang::Go => go_dirs.entry(dir_of(&f.path)).or_default().push(fi),
                Lang::Java => java_files
                    .entry(f.path.rsplit('/').next().unwrap_or(&f.path))
                    .or_default()
                    .push(fi),
                _ => {}
            }
        }
        let mut p = Paths {
            g,
            by_path,
            rust_mods,
            rust_types,
            rust_methods,
            go_dirs,
            java_files,
            go_imports: HashMap::new(),
        };
        for f in g.files().iter().filter(|f| f.lang == Lang::Go) {
            for imp in &f.imports {
                if !p.go_imports.contains_key(imp.module.as_str()) {
                    let dir = p.go_dir_of(&imp.module);
                    p.go_imports.insert(imp.module.as_str(), dir);
                }
            }
        }
        p
    }

    fn file(&self, fi: u32) -> &'g FileFacts {
        &self.g.files()[fi as usize]
    }

    fn entity_of(&self, id: u32) -> Entity {
        match self.g.symbol(id).kind {
            SymbolKind::Class => Entity::Class(id),
            _ => Entity::Item(id),
        }
    }

    /// The edge target of a call (or a base class) written `callee` in
    /// `scope` of file `fi`.
    pub(crate) fn call(&self, fi: u32, scope: Option<u32>, callee: &str) -> (Target, f32) {
        let parts: Vec<&str> = callee.split('.').collect();
        let Some((&last, quals)) = parts.split_last() else {
            return (Target::Name(callee.to_string()), NAME_ONLY);
        };
        let last = last.strip_suffix("()").unwrap_or(last);
        if quals.is_empty() {
            return match self.bare(fi, scope, last, 0) {
                Some(Entity::Class(id) | Entity::Item(id)) => (Target::Symbol(id), RESOLVED),
                _ => (Target::Name(last.to_string()), NAME_ONLY),
            };
        }
        match self.qualifier(fi, scope, quals, 0) {
            Entity::Unknown => (Target::Name(last.to_string()), NAME_ONLY),
            Entity::External => (Target::Name(callee.to_string()), NAME_ONLY),
            e => match self.member(&e, last, 0) {
                Some(Entity::Class(id) | Entity::Item(id)) => (Target::Symbol(id), RESOLVED),
                // An owner of ours without that member: inherited from
                // outside, dynamic, or gone.
                _ => (Target::Name(last.to_string()), NAME_ONLY),
            },
        }
    }

    /// A file's import edge target: the module's file when it is here.
    pub(crate) fn import(&self, fi: u32, imp: &ImportFact) -> Option<u32> {
        if !is_js(self.file(fi).lang) {
            return None;
        }
        self.js_module(fi, &imp.module).map(|m| self.g.id_of(m, None))
    }

    /// A bare name seen from `scope`.
    fn bare(&self, fi: u32, scope: Option<u32>, name: &str, depth: u32) -> Option<Entity> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(e) = self.local_symbol(fi, scope, name) {
            return Some(e);
        }
        let f = self.file(fi);
        match f.lang {
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                let imp = f.imports.iter().rev().find(|i| i.local == name)?;
                match self.js_import(fi, imp, depth + 1) {
                    Entity::Namespace(m) => self.js_export(m, "default", depth + 1),
                    e => Some(e),
                }
            }
            Lang::Rust => {
                if let Some(imp) = f.imports.iter().find(|i| i.local == name) {
                    let segs: Vec<&str> = imp.module.split("::").collect();
                    return Some(self.rust_path(fi, scope, &segs, depth + 1));
                }
                // `use m::*;`: the first glob whose module has the name.
                f.imports.iter().filter(|i| i.local == "*").find_map(|imp| {
                    let m = imp.module.strip_suffix("::*")?;
                    let segs: Vec<&str> = m.split("::").collect();
                    match self.rust_path(fi, None, &segs, depth + 1) {
                        Entity::RustMod(p, m) => self.rust_mod_item(&p, &m, name, depth + 1),
                        _ => None,
                    }
                })
            }
            Lang::Go => self.go_pkg_member(dir_of(&f.path), name).map(|id| self.entity_of(id)),
            Lang::Java => self.java_class(fi, name),
            Lang::Python => None,
        }
    }

    /// A name defined in the file itself, seen from `scope`.
    fn local_symbol(&self, fi: u32, scope: Option<u32>, name: &str) -> Option<Entity> {
        let f = self.file(fi);
        // Enclosing functions' nested definitions.
        let mut s = scope;
        while let Some(sc) = s {
            let sym = &f.symbols[sc as usize];
            if sym.kind != SymbolKind::Class
                && let Some(li) = f
                    .symbols
                    .iter()
                    .position(|c| c.parent == Some(sc) && c.name == name && c.kind != SymbolKind::Method)
            {
                return Some(self.entity_of(self.g.id_of(fi, Some(li as u32))));
            }
            s = sym.parent;
        }
        if f.lang == Lang::Java
            && let Some(class) = self.enclosing_class(fi, scope)
            && let Some(m) = self.class_member(class, name, 0)
        {
            return Some(m);
        }
        if let Some(li) = f
            .symbols
            .iter()
            .position(|c| c.parent.is_none() && c.name == name && c.kind != SymbolKind::Method)
        {
            return Some(self.entity_of(self.g.id_of(fi, Some(li as u32))));
        }
        None
    }

    /// What the qualifier parts of a call name.
    fn qualifier(&self, fi: u32, scope: Option<u32>, quals: &[&str], depth: u32) -> Entity {
        let f = self.file(fi);
        let (first, called) = match quals[0].strip_suffix("()") {
            Some(x) => (x, true),
            None => (quals[0], false),
        };
        let mut e = match (f.lang, first) {
            (_, "?" | "") => Entity::Unknown,
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Java, "this") if !called => self
                .enclosing_class(fi, scope)
                .map(Entity::Instance)
                .unwrap_or(Entity::Unknown),
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Java, "super") if !called => self
                .enclosing_class(fi, scope)
                .and_then(|c| self.base_classes(c).into_iter().next())
                .map(Entity::Instance)
                .unwrap_or(Entity::Unknown),
            (Lang::Rust, "self") if !called && quals.len() == 1 => self
                .impl_type(fi, scope)
                .map(Entity::Instance)
                .unwrap_or(Entity::Unknown),
            (Lang::Rust, _) => {
                // The longest prefix of the qualifier that is a path.
                let segs: Vec<&str> = quals.iter().map(|q| q.strip_suffix("()").unwrap_or(q)).collect();
                if let [q] = quals
                    && let Some(unit) = q.strip_suffix("()")
                {
                    // `Unit.m()`: a value of the unit struct `Unit`.
                    return match self.rust_path(fi, scope, &[unit], depth) {
                        Entity::Class(c) => Entity::Instance(c),
                        Entity::External => Entity::External,
                        _ => Entity::Unknown,
                    };
                }
                if quals.iter().any(|q| q.ends_with("()")) {
                    return Entity::Unknown;
                }
                return self.rust_path(fi, scope, &segs, depth);
            }
            (Lang::Go, _) => match f.imports.iter().find(|i| i.local == first) {
                Some(imp) => self.go_package(&imp.module),
                None => match self.bare(fi, scope, first, depth + 1) {
                    Some(Entity::Class(c)) => Entity::Class(c),
                    _ => Entity::Unknown,
                },
            },
            (Lang::Java, _) => match self.bare(fi, scope, first, depth + 1) {
                Some(Entity::Class(c)) => Entity::Class(c),
                _ if capitalized(first) => Entity::External,
                _ => Entity::Unknown,
            },
            (_, _) => {
                // JavaScript/TypeScript: a local class, or an import.
                match self.local_symbol(fi, scope, first) {
                    Some(Entity::Class(c)) => Entity::Class(c),
                    Some(_) => Entity::Unknown,
                    None => match f.imports.iter().rev().find(|i| i.local == first) {
                        Some(imp) => match self.js_import(fi, imp, depth + 1) {
                            e @ (Entity::Class(_) | Entity::Namespace(_) | Entity::External) => e,
                            _ => Entity::Unknown,
                        },
                        None => Entity::Unknown,
                    },
                }
            }
        };
        if called {
            e = match e {
                Entity::Class(c) => Entity::Instance(c),
                Entity::External => Entity::External,
                _ => Entity::Unknown,
            };
        }
        for q in &quals[1..] {
            if q.ends_with("()") {
                return Entity::Unknown;
            }
            e = match e {
                Entity::Namespace(_) | Entity::RustMod(..) | Entity::GoPkg(_) => {
                    self.member(&e, q, depth + 1).unwrap_or(Entity::Unknown)
                }
                Entity::External => Entity::External,
                _ => Entity::Unknown,
            };
        }
        e
    }

    /// `name` inside what `owner` names.
    fn member(&self, owner: &Entity, name: &str, depth: u32) -> Option<Entity> {
        if depth > MAX_DEPTH {
            return None;
        }
        match owner {
            Entity::Class(c) | Entity::Instance(c) => match self.file(self.g.refs[*c as usize].file).lang {
                Lang::Rust => self.rust_method(*c, name).map(Entity::Item),
                _ => self.class_member(*c, name, 0),
            },
            Entity::Namespace(m) => self.js_export(*m, name, depth + 1),
            Entity::RustMod(prefix, m) => self.rust_mod_item(prefix, m, name, depth + 1),
            Entity::GoPkg(dir) => self.go_pkg_member(dir, name).map(|id| self.entity_of(id)),
            _ => None,
        }
    }

    fn enclosing_class(&self, fi: u32, scope: Option<u32>) -> Option<u32> {
        let f = self.file(fi);
        let mut s = scope;
        while let Some(sc) = s {
            let sym = &f.symbols[sc as usize];
            if sym.kind == SymbolKind::Class {
                return Some(self.g.id_of(fi, Some(sc)));
            }
            s = sym.parent;
        }
        None
    }

    /// A JS/Java class's own member, or one inherited from a base class in
    /// the repository.
    fn class_member(&self, class: u32, name: &str, depth: u32) -> Option<Entity> {
        if depth > MAX_DEPTH {
            return None;
        }
        let r = self.g.refs[class as usize];
        let f = self.file(r.file);
        let local = r.local?;
        if let Some(li) = f.symbols.iter().position(|s| s.parent == Some(local) && s.name == name) {
            return Some(self.entity_of(self.g.id_of(r.file, Some(li as u32))));
        }
        self.base_classes(class)
            .into_iter()
            .find_map(|b| self.class_member(b, name, depth + 1))
    }

    fn base_classes(&self, class: u32) -> Vec<u32> {
        let r = self.g.refs[class as usize];
        let Some(local) = r.local else { return vec![] };
        let s = &self.file(r.file).symbols[local as usize];
        s.bases
            .iter()
            .filter_map(|b| match self.call(r.file, s.parent, b) {
                (Target::Symbol(id), _) if id != class && self.g.symbol(id).kind == SymbolKind::Class => Some(id),
                _ => None,
            })
            .collect()
    }

    // --- JavaScript / TypeScript ---------------------------------------

    /// The file a module specifier names, when it is in the repository.
    fn js_module(&self, fi: u32, spec: &str) -> Option<u32> {
        if !spec.starts_with('.') {
            return None;
        }
        let base = normalize(&format!("{}/{}", dir_of(&self.file(fi).path), spec));
        let stem = ["js", "mjs", "cjs", "jsx"]
            .iter()
            .find_map(|e| base.strip_suffix(&format!(".{e}")))
            .unwrap_or(&base);
        let exts = ["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts", "d.ts"];
        std::iter::once(base.clone())
            .chain(exts.iter().map(|e| format!("{base}.{e}")))
            .chain(exts.iter().map(|e| format!("{stem}.{e}")))
            .chain(exts.iter().map(|e| format!("{base}/index.{e}")))
            .find_map(|p| self.by_path.get(p.as_str()).copied())
            .filter(|&m| is_js(self.file(m).lang))
    }

    fn js_import(&self, fi: u32, imp: &ImportFact, depth: u32) -> Entity {
        let Some(m) = self.js_module(fi, &imp.module) else {
            return if imp.module.starts_with('.') {
                Entity::Unknown
            } else {
                Entity::External
            };
        };
        match &imp.name {
            None => Entity::Namespace(m),
            Some(n) => self.js_export(m, n, depth + 1).unwrap_or(Entity::Unknown),
        }
    }

    /// What module `m` exports as `name`.
    fn js_export(&self, m: u32, name: &str, depth: u32) -> Option<Entity> {
        if depth > MAX_DEPTH {
            return None;
        }
        let f = self.file(m);
        for ex in f.exports.iter().filter(|x| x.name == name) {
            let found = match (&ex.from, ex.local.as_deref()) {
                (Some(from), local) => match self.js_module(m, from) {
                    Some(t) if local == Some("*") => Some(Entity::Namespace(t)),
                    Some(t) => self.js_export(t, local.unwrap_or(name), depth + 1),
                    None => Some(Entity::External),
                },
                (None, Some(local)) => self.js_local(m, local, depth + 1),
                (None, None) => None,
            };
            if found.is_some() {
                return found;
            }
        }
        if name != "default" {
            for ex in f.exports.iter().filter(|x| x.name == "*") {
                if let Some(t) = ex.from.as_deref().and_then(|from| self.js_module(m, from))
                    && let Some(e) = self.js_export(t, name, depth + 1)
                {
                    return Some(e);
                }
            }
        }
        if f.exports.iter().any(|x| x.name == name) {
            return None;
        }
        // A top-level declaration of that name (an export form not modelled).
        f.symbols
            .iter()
            .position(|s| s.parent.is_none() && s.name == name)
            .map(|li| self.entity_of(self.g.id_of(m, Some(li as u32))))
    }

    /// A module-level name of file `m`: its declaration, or what it imports.
    fn js_local(&self, m: u32, local: &str, depth: u32) -> Option<Entity> {
        let f = self.file(m);
        if let Some(li) = f.symbols.iter().position(|s| s.parent.is_none() && s.name == local) {
            return Some(self.entity_of(self.g.id_of(m, Some(li as u32))));
        }
        let imp = f.imports.iter().rev().find(|i| i.local == local)?;
        Some(self.js_import(m, imp, depth + 1))
    }

    // --- Rust ------------------------------------------------------------

    /// The type of the `impl` around `scope` (`self`, `Self`).
    fn impl_type(&self, fi: u32, scope: Option<u32>) -> Option<u32> {
        let f = self.file(fi);
        let mut s = scope;
        while let Some(sc) = s {
            let sym = &f.symbols[sc as usize];
            if sym.kind == SymbolKind::Method
                && let Some((owner, _)) = sym.qname.rsplit_once('.')
            {
                let owner = owner.rsplit('.').next().unwrap_or(owner);
                return self.rust_type(fi, owner);
            }
            s = sym.parent;
        }
        None
    }

    /// The type `name` as the crate of file `fi` defines it: in that file,
    /// else the only one of that name in the crate.
    fn rust_type(&self, fi: u32, name: &str) -> Option<u32> {
        let (prefix, _) = rust_module(&self.file(fi).path);
        let types = self.rust_types.get(&(prefix, name.to_string()))?;
        let here: Vec<u32> = types
            .iter()
            .copied()
            .filter(|&t| self.g.refs[t as usize].file == fi)
            .collect();
        match (here.as_slice(), types.as_slice()) {
            ([one], _) | ([], [one]) => Some(*one),
            _ => None,
        }
    }

    /// `Type::name`: a method or associated function of the type, from any
    /// `impl` of it in the crate; ambiguous names resolve to nothing.
    fn rust_method(&self, class: u32, name: &str) -> Option<u32> {
        let r = self.g.refs[class as usize];
        let f = self.file(r.file);
        let tname = &f.symbols[r.local? as usize].name;
        let (prefix, _) = rust_module(&f.path);
        let cands = self.rust_methods.get(&(prefix.clone(), format!("{tname}.{name}")))?;
        let same_name_types = self.rust_types.get(&(prefix, tname.clone())).map_or(0, Vec::len);
        let here: Vec<u32> = cands
            .iter()
            .copied()
            .filter(|&m| self.g.refs[m as usize].file == r.file)
            .collect();
        match (here.as_slice(), cands.as_slice()) {
            ([one], _) => Some(*one),
            ([], [one]) if same_name_types == 1 => Some(*one),
            _ => None,
        }
    }

    /// A `use`/call path (`crate::a::B`, `super::f`, `Type::f`, `m::f`).
    fn rust_path(&self, fi: u32, scope: Option<u32>, segs: &[&str], depth: u32) -> Entity {
        if depth > MAX_DEPTH || segs.is_empty() {
            return Entity::Unknown;
        }
        let f = self.file(fi);
        let (prefix, cur) = rust_module(&f.path);
        let parent = |m: &str| m.rsplit_once("::").map(|(p, _)| p.to_string()).unwrap_or_default();
        let first = segs[0];
        let mut e = match first {
            "crate" => Entity::RustMod(prefix.clone(), String::new()),
            "self" => Entity::RustMod(prefix.clone(), cur.clone()),
            "super" => Entity::RustMod(prefix.clone(), parent(&cur)),
            "Self" => match self.impl_type(fi, scope) {
                Some(t) => Entity::Class(t),
                None => Entity::Unknown,
            },
            "std" | "core" | "alloc" => return Entity::External,
            _ => {
                if let Some(imp) = f.imports.iter().find(|i| i.local == first) {
                    let full: Vec<&str> = imp.module.split("::").collect();
                    if full.len() == 1 && full[0] == first {
                        // `use serde;`: an external crate.
                        Entity::External
                    } else {
                        self.rust_path(fi, None, &full, depth + 1)
                    }
                } else if let Some(li) = f
                    .symbols
                    .iter()
                    .position(|s| s.parent.is_none() && s.name == first && s.kind != SymbolKind::Method)
                {
                    self.entity_of(self.g.id_of(fi, Some(li as u32)))
                } else if self.rust_mods.contains_key(&(prefix.clone(), join_mod(&cur, first))) {
                    Entity::RustMod(prefix.clone(), join_mod(&cur, first))
                } else if capitalized(first) {
                    Entity::External
                } else {
                    Entity::Unknown
                }
            }
        };
        for seg in &segs[1..] {
            e = match e {
                Entity::RustMod(ref p, ref m) => {
                    if *seg == "super" {
                        Entity::RustMod(p.clone(), parent(m))
                    } else {
                        self.rust_mod_item(p, m, seg, depth + 1).unwrap_or(Entity::Unknown)
                    }
                }
                Entity::Class(c) => self.rust_method(c, seg).map(Entity::Item).unwrap_or(Entity::Unknown),
                Entity::External => Entity::External,
                _ => Entity::Unknown,
            };
        }
        e
    }

    /// `name` in Rust module `m`: an item of its file, a `pub use`
    /// re-export, or a child module.
    fn rust_mod_item(&self, prefix: &str, m: &str, name: &str, depth: u32) -> Option<Entity> {
        let child = join_mod(m, name);
        let Some(&fi) = self.rust_mods.get(&(prefix.to_string(), m.to_string())) else {
            return self
                .rust_mods
                .contains_key(&(prefix.to_string(), child.clone()))
                .then(|| Entity::RustMod(prefix.to_string(), child));
        };
        let f = self.file(fi);
        if let Some(li) = f
            .symbols
            .iter()
            .position(|s| s.parent.is_none() && s.name == name && s.kind != SymbolKind::Method)
        {
            return Some(self.entity_of(self.g.id_of(fi, Some(li as u32))));
        }
        if let Some(imp) = f.imports.iter().find(|i| i.local == name) {
            let segs: Vec<&str> = imp.module.split("::").collect();
            return Some(self.rust_path(fi, None, &segs, depth + 1));
        }
        self.rust_mods
            .contains_key(&(prefix.to_string(), child.clone()))
            .then(|| Entity::RustMod(prefix.to_string(), child))
    }

    // --- Go ----------------------------------------------------------------

    /// An import path's package directory in the repository (the longest
    /// directory the import path ends with).
    fn go_package(&self, import: &str) -> Entity {
        match self.go_imports.get(import) {
            Some(Some(d)) => Entity::GoPkg(d.clone()),
            _ => Entity::External,
        }
    }

    fn go_dir_of(&self, import: &str) -> Option<String> {
        self.go_dirs
            .keys()
            .filter(|d| !d.is_empty() && (import == **d || import.ends_with(&format!("/{d}"))))
            .max_by_key(|d| d.len())
            .map(|d| d.to_string())
    }

    fn go_pkg_member(&self, dir: &str, name: &str) -> Option<u32> {
        let files = self.go_dirs.get(dir)?;
        let mut found = files.iter().flat_map(|&fi| {
            self.file(fi)
                .symbols
                .iter()
                .enumerate()
                .filter(move |(_, s)| s.parent.is_none() && s.name == name && s.kind != SymbolKind::Method)
                .map(move |(li, _)| self.g.id_of(fi, Some(li as u32)))
        });
        let one = found.next()?;
        found.next().is_none().then_some(one)
    }

    // --- Java --------------------------------------------------------------

    /// A class named `name` seen from file `fi`: imported, or in the same
    /// package (directory).
    fn java_class(&self, fi: u32, name: &str) -> Option<Entity> {
        let f = self.file(fi);
        let file = match f.imports.iter().find(|i| i.local == name) {
            Some(imp) => {
                let want = format!("{}.java", imp.module.replace('.', "/"));
                let base = want.rsplit('/').next().unwrap_or(&want);
                self.java_files.get(base).and_then(|fs| {
                    fs.iter().copied().find(|&i| {
                        let p = &self.file(i).path;
                        p.ends_with(&want) && (p.len() == want.len() || p[..p.len() - want.len()].ends_with('/'))
                    })
                })
            }
            None => {
                let want = join_path(dir_of(&f.path), &format!("{name}.java"));
                self.by_path.get(want.as_str()).copied()
            }
        };
        let Some(file) = file else {
            return f.imports.iter().any(|i| i.local == name).then_some(Entity::External);
        };
        self.file(file)
            .symbols
            .iter()
            .position(|s| s.parent.is_none() && s.name == name)
            .map(|li| self.entity_of(self.g.id_of(file, Some(li as u32))))
    }
}

fn join_path(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::{normalize, rust_module};

    #[test]
    fn rust_files_map_to_crate_and_module() {
        assert_eq!(rust_module("src/lib.rs"), ("src/".into(), "".into()));
        assert_eq!(rust_module("src/eval.rs"), ("src/".into(), "eval".into()));
        assert_eq!(
            rust_module("crates/a/src/x/mod.rs"),
            ("crates/a/src/".into(), "x".into())
        );
        assert_eq!(
            rust_module("crates/a/src/x/y.rs"),
            ("crates/a/src/".into(), "x::y".into())
        );
        assert_eq!(rust_module("tests/t.rs"), ("tests/".into(), "".into()));
        assert_eq!(rust_module("tests/util/mod.rs"), ("tests/".into(), "util".into()));
        assert_eq!(rust_module("build.rs"), ("build.rs".into(), "".into()));
        assert_eq!(normalize("src/a/../b/./c"), "src/b/c");
    }
}
