//! Review memory (F-MEM-1..3): Quorum learns from how a team answers its
//! comments and applies what it learned, visibly and deterministically.
//!
//! - [`thread`]: review threads rebuilt from flat SCM comments, in any order.
//! - [`feedback`]: the evidence a thread rooted at a Quorum comment gives
//!   (👍/👎, replies, resolved with or without a change).
//! - [`learn`]: learned state (evidence per PR, operator decisions) and the
//!   trust gates that derive memory items from it.
//! - [`file`](mod@file): `.quorum/memory.yaml`, the reviewable, committed form.
//! - [`apply`]: what the critic and the engine do with active items.
//! - [`sources`]: the code evidence was given on, and whether the default
//!   branch still holds it (staleness by source).
//!
//! No IO: the SCM adapters fetch, the store keeps the state, services apply.

pub mod apply;
pub mod asks;
pub mod association;
pub mod feedback;
pub mod file;
pub mod ingest;
pub mod item;
pub mod learn;
pub mod past;
pub mod sources;
pub mod thread;

pub use apply::{MemorySet, Suppression};
pub use association::Association;
pub use feedback::{Observation, Person, Reaction, Verdict, observe};
pub use file::{Learned, MEMORY_PATH, MemoryFile, items_for, merge};
pub use ingest::{
    Checkpoint, HistoryError, HistorySource, IngestOptions, IngestSummary, PrHistory, SweepPage, ThreadInfo, ingest,
    lease_name,
};
pub use item::{ItemKey, Kind, MemoryItem, Origin, Status};
pub use learn::{MemoryState, Policy, derive_items};
pub use past::{Asker, PastThread, SearchHit, search, search_with};
pub use sources::{Gone, Source, SourceCheck};
pub use thread::{Orphan, PastComment, Reactions, Thread, assemble};

/// What memory refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// Input that does not say what it must (a file, a stored state, an
    /// SCM value); the message names the part.
    #[error("{0}")]
    Invalid(String),
}
