//! One ranking from two: the dense (meaning) and the sparse (BM25 words)
//! candidates of a query fused here, in the client, so both engines (the
//! in-process one and a Qdrant server) rank the same way.
//!
//! Plain reciprocal-rank fusion gives each list's first place the same
//! weight, so a chunk that shares one common word with the query ("give a
//! customer their money back" → a docstring that says "Give ``user`` a new
//! salt") ties with the chunk the meaning found. What a sparse hit is worth
//! depends on how much of the query it holds: [`Fusion::CoverageRrf`] scales
//! the sparse side's term by the share of the query's terms the chunk
//! contains. Which fusion ships was decided by the retrieval benchmark
//! (`quorum-lab bench-retrieval`, docs/search.md), not by one query.

use std::collections::HashMap;

use serde::Serialize;

use crate::sparse::Sparse;

/// A candidate from one side: its id, its score there, and (sparse side)
/// the share of the query's terms it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub id: uuid::Uuid,
    pub score: f32,
    pub coverage: f32,
}

/// How the two rankings become one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "fusion", rename_all = "snake_case")]
pub enum Fusion {
    /// Reciprocal rank, both sides weighted equally: `1/(k + rank)`.
    Rrf { k: f32 },
    /// Reciprocal rank with the sparse term scaled by the candidate's
    /// coverage of the query's terms.
    CoverageRrf { k: f32 },
    /// A convex combination of scores: `alpha · cosine/best cosine +
    /// (1 − alpha) · coverage · BM25/best BM25`.
    Convex { alpha: f32 },
}

/// What `quorum search` and the agents' tools use for a query in words.
pub const SHIPPED: Fusion = Fusion::CoverageRrf { k: 2.0 };

/// What they use for a query that is one identifier as written
/// (`mergeMap`, `get_user_name`, `Cart.add`): the words side holds the
/// name whole, and the meaning side only guesses at it. On rxjs's 197
/// identifier queries (docs/search.md) sparse alone beat every equal-weight
/// fusion; a convex combination leaning 0.7 on the sparse side beat both.
pub const SHIPPED_FOR_IDENTIFIERS: Fusion = Fusion::Convex { alpha: 0.3 };

/// Whether a query is a single identifier: one token of letters, digits,
/// `_`, `$`, `.` or `::`, with a letter in it. A lone word counts too: BM25
/// on one word is what a reader of one word wants.
pub fn is_identifier_query(query: &str) -> bool {
    let q = query.trim();
    !q.is_empty()
        && q.chars().any(char::is_alphabetic)
        && q.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':'))
}

/// The fusion for `query`: [`SHIPPED_FOR_IDENTIFIERS`] for an identifier,
/// [`SHIPPED`] otherwise.
pub fn for_query(query: &str) -> Fusion {
    if is_identifier_query(query) {
        SHIPPED_FOR_IDENTIFIERS
    } else {
        SHIPPED
    }
}

impl Fusion {
    /// A short name for reports: `rrf(k=2)`.
    pub fn label(&self) -> String {
        match self {
            Fusion::Rrf { k } => format!("rrf(k={k})"),
            Fusion::CoverageRrf { k } => format!("coverage_rrf(k={k})"),
            Fusion::Convex { alpha } => format!("convex(alpha={alpha})"),
        }
    }
}

/// The fused ranking, best first: every candidate of either side once,
/// ties broken by the dense side's order, then the sparse side's.
pub fn fuse(dense: &[Ranked], sparse: &[Ranked], fusion: Fusion) -> Vec<(uuid::Uuid, f32)> {
    let mut scores: HashMap<uuid::Uuid, (f32, usize)> = HashMap::new();
    let mut add = |id: uuid::Uuid, s: f32, order: usize| {
        let e = scores.entry(id).or_insert((0.0, order));
        e.0 += s;
        e.1 = e.1.min(order);
    };
    match fusion {
        Fusion::Rrf { k } | Fusion::CoverageRrf { k } => {
            for (rank, c) in dense.iter().enumerate() {
                add(c.id, 1.0 / (k + rank as f32 + 1.0), rank);
            }
            for (rank, c) in sparse.iter().enumerate() {
                let weight = match fusion {
                    Fusion::CoverageRrf { .. } => c.coverage,
                    _ => 1.0,
                };
                add(c.id, weight / (k + rank as f32 + 1.0), dense.len() + rank);
            }
        }
        Fusion::Convex { alpha } => {
            let best = |side: &[Ranked]| side.iter().map(|c| c.score).fold(0.0_f32, f32::max);
            let (bd, bs) = (best(dense), best(sparse));
            for (rank, c) in dense.iter().enumerate() {
                let s = if bd > 0.0 { c.score.max(0.0) / bd } else { 0.0 };
                add(c.id, alpha * s, rank);
            }
            for (rank, c) in sparse.iter().enumerate() {
                let s = if bs > 0.0 { c.score / bs } else { 0.0 };
                add(c.id, (1.0 - alpha) * c.coverage * s, dense.len() + rank);
            }
        }
    }
    let mut out: Vec<(uuid::Uuid, f32, usize)> = scores.into_iter().map(|(id, (s, o))| (id, s, o)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    out.into_iter().map(|(id, s, _)| (id, s)).collect()
}

/// The share of the query's terms (BM25 token ids, stop words already
/// gone) that a chunk's terms hold.
pub fn coverage(query: &Sparse, chunk: &Sparse) -> f32 {
    if query.indices.is_empty() {
        return 0.0;
    }
    // Both index lists are sorted and unique.
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < query.indices.len() && j < chunk.indices.len() {
        match query.indices[i].cmp(&chunk.indices[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    shared as f32 / query.indices.len() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> uuid::Uuid {
        uuid::Uuid::from_bytes([n; 16])
    }

    fn side(items: &[(u8, f32, f32)]) -> Vec<Ranked> {
        items
            .iter()
            .map(|&(n, score, coverage)| Ranked {
                id: id(n),
                score,
                coverage,
            })
            .collect()
    }

    fn order(v: Vec<(uuid::Uuid, f32)>) -> Vec<u8> {
        v.into_iter().map(|(u, _)| u.as_bytes()[0]).collect()
    }

    #[test]
    fn what_both_sides_agree_on_ranks_first_in_every_fusion() {
        let dense = side(&[(1, 0.9, 1.0), (2, 0.8, 1.0)]);
        let sparse = side(&[(3, 9.0, 1.0), (2, 8.0, 1.0)]);
        for f in [
            Fusion::Rrf { k: 2.0 },
            Fusion::CoverageRrf { k: 2.0 },
            Fusion::Convex { alpha: 0.5 },
        ] {
            assert_eq!(order(fuse(&dense, &sparse, f))[0], 2, "{}", f.label());
        }
    }

    #[test]
    fn a_sparse_hit_on_one_of_four_query_terms_no_longer_ties_with_the_dense_first() {
        // Dense first: the refund; sparse first: a chunk sharing one word.
        let dense = side(&[(1, 0.43, 1.0), (4, 0.40, 1.0)]);
        let sparse = side(&[(2, 6.7, 0.25), (5, 5.9, 0.25)]);
        let rrf = fuse(&dense, &sparse, Fusion::Rrf { k: 2.0 });
        assert_eq!(rrf[0].1, rrf[1].1, "plain RRF ties them: {rrf:?}");
        let cov = order(fuse(&dense, &sparse, Fusion::CoverageRrf { k: 2.0 }));
        assert_eq!(&cov[..2], &[1, 4], "{cov:?}");
    }

    #[test]
    fn an_exact_identifier_the_sparse_side_holds_whole_still_wins() {
        // The identifier's chunk is third on the dense side and first on
        // the sparse side, at full coverage; the dense first shares one word.
        let dense = side(&[(1, 0.35, 1.0), (2, 0.34, 1.0), (3, 0.33, 1.0)]);
        let sparse = side(&[(3, 12.0, 1.0), (1, 3.0, 0.25)]);
        for f in [Fusion::CoverageRrf { k: 2.0 }, Fusion::Convex { alpha: 0.5 }] {
            assert_eq!(order(fuse(&dense, &sparse, f))[0], 3, "{}", f.label());
        }
    }

    #[test]
    fn identifier_queries_are_one_token_with_a_letter() {
        for q in [
            "mergeMap",
            "get_user_name",
            "Cart.add",
            "std::fs::read",
            "$scope",
            " refund ",
        ] {
            assert!(is_identifier_query(q), "{q}");
            assert_eq!(for_query(q), SHIPPED_FOR_IDENTIFIERS, "{q}");
        }
        for q in [
            "give a customer their money back",
            "merge map",
            "404",
            "",
            "a->b",
            "f(x)",
        ] {
            assert!(!is_identifier_query(q), "{q}");
        }
        assert_eq!(for_query("where are refunds issued"), SHIPPED);
    }

    #[test]
    fn for_an_identifier_the_name_held_whole_beats_the_dense_first() {
        // The dense side ranks a look-alike first and the named function
        // fifth; the sparse side holds the name whole.
        let dense = side(&[
            (1, 0.62, 1.0),
            (2, 0.60, 1.0),
            (3, 0.58, 1.0),
            (4, 0.57, 1.0),
            (5, 0.56, 1.0),
        ]);
        let sparse = side(&[(5, 14.0, 1.0), (1, 4.0, 1.0)]);
        assert_eq!(order(fuse(&dense, &sparse, for_query("switchMap")))[0], 5);
        assert_ne!(
            order(fuse(&dense, &sparse, SHIPPED))[0],
            5,
            "equal weights keep the look-alike"
        );
    }

    #[test]
    fn one_side_empty_keeps_the_other_sides_order() {
        let dense = side(&[(1, 0.9, 1.0), (2, 0.5, 1.0), (3, 0.1, 1.0)]);
        for f in [
            Fusion::Rrf { k: 2.0 },
            Fusion::CoverageRrf { k: 60.0 },
            Fusion::Convex { alpha: 0.3 },
        ] {
            assert_eq!(order(fuse(&dense, &[], f)), vec![1, 2, 3]);
            assert_eq!(order(fuse(&[], &dense, f)), vec![1, 2, 3]);
        }
    }

    #[test]
    fn coverage_counts_shared_term_ids() {
        let q = Sparse {
            indices: vec![1, 5, 9, 12],
            values: vec![1.0; 4],
        };
        let d = Sparse {
            indices: vec![2, 5, 9, 40],
            values: vec![1.0; 4],
        };
        assert_eq!(coverage(&q, &d), 0.5);
        assert_eq!(coverage(&Sparse::default(), &d), 0.0);
    }
}
