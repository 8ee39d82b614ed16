//! Sparse BM25 vectors, computed the way a Qdrant server computes them
//! (`qdrant_edge::bm25_embed::EdgeBm25`: murmur3 token ids, BM25 term
//! weights; the collection applies IDF at query time with `Modifier::Idf`),
//! with Qdrant's code tokenizer: identifiers split on `snake_case` and
//! `camelCase` and also kept whole, so `get_user_name` matches a query for
//! "user name" and, ranked first, one for `get_user_name`.

use qdrant_edge::TokenizerType;
use qdrant_edge::bm25_embed::{EdgeBm25, EdgeBm25Config};

use crate::SearchError;

/// A sparse vector: sorted unique indices and their weights.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sparse {
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

impl Sparse {
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// The BM25 encoder shared by documents and queries.
pub struct Bm25Encoder {
    inner: EdgeBm25,
}

impl Bm25Encoder {
    pub fn new() -> Result<Self, SearchError> {
        let config = EdgeBm25Config {
            tokenizer: TokenizerType::Code,
            // English stop words and stemming: docs are prose, and code
            // subwords ("prices", "priced") stem like words.
            language: Some("english".into()),
            // Code chunks run longer than the default's 256 tokens.
            avg_len: ordered(AVG_TOKENS),
            ..Default::default()
        };
        let inner = EdgeBm25::new(config).map_err(|e| SearchError::Config(format!("BM25: {e}")))?;
        Ok(Bm25Encoder { inner })
    }

    pub fn document(&self, text: &str) -> Sparse {
        let v = self.inner.embed_document(text);
        Sparse {
            indices: v.indices,
            values: v.values,
        }
    }

    pub fn query(&self, text: &str) -> Sparse {
        let v = self.inner.embed_query(text);
        Sparse {
            indices: v.indices,
            values: v.values,
        }
    }
}

/// The average chunk length in tokens the BM25 length normalisation
/// assumes (a 40-line chunk of code is about this many subwords).
const AVG_TOKENS: f64 = 320.0;

fn ordered(v: f64) -> qdrant_edge::external::ordered_float::NotNan<f64> {
    qdrant_edge::external::ordered_float::NotNan::new(v).expect("a constant that is a number")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_match_by_their_parts_and_whole() {
        let bm25 = Bm25Encoder::new().unwrap();
        let doc = bm25.document("def get_user_name(user):\n    return user.displayName");
        let parts = bm25.query("user name");
        let whole = bm25.query("get_user_name");
        let other = bm25.query("invoice total");
        let overlap = |q: &Sparse| q.indices.iter().filter(|i| doc.indices.contains(i)).count();
        assert_eq!(overlap(&parts), parts.indices.len(), "every part is in the document");
        assert!(
            overlap(&whole) > parts.indices.len(),
            "the joined identifier is a token too"
        );
        assert_eq!(overlap(&other), 0);
        let camel = bm25.query("display name");
        assert_eq!(overlap(&camel), camel.indices.len(), "camelCase split");
    }
}
