//! One job's context, by mode. Never fails the job: what cannot be had
//! (no repository access, no graph, an invalid `.quorum.yml`) becomes a note
//! and the review goes on with less.

use std::sync::Arc;

use quorum_core::{ContextMode, FileStatus, ReviewRequest};
use quorum_engine::conventions::{self, CONFIG_PATH, Conventions};
use quorum_engine::{ContextNeeds, ReviewContext};
use quorum_graph::{ImpactOptions, impact, overlay};

use crate::GraphIndex;

#[derive(Clone)]
pub struct ContextBuilder {
    index: Arc<GraphIndex>,
    memory_policy: quorum_memory::Policy,
    past_ranker: Option<Arc<dyn crate::memory::PastRanker>>,
}

impl ContextBuilder {
    pub fn new(index: Arc<GraphIndex>) -> Self {
        ContextBuilder {
            index,
            memory_policy: quorum_memory::Policy::default(),
            past_ranker: None,
        }
    }

    /// Picks a prompt's past review threads by meaning (the `reviews`
    /// collection) rather than by words.
    pub fn with_past_ranker(mut self, ranker: Arc<dyn crate::memory::PastRanker>) -> Self {
        self.past_ranker = Some(ranker);
        self
    }

    /// The trust gates learned memory passes before it applies.
    pub fn with_memory_policy(mut self, policy: quorum_memory::Policy) -> Self {
        self.memory_policy = policy;
        self
    }

    pub fn memory_policy(&self) -> &quorum_memory::Policy {
        &self.memory_policy
    }

    pub fn index(&self) -> &Arc<GraphIndex> {
        &self.index
    }

    /// The context of `req` for its mode, limited to what the engine `needs`.
    /// The impact report needs the head files (the overlay), so asking for
    /// it reads them too.
    pub async fn for_request(&self, req: &ReviewRequest, needs: ContextNeeds) -> ReviewContext {
        let repo = req.repo.full_name.as_str();
        let trees = self.index.trees();
        let tree_started = std::time::Instant::now();
        let mut ctx = ReviewContext {
            mode: req.policy.context_mode,
            ..Default::default()
        };
        let impact_wanted = needs.impact && ctx.mode == ContextMode::GraphRag;
        // Review memory: its `avoid` items are conventions, its past
        // threads a model's reading; loaded once for both.
        let memory = if needs.conventions || needs.past_reviews {
            let m = crate::memory::load(
                self.index.store().as_ref(),
                Some(trees.as_ref()),
                req,
                &self.memory_policy,
            )
            .await;
            ctx.notes.extend(m.notes.iter().cloned());
            Some(m)
        } else {
            None
        };
        if let (true, Some(m)) = (needs.past_reviews, &memory) {
            ctx.past_reviews =
                crate::memory::past_reviews_for(&m.threads, req, self.past_ranker.as_deref(), &mut ctx.notes).await;
        }
        if needs.conventions {
            let mut all = Conventions::default();
            match trees.read_file(repo, &req.base_sha, CONFIG_PATH).await {
                Ok(Some(yaml)) => match conventions::parse(&yaml) {
                    Ok(c) => all.extend(c),
                    Err(e) => ctx.notes.push(format!("conventions not applied: {e}")),
                },
                Ok(None) => {}
                Err(e) => ctx.notes.push(format!("conventions not read: {e}")),
            }
            let specs = memory.as_ref().map(|m| m.set.conventions()).unwrap_or_default();
            if !specs.is_empty() {
                match conventions::compile(specs, "review memory") {
                    Ok(learned) => all.extend(learned),
                    Err(e) => ctx.notes.push(format!("memory conventions not applied: {e}")),
                }
            }
            ctx.conventions = Arc::new(all);
        }
        let mut changes = vec![];
        let files = if needs.head_files || impact_wanted {
            &req.files[..]
        } else {
            &[]
        };
        for f in files {
            if f.status == FileStatus::Removed {
                changes.push((f.path.clone(), None));
                continue;
            }
            match trees.read_file(repo, &req.head_sha, &f.path).await {
                Ok(Some(text)) => {
                    ctx.head_files.insert(f.path.clone(), text.clone());
                    changes.push((f.path.clone(), Some(text)));
                }
                Ok(None) => changes.push((f.path.clone(), None)),
                Err(e) => {
                    ctx.notes.push(format!("head of {} not read: {e}", f.path));
                }
            }
            if let Some(old) = &f.old_path
                && old != &f.path
            {
                changes.push((old.clone(), None));
            }
        }
        ctx.timings.push(("tree", tree_started.elapsed().as_secs_f64()));
        if impact_wanted {
            let graph_started = std::time::Instant::now();
            match self.index.ensure(repo, &req.base_sha, None).await {
                Ok((base, _)) => {
                    let diffs = req.diffs();
                    let report = tokio::task::spawn_blocking(move || {
                        let (head, _) = overlay(&base, &changes);
                        impact(&base, &head, &diffs, ImpactOptions::default())
                    })
                    .await;
                    // The context is best effort: a panic in the impact pass
                    // costs the report, said in a note, not the review.
                    match report {
                        Ok(report) => ctx.impact = Some(report),
                        Err(e) => ctx.notes.push(format!(
                            "no impact report for {repo}@{}: {}",
                            short(&req.head_sha),
                            crate::ContextError::from_join("the impact pass", e)
                        )),
                    }
                    ctx.timings.push(("graph", graph_started.elapsed().as_secs_f64()));
                }
                Err(e) => ctx
                    .notes
                    .push(format!("no code graph for {repo}@{}: {e}", short(&req.base_sha))),
            }
        }
        for n in &ctx.notes {
            tracing::warn!(job_id = %req.job_id, repo, note = %n, "context degraded");
        }
        ctx
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
