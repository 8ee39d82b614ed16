//! Records the store keeps.

use std::collections::BTreeMap;

use quorum_core::{AgentRole, AgentStatus, ReviewRequest, RunState};
use serde::{Deserialize, Serialize};

/// The outcome of a dedupe claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key was free and now belongs to the caller's job.
    Claimed,
    /// Another job already holds it.
    Existing(String),
}

/// A job as intake stored it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub request: ReviewRequest,
    pub created_ms: u64,
}

/// Where a run is, as `quorum runs` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub job_id: String,
    pub state: RunState,
    pub agents: BTreeMap<AgentRole, AgentStatus>,
    pub reason: Option<String>,
    /// When the run first entered each state (`queued` → its job's creation
    /// time), Unix ms: the console's pipeline strip, the time at each hop.
    #[serde(default)]
    pub timeline: BTreeMap<String, u64>,
}

/// Which runs a page of the run list holds: every run, one repository's,
/// the runs in one state, or both. Applied by the store (an index per
/// filter), so a filtered page costs what an unfiltered one does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// `owner/name`, exactly.
    pub repo: Option<String>,
    pub state: Option<RunState>,
}

impl RunFilter {
    pub fn all() -> Self {
        Self::default()
    }

    /// Whether a run of `repo` in `state` passes.
    pub fn admits(&self, repo: &str, state: RunState) -> bool {
        self.repo.as_deref().is_none_or(|r| r == repo) && self.state.is_none_or(|s| s == state)
    }
}

/// Now, in Unix ms (when a run enters a state).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
