//! JavaScript/TypeScript: the repository file a relative module specifier
//! names (tried as written, with each script extension, and as a
//! directory's `index`), and what a module exports under a name, followed
//! through `export … from`, `export *` and its own imports.

use super::{Entity, MAX_DEPTH, OtherLangs, dir_of, is_js};
use crate::extract::ImportFact;

impl OtherLangs<'_> {
    /// The file a module specifier names, when it is in the repository.
    pub(super) fn js_module(&self, fi: u32, spec: &str) -> Option<u32> {
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
            .find_map(|p| self.file_at(&p))
            .filter(|&m| is_js(self.file(m).lang))
    }

    pub(super) fn js_import(&self, fi: u32, imp: &ImportFact, depth: u32) -> Entity {
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
    pub(super) fn js_export(&self, m: u32, name: &str, depth: u32) -> Option<Entity> {
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
}

pub(super) fn normalize(path: &str) -> String {
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
