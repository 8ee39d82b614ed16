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
//!
//! Python is resolved in the parent module (`resolve.rs`), which also turns
//! what both find into edges. This file holds the index of the
//! repository built once per graph ([`OtherLangs::new`]), the entry points
//! (a call's or base's target, an import's file) and the lookups every
//! language shares: bare names, qualifiers, members, classes and their
//! bases. Each language's own rules are in its file: `js` (module
//! specifiers, exports and re-exports), `rust` (crate and module paths,
//! `use`, `impl` types and methods), `go` (packages by directory) and
//! `java` (classes by import or package).

mod go;
mod java;
mod js;
mod rust;

use std::collections::HashMap;

use crate::extract::{FileFacts, ImportFact, SymbolKind};
use crate::lang::Lang;
use crate::model::{Graph, Target};
use crate::resolve::deps::{self, read_key};
use crate::resolve::{NAME_ONLY, RESOLVED};
use rust::rust_module;

/// The Rust index of types by (crate, name).
const RUST_TYPES: u8 = b't';
/// The Rust index of methods by (crate, `Type.method`).
const RUST_METHODS: u8 = b'm';

/// The entries a Rust file puts in the content-keyed indexes: (index, key,
/// symbol's local index). One definition for building the indexes and for
/// telling which keys a changed file touches.
fn rust_index_entries(f: &FileFacts) -> impl Iterator<Item = (u8, &str, u32)> {
    f.symbols.iter().enumerate().filter_map(|(li, s)| match s.kind {
        SymbolKind::Class => Some((RUST_TYPES, s.name.as_str(), li as u32)),
        SymbolKind::Method => Some((RUST_METHODS, s.qname.as_str(), li as u32)),
        _ => None,
    })
}

/// The content-keyed index keys file `f` contributes to ([`deps`]).
pub(crate) fn content_keys(f: &FileFacts) -> Vec<u64> {
    if f.lang != Lang::Rust {
        return vec![];
    }
    let (prefix, _) = rust_module(&f.path);
    rust_index_entries(f)
        .map(|(index, key, _)| deps::index_key(index, &[&prefix, key]))
        .collect()
}

/// The keys file `f` (Python module `module`) holds in the path-keyed
/// indexes ([`deps::PY_MODULE`] and the others): a file added or removed
/// changes what a lookup of one of them finds.
pub(crate) fn path_keys(f: &FileFacts, module: &str) -> Vec<u64> {
    let mut keys = vec![deps::index_key(deps::PATH, &[&f.path])];
    match f.lang {
        Lang::Python => keys.push(deps::index_key(deps::PY_MODULE, &[module])),
        Lang::Rust => {
            let (prefix, m) = rust_module(&f.path);
            if !m.is_empty() || prefix.ends_with("src/") {
                keys.push(deps::index_key(deps::RUST_MOD, &[&prefix, &m]));
            }
        }
        Lang::Go => keys.push(deps::index_key(deps::GO_DIR, &[dir_of(&f.path)])),
        Lang::Java => keys.push(deps::index_key(
            deps::JAVA_FILE,
            &[f.path.rsplit('/').next().unwrap_or(&f.path)],
        )),
        _ => {}
    }
    keys
}

/// The directories that hold Go files: an import path is matched against
/// all of them (the longest suffix wins), so a change to this set is not
/// made incremental.
pub(crate) fn go_dirs<'f>(files: impl Iterator<Item = &'f FileFacts>) -> std::collections::BTreeSet<&'f str> {
    files.filter(|f| f.lang == Lang::Go).map(|f| dir_of(&f.path)).collect()
}

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

pub(crate) struct OtherLangs<'g> {
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

impl<'g> OtherLangs<'g> {
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
                    for (index, key, li) in rust_index_entries(f) {
                        let id = g.id_of(fi, Some(li));
                        let map = if index == RUST_TYPES {
                            &mut rust_types
                        } else {
                            &mut rust_methods
                        };
                        map.entry((prefix.clone(), key.to_string())).or_default().push(id);
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
        let mut p = OtherLangs {
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
        deps::facts(self.g, fi)
    }

    fn kind(&self, id: u32) -> SymbolKind {
        deps::kind(self.g, id)
    }

    fn enclosing_class(&self, fi: u32, scope: Option<u32>) -> Option<u32> {
        deps::enclosing_class(self.g, fi, scope)
    }

    /// The file at `path`, noted as a lookup of that path (hit or miss).
    fn file_at(&self, path: &str) -> Option<u32> {
        deps::read_path(deps::PATH, &[path]);
        self.by_path.get(path).copied()
    }

    /// The file of Rust module `m` of the crate at `prefix`, noted as a
    /// lookup of that key.
    fn rust_mod(&self, prefix: &str, m: &str) -> Option<u32> {
        deps::read_path(deps::RUST_MOD, &[prefix, m]);
        self.rust_mods.get(&(prefix.to_string(), m.to_string())).copied()
    }

    /// The Go files of directory `dir`, noted as a lookup of that key.
    fn go_dir(&self, dir: &str) -> Option<&Vec<u32>> {
        deps::read_path(deps::GO_DIR, &[dir]);
        self.go_dirs.get(dir)
    }

    /// The Java files named `name`, noted as a lookup of that key.
    fn java_files_named(&self, name: &str) -> Option<&Vec<u32>> {
        deps::read_path(deps::JAVA_FILE, &[name]);
        self.java_files.get(name)
    }

    /// Looks `key` up in a Rust index (types or methods by crate), noted as
    /// a read of that key: a changed file can add or remove entries under it.
    fn rust_index(&self, index: u8, prefix: &str, key: &str) -> Option<&Vec<u32>> {
        read_key(deps::index_key(index, &[prefix, key]));
        let map = if index == RUST_TYPES {
            &self.rust_types
        } else {
            &self.rust_methods
        };
        map.get(&(prefix.to_string(), key.to_string()))
    }

    fn entity_of(&self, id: u32) -> Entity {
        match self.kind(id) {
            SymbolKind::Class => Entity::Class(id),
            _ => Entity::Item(id),
        }
    }

    /// The edge target of a call (or a base class) written `callee` in
    /// `scope` of file `fi`.
    pub(crate) fn call(&self, fi: u32, scope: Option<u32>, callee: &str) -> (Target, f32) {
        if let Some(called) = super::called_result(callee) {
            return called;
        }
        let parts: Vec<&str> = callee.split('.').collect();
        let Some((&last, quals)) = parts.split_last() else {
            return (Target::Name(callee.into()), NAME_ONLY);
        };
        if quals.is_empty() {
            return match self.bare(fi, scope, last, 0) {
                Some(Entity::Class(id) | Entity::Item(id)) => (Target::Symbol(id), RESOLVED),
                _ => (Target::Name(last.into()), NAME_ONLY),
            };
        }
        match self.qualifier(fi, scope, quals, 0) {
            Entity::Unknown => (Target::Name(last.into()), NAME_ONLY),
            Entity::External => (Target::Name(callee.into()), NAME_ONLY),
            e => match self.member(&e, last, 0) {
                Some(Entity::Class(id) | Entity::Item(id)) => (Target::Symbol(id), RESOLVED),
                // An owner of ours without that member: inherited from
                // outside, dynamic, or gone.
                _ => (Target::Name(last.into()), NAME_ONLY),
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
                Lang::Go => self.go_method(*c, name).map(Entity::Item),
                _ => self.class_member(*c, name, 0),
            },
            Entity::Namespace(m) => self.js_export(*m, name, depth + 1),
            Entity::RustMod(prefix, m) => self.rust_mod_item(prefix, m, name, depth + 1),
            Entity::GoPkg(dir) => self.go_pkg_member(dir, name).map(|id| self.entity_of(id)),
            _ => None,
        }
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
                (Target::Symbol(id), _) if id != class && self.kind(id) == SymbolKind::Class => Some(id),
                _ => None,
            })
            .collect()
    }
}
