//! The `quorum` operator CLI as a library, so tests drive the same code the
//! binary runs (and `quorum-lab`'s eval and benchmarks start the same fleet).

pub mod demo;
pub mod drafts;
pub mod fleet;
pub mod graph_cmd;
pub mod mcp_cmd;
pub mod memory_cmd;
pub mod progress;
pub mod review;
pub mod search_cmd;
pub mod terminal;
pub mod webhook;
