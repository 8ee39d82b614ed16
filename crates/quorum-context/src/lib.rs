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
//! - [`memory`]: the repository's review memory as one review sees it.

mod graph_index;
pub mod memory;
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
    /// A parser or the graph code panicked on this source. The input is
    /// untrusted and the same source panics again, so it is invalid input,
    /// not a retryable fault.
    #[error("{what} panicked on this change's source (a parser bug; the same input fails again): {message}")]
    Panicked { what: &'static str, message: String },
}

impl ContextError {
    /// Bad input (unknown repo, bad ref, source a parser panics on):
    /// retrying will not help.
    pub fn is_invalid(&self) -> bool {
        matches!(
            self,
            ContextError::Scm(quorum_scm::ScmError::Invalid(_)) | ContextError::Panicked { .. }
        )
    }

    /// The error for a blocking graph task that did not finish.
    pub(crate) fn from_join(what: &'static str, e: tokio::task::JoinError) -> Self {
        let message = match e.try_into_panic() {
            Ok(payload) => payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-text panic".into()),
            Err(e) => e.to_string(),
        };
        ContextError::Panicked { what, message }
    }
}

pub use quorum_engine::ReviewContext;

#[cfg(test)]
mod panic_tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_on_untrusted_source_is_invalid_input_that_names_the_panic() {
        let join = tokio::task::spawn_blocking(|| -> u32 { panic!("node kind 42 out of range") })
            .await
            .unwrap_err();
        let e = ContextError::from_join("the graph build", join);
        assert!(e.is_invalid(), "a parser panic is dead-lettered at once, not retried");
        let text = e.to_string();
        assert!(
            text.contains("the graph build panicked") && text.contains("node kind 42 out of range"),
            "{text}"
        );
    }
}
