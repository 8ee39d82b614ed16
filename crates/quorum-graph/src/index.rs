//! The graph's symbol tables by name and by qualified name, built without
//! allocating a string per symbol: each table holds symbol ids, hashed by
//! the name's bytes and compared against the graph's own facts. Each file's
//! name hashes are computed once and kept with its (shared) facts, so a
//! build that reuses a file's facts reads a few words per symbol instead of
//! chasing its names through memory. (A map keyed by owned names cost one
//! allocation per symbol: a third of an incremental build on a large tree.)

use std::sync::OnceLock;

use hashbrown::HashTable;

use crate::extract::FileFacts;
use crate::model::{Graph, bare_name, module_name, qname_parts};

/// A file's (qualified name, name) hashes: its module pseudo-symbol, then
/// each symbol in order. Not part of the facts' identity or stored form.
#[derive(Clone, Default)]
pub struct NameHashes(OnceLock<Box<[(u64, u64)]>>);

impl PartialEq for NameHashes {
    fn eq(&self, _: &NameHashes) -> bool {
        true
    }
}

impl std::fmt::Debug for NameHashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameHashes")
    }
}

fn name_hashes(f: &FileFacts) -> &[(u64, u64)] {
    f.name_hashes.0.get_or_init(|| {
        let module = module_name(&f.path, f.lang);
        std::iter::once(None)
            .chain((0..f.symbols.len() as u32).map(Some))
            .map(|local| {
                (
                    hash(&qname_parts(&module, f, local)),
                    hash(&[bare_name(&module, f, local)]),
                )
            })
            .collect()
    })
}

/// FNV-1a over the pieces' bytes in order: the pieces of a qualified name
/// hash as the whole name does.
fn hash(pieces: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in pieces {
        for &b in p.as_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Whether `pieces` concatenated are `whole`.
fn equals(pieces: &[&str], whole: &str) -> bool {
    let mut rest = whole;
    for p in pieces {
        match rest.strip_prefix(p) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    rest.is_empty()
}

/// The tables of `g`: by qualified name (the first id of duplicates) and by
/// name (every id, in id order).
pub(crate) fn symbol_tables(g: &Graph) -> (HashTable<u32>, HashTable<Vec<u32>>) {
    let n = g.symbol_count();
    let mut by_qname: HashTable<u32> = HashTable::with_capacity(n);
    let mut by_name: HashTable<Vec<u32>> = HashTable::with_capacity(n / 2);
    let hashes: Vec<&[(u64, u64)]> = g.files().iter().map(|f| name_hashes(f)).collect();
    let of = |id: u32| {
        let r = g.refs[id as usize];
        hashes[r.file as usize][r.local.map_or(0, |l| l as usize + 1)]
    };
    let mut id = 0u32;
    for file in &hashes {
        for &(qh, nh) in file.iter() {
            // The comparisons run only for ids whose hash matched.
            if by_qname
                .find(qh, |&other| g.qname_parts(other) == g.qname_parts(id))
                .is_none()
            {
                by_qname.insert_unique(qh, id, |&i| of(i).0);
            }
            match by_name.find_mut(nh, |ids| g.name(ids[0]) == g.name(id)) {
                Some(ids) => ids.push(id),
                None => {
                    by_name.insert_unique(nh, vec![id], |ids| of(ids[0]).1);
                }
            }
            id += 1;
        }
    }
    (by_qname, by_name)
}

pub(crate) fn find_qname(g: &Graph, table: &HashTable<u32>, qname: &str) -> Option<u32> {
    table
        .find(hash(&[qname]), |&id| equals(&g.qname_parts(id), qname))
        .copied()
}

pub(crate) fn find_name<'t>(g: &Graph, table: &'t HashTable<Vec<u32>>, name: &str) -> &'t [u32] {
    table
        .find(hash(&[name]), |ids| g.name(ids[0]) == name)
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_hash_and_compare_as_the_whole() {
        assert_eq!(hash(&["shop.cart", ".", "Cart.add"]), hash(&["shop.cart.Cart.add"]));
        assert!(equals(&["shop.cart", ".", "Cart.add"], "shop.cart.Cart.add"));
        assert!(!equals(&["shop.cart", ".", "Cart.add"], "shop.cart.Cart.ad"));
        assert!(!equals(&["shop.cart", ".", "Cart"], "shop.cart.Cart.add"));
        assert!(equals(&["", "", ""], ""));
    }
}
