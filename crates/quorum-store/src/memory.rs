//! The in-memory store: the embedded default. One process only.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;
use quorum_core::{AgentRole, AgentStatus, RunState};
use quorum_events::AgentResult;

use crate::{Claim, JobRecord, Result, RunFilter, RunRecord, StateStore};

#[derive(Default)]
struct Inner {
    dedupe: HashMap<String, String>,
    jobs: HashMap<String, JobRecord>,
    order: Vec<(u64, String)>,
    runs: HashMap<String, RunRecord>,
    results: HashMap<String, BTreeMap<AgentRole, AgentResult>>,
    guards: HashSet<String>,
    /// Lease → (holder, lapses at).
    leases: HashMap<String, (String, std::time::Instant)>,
    deadlines: HashMap<String, u64>,
    reviews: HashMap<String, String>,
    drafts: HashMap<String, String>,
    fingerprints: HashMap<String, Vec<String>>,
    index_requests: HashMap<String, (String, u64)>,
    graphs: HashMap<(String, String), Vec<u8>>,
    branch_graphs: HashMap<(String, String), String>,
    memory: HashMap<String, String>,
    memory_matches: HashMap<String, BTreeMap<String, String>>,
}

impl Inner {
    /// Whether the run list's `filter` admits job `id` (a scan: the
    /// in-memory store holds one process's runs).
    fn admits(&self, filter: &RunFilter, id: &str) -> bool {
        match (self.jobs.get(id), self.runs.get(id)) {
            (Some(job), Some(run)) => filter.admits(&job.request.repo.full_name, run.state),
            _ => false,
        }
    }
}

/// A store in a mutex: each operation is atomic, like its Redis counterpart.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> Result<T> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        Ok(f(&mut g))
    }
}

#[async_trait]
impl StateStore for MemoryStore {
    async fn claim_dedupe(&self, key: &str, job_id: &str) -> Result<Claim> {
        self.with(|s| match s.dedupe.get(key) {
            Some(existing) => Claim::Existing(existing.clone()),
            None => {
                s.dedupe.insert(key.to_string(), job_id.to_string());
                Claim::Claimed
            }
        })
    }

    async fn release_dedupe(&self, key: &str) -> Result<()> {
        self.with(|s| {
            s.dedupe.remove(key);
        })
    }

    async fn put_job(&self, job: &JobRecord) -> Result<()> {
        self.with(|s| {
            let id = job.request.job_id.clone();
            if !s.jobs.contains_key(&id) {
                s.order.push((job.created_ms, id.clone()));
            }
            s.jobs.insert(id.clone(), job.clone());
            s.runs.entry(id.clone()).or_insert_with(|| RunRecord {
                job_id: id,
                state: RunState::Queued,
                agents: job
                    .request
                    .policy
                    .agents
                    .iter()
                    .map(|a| (*a, AgentStatus::Pending))
                    .collect(),
                reason: None,
                timeline: BTreeMap::from([(RunState::Queued.as_str().to_string(), job.created_ms)]),
            });
        })
    }

    async fn get_job(&self, job_id: &str) -> Result<Option<JobRecord>> {
        self.with(|s| s.jobs.get(job_id).cloned())
    }

    async fn list_jobs(&self, filter: &RunFilter, offset: usize, limit: usize) -> Result<Vec<String>> {
        self.with(|s| {
            let mut o: Vec<_> = s.order.iter().filter(|(_, id)| s.admits(filter, id)).cloned().collect();
            o.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
            o.into_iter().skip(offset).take(limit).map(|(_, id)| id).collect()
        })
    }

    async fn count_jobs(&self, filter: &RunFilter) -> Result<usize> {
        self.with(|s| s.order.iter().filter(|(_, id)| s.admits(filter, id)).count())
    }

    async fn set_run_state(&self, job_id: &str, state: RunState, reason: Option<&str>) -> Result<()> {
        self.with(|s| {
            let run = s.runs.entry(job_id.to_string()).or_insert_with(|| RunRecord {
                job_id: job_id.to_string(),
                state,
                agents: BTreeMap::new(),
                reason: None,
                timeline: BTreeMap::new(),
            });
            run.state = state;
            run.timeline
                .entry(state.as_str().to_string())
                .or_insert_with(crate::model::now_ms);
            if let Some(r) = reason {
                run.reason = Some(r.to_string());
            }
        })
    }

    async fn set_agent_status(&self, job_id: &str, agent: AgentRole, status: AgentStatus) -> Result<()> {
        self.with(|s| {
            let run = s.runs.entry(job_id.to_string()).or_insert_with(|| RunRecord {
                job_id: job_id.to_string(),
                state: RunState::Running,
                agents: BTreeMap::new(),
                reason: None,
                timeline: BTreeMap::new(),
            });
            run.agents.insert(agent, status);
        })
    }

    async fn get_run(&self, job_id: &str) -> Result<Option<RunRecord>> {
        self.with(|s| s.runs.get(job_id).cloned())
    }

    async fn put_result(&self, result: &AgentResult) -> Result<bool> {
        self.with(|s| {
            let m = s.results.entry(result.job_id.clone()).or_default();
            if m.contains_key(&result.agent) {
                return false;
            }
            m.insert(result.agent, result.clone());
            true
        })
    }

    async fn get_results(&self, job_id: &str) -> Result<BTreeMap<AgentRole, AgentResult>> {
        self.with(|s| s.results.get(job_id).cloned().unwrap_or_default())
    }

    async fn acquire_guard(&self, name: &str) -> Result<bool> {
        self.with(|s| s.guards.insert(name.to_string()))
    }

    async fn release_guard(&self, name: &str) -> Result<()> {
        self.with(|s| {
            s.guards.remove(name);
        })
    }

    async fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64) -> Result<bool> {
        let now = std::time::Instant::now();
        self.with(|s| match s.leases.get(name) {
            Some((who, until)) if *until > now && who != holder => false,
            _ => {
                let until = now + std::time::Duration::from_millis(ttl_ms);
                s.leases.insert(name.to_string(), (holder.to_string(), until));
                true
            }
        })
    }

    async fn release_lease(&self, name: &str, holder: &str) -> Result<()> {
        self.with(|s| {
            if s.leases.get(name).is_some_and(|(who, _)| who == holder) {
                s.leases.remove(name);
            }
        })
    }

    async fn mark_pending(&self, job_id: &str, at_ms: u64) -> Result<()> {
        self.with(|s| {
            s.deadlines.insert(job_id.to_string(), at_ms);
        })
    }

    async fn pending_before(&self, now_ms: u64) -> Result<Vec<String>> {
        self.with(|s| {
            let mut due: Vec<(u64, String)> = s
                .deadlines
                .iter()
                .filter(|(_, at)| **at <= now_ms)
                .map(|(id, at)| (*at, id.clone()))
                .collect();
            due.sort();
            due.into_iter().map(|(_, id)| id).collect()
        })
    }

    async fn clear_pending(&self, job_id: &str) -> Result<()> {
        self.with(|s| {
            s.deadlines.remove(job_id);
        })
    }

    async fn put_review(&self, job_id: &str, review: &str) -> Result<()> {
        self.with(|s| {
            s.reviews.insert(job_id.to_string(), review.to_string());
        })
    }

    async fn get_review(&self, job_id: &str) -> Result<Option<String>> {
        self.with(|s| s.reviews.get(job_id).cloned())
    }

    async fn put_draft(&self, job_id: &str, review: &str) -> Result<()> {
        self.with(|s| {
            s.drafts.insert(job_id.to_string(), review.to_string());
        })
    }

    async fn get_draft(&self, job_id: &str) -> Result<Option<String>> {
        self.with(|s| s.drafts.get(job_id).cloned())
    }

    async fn delete_draft(&self, job_id: &str) -> Result<()> {
        self.with(|s| {
            s.drafts.remove(job_id);
        })
    }

    async fn add_fingerprints(&self, pr_key: &str, fps: &[String]) -> Result<()> {
        self.with(|s| {
            let v = s.fingerprints.entry(pr_key.to_string()).or_default();
            for fp in fps {
                if !v.contains(fp) {
                    v.push(fp.clone());
                }
            }
        })
    }

    async fn fingerprints(&self, pr_key: &str) -> Result<Vec<String>> {
        self.with(|s| s.fingerprints.get(pr_key).cloned().unwrap_or_default())
    }

    async fn record_index_request(&self, repo: &str, git_ref: &str, at_ms: u64) -> Result<()> {
        self.with(|s| {
            s.index_requests.insert(repo.to_string(), (git_ref.to_string(), at_ms));
        })
    }

    async fn last_index_request(&self, repo: &str) -> Result<Option<(String, u64)>> {
        self.with(|s| s.index_requests.get(repo).cloned())
    }

    async fn indexed_repos(&self, limit: usize) -> Result<Vec<String>> {
        self.with(|s| {
            let mut repos: Vec<(u64, String)> = s.index_requests.iter().map(|(r, (_, at))| (*at, r.clone())).collect();
            // Most recent first; ties by name, as Redis orders equal scores.
            repos.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
            repos.into_iter().take(limit).map(|(_, r)| r).collect()
        })
    }

    async fn put_graph(&self, repo: &str, commit: &str, blob: &[u8]) -> Result<()> {
        self.with(|s| {
            s.graphs.insert((repo.into(), commit.into()), blob.to_vec());
        })
    }

    async fn get_graph(&self, repo: &str, commit: &str) -> Result<Option<Vec<u8>>> {
        self.with(|s| s.graphs.get(&(repo.to_string(), commit.to_string())).cloned())
    }

    async fn set_branch_graph(&self, repo: &str, branch: &str, commit: &str) -> Result<()> {
        self.with(|s| {
            s.branch_graphs.insert((repo.into(), branch.into()), commit.into());
        })
    }

    async fn branch_graph(&self, repo: &str, branch: &str) -> Result<Option<String>> {
        self.with(|s| s.branch_graphs.get(&(repo.to_string(), branch.to_string())).cloned())
    }

    async fn put_memory(&self, repo: &str, state_json: &str) -> Result<()> {
        self.with(|s| {
            s.memory.insert(repo.into(), state_json.into());
        })
    }

    async fn get_memory(&self, repo: &str) -> Result<Option<String>> {
        self.with(|s| s.memory.get(repo).cloned())
    }

    async fn touch_memory_item(&self, repo: &str, item_id: &str, at: &str) -> Result<()> {
        self.with(|s| {
            s.memory_matches
                .entry(repo.into())
                .or_default()
                .insert(item_id.into(), at.into());
        })
    }

    async fn memory_matches(&self, repo: &str) -> Result<BTreeMap<String, String>> {
        self.with(|s| s.memory_matches.get(repo).cloned().unwrap_or_default())
    }
}
