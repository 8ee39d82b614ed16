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
}
