//! Go: the repository directory an import path names (computed once per
//! import), a package's top-level names across the files of its
//! directory, and a type's methods declared anywhere in its package.

use super::{Entity, OtherLangs, dir_of};
use crate::extract::SymbolKind;

impl OtherLangs<'_> {
    /// An import path's package directory in the repository (the longest
    /// directory the import path ends with).
    pub(super) fn go_package(&self, import: &str) -> Entity {
        match self.go_imports.get(import) {
            Some(Some(d)) => Entity::GoPkg(d.clone()),
            _ => Entity::External,
        }
    }

    pub(super) fn go_dir_of(&self, import: &str) -> Option<String> {
        self.go_dirs
            .keys()
            .filter(|d| !d.is_empty() && (import == **d || import.ends_with(&format!("/{d}"))))
            .max_by_key(|d| d.len())
            .map(|d| d.to_string())
    }

    pub(super) fn go_pkg_member(&self, dir: &str, name: &str) -> Option<u32> {
        let files = self.go_dir(dir)?;
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

    /// `T.name`: the method declared with receiver `T` or `*T` in `T`'s
    /// package (embedded types' promoted methods are not followed).
    pub(super) fn go_method(&self, class: u32, name: &str) -> Option<u32> {
        let r = self.g.refs[class as usize];
        let f = self.file(r.file);
        let want = format!("{}.{name}", f.symbols[r.local? as usize].name);
        let files = self.go_dir(dir_of(&f.path))?;
        let mut found = files.iter().flat_map(|&fi| {
            self.file(fi)
                .symbols
                .iter()
                .enumerate()
                .filter(|(_, s)| s.kind == SymbolKind::Method && s.qname == want)
                .map(move |(li, _)| self.g.id_of(fi, Some(li as u32)))
        });
        let one = found.next()?;
        found.next().is_none().then_some(one)
    }
}
