//! The team's past review threads (review memory, F-MEM-2) as the
//! `reviews` collection beside code and docs, in the same engines: one
//! point per thread, dense + BM25 over its path and words, the thread kept
//! whole in the payload with flat fields to filter on (reviewer,
//! association, PR, merged, resolved, 👍/👎, created_at).
//!
//! Review memory stays the source of truth (its state holds every thread);
//! this collection is a ranking of it, brought up to date from that state:
//! a thread whose text or reactions changed is re-embedded, one memory no
//! longer holds is removed, an unchanged one costs nothing.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::SearchError;
use crate::chunk::Kind;
use crate::index::{HybridIndex, SearchOptions, embedded_text, sha256};
use crate::store::{ChunkPayload, ChunkPoint, ReviewFields, chunk_id};

/// Threads embedded per call.
const EMBED_BATCH: usize = 32;

/// One thread to index.
#[derive(Debug, Clone)]
pub struct ReviewDoc {
    /// The file the thread sat on.
    pub path: String,
    /// What is embedded and matched: who said what, oldest first.
    pub text: String,
    pub fields: ReviewFields,
}

impl From<&quorum_memory::PastThread> for ReviewDoc {
    fn from(t: &quorum_memory::PastThread) -> Self {
        ReviewDoc {
            path: t.path.clone(),
            text: t.text.clone(),
            fields: ReviewFields {
                thread_id: t.id,
                pr: t.pr,
                reviewer: t.reviewer.to_lowercase(),
                association: t.association.as_str().to_string(),
                merged: t.merged,
                resolved: t.resolved,
                plus_one: t.plus_one,
                minus_one: t.minus_one,
                created_at: t.created_at.clone(),
                thread: serde_json::to_value(t).expect("a past thread serialises"),
            },
        }
    }
}

/// What bringing a repository's threads up to date did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReviewIndexStats {
    pub threads: usize,
    pub embedded: usize,
    pub unchanged: usize,
    pub removed: usize,
}

/// Whose threads may answer.
#[derive(Debug, Clone, Default)]
pub struct ReviewFilter {
    /// Threads started by this login (any case).
    pub reviewer: Option<String>,
    /// Threads started by people of these associations (`MEMBER`, …).
    pub associations: Vec<String>,
}

/// A past thread ranked for a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewHit {
    pub thread_id: u64,
    pub fused: f32,
    pub dense: Option<f32>,
    pub sparse: Option<f32>,
    /// The thread as review memory stored it.
    pub thread: serde_json::Value,
}

/// A thread's point id: one per (repository, thread), so a changed thread
/// replaces its point.
fn review_id(repo: &str, thread_id: u64) -> uuid::Uuid {
    chunk_id(repo, Kind::Reviews, &format!("thread:{thread_id}"), 0, "")
}

fn state_key(repo: &str) -> String {
    format!("reviews:{repo}")
}

impl ReviewDoc {
    /// Changes whenever anything stored for the thread does.
    fn hash(&self) -> String {
        let fields = serde_json::to_string(&self.fields).expect("review fields serialise");
        sha256(&format!("{}\0{}\0{fields}", self.path, self.text))
    }
}

impl HybridIndex {
    /// Brings `repo`'s `reviews` collection to exactly `docs`.
    pub async fn index_reviews(
        &self,
        repo: &str,
        docs: &[ReviewDoc],
        progress: crate::index::Progress<'_>,
    ) -> Result<ReviewIndexStats, SearchError> {
        let mut seen = HashSet::new();
        if let Some(d) = docs.iter().find(|d| !seen.insert(d.fields.thread_id)) {
            return Err(SearchError::Invalid(format!(
                "thread {} is given twice",
                d.fields.thread_id
            )));
        }
        let existing = self
            .store
            .field_pairs(Kind::Reviews, repo, "thread_id", "file_hash")
            .await?;
        let mut stats = ReviewIndexStats {
            threads: docs.len(),
            ..Default::default()
        };
        let mut todo = vec![];
        for d in docs {
            let hash = d.hash();
            if existing.get(&d.fields.thread_id.to_string()) == Some(&hash) {
                stats.unchanged += 1;
            } else {
                todo.push((d, hash));
            }
        }
        let gone: Vec<uuid::Uuid> = existing
            .keys()
            .filter(|k| !seen.contains(&k.parse::<u64>().unwrap_or(u64::MAX)))
            .map(|k| review_id(repo, k.parse().unwrap_or(u64::MAX)))
            .collect();
        stats.removed = gone.len();
        self.store.delete_ids(Kind::Reviews, &gone).await?;
        progress(0, todo.len());
        for (i, batch) in todo.chunks(EMBED_BATCH).enumerate() {
            let texts: Vec<String> = batch
                .iter()
                .map(|(d, _)| embedded_text(&d.path, None, &d.text))
                .collect();
            let dense = self.embedder.embed(&texts).await?;
            if dense.len() != batch.len() {
                return Err(SearchError::Embed(format!(
                    "{} vectors for {} threads",
                    dense.len(),
                    batch.len()
                )));
            }
            let points = batch
                .iter()
                .zip(&texts)
                .zip(dense)
                .map(|(((d, hash), text), dense)| ChunkPoint {
                    id: review_id(repo, d.fields.thread_id),
                    dense,
                    sparse: self.bm25.document(text),
                    payload: ChunkPayload {
                        repo: repo.to_string(),
                        commit: String::new(),
                        path: d.path.clone(),
                        start_line: 0,
                        end_line: 0,
                        symbol: None,
                        language: quorum_core::Lang::detect(&d.path).map(|l| l.as_str().to_string()),
                        kind: Kind::Reviews,
                        file_hash: hash.clone(),
                        text: d.text.clone(),
                        review: Some(d.fields.clone()),
                    },
                })
                .collect();
            self.store.upsert(Kind::Reviews, points).await?;
            stats.embedded += batch.len();
            progress((i * EMBED_BATCH + batch.len()).min(todo.len()), todo.len());
        }
        self.store.put_state(&state_key(repo), &docs.len().to_string()).await?;
        Ok(stats)
    }

    /// How many of `repo`'s threads the collection holds (`0`: never indexed).
    pub async fn review_count(&self, repo: &str) -> Result<usize, SearchError> {
        Ok(self
            .store
            .get_state(&state_key(repo))
            .await?
            .and_then(|s| s.parse().ok())
            .unwrap_or(0))
    }

    /// `repo`'s past threads ranked for `query` (hybrid, the same fusion as
    /// code search), only those `filter` lets answer.
    pub async fn search_reviews(
        &self,
        repo: &str,
        query: &str,
        filter: &ReviewFilter,
        limit: usize,
    ) -> Result<Vec<ReviewHit>, SearchError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(SearchError::Invalid("the query is empty".into()));
        }
        if limit == 0 || limit > 200 {
            return Err(SearchError::Invalid(format!("limit must be 1..=200, got {limit}")));
        }
        let mut opts = SearchOptions::new(Kind::Reviews, limit);
        if let Some(r) = &filter.reviewer {
            opts.any_of.push(("reviewer", vec![r.to_lowercase()]));
        }
        if !filter.associations.is_empty() {
            opts.any_of.push(("association", filter.associations.clone()));
        }
        let dense = self.embed_query(query).await?;
        let c = self.candidates(repo, query, dense, None, &opts).await?;
        Ok(c.fused(crate::fusion::for_query(query), limit)
            .into_iter()
            .filter_map(|f| {
                let r = f.chunk.payload.review.as_ref()?;
                Some(ReviewHit {
                    thread_id: r.thread_id,
                    fused: f.fused,
                    dense: f.dense,
                    sparse: f.sparse,
                    thread: r.thread.clone(),
                })
            })
            .collect())
    }
}

/// Relevance per thread id, for review memory's re-ranking.
pub fn relevance(hits: &[ReviewHit]) -> HashMap<u64, f64> {
    hits.iter().map(|h| (h.thread_id, h.fused as f64)).collect()
}

/// The filter that lets only `asker`'s threads answer (a panel is chosen
/// among everyone's, by review memory).
pub fn filter_for(asker: &quorum_memory::Asker) -> ReviewFilter {
    match asker {
        quorum_memory::Asker::Person(login) => ReviewFilter {
            reviewer: Some(login.clone()),
            ..Default::default()
        },
        quorum_memory::Asker::Group(groups) => ReviewFilter {
            associations: groups.iter().map(|g| g.as_str().to_string()).collect(),
            ..Default::default()
        },
        quorum_memory::Asker::Panel(_) | quorum_memory::Asker::Anyone => ReviewFilter::default(),
    }
}

/// Past threads answering `query` about `path` as `asker` would: the
/// hybrid ranking of the `reviews` collection, boosted by place and
/// re-ranked by reactions in review memory ([`quorum_memory::search_with`]).
/// `None` when the collection holds none of `repo`'s threads yet (the
/// caller falls back to memory's lexical ranking).
pub async fn ask(
    index: &HybridIndex,
    repo: &str,
    threads: &[quorum_memory::PastThread],
    asker: &quorum_memory::Asker,
    query: &str,
    path: Option<&str>,
    limit: usize,
) -> Result<Option<Vec<quorum_memory::SearchHit>>, SearchError> {
    if index.review_count(repo).await? == 0 {
        return Ok(None);
    }
    // Enough candidates for place and reactions to re-order, and for a
    // panel to find each member's best.
    let pool = (limit * 8).clamp(40, 200);
    let hits = index.search_reviews(repo, query, &filter_for(asker), pool).await?;
    Ok(Some(quorum_memory::search_with(
        threads,
        asker,
        &relevance(&hits),
        path,
        limit,
    )))
}
