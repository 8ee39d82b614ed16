//! Context assembly (F-IDX-2, F-IDX-3, F-AG-2, F-AG-6).
//!
//! - [`GraphIndex`]: the code graph of a repository at a commit — read from
//!   the store (a compressed blob per repo + commit), or built from the tree
//!   (incrementally from the branch's last graph) and stored. Readers stay
//!   stateless: any replica can load any commit's graph.
//! - [`ContextBuilder`]: one job's [`ReviewContext`] for its context mode —
//!   head files, `.quorum.yml` conventions at the base, and in `graph_rag`
//!   the impact report over the base graph with the PR head overlaid.
//! - [`tools::JobTools`]: `get_callers`, `find_tests`, `read_snippet` for one job.

mod graph_index;
mod review;
pub mod tools;

pub use graph_index::{GraphIndex, GraphOutcome};
pub use review::ContextBuilder;

/// Why a graph could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(transparent)]
    Scm(#[from] quorum_scm::ScmError),
    #[error(transparent)]
    Store(#[from] quorum_store::StoreError),
}

impl ContextError {
    /// Bad input (unknown repo, bad ref): retrying will not help.
    pub fn is_invalid(&self) -> bool {
        matches!(self, ContextError::Scm(quorum_scm::ScmError::Invalid(_)))
    }
}

pub use quorum_engine::ReviewContext;
