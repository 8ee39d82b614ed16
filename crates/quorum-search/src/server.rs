//! A Qdrant server through `qdrant-client` (gRPC), when `QDRANT_URL` is
//! set: the engine compose and k8s run, shared by every process of the
//! fleet. Collections `<prefix>_code` and `<prefix>_docs` hold the chunks;
//! `<prefix>_state` holds the small named values (each kind's embedding
//! model, the commit each repository was indexed at) as points with a
//! one-dimensional placeholder vector.

use std::collections::HashMap;

use async_trait::async_trait;
use qdrant_client::Qdrant;
use qdrant_client::qdrant::{
    Condition, CreateCollectionBuilder, CreateFieldIndexCollectionBuilder, DeletePointsBuilder, Distance, FieldType,
    Filter, GetPointsBuilder, Modifier, NamedVectors, PointStruct, Query, QueryPointsBuilder, ScrollPointsBuilder,
    SparseVectorParamsBuilder, SparseVectorsConfigBuilder, UpsertPointsBuilder, VectorInput, VectorParamsBuilder,
    VectorsConfigBuilder,
};

use crate::SearchError;
use crate::chunk::Kind;
use crate::store::{
    ChunkPayload, ChunkPoint, DENSE, HybridQuery, INDEXED_FIELDS, IndexMeta, Ranking, SPARSE, ScoredChunk, VectorStore,
    collection, value_text,
};

pub struct ServerStore {
    client: Qdrant,
    prefix: String,
}

fn err(what: &str) -> impl Fn(qdrant_client::QdrantError) -> SearchError + '_ {
    move |e| SearchError::Store(format!("Qdrant server: {what}: {e}"))
}

fn state_id(key: &str) -> String {
    crate::store::chunk_id("", Kind::Docs, key, 0, "state").to_string()
}

fn payload_json(p: HashMap<String, qdrant_client::qdrant::Value>) -> serde_json::Value {
    serde_json::Value::Object(p.into_iter().map(|(k, v)| (k, v.into_json())).collect())
}

fn chunk_payload(p: HashMap<String, qdrant_client::qdrant::Value>) -> Result<ChunkPayload, SearchError> {
    serde_json::from_value(payload_json(p))
        .map_err(|e| SearchError::Store(format!("Qdrant server: a point's payload is not a chunk: {e}")))
}

fn query_filter(q: &HybridQuery) -> Filter {
    let mut must = vec![Condition::matches("repo", q.repo.clone())];
    if let Some(paths) = &q.paths {
        must.push(Condition::matches("path", paths.clone()));
    }
    if let Some(lang) = &q.language {
        must.push(Condition::matches("language", lang.clone()));
    }
    for (key, values) in &q.any_of {
        must.push(Condition::matches(*key, values.clone()));
    }
    Filter::must(must)
}

impl ServerStore {
    /// Connects to `url` (gRPC, usually port 6334).
    pub fn connect(url: &str, api_key: Option<String>, prefix: &str) -> Result<Self, SearchError> {
        let client = Qdrant::from_url(url)
            .api_key(api_key)
            .build()
            .map_err(err("connecting"))?;
        Ok(ServerStore {
            client,
            prefix: prefix.to_string(),
        })
    }

    fn state_collection(&self) -> String {
        format!("{}_state", self.prefix)
    }

    async fn ensure_state_collection(&self) -> Result<(), SearchError> {
        let name = self.state_collection();
        if !self
            .client
            .collection_exists(&name)
            .await
            .map_err(err("listing collections"))?
        {
            self.client
                .create_collection(
                    CreateCollectionBuilder::new(&name).vectors_config(VectorParamsBuilder::new(1, Distance::Dot)),
                )
                .await
                .map_err(err("creating the state collection"))?;
        }
        Ok(())
    }
}

#[async_trait]
impl VectorStore for ServerStore {
    fn engine(&self) -> &'static str {
        "server"
    }

    async fn open(&self, kind: Kind, meta: &IndexMeta) -> Result<bool, SearchError> {
        self.ensure_state_collection().await?;
        let name = collection(&self.prefix, kind);
        let meta_key = format!("meta:{}", kind.as_str());
        let stored: Option<IndexMeta> = self
            .get_state(&meta_key)
            .await?
            .and_then(|s| serde_json::from_str(&s).ok());
        let exists = self
            .client
            .collection_exists(&name)
            .await
            .map_err(err("listing collections"))?;
        let mut rebuilt = false;
        if exists && stored.as_ref() != Some(meta) {
            tracing::warn!(collection = %name, ?stored, new = ?meta, "embedding model changed: rebuilding the index");
            self.client
                .delete_collection(&name)
                .await
                .map_err(err("dropping a collection"))?;
            rebuilt = true;
        }
        if !exists || rebuilt {
            let mut vectors = VectorsConfigBuilder::default();
            vectors.add_named_vector_params(DENSE, VectorParamsBuilder::new(meta.dim as u64, Distance::Cosine));
            let mut sparse = SparseVectorsConfigBuilder::default();
            sparse.add_named_vector_params(SPARSE, SparseVectorParamsBuilder::default().modifier(Modifier::Idf));
            self.client
                .create_collection(
                    CreateCollectionBuilder::new(&name)
                        .vectors_config(vectors)
                        .sparse_vectors_config(sparse),
                )
                .await
                .map_err(err("creating a collection"))?;
            for f in INDEXED_FIELDS {
                self.client
                    .create_field_index(CreateFieldIndexCollectionBuilder::new(&name, f, FieldType::Keyword).wait(true))
                    .await
                    .map_err(err("creating a payload index"))?;
            }
            self.put_state(&meta_key, &serde_json::to_string(meta).expect("meta serialises"))
                .await?;
            if rebuilt {
                // Commits recorded for the old vectors no longer hold.
                self.client
                    .delete_points(
                        DeletePointsBuilder::new(self.state_collection())
                            .points(Filter::must([Condition::matches("kind", kind.as_str().to_string())]))
                            .wait(true),
                    )
                    .await
                    .map_err(err("clearing state"))?;
            }
        }
        Ok(rebuilt)
    }

    async fn upsert(&self, kind: Kind, points: Vec<ChunkPoint>) -> Result<(), SearchError> {
        if points.is_empty() {
            return Ok(());
        }
        let points: Vec<PointStruct> = points
            .into_iter()
            .map(|p| {
                let payload: qdrant_client::Payload = serde_json::to_value(&p.payload)
                    .expect("payload serialises")
                    .try_into()
                    .expect("a chunk payload is a JSON object");
                let vectors = NamedVectors::default()
                    .add_vector(DENSE, qdrant_client::qdrant::Vector::new_dense(p.dense))
                    .add_vector(
                        SPARSE,
                        qdrant_client::qdrant::Vector::new_sparse(p.sparse.indices, p.sparse.values),
                    );
                PointStruct::new(p.id.to_string(), vectors, payload)
            })
            .collect();
        self.client
            .upsert_points(UpsertPointsBuilder::new(collection(&self.prefix, kind), points).wait(true))
            .await
            .map_err(err("upserting chunks"))?;
        Ok(())
    }

    async fn delete_files(&self, kind: Kind, repo: &str, paths: &[String]) -> Result<(), SearchError> {
        if paths.is_empty() {
            return Ok(());
        }
        let filter = Filter::must([
            Condition::matches("repo", repo.to_string()),
            Condition::matches("path", paths.to_vec()),
        ]);
        self.client
            .delete_points(
                DeletePointsBuilder::new(collection(&self.prefix, kind))
                    .points(filter)
                    .wait(true),
            )
            .await
            .map_err(err("deleting chunks"))?;
        Ok(())
    }

    async fn field_pairs(
        &self,
        kind: Kind,
        repo: &str,
        key: &str,
        value: &str,
    ) -> Result<HashMap<String, String>, SearchError> {
        let mut out = HashMap::new();
        let mut offset = None;
        loop {
            let mut req = ScrollPointsBuilder::new(collection(&self.prefix, kind))
                .filter(Filter::must([Condition::matches("repo", repo.to_string())]))
                .limit(1_000)
                .with_payload(qdrant_client::qdrant::PayloadIncludeSelector::new(vec![
                    key.to_string(),
                    value.to_string(),
                ]))
                .with_vectors(false);
            if let Some(o) = offset.take() {
                req = req.offset(o);
            }
            let resp = self.client.scroll(req).await.map_err(err("listing points"))?;
            for p in resp.result {
                let j = payload_json(p.payload);
                if let (Some(k), Some(v)) = (value_text(&j[key]), value_text(&j[value])) {
                    out.insert(k, v);
                }
            }
            match resp.next_page_offset {
                Some(n) => offset = Some(n),
                None => return Ok(out),
            }
        }
    }

    async fn delete_ids(&self, kind: Kind, ids: &[uuid::Uuid]) -> Result<(), SearchError> {
        if ids.is_empty() {
            return Ok(());
        }
        let ids: Vec<qdrant_client::qdrant::PointId> = ids.iter().map(|u| u.to_string().into()).collect();
        self.client
            .delete_points(
                DeletePointsBuilder::new(collection(&self.prefix, kind))
                    .points(qdrant_client::qdrant::PointsIdsList { ids })
                    .wait(true),
            )
            .await
            .map_err(err("deleting points"))?;
        Ok(())
    }

    async fn query(&self, kind: Kind, q: &HybridQuery) -> Result<Vec<ScoredChunk>, SearchError> {
        let filter = query_filter(q);
        let dense = || Query::new_nearest(VectorInput::new_dense(q.dense.clone()));
        let sparse = || {
            Query::new_nearest(VectorInput::new_sparse(
                q.sparse.indices.clone(),
                q.sparse.values.clone(),
            ))
        };
        let base = QueryPointsBuilder::new(collection(&self.prefix, kind))
            .filter(filter.clone())
            .limit(q.limit as u64)
            .with_payload(true);
        let req = match q.ranking {
            Ranking::Dense => base.query(dense()).using(DENSE),
            Ranking::Sparse => base.query(sparse()).using(SPARSE),
        };
        let resp = self.client.query(req).await.map_err(err("querying"))?;
        resp.result
            .into_iter()
            .map(|p| {
                let id = match p.id.and_then(|i| i.point_id_options) {
                    Some(qdrant_client::qdrant::point_id::PointIdOptions::Uuid(u)) => {
                        uuid::Uuid::parse_str(&u).unwrap_or_default()
                    }
                    Some(qdrant_client::qdrant::point_id::PointIdOptions::Num(n)) => uuid::Uuid::from_u128(n as u128),
                    None => uuid::Uuid::nil(),
                };
                Ok(ScoredChunk {
                    id,
                    score: p.score,
                    payload: chunk_payload(p.payload)?,
                })
            })
            .collect()
    }

    async fn get_state(&self, key: &str) -> Result<Option<String>, SearchError> {
        self.ensure_state_collection().await?;
        let resp = self
            .client
            .get_points(GetPointsBuilder::new(self.state_collection(), vec![state_id(key).into()]).with_payload(true))
            .await
            .map_err(err("reading state"))?;
        Ok(resp
            .result
            .into_iter()
            .next()
            .and_then(|p| payload_json(p.payload)["value"].as_str().map(str::to_string)))
    }

    async fn put_state(&self, key: &str, value: &str) -> Result<(), SearchError> {
        self.ensure_state_collection().await?;
        let kind = key.split(':').next().unwrap_or("");
        let payload: qdrant_client::Payload = serde_json::json!({"key": key, "value": value, "kind": kind})
            .try_into()
            .expect("an object");
        self.client
            .upsert_points(
                UpsertPointsBuilder::new(
                    self.state_collection(),
                    vec![PointStruct::new(state_id(key), vec![1.0f32], payload)],
                )
                .wait(true),
            )
            .await
            .map_err(err("writing state"))?;
        Ok(())
    }

    async fn optimize(&self) -> Result<(), SearchError> {
        // A server optimises in the background.
        Ok(())
    }
}
