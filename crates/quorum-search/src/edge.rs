//! The embedded engine: Qdrant's own in-process shard (`qdrant-edge`), one
//! per kind under a directory, persisted there and reopened on restart.
//! Same semantics as a server: named dense + sparse vectors, IDF on the
//! sparse one, payload indexes, prefetch + RRF.
//!
//! One process owns the directory; other processes of a multi-process
//! fleet reach the index only through a Qdrant server (`QDRANT_URL`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use qdrant_edge::external::serde_json::{self, Value};
use qdrant_edge::{
    Condition, Distance, EdgeConfigBuilder, EdgeShard, EdgeSparseVectorParamsBuilder, EdgeVectorParamsBuilder,
    FieldCondition, Filter, Match, Modifier, NamedQuery, PayloadFieldSchema, PayloadSchemaType, PointId,
    PointInsertOperations, PointOperations, PointStruct, QueryEnum, QueryRequest, ScoringQuery, ScrollRequest,
    SparseVector, UpdateOperation, ValueVariants, VectorInternal, Vectors, WithPayloadInterface, WithVector,
};

use crate::SearchError;
use crate::chunk::Kind;
use crate::store::{
    ChunkPayload, ChunkPoint, DENSE, HybridQuery, INDEXED_FIELDS, IndexMeta, Ranking, SPARSE, ScoredChunk, VectorStore,
    value_text,
};

pub struct EdgeStore {
    root: PathBuf,
    shards: RwLock<HashMap<Kind, Arc<EdgeShard>>>,
    state: std::sync::Mutex<()>,
}

fn engine_err(what: &str) -> impl Fn(qdrant_edge::OperationError) -> SearchError + '_ {
    move |e| SearchError::Store(format!("embedded Qdrant: {what}: {e}"))
}

fn io_err(what: String) -> impl Fn(std::io::Error) -> SearchError {
    move |e| SearchError::Store(format!("{what}: {e}"))
}

/// Runs blocking engine work off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, SearchError> + Send + 'static,
) -> Result<T, SearchError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SearchError::Store(format!("embedded Qdrant task: {e}")))?
}

pub(crate) fn field(name: &str) -> qdrant_edge::JsonPath {
    name.try_into().expect("payload field names are valid JSON paths")
}

fn eq(key: &str, value: &str) -> Condition {
    Condition::Field(FieldCondition::new_match(
        field(key),
        Match::new_value(ValueVariants::String(value.to_string())),
    ))
}

fn any_of(key: &str, values: &[String]) -> Condition {
    Condition::Field(FieldCondition::new_match(
        field(key),
        Match::new_any(qdrant_edge::AnyVariants::Strings(values.iter().cloned().collect())),
    ))
}

fn query_filter(q: &HybridQuery) -> Filter {
    let mut must = vec![eq("repo", &q.repo)];
    if let Some(paths) = &q.paths {
        must.push(any_of("path", paths));
    }
    if let Some(lang) = &q.language {
        must.push(eq("language", lang));
    }
    for (key, values) in &q.any_of {
        must.push(any_of(key, values));
    }
    Filter {
        must: Some(must),
        ..Default::default()
    }
}

fn sparse_vector(s: &crate::sparse::Sparse) -> SparseVector {
    SparseVector {
        indices: s.indices.clone(),
        values: s.values.clone(),
    }
}

fn nearest(v: VectorInternal, using: &str) -> ScoringQuery {
    ScoringQuery::Vector(QueryEnum::Nearest(NamedQuery {
        query: v,
        using: Some(using.to_string()),
    }))
}

fn payload_of(p: Option<qdrant_edge::Payload>) -> Result<ChunkPayload, SearchError> {
    let map = p.map(|p| p.0).unwrap_or_default();
    serde_json::from_value(Value::Object(map.into_iter().collect()))
        .map_err(|e| SearchError::Store(format!("embedded Qdrant: a point's payload is not a chunk: {e}")))
}

fn uuid_of(id: PointId) -> uuid::Uuid {
    match id {
        PointId::Uuid(u) => uuid::Uuid::from_bytes(*u.as_bytes()),
        PointId::NumId(n) => uuid::Uuid::from_u128(n as u128),
    }
}

impl EdgeStore {
    /// Opens (or creates) the index under `root`.
    pub fn new(root: &Path) -> Result<Self, SearchError> {
        std::fs::create_dir_all(root).map_err(io_err(format!("creating {}", root.display())))?;
        Ok(EdgeStore {
            root: root.to_path_buf(),
            shards: RwLock::new(HashMap::new()),
            state: std::sync::Mutex::new(()),
        })
    }

    fn shard(&self, kind: Kind) -> Result<Arc<EdgeShard>, SearchError> {
        self.shards
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&kind)
            .cloned()
            .ok_or_else(|| SearchError::Store(format!("the {} collection is not open", kind.as_str())))
    }

    fn meta_path(&self, kind: Kind) -> PathBuf {
        self.root.join(format!("{}.meta.json", kind.as_str()))
    }

    fn state_path(&self) -> PathBuf {
        self.root.join("state.json")
    }

    fn read_state(&self) -> Result<HashMap<String, String>, SearchError> {
        match std::fs::read(self.state_path()) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| SearchError::Store(format!("{} is not valid: {e}", self.state_path().display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashMap::new()),
            Err(e) => Err(io_err(format!("reading {}", self.state_path().display()))(e)),
        }
    }

    /// Writes a file so a crash leaves the old or the new one, never half.
    fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SearchError> {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, bytes).map_err(io_err(format!("writing {}", tmp.display())))?;
        std::fs::rename(&tmp, path).map_err(io_err(format!("renaming {}", tmp.display())))
    }

    fn open_blocking(
        root: PathBuf,
        meta_path: PathBuf,
        kind: Kind,
        meta: IndexMeta,
    ) -> Result<(EdgeShard, bool), SearchError> {
        let dir = root.join(kind.as_str());
        let stored: Option<IndexMeta> = std::fs::read(&meta_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let mut rebuilt = false;
        if dir.exists() && stored.as_ref() != Some(&meta) {
            tracing::warn!(kind = kind.as_str(), ?stored, new = ?meta, "embedding model changed: rebuilding the index");
            std::fs::remove_dir_all(&dir).map_err(io_err(format!("removing {}", dir.display())))?;
            rebuilt = true;
        }
        let fresh = !dir.exists();
        std::fs::create_dir_all(&dir).map_err(io_err(format!("creating {}", dir.display())))?;
        let config = EdgeConfigBuilder::new()
            .vector(DENSE, EdgeVectorParamsBuilder::new(meta.dim, Distance::Cosine).build())
            .sparse_vector(
                SPARSE,
                EdgeSparseVectorParamsBuilder::new().modifier(Modifier::Idf).build(),
            )
            .build();
        let shard = EdgeShard::load(&dir, Some(config)).map_err(engine_err("opening the shard"))?;
        if fresh {
            for f in INDEXED_FIELDS {
                shard
                    .update(UpdateOperation::FieldIndexOperation(
                        qdrant_edge::FieldIndexOperations::CreateIndex(qdrant_edge::CreateIndex {
                            field_name: field(f),
                            field_schema: Some(PayloadFieldSchema::FieldType(PayloadSchemaType::Keyword)),
                        }),
                    ))
                    .map_err(engine_err("creating a payload index"))?;
            }
            Self::write_atomic(&meta_path, &serde_json::to_vec(&meta).expect("meta serialises"))?;
        }
        Ok((shard, rebuilt))
    }
}

#[async_trait]
impl VectorStore for EdgeStore {
    fn engine(&self) -> &'static str {
        "embedded"
    }

    async fn open(&self, kind: Kind, meta: &IndexMeta) -> Result<bool, SearchError> {
        // Close a shard of this kind before its directory may be removed.
        self.shards.write().unwrap_or_else(|p| p.into_inner()).remove(&kind);
        let (root, meta_path, meta2) = (self.root.clone(), self.meta_path(kind), meta.clone());
        let (shard, rebuilt) = blocking(move || Self::open_blocking(root, meta_path, kind, meta2)).await?;
        self.shards
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kind, Arc::new(shard));
        if rebuilt {
            // Commits recorded for the old vectors no longer hold.
            let _g = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let mut state = self.read_state()?;
            state.retain(|k, _| !k.starts_with(&format!("{}:", kind.as_str())));
            Self::write_atomic(
                &self.state_path(),
                &serde_json::to_vec(&state).expect("state serialises"),
            )?;
        }
        Ok(rebuilt)
    }

    async fn upsert(&self, kind: Kind, points: Vec<ChunkPoint>) -> Result<(), SearchError> {
        if points.is_empty() {
            return Ok(());
        }
        let shard = self.shard(kind)?;
        blocking(move || {
            let points = points
                .into_iter()
                .map(|p| {
                    let payload = serde_json::to_value(&p.payload).expect("payload serialises");
                    let id = qdrant_edge::external::uuid::Uuid::from_bytes(*p.id.as_bytes());
                    PointStruct::new(
                        PointId::Uuid(id),
                        Vectors::new_named([
                            (DENSE, qdrant_edge::Vector::from(p.dense)),
                            (SPARSE, qdrant_edge::Vector::from(sparse_vector(&p.sparse))),
                        ]),
                        payload,
                    )
                    .into()
                })
                .collect();
            shard
                .update(UpdateOperation::PointOperation(PointOperations::UpsertPoints(
                    PointInsertOperations::PointsList(points),
                )))
                .map_err(engine_err("upserting chunks"))
        })
        .await
    }

    async fn delete_files(&self, kind: Kind, repo: &str, paths: &[String]) -> Result<(), SearchError> {
        if paths.is_empty() {
            return Ok(());
        }
        let shard = self.shard(kind)?;
        let filter = Filter {
            must: Some(vec![eq("repo", repo), any_of("path", paths)]),
            ..Default::default()
        };
        blocking(move || {
            shard
                .update(UpdateOperation::PointOperation(PointOperations::DeletePointsByFilter(
                    filter,
                )))
                .map_err(engine_err("deleting chunks"))
        })
        .await
    }

    async fn field_pairs(
        &self,
        kind: Kind,
        repo: &str,
        key: &str,
        value: &str,
    ) -> Result<HashMap<String, String>, SearchError> {
        let shard = self.shard(kind)?;
        let (repo, key, value) = (repo.to_string(), key.to_string(), value.to_string());
        blocking(move || {
            let mut out = HashMap::new();
            let mut offset = None;
            loop {
                let req = ScrollRequest {
                    offset,
                    limit: Some(1_000),
                    filter: Some(Filter::new_must(eq("repo", &repo))),
                    with_payload: Some(WithPayloadInterface::Fields(vec![field(&key), field(&value)])),
                    with_vector: WithVector::Bool(false),
                    order_by: None,
                };
                let (records, next) = shard.scroll(req).map_err(engine_err("listing points"))?;
                for r in records {
                    let p = r.payload.map(|p| p.0).unwrap_or_default();
                    if let (Some(k), Some(v)) = (p.get(&key).and_then(value_text), p.get(&value).and_then(value_text)) {
                        out.insert(k, v);
                    }
                }
                match next {
                    Some(n) => offset = Some(n),
                    None => return Ok(out),
                }
            }
        })
        .await
    }

    async fn delete_ids(&self, kind: Kind, ids: &[uuid::Uuid]) -> Result<(), SearchError> {
        if ids.is_empty() {
            return Ok(());
        }
        let shard = self.shard(kind)?;
        let ids: Vec<PointId> = ids
            .iter()
            .map(|u| PointId::Uuid(qdrant_edge::external::uuid::Uuid::from_bytes(*u.as_bytes())))
            .collect();
        blocking(move || {
            shard
                .update(UpdateOperation::PointOperation(PointOperations::DeletePoints { ids }))
                .map_err(engine_err("deleting points"))
        })
        .await
    }

    async fn query(&self, kind: Kind, q: &HybridQuery) -> Result<Vec<ScoredChunk>, SearchError> {
        let shard = self.shard(kind)?;
        let filter = query_filter(q);
        let dense = nearest(VectorInternal::from(q.dense.clone()), DENSE);
        let sparse = nearest(VectorInternal::from(sparse_vector(&q.sparse)), SPARSE);
        let query = match q.ranking {
            Ranking::Dense => dense,
            Ranking::Sparse => sparse,
        };
        let req = QueryRequest {
            prefetches: vec![],
            query: Some(query),
            filter: Some(filter.clone()),
            score_threshold: None,
            limit: q.limit,
            offset: 0,
            params: None,
            with_vector: WithVector::Bool(false),
            with_payload: WithPayloadInterface::Bool(true),
        };
        blocking(move || {
            let points = shard.query(req).map_err(engine_err("querying"))?;
            points
                .into_iter()
                .map(|p| {
                    Ok(ScoredChunk {
                        id: uuid_of(p.id),
                        score: p.score,
                        payload: payload_of(p.payload)?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn get_state(&self, key: &str) -> Result<Option<String>, SearchError> {
        let _g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        Ok(self.read_state()?.get(key).cloned())
    }

    async fn put_state(&self, key: &str, value: &str) -> Result<(), SearchError> {
        // The shards' own data must be on disk before the state says so.
        for shard in self.shards.read().unwrap_or_else(|p| p.into_inner()).values() {
            shard.flush().map_err(engine_err("flushing"))?;
        }
        let _g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut state = self.read_state()?;
        state.insert(key.to_string(), value.to_string());
        Self::write_atomic(
            &self.state_path(),
            &serde_json::to_vec(&state).expect("state serialises"),
        )
    }

    async fn optimize(&self) -> Result<(), SearchError> {
        let shards: Vec<_> = self
            .shards
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        blocking(move || {
            for s in shards {
                s.optimize().map_err(engine_err("optimizing"))?;
            }
            Ok(())
        })
        .await
    }
}
