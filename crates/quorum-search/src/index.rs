//! The hybrid index of repositories: incremental indexing of a commit's
//! files (only changed files are re-chunked and re-embedded, deleted files'
//! chunks removed) and ranked search over code or docs.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::SearchError;
use crate::chunk::{Chunk, Kind, SymbolSpan, chunk_code, chunk_docs, is_doc};
use crate::embed::Embedder;
use crate::sparse::Bm25Encoder;
use crate::store::{ChunkPayload, ChunkPoint, HybridQuery, IndexMeta, Ranking, ScoredChunk, VectorStore, chunk_id};

/// One file of a commit, as the indexer hands it over.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
    /// The graph's language for code files; `None` for docs or files the
    /// graph does not parse (they are not indexed as code).
    pub language: Option<String>,
    /// The graph's symbols in this file.
    pub symbols: Vec<SymbolSpan>,
}

impl SourceFile {
    fn kind(&self) -> Option<Kind> {
        if is_doc(&self.path) {
            Some(Kind::Docs)
        } else if self.language.is_some() {
            Some(Kind::Code)
        } else {
            None
        }
    }
}

/// What one indexing pass did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct IndexStats {
    pub files: usize,
    pub files_changed: usize,
    pub files_deleted: usize,
    pub chunks: usize,
    /// Files left out as vendored, generated or minified ([`crate::skip`]).
    pub files_skipped: usize,
    pub embed_secs: f64,
    pub upsert_secs: f64,
    /// Files of each kind changed, for tests and the CLI.
    pub changed_paths: Vec<String>,
}

/// Progress of a pass: `(chunks embedded, chunks to embed)`.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Send + Sync);

/// Search options.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    pub kind: Kind,
    pub limit: usize,
    pub path_glob: Option<String>,
    pub language: Option<String>,
    /// Exact filters on other payload fields: each must hold one of its values.
    pub any_of: Vec<(&'static str, Vec<String>)>,
}

impl SearchOptions {
    pub fn new(kind: Kind, limit: usize) -> Self {
        SearchOptions {
            kind,
            limit,
            path_glob: None,
            language: None,
            any_of: vec![],
        }
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub language: Option<String>,
    pub kind: Kind,
    pub text: String,
    pub fused: f32,
    /// Cosine similarity, when the chunk is among the dense candidates.
    pub dense: Option<f32>,
    /// BM25 score, when the chunk is among the sparse candidates.
    pub sparse: Option<f32>,
}

/// A repository's indexed paths per kind.
type PathCache = HashMap<(String, Kind), Arc<Vec<String>>>;

/// Texts embedded per call (and per progress tick).
const EMBED_BATCH: usize = 64;
/// Points per upsert request.
const UPSERT_BATCH: usize = 256;
/// After this many new chunks, the engine's indexes are rebuilt.
const OPTIMIZE_AFTER: usize = 500;

pub struct HybridIndex {
    pub(crate) store: Arc<dyn VectorStore>,
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) bm25: Bm25Encoder,
    /// Paths per (repo, kind), to resolve path globs; dropped on indexing.
    paths: Mutex<PathCache>,
    /// Kinds whose collection was recreated for a new model on open.
    pub rebuilt: Vec<Kind>,
}

impl std::fmt::Debug for HybridIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridIndex")
            .field("engine", &self.engine())
            .field("model", &self.model())
            .finish()
    }
}

/// What goes into both vectors: the location is part of the meaning.
fn indexed_text(c: &Chunk) -> String {
    embedded_text(&c.path, c.symbol.as_deref(), &c.text)
}

pub(crate) fn embedded_text(path: &str, symbol: Option<&str>, text: &str) -> String {
    match symbol {
        Some(s) => format!("{path} {s}\n{text}"),
        None => format!("{path}\n{text}"),
    }
}

pub(crate) fn sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn state_key(kind: Kind, repo: &str) -> String {
    format!("{}:{repo}", kind.as_str())
}

impl HybridIndex {
    /// Opens the three collections (code, docs, past reviews); a collection built with another embedding
    /// model or dimension is dropped and rebuilt from scratch.
    pub async fn open(store: Arc<dyn VectorStore>, embedder: Arc<dyn Embedder>) -> Result<Self, SearchError> {
        let meta = IndexMeta {
            model: embedder.id().to_string(),
            dim: embedder.dim(),
        };
        let mut rebuilt = vec![];
        for kind in [Kind::Code, Kind::Docs, Kind::Reviews] {
            if store.open(kind, &meta).await? {
                rebuilt.push(kind);
            }
        }
        Ok(HybridIndex {
            store,
            embedder,
            bm25: Bm25Encoder::new()?,
            paths: Mutex::new(HashMap::new()),
            rebuilt,
        })
    }

    pub fn engine(&self) -> &'static str {
        self.store.engine()
    }

    pub fn model(&self) -> &str {
        self.embedder.id()
    }

    /// The commit `repo` was last completely indexed at.
    pub async fn indexed_commit(&self, repo: &str) -> Result<Option<String>, SearchError> {
        let code = self.store.get_state(&state_key(Kind::Code, repo)).await?;
        let docs = self.store.get_state(&state_key(Kind::Docs, repo)).await?;
        Ok(if code == docs { code } else { None })
    }

    /// Whether `repo` has anything indexed.
    pub async fn has_repo(&self, repo: &str) -> Result<bool, SearchError> {
        Ok(self.store.get_state(&state_key(Kind::Code, repo)).await?.is_some()
            || self.store.get_state(&state_key(Kind::Docs, repo)).await?.is_some())
    }

    /// Brings `repo`'s index to `commit`, given every file of the commit.
    /// Idempotent: a second pass over the same files embeds nothing.
    pub async fn index(
        &self,
        repo: &str,
        commit: &str,
        files: &[SourceFile],
        progress: Progress<'_>,
    ) -> Result<IndexStats, SearchError> {
        let mut stats = IndexStats::default();
        let mut todo: Vec<(Chunk, ChunkPayload)> = vec![];
        let mut stale: HashMap<Kind, Vec<String>> = HashMap::new();
        for kind in Kind::ALL {
            let existing = self.store.file_hashes(kind, repo).await?;
            let mut present = HashSet::new();
            for f in files.iter().filter(|f| f.kind() == Some(kind)) {
                stats.files += 1;
                // Left out, and so deleted if an earlier pass indexed it.
                if crate::skip::not_worth_indexing(&f.path, &f.text).is_some() {
                    stats.files_skipped += 1;
                    continue;
                }
                present.insert(f.path.as_str());
                let hash = sha256(&f.text);
                if existing.get(&f.path) == Some(&hash) {
                    continue;
                }
                stats.files_changed += 1;
                stats.changed_paths.push(f.path.clone());
                if existing.contains_key(&f.path) {
                    stale.entry(kind).or_default().push(f.path.clone());
                }
                let chunks = match kind {
                    Kind::Code => chunk_code(&f.path, &f.text, &f.symbols),
                    Kind::Docs => chunk_docs(&f.path, &f.text),
                    Kind::Reviews => unreachable!("files are code or docs (Kind::ALL)"),
                };
                for c in chunks {
                    let payload = ChunkPayload {
                        repo: repo.to_string(),
                        commit: commit.to_string(),
                        path: c.path.clone(),
                        start_line: c.start_line,
                        end_line: c.end_line,
                        symbol: c.symbol.clone(),
                        language: f.language.clone(),
                        kind,
                        file_hash: hash.clone(),
                        text: c.text.clone(),
                        review: None,
                    };
                    todo.push((c, payload));
                }
            }
            let deleted: Vec<String> = existing
                .keys()
                .filter(|p| !present.contains(p.as_str()))
                .cloned()
                .collect();
            stats.files_deleted += deleted.len();
            stale.entry(kind).or_default().extend(deleted);
        }
        // Old chunks go first: their ids differ from the new ones', and a
        // crash before the state is written makes the next pass redo this.
        for (kind, paths) in &stale {
            for batch in paths.chunks(500) {
                self.store.delete_files(*kind, repo, batch).await?;
            }
        }
        // Similar lengths embed together: an embeddings endpoint pads a
        // batch to its longest text (the in-process model runs each text
        // alone and needs no order); the order of upserts does not matter.
        todo.sort_by_key(|(c, _)| c.text.len());
        let total = todo.len();
        stats.chunks = total;
        progress(0, total);
        let mut done = 0;
        for batch in todo.chunks(EMBED_BATCH) {
            let texts: Vec<String> = batch.iter().map(|(c, _)| indexed_text(c)).collect();
            let t = Instant::now();
            let dense = self.embedder.embed(&texts).await?;
            stats.embed_secs += t.elapsed().as_secs_f64();
            let mut points: HashMap<Kind, Vec<ChunkPoint>> = HashMap::new();
            for (((c, payload), text), dense) in batch.iter().zip(&texts).zip(dense) {
                points.entry(c.kind).or_default().push(ChunkPoint {
                    id: chunk_id(repo, c.kind, &c.path, c.start_line, &payload.file_hash),
                    dense,
                    sparse: self.bm25.document(text),
                    payload: payload.clone(),
                });
            }
            let t = Instant::now();
            for (kind, pts) in points {
                for chunk in pts.chunks(UPSERT_BATCH) {
                    self.store.upsert(kind, chunk.to_vec()).await?;
                }
            }
            stats.upsert_secs += t.elapsed().as_secs_f64();
            done += batch.len();
            progress(done, total);
        }
        if total >= OPTIMIZE_AFTER {
            let t = Instant::now();
            self.store.optimize().await?;
            stats.upsert_secs += t.elapsed().as_secs_f64();
        }
        for kind in Kind::ALL {
            self.store.put_state(&state_key(kind, repo), commit).await?;
        }
        self.paths
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(r, _), _| r != repo);
        Ok(stats)
    }

    async fn repo_paths(&self, repo: &str, kind: Kind) -> Result<Arc<Vec<String>>, SearchError> {
        let key = (repo.to_string(), kind);
        if let Some(p) = self.paths.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(p.clone());
        }
        let mut paths: Vec<String> = self.store.file_hashes(kind, repo).await?.into_keys().collect();
        paths.sort();
        let paths = Arc::new(paths);
        self.paths
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, paths.clone());
        Ok(paths)
    }

    /// Ranked chunks of `repo` for `query`.
    pub async fn search(&self, repo: &str, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>, SearchError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(SearchError::Invalid("the query is empty".into()));
        }
        if opts.limit == 0 || opts.limit > 100 {
            return Err(SearchError::Invalid(format!(
                "limit must be 1..=100, got {}",
                opts.limit
            )));
        }
        let paths = match &opts.path_glob {
            None => None,
            Some(g) => {
                let glob = globset::Glob::new(g)
                    .map_err(|e| SearchError::Invalid(format!("path glob {g:?}: {e}")))?
                    .compile_matcher();
                let all = self.repo_paths(repo, opts.kind).await?;
                let hits: Vec<String> = all.iter().filter(|p| glob.is_match(p.as_str())).cloned().collect();
                if hits.is_empty() {
                    return Ok(vec![]);
                }
                Some(hits)
            }
        };
        let dense = self.embed_query(query).await?;
        let c = self.candidates(repo, query, dense, paths, opts).await?;
        Ok(c.rank(crate::fusion::for_query(query), opts.limit))
    }

    /// The query's dense vector.
    pub async fn embed_query(&self, query: &str) -> Result<Vec<f32>, SearchError> {
        self.embedder
            .embed(&[query.to_string()])
            .await?
            .pop()
            .ok_or_else(|| SearchError::Embed("no vector for the query".into()))
    }

    /// [`Self::search`] with the query already embedded (benchmarks time
    /// the engine apart from the model).
    pub async fn search_embedded(
        &self,
        repo: &str,
        query: &str,
        dense: Vec<f32>,
        opts: &SearchOptions,
    ) -> Result<Vec<Hit>, SearchError> {
        let c = self.candidates_embedded(repo, query, dense, opts).await?;
        Ok(c.rank(crate::fusion::for_query(query), opts.limit))
    }

    /// Both sides' candidates for `query` (embedded already), unfused: the
    /// retrieval benchmark ranks them with each fusion it compares.
    pub async fn candidates_embedded(
        &self,
        repo: &str,
        query: &str,
        dense: Vec<f32>,
        opts: &SearchOptions,
    ) -> Result<Candidates, SearchError> {
        self.candidates(repo, query.trim(), dense, None, opts).await
    }

    pub(crate) async fn candidates(
        &self,
        repo: &str,
        query: &str,
        dense: Vec<f32>,
        paths: Option<Vec<String>>,
        opts: &SearchOptions,
    ) -> Result<Candidates, SearchError> {
        let sparse = self.bm25.query(query);
        let side = |ranking| HybridQuery {
            repo: repo.to_string(),
            dense: dense.clone(),
            sparse: sparse.clone(),
            paths: paths.clone(),
            language: opts.language.clone(),
            any_of: opts.any_of.clone(),
            ranking,
            limit: (opts.limit * 4).max(40),
        };
        // Both sides at once: each is a blocking engine call (or a server
        // round trip), and a query waits for the slower, not for the sum.
        let (dense_q, sparse_q) = (side(Ranking::Dense), side(Ranking::Sparse));
        let sparse_side = async {
            // A query of stop words only has no sparse side.
            if sparse.is_empty() {
                Ok(vec![])
            } else {
                self.store.query(opts.kind, &sparse_q).await
            }
        };
        let (dense_side, sparse_side) = tokio::join!(self.store.query(opts.kind, &dense_q), sparse_side);
        let (dense_side, sparse_side) = (dense_side?, sparse_side?);
        let sparse_side = sparse_side
            .into_iter()
            .map(|c| {
                let terms = self.bm25.document(&payload_text(&c.payload));
                let coverage = crate::fusion::coverage(&sparse, &terms);
                (c, coverage)
            })
            .collect();
        Ok(Candidates {
            dense: dense_side,
            sparse: sparse_side,
        })
    }
}

/// A query's candidates from each side, before fusion.
#[derive(Debug, Clone)]
pub struct Candidates {
    pub dense: Vec<ScoredChunk>,
    /// With each chunk's coverage of the query's terms.
    pub sparse: Vec<(ScoredChunk, f32)>,
}

impl Candidates {
    /// The first `limit` chunks by `fusion`, each with its score on either
    /// side when it was a candidate there.
    pub fn rank(&self, fusion: crate::fusion::Fusion, limit: usize) -> Vec<Hit> {
        self.fused(fusion, limit)
            .into_iter()
            .map(|f| {
                let p = &f.chunk.payload;
                Hit {
                    path: p.path.clone(),
                    start_line: p.start_line,
                    end_line: p.end_line,
                    symbol: p.symbol.clone(),
                    language: p.language.clone(),
                    kind: p.kind,
                    text: p.text.clone(),
                    fused: f.fused,
                    dense: f.dense,
                    sparse: f.sparse,
                }
            })
            .collect()
    }

    /// The first `limit` candidates by `fusion`, with their stored points.
    pub fn fused(&self, fusion: crate::fusion::Fusion, limit: usize) -> Vec<Fused<'_>> {
        use crate::fusion::Ranked;
        let dense: Vec<Ranked> = self
            .dense
            .iter()
            .map(|c| Ranked {
                id: c.id,
                score: c.score,
                coverage: 1.0,
            })
            .collect();
        let sparse: Vec<Ranked> = self
            .sparse
            .iter()
            .map(|(c, coverage)| Ranked {
                id: c.id,
                score: c.score,
                coverage: *coverage,
            })
            .collect();
        let by_id: HashMap<uuid::Uuid, &ScoredChunk> = self
            .dense
            .iter()
            .chain(self.sparse.iter().map(|(c, _)| c))
            .map(|c| (c.id, c))
            .collect();
        let score_of = |side: &[Ranked], id| side.iter().find(|r| r.id == id).map(|r| r.score);
        crate::fusion::fuse(&dense, &sparse, fusion)
            .into_iter()
            .take(limit)
            .filter_map(|(id, fused)| {
                Some(Fused {
                    chunk: by_id.get(&id)?,
                    fused,
                    dense: score_of(&dense, id),
                    sparse: score_of(&sparse, id),
                })
            })
            .collect()
    }
}

/// A candidate after fusion.
#[derive(Debug, Clone)]
pub struct Fused<'a> {
    pub chunk: &'a ScoredChunk,
    pub fused: f32,
    pub dense: Option<f32>,
    pub sparse: Option<f32>,
}

/// What was embedded for a stored chunk.
fn payload_text(p: &ChunkPayload) -> String {
    embedded_text(&p.path, p.symbol.as_deref(), &p.text)
}

/// Hits as a model reads them: location, symbol and the first lines of
/// each chunk, bounded so a search cannot flood the context.
pub fn format_hits(hits: &[Hit], max_lines: usize) -> String {
    if hits.is_empty() {
        return "no results".into();
    }
    let mut out = String::new();
    for h in hits {
        out.push_str(&format!(
            "{}:{}-{}{}\n",
            h.path,
            h.start_line,
            h.end_line,
            h.symbol.as_deref().map(|s| format!(" ({s})")).unwrap_or_default()
        ));
        for (i, line) in h.text.lines().take(max_lines).enumerate() {
            out.push_str(&format!("{:>5} {line}\n", h.start_line as usize + i));
        }
        let n = h.text.lines().count();
        if n > max_lines {
            out.push_str(&format!("      … {} more lines\n", n - max_lines));
        }
    }
    out
}

/// The files of a commit as the index wants them: each code file with the
/// graph's language and top-level symbols, docs as they are. Files the
/// graph does not parse and that are not docs are left out.
pub fn source_files(graph: &quorum_graph::Graph, tree: Vec<(String, String)>) -> Vec<SourceFile> {
    tree.into_iter()
        .filter_map(|(path, text)| {
            let facts = graph.file(&path);
            if facts.is_none() && !is_doc(&path) {
                return None;
            }
            let symbols = facts
                .map(|f| {
                    f.symbols
                        .iter()
                        .filter(|s| s.parent.is_none())
                        .map(|s| SymbolSpan {
                            name: s.name.clone(),
                            start_line: s.start_line,
                            end_line: s.end_line,
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(SourceFile {
                language: facts.map(|f| f.lang.as_str().to_string()),
                path,
                text,
                symbols,
            })
        })
        .collect()
}
