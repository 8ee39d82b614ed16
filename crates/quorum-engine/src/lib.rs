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

pub mod lang;
pub mod offline;
pub mod rules;
pub mod static_rules;

use quorum_core::{AgentRole, FileDiff, Finding};

/// What a role's engine reviews.
#[derive(Debug, Clone)]
pub struct ReviewInput<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub diffs: &'a [FileDiff],
}

/// A reviewer of one role.
pub trait Engine: Send + Sync {
    fn role(&self) -> AgentRole;
    fn review(&self, input: &ReviewInput<'_>) -> Vec<Finding>;
}

/// The engine for `role` when no model is configured.
pub fn offline_engine(role: AgentRole) -> Box<dyn Engine> {
    match role {
        AgentRole::Static => Box::new(static_rules::StaticEngine),
        other => Box::new(offline::OfflineEngine::new(other)),
    }
}
