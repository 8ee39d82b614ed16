//! Rust: a file's crate and module path, `use` and call paths (`crate::`,
//! `super::`, `self::`, `Self::`, imported names, globs, `pub use`
//! re-exports, module files), the type of the `impl` around a scope, and a
//! type's methods from any `impl` of it in the crate.

use super::{Entity, MAX_DEPTH, OtherLangs, capitalized};
use crate::extract::SymbolKind;

impl OtherLangs<'_> {
    /// The type of the `impl` around `scope` (`self`, `Self`).
    pub(super) fn impl_type(&self, fi: u32, scope: Option<u32>) -> Option<u32> {
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
        let types = self.rust_index(super::RUST_TYPES, &prefix, name)?;
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
    pub(super) fn rust_method(&self, class: u32, name: &str) -> Option<u32> {
        let r = self.g.refs[class as usize];
        let f = self.file(r.file);
        let tname = &f.symbols[r.local? as usize].name;
        let (prefix, _) = rust_module(&f.path);
        let cands = self.rust_index(super::RUST_METHODS, &prefix, &format!("{tname}.{name}"))?;
        let same_name_types = self.rust_index(super::RUST_TYPES, &prefix, tname).map_or(0, Vec::len);
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
    pub(super) fn rust_path(&self, fi: u32, scope: Option<u32>, segs: &[&str], depth: u32) -> Entity {
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
                } else if self.rust_mod(&prefix, &join_mod(&cur, first)).is_some() {
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
    pub(super) fn rust_mod_item(&self, prefix: &str, m: &str, name: &str, depth: u32) -> Option<Entity> {
        let child = join_mod(m, name);
        let Some(fi) = self.rust_mod(prefix, m) else {
            return self
                .rust_mod(prefix, &child)
                .is_some()
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
        self.rust_mod(prefix, &child)
            .is_some()
            .then(|| Entity::RustMod(prefix.to_string(), child))
    }
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

#[cfg(test)]
mod tests {
    use super::rust_module;
    use crate::resolve::other_langs::js::normalize;

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
