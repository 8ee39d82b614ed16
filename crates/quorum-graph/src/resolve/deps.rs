//! What resolving one file read from the rest of the graph, recorded while
//! it resolves, so an incremental build knows which files' edges a change
//! can have altered.
//!
//! Resolution of file F reads other files' facts (symbols, bindings,
//! bases) and looks names up in the repository-wide indexes. Every read of
//! another file's facts goes through [`read_file`]; every index lookup
//! whose key comes from file contents (a Rust type or method name across a
//! crate) goes through [`read_key`], and so does every lookup keyed by a
//! path (a Python module name, a file path, a Rust module, a Go directory,
//! a Java file name; [`read_path`]), hit or miss, so a file added or
//! removed dirties the files that asked for its keys. F's edges can change
//! only if F changed, a file it read changed or went, or a changed, added
//! or removed file adds or removes an entry under a key it looked up;
//! otherwise its edges are the previous graph's, with symbol ids
//! renumbered.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use crate::extract::{FileFacts, SymbolKind};
use crate::model::Graph;

/// The reads of resolving one file: other files by index (sorted, without
/// the file itself) and content-derived index keys (sorted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileDeps {
    pub files: Vec<u32>,
    pub keys: Vec<u64>,
}

#[derive(Default)]
struct Reads {
    on: bool,
    files: Vec<u32>,
    keys: Vec<u64>,
}

thread_local! {
    static READS: RefCell<Reads> = RefCell::default();
}

/// Notes that the file being resolved read file `fi`'s facts.
pub(crate) fn read_file(fi: u32) {
    READS.with(|r| {
        let mut r = r.borrow_mut();
        // Consecutive reads of one file are the common case.
        if r.on && r.files.last() != Some(&fi) {
            r.files.push(fi);
        }
    });
}

/// File `fi`'s facts, noted as read: the one way the resolvers read
/// another file's facts.
pub(crate) fn facts(g: &Graph, fi: u32) -> &FileFacts {
    read_file(fi);
    &g.files()[fi as usize]
}

/// The kind of symbol `id`, noted as a read of its file.
pub(crate) fn kind(g: &Graph, id: u32) -> SymbolKind {
    read_file(g.refs[id as usize].file);
    g.kind_of(id)
}

/// The class around `scope` in file `fi`, noted as a read of `fi`.
pub(crate) fn enclosing_class(g: &Graph, fi: u32, scope: Option<u32>) -> Option<u32> {
    read_file(fi);
    g.enclosing_class(fi, scope)
}

/// Notes that the file being resolved looked `key` up in a content-keyed
/// index.
pub(crate) fn read_key(key: u64) {
    READS.with(|r| {
        let mut r = r.borrow_mut();
        // A file looks the same module up again and again.
        if r.on && r.keys.last() != Some(&key) {
            r.keys.push(key);
        }
    });
}

/// Runs `resolve` (the resolution of file `fi`) and returns what it read.
pub(crate) fn recording<T>(fi: u32, resolve: impl FnOnce() -> T) -> (T, FileDeps) {
    READS.with(|r| {
        let mut r = r.borrow_mut();
        r.on = true;
        r.files.clear();
        r.keys.clear();
    });
    let out = resolve();
    let deps = READS.with(|r| {
        let mut r = r.borrow_mut();
        r.on = false;
        let mut files = std::mem::take(&mut r.files);
        files.sort_unstable();
        files.dedup();
        files.retain(|&f| f != fi);
        let mut keys = std::mem::take(&mut r.keys);
        keys.sort_unstable();
        keys.dedup();
        FileDeps { files, keys }
    });
    (out, deps)
}

/// The path-keyed indexes, for [`read_path`] and
/// `other_langs::path_keys`: a Python module name's file, a file by path,
/// a Rust module's file by (crate prefix, module path), a Go directory's
/// files, Java files by file name.
pub(crate) const PY_MODULE: u8 = b'M';
pub(crate) const PATH: u8 = b'P';
pub(crate) const RUST_MOD: u8 = b'R';
pub(crate) const GO_DIR: u8 = b'D';
pub(crate) const JAVA_FILE: u8 = b'J';

/// Notes a lookup of `parts` in path-keyed index `index`.
pub(crate) fn read_path(index: u8, parts: &[&str]) {
    read_key(index_key(index, parts));
}

/// A key for a content-keyed index: stable across builds and machines (it
/// is stored with the graph), so FNV-1a rather than the std hasher.
pub(crate) fn index_key(index: u8, parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    eat(index);
    for p in parts {
        for &b in p.as_bytes() {
            eat(b);
        }
        // A separator no identifier or path holds, so ("ab", "c") and
        // ("a", "bc") differ.
        eat(0);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_while_recording_and_leaves_out_the_file_itself() {
        read_file(9);
        let ((), deps) = recording(3, || {
            read_file(3);
            read_file(7);
            read_file(7);
            read_file(1);
            read_file(7);
            read_key(5);
            read_key(5);
        });
        assert_eq!(deps.files, vec![1, 7]);
        assert_eq!(deps.keys, vec![5]);
        read_file(4);
        let ((), deps) = recording(0, || {});
        assert_eq!(deps, FileDeps::default());
    }

    #[test]
    fn index_keys_separate_their_parts_and_their_index() {
        assert_ne!(index_key(b't', &["ab", "c"]), index_key(b't', &["a", "bc"]));
        assert_ne!(index_key(b't', &["a", "b"]), index_key(b'm', &["a", "b"]));
        assert_eq!(index_key(b't', &["a", "b"]), index_key(b't', &["a", "b"]));
    }
}
