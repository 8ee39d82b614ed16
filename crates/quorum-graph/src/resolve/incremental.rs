//! Incremental resolution: after a change to a few files, resolve again
//! only the files whose edges the change can have altered, and carry the
//! others' edges over from the previous graph with their symbol ids
//! renumbered.
//!
//! A file must be resolved again when it changed or is new, when its
//! resolution read a file that changed or was removed, or when it looked up
//! a key that a changed, added or removed file contributes to before or
//! after the change: a content key (a Rust type or method by crate) or a
//! path key (a Python module name, a file path, a Rust module, a Go
//! directory, a Java file name; [`super::deps`]). The result is the graph a
//! build from nothing makes, byte for byte (`tests/incremental.rs` checks
//! it on random edits, additions, removals and renames); the plan declines,
//! and everything is resolved, when many files changed, when the
//! directories holding Go files changed (an import path is matched against
//! all of them), or when the previous graph has no record of its reads.

use std::collections::HashSet;
use std::sync::Arc;

use super::FileDeps;
use super::other_langs::{content_keys, go_dirs, path_keys};
use crate::model::{Edge, Graph, Target};

/// Above this share of changed files, resolving everything is as quick.
const MAX_CHANGED_SHARE: usize = 10;

pub(super) struct Plan<'p> {
    previous: &'p Graph,
    /// Each new file's index in the previous graph (`None`: added).
    old_of_new: Vec<Option<u32>>,
    /// Each previous file's index in the new graph (`None`: removed).
    new_of_old: Vec<Option<u32>>,
    /// Previous files whose facts differ in the new graph or that are gone.
    old_changed: Vec<bool>,
    /// New files to resolve again.
    dirty: Vec<bool>,
    /// Where each previous file's edges start in the previous graph's edges
    /// (one more entry than files).
    edge_start: Vec<usize>,
}

impl<'p> Plan<'p> {
    /// The plan for resolving `next` after `previous`, or `None` when it
    /// must be resolved from nothing.
    pub(super) fn new(previous: &'p Graph, next: &Graph) -> Option<Plan<'p>> {
        let (old, new) = (previous.files(), next.files());
        if previous.deps().len() != old.len() {
            return None;
        }
        // Both are sorted by path: match them in one pass.
        let mut old_of_new = vec![None; new.len()];
        let mut new_of_old = vec![None; old.len()];
        let (mut o, mut n) = (0, 0);
        while o < old.len() && n < new.len() {
            match old[o].path.cmp(&new[n].path) {
                std::cmp::Ordering::Less => o += 1,
                std::cmp::Ordering::Greater => n += 1,
                std::cmp::Ordering::Equal => {
                    old_of_new[n] = Some(o as u32);
                    new_of_old[o] = Some(n as u32);
                    o += 1;
                    n += 1;
                }
            }
        }
        // Reused facts are the previous graph's own (shared), so a pointer
        // comparison finds the changed files; a file parsed again with the
        // same content only costs its dependents a resolution.
        let changed: Vec<bool> = old_of_new
            .iter()
            .zip(new)
            .map(|(o, b)| o.is_none_or(|o| !Arc::ptr_eq(&old[o as usize], b)))
            .collect();
        let removed = new_of_old.iter().filter(|n| n.is_none()).count();
        let changed_count = changed.iter().filter(|&&c| c).count() + removed;
        if changed_count * MAX_CHANGED_SHARE > old.len().max(MAX_CHANGED_SHARE) {
            return None;
        }
        let paths_changed = removed > 0 || old_of_new.iter().any(Option::is_none);
        if paths_changed && go_dirs(old.iter().map(|f| &**f)) != go_dirs(new.iter().map(|f| &**f)) {
            return None;
        }
        let mut old_changed = vec![false; old.len()];
        let mut changed_keys: HashSet<u64> = HashSet::new();
        for (oi, ni) in new_of_old.iter().enumerate() {
            match ni {
                Some(ni) if !changed[*ni as usize] => {}
                _ => {
                    old_changed[oi] = true;
                    changed_keys.extend(content_keys(&old[oi]));
                }
            }
            if ni.is_none() {
                changed_keys.extend(path_keys(&old[oi], &previous.modules[oi]));
            }
        }
        for (ni, oi) in old_of_new.iter().enumerate() {
            if changed[ni] {
                changed_keys.extend(content_keys(&new[ni]));
                if oi.is_none() {
                    changed_keys.extend(path_keys(&new[ni], &next.modules[ni]));
                }
            }
        }
        let reads_a_change = |d: &FileDeps| {
            d.files.iter().any(|&f| old_changed[f as usize]) || d.keys.iter().any(|k| changed_keys.contains(k))
        };
        let dirty = changed
            .iter()
            .zip(&old_of_new)
            .map(|(&c, o)| c || o.is_none_or(|o| reads_a_change(&previous.deps()[o as usize])))
            .collect();
        let mut edge_start = Vec::with_capacity(old.len() + 1);
        let edges = previous.edges();
        let mut e = 0;
        for fi in 0..old.len() as u32 {
            while e < edges.len() && previous.refs[edges[e].from as usize].file < fi {
                e += 1;
            }
            edge_start.push(e);
        }
        edge_start.push(edges.len());
        Some(Plan {
            previous,
            old_of_new,
            new_of_old,
            old_changed,
            dirty,
            edge_start,
        })
    }

    /// File `fi`'s edges and reads carried over from the previous graph,
    /// with file indexes and symbol ids as `next` numbers them; `None` when
    /// it must be resolved.
    pub(super) fn carry_over(&self, fi: u32, next: &Graph) -> Option<(Vec<Edge>, FileDeps)> {
        if self.dirty[fi as usize] {
            return None;
        }
        let of = self.old_of_new[fi as usize]? as usize;
        let renumber = |id: u32| {
            let r = self.previous.refs[id as usize];
            Some(next.id_of(self.new_of_old[r.file as usize]?, r.local))
        };
        let old = &self.previous.edges()[self.edge_start[of]..self.edge_start[of + 1]];
        let mut edges = Vec::with_capacity(old.len());
        for e in old {
            let to = match &e.to {
                Target::Symbol(t) => {
                    let r = self.previous.refs[*t as usize];
                    // A symbol of a changed file that resolution reached
                    // without a recorded read: resolve to be safe (a module
                    // is found by its path, whose lookup is recorded).
                    if self.old_changed[r.file as usize] && r.local.is_some() {
                        return None;
                    }
                    Target::Symbol(renumber(*t)?)
                }
                Target::Name(n) => Target::Name(n.clone()),
            };
            edges.push(Edge {
                kind: e.kind,
                from: renumber(e.from)?,
                to,
                line: e.line,
                confidence: e.confidence,
                call: e.call,
            });
        }
        let old_deps = &self.previous.deps()[of];
        let deps = FileDeps {
            // A file that read a removed file is dirty, so every read maps;
            // both graphs are sorted by path, so the order holds.
            files: old_deps
                .files
                .iter()
                .map(|&f| self.new_of_old[f as usize])
                .collect::<Option<Vec<u32>>>()?,
            keys: old_deps.keys.clone(),
        };
        Some((edges, deps))
    }
}
