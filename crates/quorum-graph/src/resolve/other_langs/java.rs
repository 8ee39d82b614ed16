//! Java: the class a name refers to, through an import (matched on the
//! file's path) or in the same package (directory).

use super::{Entity, OtherLangs, dir_of};

impl OtherLangs<'_> {
    /// A class named `name` seen from file `fi`: imported, or in the same
    /// package (directory).
    pub(super) fn java_class(&self, fi: u32, name: &str) -> Option<Entity> {
        let f = self.file(fi);
        let file = match f.imports.iter().find(|i| i.local == name) {
            Some(imp) => {
                let want = format!("{}.java", imp.module.replace('.', "/"));
                let base = want.rsplit('/').next().unwrap_or(&want);
                self.java_files_named(base).and_then(|fs| {
                    fs.iter().copied().find(|&i| {
                        let p = &self.file(i).path;
                        p.ends_with(&want) && (p.len() == want.len() || p[..p.len() - want.len()].ends_with('/'))
                    })
                })
            }
            None => {
                let want = join_path(dir_of(&f.path), &format!("{name}.java"));
                self.file_at(&want)
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
