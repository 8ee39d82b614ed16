//! A state store that fails the operations a test chooses, the given
//! number of times, and otherwise passes every call to a real store: the
//! "Redis went away between these two calls" of a chaos run, made exact.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use quorum_core::{AgentRole, AgentStatus, RunState};
use quorum_events::AgentResult;
use quorum_store::{Claim, JobRecord, Result, RunFilter, RunRecord, StateStore};

/// Wraps a store; [`FaultyStore::fail`] arms failures by operation name
/// (the trait method's name, e.g. `"release_lease"`).
pub struct FaultyStore {
    inner: Arc<dyn StateStore>,
    armed: Mutex<HashMap<&'static str, u32>>,
    failed: Mutex<Vec<&'static str>>,
}

impl FaultyStore {
    pub fn new(inner: Arc<dyn StateStore>) -> Self {
        FaultyStore {
            inner,
            armed: Mutex::new(HashMap::new()),
            failed: Mutex::new(vec![]),
        }
    }

    /// The next `times` calls of `op` fail as a lost connection would.
    pub fn fail(&self, op: &'static str, times: u32) {
        *self.armed.lock().unwrap().entry(op).or_default() += times;
    }

    /// The operations that failed, in order.
    pub fn failed(&self) -> Vec<&'static str> {
        self.failed.lock().unwrap().clone()
    }

    fn check(&self, op: &'static str) -> Result<()> {
        let mut armed = self.armed.lock().unwrap();
        match armed.get_mut(op) {
            Some(n) if *n > 0 => {
                *n -= 1;
                self.failed.lock().unwrap().push(op);
                Err(redis::RedisError::from((redis::ErrorKind::Io, "injected by FaultyStore: connection lost")).into())
            }
            _ => Ok(()),
        }
    }
}

/// Each method: fail if armed, else the inner store's answer.
macro_rules! delegate {
    ($( fn $name:ident(&self $(, $arg:ident : $ty:ty)*) -> $ret:ty; )*) => {
        #[async_trait]
        impl StateStore for FaultyStore {
            $(
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    self.check(stringify!($name))?;
                    self.inner.$name($($arg),*).await
                }
            )*
        }
    };
}

delegate! {
    fn claim_dedupe(&self, dedupe_key: &str, job_id: &str) -> Result<Claim>;
    fn release_dedupe(&self, dedupe_key: &str) -> Result<()>;
    fn put_job(&self, job: &JobRecord) -> Result<()>;
    fn get_job(&self, job_id: &str) -> Result<Option<JobRecord>>;
    fn list_jobs(&self, filter: &RunFilter, offset: usize, limit: usize) -> Result<Vec<String>>;
    fn count_jobs(&self, filter: &RunFilter) -> Result<usize>;
    fn set_run_state(&self, job_id: &str, state: RunState, reason: Option<&str>) -> Result<()>;
    fn set_agent_status(&self, job_id: &str, agent: AgentRole, status: AgentStatus) -> Result<()>;
    fn get_run(&self, job_id: &str) -> Result<Option<RunRecord>>;
    fn put_result(&self, result: &AgentResult) -> Result<bool>;
    fn get_results(&self, job_id: &str) -> Result<BTreeMap<AgentRole, AgentResult>>;
    fn acquire_guard(&self, name: &str) -> Result<bool>;
    fn release_guard(&self, name: &str) -> Result<()>;
    fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64) -> Result<bool>;
    fn release_lease(&self, name: &str, holder: &str) -> Result<()>;
    fn mark_pending(&self, job_id: &str, since_ms: u64) -> Result<()>;
    fn pending_before(&self, before_ms: u64) -> Result<Vec<String>>;
    fn clear_pending(&self, job_id: &str) -> Result<()>;
    fn put_review(&self, job_id: &str, review_json: &str) -> Result<()>;
    fn get_review(&self, job_id: &str) -> Result<Option<String>>;
    fn put_draft(&self, job_id: &str, review_json: &str) -> Result<()>;
    fn get_draft(&self, job_id: &str) -> Result<Option<String>>;
    fn delete_draft(&self, job_id: &str) -> Result<()>;
    fn add_fingerprints(&self, pr_key: &str, fingerprints: &[String]) -> Result<()>;
    fn fingerprints(&self, pr_key: &str) -> Result<Vec<String>>;
    fn record_index_request(&self, repo: &str, git_ref: &str, at_ms: u64) -> Result<()>;
    fn last_index_request(&self, repo: &str) -> Result<Option<(String, u64)>>;
    fn indexed_repos(&self, limit: usize) -> Result<Vec<String>>;
    fn put_graph(&self, repo: &str, commit: &str, blob: &[u8]) -> Result<()>;
    fn get_graph(&self, repo: &str, commit: &str) -> Result<Option<Vec<u8>>>;
    fn set_branch_graph(&self, repo: &str, branch: &str, commit: &str) -> Result<()>;
    fn branch_graph(&self, repo: &str, branch: &str) -> Result<Option<String>>;
    fn put_memory(&self, repo: &str, state_json: &str) -> Result<()>;
    fn get_memory(&self, repo: &str) -> Result<Option<String>>;
    fn touch_memory_item(&self, repo: &str, item_id: &str, at: &str) -> Result<()>;
    fn memory_matches(&self, repo: &str) -> Result<BTreeMap<String, String>>;
}
