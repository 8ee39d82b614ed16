//! Incremental resolution: after a change to a few files, resolve again
//! only the files whose edges the change can have altered, and carry the
//! others' edges over from the previous graph with their symbol ids
//! renumbered.
//!
//! A file must be resolved again when it changed, when its resolution read
//! a file that changed, or when it looked up a content key that a changed
//! file contributes to before or after the change ([`super::deps`]). The
//! result is the graph a build from nothing makes, byte for byte
//! (`tests/incremental.rs` checks it on random edits); the plan declines,
//! and everything is resolved, when the set of files changed (paths key
//! most indexes) or the previous graph has no record of its reads.

use std::collections::HashSet;
use std::sync::Arc;

use super::FileDeps;
use super::other_langs::content_keys;
use crate::model::{Edge, Graph, Target};

/// Above this share of changed files, resolving everything is as quick.
const MAX_CHANGED_SHARE: usize = 10;

pub(super) struct Plan<'p> {
    previous: &'p Graph,
    /// Files whose facts differ from the previous graph's.
    changed: Vec<bool>,
    /// Files to resolve again.
    dirty: Vec<bool>,
    /// Where each file's edges start in the previous graph's edges (one
    /// more entry than files).
    edge_start: Vec<usize>,
}

impl<'p> Plan<'p> {
    /// The plan for resolving `next` after `previous`, or `None` when it
    /// must be resolved from nothing.
    pub(super) fn new(previous: &'p Graph, next: &Graph) -> Option<Plan<'p>> {
        let (old, new) = (previous.files(), next.files());
        if previous.deps().len() != old.len()
            || old.len() != new.len()
            || old.iter().zip(new).any(|(a, b)| a.path != b.path)
        {
            return None;
        }
        // Reused facts are the previous graph's own (shared), so a pointer
        // comparison finds the changed files; a file parsed again with the
        // same content only costs its dependents a resolution.
        let changed: Vec<bool> = old.iter().zip(new).map(|(a, b)| !Arc::ptr_eq(a, b)).collect();
        let changed_count = changed.iter().filter(|&&c| c).count();
        if changed_count * MAX_CHANGED_SHARE > old.len().max(MAX_CHANGED_SHARE) {
            return None;
        }
        let changed_keys: HashSet<u64> = changed
            .iter()
            .enumerate()
            .filter(|(_, c)| **c)
            .flat_map(|(fi, _)| content_keys(&old[fi]).into_iter().chain(content_keys(&new[fi])))
            .collect();
        let reads_a_change = |d: &FileDeps| {
            d.files.iter().any(|&f| changed[f as usize]) || d.keys.iter().any(|k| changed_keys.contains(k))
        };
        let dirty = changed
            .iter()
            .zip(previous.deps())
            .map(|(&c, d)| c || reads_a_change(d))
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
            changed,
            dirty,
            edge_start,
        })
    }

    /// File `fi`'s edges and reads carried over from the previous graph,
    /// with symbol ids as `next` numbers them; `None` when it must be
    /// resolved.
    pub(super) fn carry_over(&self, fi: u32, next: &Graph) -> Option<(Vec<Edge>, FileDeps)> {
        if self.dirty[fi as usize] {
            return None;
        }
        let renumber = |id: u32| {
            let r = self.previous.refs[id as usize];
            next.id_of(r.file, r.local)
        };
        let old = &self.previous.edges()[self.edge_start[fi as usize]..self.edge_start[fi as usize + 1]];
        let mut edges = Vec::with_capacity(old.len());
        for e in old {
            let to = match &e.to {
                Target::Symbol(t) => {
                    let r = self.previous.refs[*t as usize];
                    // A symbol of a changed file that resolution reached
                    // without a recorded read: resolve to be safe (a module
                    // is found by its path, which did not change).
                    if self.changed[r.file as usize] && r.local.is_some() {
                        return None;
                    }
                    Target::Symbol(renumber(*t))
                }
                Target::Name(n) => Target::Name(n.clone()),
            };
            edges.push(Edge {
                kind: e.kind,
                from: renumber(e.from),
                to,
                line: e.line,
                confidence: e.confidence,
                call: e.call,
            });
        }
        Some((edges, self.previous.deps()[fi as usize].clone()))
    }
}
