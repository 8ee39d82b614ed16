//! The stored form of a graph: a magic and format version, then the facts
//! and edges as postcard, zstd-compressed. Versioned so a reader never
//! misreads a blob from another format; a mismatch reads as "not indexed".

use crate::model::{Graph, GraphData};

const MAGIC: &[u8; 3] = b"QGR";
/// 2: call result use and `returns_none` in the facts.
/// 4: exports, parameters of the other languages, return keys and result keys.
/// 5: argument names and the end line of every call.
/// 6: Python calls on a local of known class read `C().m` (typed receivers).
/// 7: a Python result assigned in a branch and dereferenced after it is used.
/// 8: Go calls on a receiver or parameter of a package type read `T().m`.
/// 9: what each file's resolution read, for incremental resolution.
/// 10: the reads include lookups keyed by paths (a file added or removed).
const FORMAT: u8 = 10;

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("not a code-graph blob (bad magic)")]
    Magic,
    #[error("code-graph blob format {0}, this build reads {FORMAT}")]
    Format(u8),
    #[error("code-graph blob is corrupt: {0}")]
    Corrupt(String),
}

pub fn encode(graph: &Graph) -> Vec<u8> {
    let raw = postcard::to_stdvec(&graph.data).expect("graph data serialises");
    let packed = zstd::encode_all(raw.as_slice(), 3).expect("zstd on a buffer does not fail");
    let mut out = Vec::with_capacity(packed.len() + 4);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.extend_from_slice(&packed);
    out
}

pub fn decode(bytes: &[u8]) -> Result<Graph, BlobError> {
    if bytes.len() < 4 || bytes[..3] != MAGIC[..] {
        return Err(BlobError::Magic);
    }
    if bytes[3] != FORMAT {
        return Err(BlobError::Format(bytes[3]));
    }
    let raw = zstd::decode_all(&bytes[4..]).map_err(|e| BlobError::Corrupt(e.to_string()))?;
    let data: GraphData = postcard::from_bytes(&raw).map_err(|e| BlobError::Corrupt(e.to_string()))?;
    Ok(Graph::from_data(data))
}
