//! The review engine. Pure: it sees a change (the parsed diff) and returns
//! findings with evidence; it does no IO, so every rule is unit-tested on
//! snippets.
//!
//! - [`static_rules`]: the static agent's deterministic pattern rules on added
//!   lines (injection, weak crypto, TLS, secrets, timeouts, swallowed errors,
//!   unguarded division, mutable defaults).
//! - [`offline`]: what the three LLM roles do when no model is configured
//!   (F-AG-6): diff-pair heuristics for the reviewer (inverted conditions,
//!   shifted offsets), removed authorization checks for security, untested
//!   changes for tests. Lower, calibrated confidence; the critic decides.
//!
//! The model-backed engine (async-openai tool loop) comes later behind the
//! same [`Engine`] seam.

pub mod conventions;
pub mod documentation;
pub mod graph_checks;
pub mod lang;
pub mod offline;
pub mod rules;
pub mod static_rules;

use std::collections::BTreeMap;
use std::sync::Arc;

use quorum_core::{AgentRole, ContextMode, FileDiff, Finding};
use quorum_graph::ImpactReport;

/// What the agents know beyond the diff, assembled once per job by the
/// context layer according to the job's [`ContextMode`].
#[derive(Debug, Default)]
pub struct ReviewContext {
    pub mode: ContextMode,
    /// The impact report (graph_rag only).
    pub impact: Option<ImpactReport>,
    /// Head content of the changed files. Always loaded (conventions'
    /// queries parse them); shown to a model only in `full_files` mode.
    pub head_files: BTreeMap<String, String>,
    /// The repository's `.quorum.yml` conventions, read at the base commit
    /// so a PR cannot switch off the rules it is judged by.
    pub conventions: Arc<conventions::Conventions>,
    /// The team's past review threads most relevant to the changed files
    /// (review memory, F-MEM-2), for a model's prompt; empty without memory.
    pub past_reviews: Vec<quorum_memory::PastThread>,
    /// Why some context is missing (no graph, no config), for the review body.
    pub notes: Vec<String>,
    /// Seconds spent per retrieval back-end (`graph`, `tree`), for metrics.
    pub timings: Vec<(&'static str, f64)>,
}

/// What a role's engine reviews.
#[derive(Debug, Clone)]
pub struct ReviewInput<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub diffs: &'a [FileDiff],
    pub context: &'a ReviewContext,
}

/// What context an engine reads, so the agent assembles only that (the
/// impact report and file reads are the costly parts of a review).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextNeeds {
    /// The repository's `.quorum.yml` conventions.
    pub conventions: bool,
    /// Head content of the changed files.
    pub head_files: bool,
    /// The impact report (only ever built in `graph_rag` mode).
    pub impact: bool,
    /// The team's past review threads on the changed files (a model's
    /// prompt; the offline rules do not read them).
    pub past_reviews: bool,
}

impl ContextNeeds {
    /// Everything the mode allows (a model-backed engine).
    pub const ALL: ContextNeeds = ContextNeeds {
        conventions: true,
        head_files: true,
        impact: true,
        past_reviews: true,
    };
    pub const NONE: ContextNeeds = ContextNeeds {
        conventions: false,
        head_files: false,
        impact: false,
        past_reviews: false,
    };
}

/// A reviewer of one role.
pub trait Engine: Send + Sync {
    fn role(&self) -> AgentRole;
    /// What the engine reads from [`ReviewContext`].
    fn needs(&self) -> ContextNeeds {
        ContextNeeds::ALL
    }
    fn review(&self, input: &ReviewInput<'_>) -> Vec<Finding>;
}

/// The engine for `role` when no model is configured.
pub fn offline_engine(role: AgentRole) -> Box<dyn Engine> {
    match role {
        AgentRole::Static => Box::new(static_rules::StaticEngine),
        other => Box::new(offline::OfflineEngine::new(other)),
    }
}
